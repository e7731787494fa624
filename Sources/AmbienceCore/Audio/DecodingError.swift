import AmbiencePlatform
import Glibc

/// Why a file could not be decoded. Every case names the file, and `description` reads as one line a person can act on.
public enum DecodingError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The file has no bytes at all.
    case empty(String)
    /// The path could not be opened or read (missing, a directory, no permission).
    case unreadable(String, errno: Int32)
    /// The bytes are not WAV, Ogg Vorbis, Ogg Opus, FLAC, MP3, MP4 (AAC, ALAC), a tracker module or MIDI.
    case unsupportedFormat(String)
    /// The format was recognised, but the stream is damaged or not usable.
    case corrupt(String, reason: String)
    /// The stream has more channels than the engine mixes (`AudioInfo.maximumChannels`).
    case tooManyChannels(String, channels: Int)
    /// Decoded whole, the audio would take `bytes` bytes: more than the `limit` it was to fit in (the sound cache's
    /// budget, or what one OpenAL buffer holds).
    case tooLarge(String, bytes: Int64, limit: Int64)
    /// The format was recognised, but what plays it is missing: a library the engine opens at run time (libopenmpt
    /// for tracker modules, libfluidsynth for MIDI) or a MIDI SoundFont. `reason` names what to install.
    case unavailable(String, reason: String)

    /// The same error, about `path` instead.
    public func naming(_ path: String) -> DecodingError {
        switch self {
        case .empty: .empty(path)
        case .unreadable(_, let code): .unreadable(path, errno: code)
        case .unsupportedFormat: .unsupportedFormat(path)
        case .corrupt(_, let reason): .corrupt(path, reason: reason)
        case .tooManyChannels(_, let channels): .tooManyChannels(path, channels: channels)
        case .tooLarge(_, let bytes, let limit): .tooLarge(path, bytes: bytes, limit: limit)
        case .unavailable(_, let reason): .unavailable(path, reason: reason)
        }
    }

    /// The path the error is about.
    public var path: String {
        switch self {
        case .empty(let p), .unreadable(let p, _), .unsupportedFormat(let p), .corrupt(let p, _),
            .tooManyChannels(let p, _),
            .tooLarge(let p, _, _), .unavailable(let p, _):
            p
        }
    }

    /// What is wrong, without the path: "empty file", "sample rate 0 Hz is out of range".
    public var reason: String {
        switch self {
        case .empty:
            "empty file"
        case .unreadable(_, let code):
            "cannot read (\(Errno(code)))"
        case .unsupportedFormat:
            "not a WAV, Ogg Vorbis, Ogg Opus, FLAC, MP3, MP4 (AAC, ALAC), tracker module or MIDI file"
        case .corrupt(_, let reason), .unavailable(_, let reason):
            reason
        case .tooManyChannels(_, let channels):
            "\(channels) channels is more than the \(AudioInfo.maximumChannels) supported"
        case .tooLarge(_, let bytes, let limit):
            "decoded, it takes \(bytes) bytes, over the \(limit) bytes a sound loaded whole may take "
                + "(stream it with the music player instead)"
        }
    }

    public var description: String { "\(path): \(reason)" }
}
