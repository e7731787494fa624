import AmbienceCore
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

/// Why real-time output could not start.
public enum OutputError: Error, CustomStringConvertible, Sendable, Equatable {
    /// SDL refused to start or open the device; its message.
    case sdl(String)
    /// No SDL audio driver would start; `tried` lists the drivers tried.
    case noDriver(tried: [String])
    /// Opening the device did not finish within `seconds`: the sound server (or the session bus SDL registers on)
    /// accepted the connection but never answered, as a frozen server does. SDL would have waited for ever.
    case notAnswering(seconds: Double)
    /// The libpulse output could not open: no libpulse, no server, or the server refused the stream; the reason.
    case pulse(String)

    public var description: String {
        switch self {
        case .sdl(let message): "SDL audio: \(message)"
        case .noDriver(let tried): "SDL audio: no driver could open a device (tried \(tried.joined(separator: ", ")))"
        case .notAnswering(let seconds):
            "audio output: the sound server did not answer within \(seconds) s (is it frozen?); no device was opened"
        case .pulse(let message): "libpulse output: \(message)"
        }
    }
}
