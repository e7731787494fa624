import Ambience
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
        var status = stat()
        guard stat(folder, &status) == 0 else { throw ToolFailure("\(folder): \(String(cString: strerror(errno)))") }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw ToolFailure("\(folder): not a folder") }
        let library = try MediaLibrary(folders: [folder], databasePath: database)
        let bar = isatty(STDOUT_FILENO) != 0 ? ProgressBar() : nil
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

// MARK: - bench

/// `ambience library bench`: a generated library of small tagged files (a third each WAV, Ogg Vorbis and MP3 when
/// oggenc and lame are installed, otherwise all WAV), scanned and queried with timings.
///
/// Encoding thousands of files would take longer than scanning them, so one tiny Ogg and one tiny MP3 are encoded
/// once, and every other file is a copy with its own tags written in: WAV LIST/INFO, a new Vorbis comment header
/// (the Ogg pages re-laced and their CRCs recomputed), or an ID3v2.3 tag in front of the MP3 frames.
struct LibraryBench {
    let files: Int
    let keep: Bool
    /// Where to generate (kept); nil for a new temporary folder.
    let folder: String?

    static let tracksPerAlbum = 10
    static let albumsPerArtist = 10
    static let genres = [
        "Ambient", "Rock", "Jazz", "Electronic", "Classical", "Folk", "Pop", "Soundtrack", "Metal", "Blues"
    ]

