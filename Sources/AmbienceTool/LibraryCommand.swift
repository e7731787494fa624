import Ambience
import AmbiencePlatform
import Foundation
import Glibc

struct LibraryCommand: Command {
    static let name = "library"
    static let usage = """
        library scan DIR [--db PATH] | query [FILTERS] [--group G] [--json] | bench [--files N]
                                            the media library: index a folder, query the index, measure it
          scan DIR     index the audio files (.ogg .oga .mp3 .wav .flac .opus .m4a .mp4) and playlists (.m3u .m3u8) under DIR;
                       a rescan reads only new and changed files and drops deleted ones. Prints each problem,
                       then one line: DIR: N files, A added, U updated, R removed, F failed
            --loudness then measure the loudness (EBU R128) of files not measured yet, for loudness matching
          query        the indexed items, or with --group their groups
            --artist A  --album B  --title T  --genre G
                       filters, all of which must match; equal ignoring case and accents ("bjork" is "Björk")
            --contains filters match anywhere in the tag instead
            --group    songs, albums, artists, genres or playlists
            --json     a JSON list: items {title, artist, album, duration, path} or groups {name, count}; a path
                       that is not UTF-8 is shown with U+FFFD and given exactly as pathBytes, a list of its bytes
          bench        make a library of N small tagged files in a temporary folder (deleted afterwards), then time
                       the first scan, a rescan with nothing changed, a query by artist and grouping every album
            --files N  how many files (default 2000)   --keep  keep the files   --json  one JSON object
            --dir DIR  generate into DIR and keep it; a later run with the same DIR and N reuses the files
            --mixed N  instead: N ten-second files of each format (WAV, MP3, Ogg Vorbis, FLAC, Opus, AAC, ALAC) made by
                       the reference encoders; each format's scan rate, with and without loudness analysis
          --db PATH    the index (default $XDG_CACHE_HOME/ambience/library.sqlite)
        """

    static func run(_ arguments: inout Arguments) throws {
        let database = try arguments.option("--db")
        let json = arguments.flag("--json")
        let contains = arguments.flag("--contains")
        let keep = arguments.flag("--keep")
        let filters: [(MediaItemProperty, String?)] = [
            (.artist, try arguments.option("--artist")), (.albumTitle, try arguments.option("--album")),
            (.title, try arguments.option("--title")), (.genre, try arguments.option("--genre"))
        ]
        let group = try arguments.option("--group")
        let files = try arguments.integer("--files")
        let benchFolder = try arguments.option("--dir")
        let mixed = try arguments.integer("--mixed")
        let loudness = arguments.flag("--loudness")
        let words = try arguments.finish()
        guard let subcommand = words.first else { throw UsageError("library needs scan, query or bench") }
        let rest = Array(words.dropFirst())
        let usesFilters = filters.contains { $0.1 != nil } || group != nil || contains
        switch subcommand {
        case "scan":
            guard rest.count == 1 else { throw UsageError("library scan takes exactly one DIR") }
            guard !usesFilters, files == nil, !keep, !json, benchFolder == nil, mixed == nil else {
                throw UsageError("library scan takes only DIR, --db and --loudness")
            }
            try scan(folder: rest[0], database: database, loudness: loudness)
        case "query":
            guard rest.isEmpty else { throw UsageError("library query takes no positional arguments") }
            guard files == nil, !keep, benchFolder == nil else {
                throw UsageError("--files, --keep and --dir are for library bench")
            }
            let grouping: MediaGrouping?
            switch group {
            case nil, "songs": grouping = nil
            case "albums": grouping = .album
            case "artists": grouping = .artist
            case "genres": grouping = .genre
            case "playlists": grouping = .playlist
            case let other?:
                throw UsageError("--group must be songs, albums, artists, genres or playlists, not '\(other)'")
            }
            try query(
                filters: filters.compactMap { property, value in value.map { (property, $0) } },
                contains: contains, grouping: grouping, database: database, json: json)
        case "bench":
            guard rest.isEmpty, !usesFilters, database == nil else {
                throw UsageError("library bench takes only --files, --keep and --json")
            }
            if let mixed {
                guard (1...1000).contains(mixed) else { throw UsageError("--mixed must be from 1 to 1000") }
                return try LibraryFormatBench(copies: mixed).run(json: json)
            }
            let count = files ?? 2000
            guard (1...1_000_000).contains(count) else { throw UsageError("--files must be from 1 to 1000000") }
            try LibraryBench(files: count, keep: keep || benchFolder != nil, folder: benchFolder).run(json: json)
        default:
            throw UsageError("unknown library command '\(subcommand)' (use scan, query or bench)")
        }
    }

