import CSDLMixerABI

/// Reads a program's SDL_RWops whole: memory, file or custom, through SDL's own calls on it.
enum RWopsReader {
    /// The most bytes one load reads: a file's bytes, before decoding (its decoded size has the engine's limits).
    static let maximumBytes = 512 << 20

    /// The stream's bytes from its current position to its end, then closes it when `freeSource` (whether or not
    /// the read worked, as SDL_mixer does). A stream that says how long it is must deliver that many bytes; one
    /// that does not is read until a read returns nothing, and a read that returns nothing with an error set is a
    /// failure, not an end.
    static func readAll(_ source: UnsafeMutablePointer<SDL_RWops>?, freeSource: Bool) -> Result<[UInt8], RWopsError> {
        guard let source else { return .failure(.null) }
        defer { if freeSource { _ = SDL_RWclose(source) } }
        let size = SDL_RWsize(source)
        let position = SDL_RWtell(source)
        let expected: Int? = size >= 0 && position >= 0 && size >= position ? Int(size - position) : nil
        if let expected, expected > maximumBytes { return .failure(.tooLarge(expected)) }
        var bytes: [UInt8] = []
        if let expected { bytes.reserveCapacity(expected) }
        let step = 64 << 10
        var buffer = [UInt8](repeating: 0, count: step)
        SDL_ClearError()
        while true {
            let want = expected.map { min(step, $0 - bytes.count) } ?? step
            if want == 0 { break }
            let got = buffer.withUnsafeMutableBytes { SDL_RWread(source, $0.baseAddress, 1, want) }
            if got == 0 {
                let message = String(cString: SDL_GetError())
                if let expected, bytes.count < expected {
                    return .failure(.short(read: bytes.count, expected: expected, reason: message))
                }
                if !message.isEmpty { return .failure(.failed(read: bytes.count, reason: message)) }
                break
            }
            bytes.append(contentsOf: buffer[0..<min(got, want)])
            if bytes.count > maximumBytes { return .failure(.tooLarge(bytes.count)) }
        }
        return .success(bytes)
    }
}

/// Why an SDL_RWops could not be read.
enum RWopsError: Error {
    case null
    case tooLarge(Int)
    case short(read: Int, expected: Int, reason: String)
    case failed(read: Int, reason: String)

    var description: String {
        switch self {
        case .null: "Passed a NULL data source"
        case .tooLarge(let bytes):
            "the data source holds \(bytes) bytes, over the \(RWopsReader.maximumBytes) one load may read"
        case .short(let read, let expected, let reason):
            "the data source failed after \(read) of its \(expected) bytes" + (reason.isEmpty ? "" : ": \(reason)")
        case .failed(let read, let reason): "the data source failed after \(read) bytes: \(reason)"
        }
    }
}