    func run(json: Bool) throws {
        let base =
            folder
            ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("ambience-library-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        let music = base + "/music", database = base + "/library.sqlite", marker = base + "/generated-files"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        defer { if !keep { try? FileManager.default.removeItem(atPath: base) } }

        // 1. Generate (or reuse what an earlier run with the same count generated here).
        var clock = Stopwatch()
        var formats: [String: Int] = [:]
        let reused = (try? String(contentsOfFile: marker, encoding: .utf8)).flatMap { Int($0) } == files
        if !reused {
            try? FileManager.default.removeItem(atPath: music)
            try? FileManager.default.removeItem(atPath: marker)
            try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
            let templates = try Templates(folder: base)
            for index in 0..<files {
                try Interrupt.check()
                formats[try writeFile(index, into: music, templates: templates), default: 0] += 1
            }
            try String(files).write(toFile: marker, atomically: true, encoding: .utf8)
        }
        let generated = clock.lap()

        // 2. First scan, with peak memory.
        let rssBefore = Self.peakMemoryKB()
        let library = try MediaLibrary(folders: [music], databasePath: database)
        let first = try library.scan { _ in if Interrupt.requested { library.cancelScan() } }
        let firstScan = clock.lap()
        let rssAfter = Self.peakMemoryKB()

        // 3. Rescan with nothing changed (best of three, and the first).
        var rescans: [Double] = [], rescanCPU: [Double] = []
        for _ in 0..<3 {
            let report = try library.scan()
            rescans.append(clock.lap())
            rescanCPU.append(clock.lastLapCPU)
            guard report.added + report.updated + report.removed == 0 else {
                throw ToolFailure("bench: a rescan with nothing changed changed \(report)")
            }
        }
        // Opening the index again and rescanning, as a new process would (the first write runs quick_check).
        let reopened = try MediaLibrary(folders: [music], databasePath: database)
        let reopen = clock.lap()
        try reopened.scan()
        let coldRescan = clock.lap()

        // 4. Query by artist: the median of 50 different artists.
        let artistCount = max(
            1, (files + Self.tracksPerAlbum * Self.albumsPerArtist - 1) / (Self.tracksPerAlbum * Self.albumsPerArtist))
        var artistTimes: [Double] = [], artistCPU: [Double] = []
        var artistItems = 0
        for run in 0..<50 {
            var query = MediaQuery.songs(in: library)
            query.addFilterPredicate(
                MediaPropertyPredicate(value: Self.artistName((run * 7) % artistCount), forProperty: .artist))
            _ = clock.lap()
            artistItems = try query.results().items.count
            artistTimes.append(clock.lap())
            artistCPU.append(clock.lastLapCPU)
        }

        // 5. Every album: counted by the index, and with every item loaded.
        var groupTimes: [Double] = [], collectionTimes: [Double] = [], groupCPU: [Double] = [],
            collectionCPU: [Double] = []
        var albumCount = 0, collectionCount = 0
        for _ in 0..<10 {
            _ = clock.lap()
            albumCount = try MediaQuery.albums(in: library).groups().count
            groupTimes.append(clock.lap())
            groupCPU.append(clock.lastLapCPU)
        }
        for _ in 0..<5 {
            _ = clock.lap()
            collectionCount = try MediaQuery.albums(in: library).results().collections.count
            collectionTimes.append(clock.lap())
            collectionCPU.append(clock.lastLapCPU)
        }

        let formatList = formats.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        let rate = Double(first.files) / max(firstScan, 1e-9)
        if json {
            Output.print(
                JSON.object([
                    ("files", .int(files)),
                    ("formats", .object(formats.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })),
                    ("generateSeconds", .double(generated)), ("firstScanSeconds", .double(firstScan)),
                    ("firstScanFilesPerSecond", .double(rate)), ("failed", .int(first.failed.count)),
                    ("peakMemoryMB", .double(Double(rssAfter) / 1024)),
                    ("peakMemoryBeforeScanMB", .double(Double(rssBefore) / 1024)),
                    ("rescanSeconds", .double(rescans[0])), ("rescanBestSeconds", .double(rescans.min() ?? 0)),
                    ("rescanCPUSeconds", .double(rescanCPU.min() ?? 0)), ("reused", .bool(reused)),
                    ("reopenSeconds", .double(reopen)), ("reopenedRescanSeconds", .double(coldRescan)),
                    ("artistQueryMilliseconds", .double(Self.median(artistTimes) * 1000)),
                    ("artistQueryItems", .int(artistItems)),
                    ("artistQueryCPUMilliseconds", .double(Self.median(artistCPU) * 1000)),
                    ("albumGroupsMilliseconds", .double(Self.median(groupTimes) * 1000)), ("albums", .int(albumCount)),
                    ("albumGroupsCPUMilliseconds", .double(Self.median(groupCPU) * 1000)),
                    ("albumCollectionsMilliseconds", .double(Self.median(collectionTimes) * 1000)),
                    ("albumCollectionsCPUMilliseconds", .double(Self.median(collectionCPU) * 1000)),
                    ("path", .string(keep ? base : ""))
                ]).text)
        } else {
            if reused {
                Output.line("reused \(files) files generated earlier at \(music)")
            } else {
                Output.line(
                    "generated \(files) files (\(formatList)) in \(Self.seconds(generated))\(keep ? " at \(music)" : "")"
                )
            }
            Output.print(
                "first scan: \(first.files) files in \(Self.seconds(firstScan)) (\(Int(rate)) files/s), \(first.failed.count) failed; "
                    + "peak memory \(rssAfter / 1024) MB (\(rssBefore / 1024) MB before the scan)")
            Output.print(
                "rescan, nothing changed: \(Self.seconds(rescans[0])) (best of 3: \(Self.seconds(rescans.min() ?? 0)), "
                    + "\(Self.seconds(rescanCPU.min() ?? 0)) CPU); reopen \(Self.seconds(reopen)), then rescan with quick_check \(Self.seconds(coldRescan))"
            )
            Output.print(
                "query by artist: \(Self.milliseconds(Self.median(artistTimes))) median of 50 "
                    + "(\(Self.milliseconds(Self.median(artistCPU))) CPU; \(artistItems) items each)")
            Output.print(
                "group all albums: \(Self.milliseconds(Self.median(groupTimes))) for \(albumCount) albums with counts "
                    + "(\(Self.milliseconds(Self.median(groupCPU))) CPU); \(Self.milliseconds(Self.median(collectionTimes))) with all "
                    + "\(first.files) items loaded into \(collectionCount) collections (\(Self.milliseconds(Self.median(collectionCPU))) CPU), median of 5"
            )
            Output.print(
                "times are wall clock, medians; CPU is this thread's CPU time, which other processes on the machine do not inflate"
            )
        }
    }

