import AmbiencePlatform

/// Why an engine call failed.
public enum EngineError: Error, CustomStringConvertible, Sendable, Equatable {
    /// OpenAL Soft could not set up the mixer.
    case mixer(MixerSetupError)
    /// Real-time output could not start.
    case output(OutputError)
    /// A sound's file could not be read.
    case decoding(DecodingError)
    /// The mixer could not hold the named sound (OpenAL refused the buffer).
    case outOfMixerMemory(String)
    /// `render` is for offline engines; a device engine renders on its own.
    case notOffline
    /// A number from the caller was NaN, infinite or outside what it configures; nothing was changed.
    case invalidNumber(InvalidNumber)
    /// `exit()` is running on another thread: no engine starts while the process ends.
    case processExiting

    public var description: String {
        switch self {
        case .mixer(let e): e.description
        case .output(let e): e.description
        case .decoding(let e): e.description
        case .outOfMixerMemory(let name): "\(name): the mixer has no room for this sound"
        case .notOffline: "render() needs an engine created with output: .offline"
        case .invalidNumber(let e): e.description
        case .processExiting: "the process is exiting: no engine starts"
        }
    }
}

extension MemoryFile {
    /// An in-memory file of `bytes` for the decoders, its failures as the engine's: empty bytes are
    /// `DecodingError.empty`, and a file the system would not make is `.unreadable`.
    package static func holding(_ bytes: [UInt8], name: String) throws(EngineError) -> MemoryFile {
        guard !bytes.isEmpty else { throw .decoding(.empty(name)) }
        do throws(Errno) {
            return try MemoryFile(bytes, name: name)
        } catch {
            throw .decoding(.unreadable(name, errno: error.code))
        }
    }
}
