import Ambience
import AmbiencePlatform
import Foundation
import Glibc

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
            .appendingPathComponent(
                "ambience-library-bench-\(ProcessIdentity.current)-\(UInt32.random(in: 0...UInt32.max))"
            ).path
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

    static func peakMemoryKB() -> Int { ProcessUsage.peakRSSBytes / 1024 }

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

    private static func threadCPU() -> Double { Double(ThreadUsage.cpuNanoseconds) / 1e9 }
}