    // MARK: Files

    static func artistName(_ index: Int) -> String {
        // Every fifth artist has diacritics, so folded keys are exercised.
        index % 5 == 0 ? "Årtist \(pad(index, 4))" : "Artist \(pad(index, 4))"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    /// Writes file number `index`; returns its format.
    private func writeFile(_ index: Int, into music: String, templates: Templates) throws -> String {
        let track = index % Self.tracksPerAlbum
        let album = index / Self.tracksPerAlbum
        let artist = album / Self.albumsPerArtist
        let artistName = Self.artistName(artist)
        let albumName = "Album \(Self.pad(album, 5))"
        let title = "Track \(Self.pad(index, 6))"
        let genre = Self.genres[album % Self.genres.count]
        let folder = "\(music)/\(artistName)/\(albumName)"
        if track == 0 || index == 0 {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        let tags = BenchTags(title: title, artist: artistName, album: albumName, genre: genre, track: track + 1)
        let kinds = templates.formats
        let format = kinds[index % kinds.count]
        let bytes: [UInt8]
        switch format {
        case "ogg": bytes = try templates.ogg(tags)
        case "mp3": bytes = templates.mp3(tags)
        default: bytes = Templates.wav(tags)
        }
        let path = "\(folder)/\(Self.pad(track + 1, 2)) \(title).\(format)"
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw ToolFailure("\(path): cannot write")
        }
        return format
    }

    static func peakMemoryKB() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    static func seconds(_ value: Double) -> String { String(format: "%.3f s", value) }
    static func milliseconds(_ value: Double) -> String { String(format: "%.2f ms", value * 1000) }
}

struct Stopwatch {
    private var last = monotonicNanoseconds()
    private var lastCPU = Stopwatch.threadCPU()
    /// CPU seconds this thread used in the previous lap: unlike wall time, not inflated when other processes share
    /// the cores.
    private(set) var lastLapCPU: Double = 0

    /// Wall seconds since the previous lap (or the start).
    mutating func lap() -> Double {
        let now = monotonicNanoseconds()
        let cpu = Stopwatch.threadCPU()
        defer { last = now; lastCPU = cpu }
        lastLapCPU = cpu - lastCPU
        return Double(now - last) / 1e9
    }

    private static func threadCPU() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

struct BenchTags {
    var title: String
    var artist: String
    var album: String
    var genre: String
    var track: Int
}

/// One tiny encoded Ogg and MP3 (when the encoders are installed), and the code that gives copies of them new tags.
struct Templates {
    private var oggPages: [OggPage] = []
    private var oggHeaderPackets: [[UInt8]] = []
    private var oggAudioStart = 0
    private var mp3Frames: [UInt8] = []
    private(set) var formats: [String] = ["wav"]