    // MARK: scan

    static func scan(folder: String, database: String?, loudness: Bool = false) throws {
        let status: FileStatus
        do throws(Errno) { status = try FileStatus(path: folder) } catch { throw ToolFailure("\(folder): \(error)") }
        guard status.isDirectory else { throw ToolFailure("\(folder): not a folder") }
        let library = try MediaLibrary(folders: [folder], databasePath: database)
        let bar = StandardStream.output.isTerminal ? ProgressBar() : nil
        let report: ScanReport
        do {
            report = try library.scan { progress in
                if Interrupt.requested { library.cancelScan() }
                bar?.show(progress)
            }
        } catch {
            bar?.clear()
            if case LibraryError.cancelled = error {
                throw ToolFailure("\(folder): scan interrupted; files indexed so far are kept")
            }
            throw error
        }
        bar?.clear()
        for issue in report.failed { Output.line("failed: \(issue)") }
        for issue in report.warnings { Output.line("warning: \(issue)") }
        Output.line("\(folder): \(report)")
        guard loudness else { return }
        let measured = try library.analyzeLoudness()
        for issue in measured.failed { Output.line("failed: \(issue)") }
        Output.line("\(folder): loudness \(measured)")
    }

    // MARK: query

    static func query(
        filters: [(MediaItemProperty, String)], contains: Bool, grouping: MediaGrouping?,
        database: String?, json: Bool
    ) throws {
        let library = try MediaLibrary(folders: [], databasePath: database, createIfMissing: false)
        for warning in library.openingWarnings { printError("warning: \(warning)") }
        var query = grouping.map { MediaQuery(library: library, groupingType: $0) } ?? MediaQuery(library: library)
        for (property, value) in filters {
            query.addFilterPredicate(
                MediaPropertyPredicate(
                    value: value, forProperty: property,
                    comparisonType: contains ? .contains : .equalTo))
        }
        if grouping == nil {
            let items = try query.results().items
            if json {
                Output.print(JSON.array(items.map(describe)).text)
            } else {
                for item in items {
                    Output.print(
                        [
                            item.title ?? "", item.artist ?? "", item.albumTitle ?? "",
                            DurationText.format(item.playbackDuration), item.url
                        ]
                        .map(TerminalText.shown).joined(separator: "\t"))
                }
            }
        } else {
            let groups = try query.groups()
            if json {
                Output.print(
                    JSON.array(groups.map { .object([("name", .optional($0.name)), ("count", .int($0.count))]) }).text)
            } else {
                for group in groups { Output.print("\(TerminalText.shown(group.name ?? "(none)"))\t\(group.count)") }
            }
        }
    }

    /// One item in `--json`. A JSON string holds text, and a Linux file name is bytes: a name that is not UTF-8 is
    /// `path` with U+FFFD for what cannot be decoded, and exactly as `pathBytes`, the bytes that open the file.
    static func describe(_ item: MediaItem) -> JSON {
        var fields: [(String, JSON)] = [
            ("title", .optional(item.title)), ("artist", .optional(item.artist)), ("album", .optional(item.albumTitle)),
            ("duration", .double(item.playbackDuration)), ("path", .string(item.url))
        ]
        if let bytes = item.pathBytes { fields.append(("pathBytes", .array(bytes.map { .int(Int($0)) }))) }
        return .object(fields)
    }
}

/// A one-line progress bar on a terminal, redrawn at most 20 times a second.
private final class ProgressBar {
    private var lastDraw = 0

    func show(_ progress: ScanProgress) {
        let now = monotonicNanoseconds()
        guard now - lastDraw >= 50_000_000 || progress.filesDone == progress.totalFiles else { return }
        lastDraw = now
        let width = 30
        let filled = progress.totalFiles > 0 ? width * progress.filesDone / progress.totalFiles : width
        var name = TerminalText.shown(progress.currentPath.split(separator: "/").last.map(String.init) ?? "")
        if name.count > 40 { name = String(name.prefix(39)) + "…" }
        let line =
            "\r\u{1B}[K[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            + "] \(progress.filesDone)/\(progress.totalFiles) \(name)"
        write(line)
    }

    func clear() { write("\r\u{1B}[K") }

    private func write(_ text: String) { Output.print(text, terminator: "") }
}
