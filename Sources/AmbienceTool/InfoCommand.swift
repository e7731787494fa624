import Ambience
import AmbienceDecoding
import AmbiencePlatform

struct InfoCommand: Command {
    static let name = "info"
    static let usage = """
        info FILE [--json]                  format, rate, channels, length and tags of an audio file
          --json    one JSON object with keys format, sampleRate, channels, frames, duration,
                    title, artist, album, genre, trackNumber, hasArtwork
        """

    static func run(_ arguments: inout Arguments) throws {
        let json = arguments.flag("--json")
        let files = try arguments.finish()
        guard files.count == 1 else { throw UsageError("info takes exactly one FILE") }
        let info = try AudioFile.info(files[0])
        for warning in info.warnings { printError("warning: \(files[0]): \(warning)") }
        if json {
            Output.print(describe(info).text)
        } else {
            for line in lines(path: files[0], info) { Output.line(line) }
        }
    }

    /// The text form: the path, then one "  label  value" line per known field.
    static func lines(path: String, _ info: AudioInfo) -> [String] {
        let rows: [(String, String?)] = [
            ("format", info.format.rawValue), ("sample rate", "\(info.sampleRate) Hz"),
            ("channels", "\(info.channels)"),
            ("frames", "\(info.frames)"), ("duration", DurationText.format(info.duration)), ("title", info.tags.title),
            ("artist", info.tags.artist), ("album", info.tags.album), ("album artist", info.tags.albumArtist),
            ("genre", info.tags.genre), ("composer", info.tags.composer),
            ("track", info.tags.trackNumber.map(String.init)),
            ("disc", info.tags.discNumber.map(String.init)), ("artwork", info.tags.hasArtwork ? "yes" : "no"),
            // A module's message: its first line (the rest is often ASCII art).
            ("comment", info.tags.comment?.split(whereSeparator: \.isNewline).first.map(String.init))
        ]
        return [path]
            + rows.compactMap { label, value in
                value.map { "  " + label + String(repeating: " ", count: max(13 - label.count, 1)) + $0 }
            }
    }

    static func describe(_ info: AudioInfo) -> JSON {
        .object([
            ("format", .string(info.format.rawValue)), ("sampleRate", .int(info.sampleRate)),
            ("channels", .int(info.channels)),
            ("frames", .int(Int(info.frames))), ("duration", .double(info.duration)),
            ("title", .optional(info.tags.title)),
            ("artist", .optional(info.tags.artist)), ("album", .optional(info.tags.album)),
            ("genre", .optional(info.tags.genre)),
            ("trackNumber", .optional(info.tags.trackNumber)), ("hasArtwork", .bool(info.tags.hasArtwork))
        ])
    }
}