    init(folder: String) throws {
        let source = folder + "/template.wav"
        let tone = Self.wav(BenchTags(title: "", artist: "", album: "", genre: "", track: 0), tagged: false)
        guard FileManager.default.createFile(atPath: source, contents: Data(tone)) else {
            throw ToolFailure("\(source): cannot write")
        }
        defer { try? FileManager.default.removeItem(atPath: source) }
        if Self.runTool("oggenc", ["-Q", "-q", "0", "-o", folder + "/template.ogg", source]),
            let bytes = FileManager.default.contents(atPath: folder + "/template.ogg"),
            let pages = OggPage.parseAll([UInt8](bytes))
        {
            var packets: [[UInt8]] = [], current: [UInt8] = []
            var pageIndex = 0
            while packets.count < 3 && pageIndex < pages.count {
                var at = 0
                for segment in pages[pageIndex].segments {
                    current += pages[pageIndex].body[at..<(at + Int(segment))]
                    at += Int(segment)
                    if segment < 255 { packets.append(current); current = [] }
                }
                pageIndex += 1
            }
            if packets.count == 3 && current.isEmpty {
                oggPages = pages
                oggHeaderPackets = packets
                oggAudioStart = pageIndex
                formats.append("ogg")
            }
        }
        try? FileManager.default.removeItem(atPath: folder + "/template.ogg")
        if Self.runTool("lame", ["--quiet", "-b", "32", source, folder + "/template.mp3"]),
            let bytes = FileManager.default.contents(atPath: folder + "/template.mp3"), bytes.count > 0
        {
            mp3Frames = [UInt8](bytes)
            formats.append("mp3")
        }
        try? FileManager.default.removeItem(atPath: folder + "/template.mp3")
    }

    private static func runTool(_ tool: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// A quarter second of a quiet 440 Hz tone, 8 kHz mono 16-bit, with a LIST/INFO chunk of tags.
    static func wav(_ tags: BenchTags, tagged: Bool = true) -> [UInt8] {
        var info: [UInt8] = Array("INFO".utf8)
        if tagged {
            for (id, text) in [
                ("INAM", tags.title), ("IART", tags.artist), ("IPRD", tags.album), ("IGNR", tags.genre),
                ("ITRK", String(tags.track))
            ] {
                var value = Array(text.utf8) + [0]
                let size = value.count
                if value.count % 2 == 1 { value.append(0) }
                info += Array(id.utf8) + le32(size) + value
            }
        }
        var samples: [UInt8] = []
        for index in 0..<2000 {
            let value = Int16(sin(Double(index) * 2 * .pi * 440 / 8000) * 4000)
            samples += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
        }
        var body: [UInt8] = Array("WAVE".utf8)
        body += Array("fmt ".utf8) + le32(16) + le16(1) + le16(1) + le32(8000) + le32(16000) + le16(2) + le16(16)
        if tagged { body += Array("LIST".utf8) + le32(info.count) + info }
        body += Array("data".utf8) + le32(samples.count) + samples
        return Array("RIFF".utf8) + le32(body.count) + body
    }

    /// The MP3 frames behind an ID3v2.3 tag (UTF-16 text frames).
    func mp3(_ tags: BenchTags) -> [UInt8] {
        var frames: [UInt8] = []
        for (id, text) in [
            ("TIT2", tags.title), ("TPE1", tags.artist), ("TALB", tags.album), ("TCON", tags.genre),
            ("TRCK", String(tags.track))
        ] {
            var data: [UInt8] = [1, 0xFF, 0xFE]  // UTF-16 with a little-endian byte-order mark
            for unit in text.utf16 { data += [UInt8(truncatingIfNeeded: unit), UInt8(truncatingIfNeeded: unit >> 8)] }
            data += [0, 0]
            frames += Array(id.utf8) + be32(data.count) + [0, 0] + data
        }
        let size = frames.count
        let syncsafe: [UInt8] = (0..<4).map { UInt8((size >> (21 - 7 * $0)) & 0x7F) }
        return Array("ID3".utf8) + [3, 0, 0] + syncsafe + frames + mp3Frames
    }

    /// The template Ogg with a new comment header: the header packets re-laced into new pages, the audio pages
    /// renumbered, every CRC recomputed.
    func ogg(_ tags: BenchTags) throws -> [UInt8] {
        let vendor = Array("ambience bench".utf8)
        let comments = [
            "TITLE=\(tags.title)", "ARTIST=\(tags.artist)", "ALBUM=\(tags.album)", "GENRE=\(tags.genre)",
            "TRACKNUMBER=\(tags.track)"
        ]
        var comment: [UInt8] = [3] + Array("vorbis".utf8) + le32(vendor.count) + vendor + le32(comments.count)
        for entry in comments { comment += le32(entry.utf8.count) + Array(entry.utf8) }
        comment.append(1)  // framing bit

        let serial = oggPages[0].serial
        var out: [UInt8] = []
        var sequence: UInt32 = 0
        // The identification header alone on the first page, then comment and setup headers, then the audio.
        out += OggPage.lay(packets: [oggHeaderPackets[0]], serial: serial, sequence: &sequence, firstFlags: 0x02)
        out += OggPage.lay(packets: [comment, oggHeaderPackets[2]], serial: serial, sequence: &sequence, firstFlags: 0)
        for page in oggPages[oggAudioStart...] {
            var renumbered = page
            renumbered.sequence = sequence
            sequence += 1
            out += renumbered.bytes()
        }
        return out
    }
}

/// One Ogg page, for re-tagging bench copies.
struct OggPage {
    var flags: UInt8
    var granule: UInt64
    var serial: UInt32
    var sequence: UInt32
    var segments: [UInt8]
    var body: [UInt8]

