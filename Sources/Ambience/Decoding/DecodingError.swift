import Glibc

/// Why a file could not be decoded. Every case names the file, and `description` reads as one line a person can act on.
public enum DecodingError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The file has no bytes at all.
    case empty(String)
    /// The path could not be opened or read (missing, a directory, no permission).
    case unreadable(String, errno: Int32)
    /// The bytes are not WAV, Ogg Vorbis or MP3.
    case unsupportedFormat(String)
    /// The format was recognised, but the stream is damaged or not usable.
    case corrupt(String, reason: String)

    /// The same error, about `path` instead.
    public func naming(_ path: String) -> DecodingError {
        switch self {
        case .empty: .empty(path)
        case .unreadable(_, let code): .unreadable(path, errno: code)
        case .unsupportedFormat: .unsupportedFormat(path)
        case .corrupt(_, let reason): .corrupt(path, reason: reason)
        }
    }

    /// The path the error is about.
    public var path: String {
        switch self {
        case .empty(let p), .unreadable(let p, _), .unsupportedFormat(let p), .corrupt(let p, _): p
        }
    }

    public var description: String {
        switch self {
        case .empty(let path):
            "\(path): empty file"
        case .unreadable(let path, let code):
            "\(path): cannot read (\(String(cString: strerror(code))))"
        case .unsupportedFormat(let path):
            "\(path): not a WAV, Ogg Vorbis or MP3 file"
        case .corrupt(let path, let reason):
            "\(path): \(reason)"
        }
    }
}