    static func parseAll(_ bytes: [UInt8]) -> [OggPage]? {
        var pages: [OggPage] = []
        var at = 0
        while at < bytes.count {
            guard at + 27 <= bytes.count, bytes[at..<(at + 4)].elementsEqual("OggS".utf8) else { return nil }
            let count = Int(bytes[at + 26])
            guard at + 27 + count <= bytes.count else { return nil }
            let segments = Array(bytes[(at + 27)..<(at + 27 + count)])
            let length = segments.reduce(0) { $0 + Int($1) }
            let start = at + 27 + count
            guard start + length <= bytes.count else { return nil }
            // The header's 27 bytes are there (checked above), so its fields are.
            guard let granule = bytes.u64LE(at + 6), let serial = bytes.u32LE(at + 14),
                let sequence = bytes.u32LE(at + 18)
            else {
                return nil
            }
            pages.append(
                OggPage(
                    flags: bytes[at + 5], granule: granule, serial: serial, sequence: sequence,
                    segments: segments, body: Array(bytes[start..<(start + length)])))
            at = start + length
        }
        return pages
    }

    func bytes() -> [UInt8] {
        var page: [UInt8] = Array("OggS".utf8) + [0, flags]
        page += (0..<8).map { UInt8(truncatingIfNeeded: granule >> (8 * UInt64($0))) }
        page += le32(Int(serial)) + le32(Int(sequence)) + [0, 0, 0, 0] + [UInt8(segments.count)] + segments + body
        OggPageChecksum.stamp(&page, page: 0..<page.count)
        return page
    }

    /// Lays packets into as many pages as their lacing needs (255 segments a page). A page on which no packet ends
    /// has granule position -1; header pages otherwise have 0.
    static func lay(packets: [[UInt8]], serial: UInt32, sequence: inout UInt32, firstFlags: UInt8) -> [UInt8] {
        var lacing: [(segment: UInt8, endsPacket: Bool, bytes: ArraySlice<UInt8>)] = []
        for packet in packets {
            var at = 0
            while packet.count - at >= 255 {
                lacing.append((255, false, packet[at..<(at + 255)]))
                at += 255
            }
            lacing.append((UInt8(packet.count - at), true, packet[at...]))
        }
        var out: [UInt8] = []
        var index = 0
        var continued = false
        while index < lacing.count {
            let slice = lacing[index..<min(index + 255, lacing.count)]
            let endsPacket = slice.contains { $0.endsPacket }
            let page = OggPage(
                flags: (out.isEmpty ? firstFlags : 0) | (continued ? 0x01 : 0),
                granule: endsPacket ? 0 : UInt64.max, serial: serial, sequence: sequence,
                segments: slice.map(\.segment), body: slice.flatMap(\.bytes))
            out += page.bytes()
            sequence += 1
            continued = !(slice.last?.endsPacket ?? true)
            index += slice.count
        }
        return out
    }
}

private func le16(_ value: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)] }
private func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
private func be32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
