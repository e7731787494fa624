import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

/// The index under contention and against the file system: another process holding its lock (the `sqlite3` command),
/// a query in the middle of a rescan, folders that cannot be listed, two libraries sharing one index, a read-only
/// index, the file truncated under a running reader, damage found twice, and a folder deeper than PATH_MAX.
///
/// The tests run as root, for whom permissions stop nothing. Where a permission must bind, the test's own thread takes
/// `nobody`'s file-system identity (`NobodyIdentity`): the kernel then checks each access as for `nobody`.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct LibraryContentionTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    var music: String { fixtures.path("music") }
    var databasePath: String { fixtures.path("index/library.sqlite") }

    /// `count` short WAV files under `music/<folder>`, copies of one made by sox.
    @discardableResult
    func makeSongs(_ count: Int, in folder: String = "") throws -> [String] {
        let source = fixtures.path("source.wav")
        if !FileManager.default.fileExists(atPath: source) { _ = try fixtures.sineWAV("source.wav", seconds: 0.05) }
        let target = try fixtures.folder(folder.isEmpty ? "music" : "music/\(folder)")
        return try (0..<count).map { index in
            let path = target + "/song \(index).wav"
            try FileManager.default.copyItem(atPath: source, toPath: path)
            return path
        }
    }

    func library(_ folders: [String]? = nil, busyTimeout: Double = 2) throws -> MediaLibrary {
        try MediaLibrary(folders: folders ?? [music], databasePath: databasePath, busyTimeout: busyTimeout)
    }

    /// What a query would read: every item, through a library of its own (as another process would open it).
    func queryCount(busyTimeout: Double = 2) throws -> Int {
        let reader = try MediaLibrary(
            folders: [], databasePath: databasePath, createIfMissing: false, busyTimeout: busyTimeout)
        return try MediaQuery(library: reader).results().items.count
    }

    /// The names in the index's folder: the index, its journal, and any `.broken` files.
    func indexFolder() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: fixtures.path("index")).sorted()
    }

    // MARK: - Locks

    @Test func aLockHeldByAnotherProcessIsWaitedOutAndNeverTakenForDamage() throws {
        try makeSongs(6)
        #expect(try library().scan().added == 6)
        // The sqlite3 command takes the write lock, says so by touching a file, and holds it for 8 s (long enough
        // for the two short waits below on a loaded machine).
        let marker = fixtures.path("locked")
        let holder = try ChildProcess([
            "sqlite3", databasePath, "BEGIN EXCLUSIVE;", ".shell touch '\(marker)'", ".shell sleep 8", "COMMIT;"
        ])
        defer { holder.terminate() }
        try #require(eventually { FileManager.default.fileExists(atPath: marker) })

        // Past a short timeout: a typed "locked" error, for a query and for a scan, and the file stays.
        var queryOutcome = "no error"
        do { _ = try queryCount(busyTimeout: 0.3) } catch { queryOutcome = "\(error)" }
        #expect(queryOutcome.contains("locked by another connection"), "\(queryOutcome)")
        #expect(throws: LibraryError.self) { try library(busyTimeout: 0.3).scan() }
        // With a timeout longer than the lock: the query waits, and reads everything.
        #expect(try queryCount(busyTimeout: 60) == 6)
        #expect(holder.waitForExit(within: 30))
        #expect(try indexFolder() == ["library.sqlite"])  // nothing moved aside, no journal or -wal left
        let rescan = try library(busyTimeout: 60).scan()
        #expect((rescan.added, rescan.removed) == (0, 0), "\(rescan)")
        #expect(rescan.warnings.isEmpty, "\(rescan.warnings)")
        #expect(try queryCount() == 6)
    }

    @Test func aQueryDuringARescanNeitherWritesNorLosesTheRescansWork() throws {
        try makeSongs(10, in: "first")
        #expect(try library().scan().added == 10)
        let before = try indexSnapshot()
        #expect(try queryCount() == 10)
        #expect(try indexSnapshot() == before, "a query changed the index's files")

        try makeSongs(30, in: "second")
        var seenMidway: [String] = []
        let report = try library().scan { progress in
            // Inside the rescan's write transaction: another reader, with a timeout too short to wait for anything.
            guard progress.filesDone == 25 else { return }
            do { seenMidway.append("\(try queryCount(busyTimeout: 0.05)) items") } catch {
                seenMidway.append("\(error)")
            }
        }
        #expect(report.added == 30)
        // The query read what was committed (or, at worst, was told the index is locked); it moved nothing aside.
        #expect(
            seenMidway.count == 1 && (seenMidway[0].hasSuffix(" items") || seenMidway[0].contains("locked")),
            "\(seenMidway)")
        #expect(seenMidway.first.map { $0 == "0 items" } != true, "\(seenMidway)")
        #expect(try queryCount() == 40)
        #expect(try indexFolder() == ["library.sqlite"])
    }

    /// The index's files with their inode, size, mode and modification time.
    func indexSnapshot() throws -> [String] {
        try indexFolder().map { name in
            var status = stat()
            _ = stat(fixtures.path("index/" + name), &status)
            return "\(name) \(status.st_ino) \(status.st_size) \(status.st_mode) \(status.st_mtim.tv_sec)."
                + "\(status.st_mtim.tv_nsec)"
        }
    }

    // MARK: - What a scan may remove

    @Test func aSecondFolderScannedIntoTheSameIndexKeepsTheFirst() throws {
        let first = try makeSongs(3, in: "one")
        try makeSongs(2, in: "two")
        #expect(try library([music + "/one"]).scan().added == 3)
        let second = try library([music + "/two"]).scan()
        #expect((second.added, second.removed) == (2, 0), "\(second)")
        #expect(try queryCount() == 5)
        // A rescan of the first still removes what it saw to be gone, and only that.
        try FileManager.default.removeItem(atPath: first[0])
        let rescan = try library([music + "/one"]).scan()
        #expect((rescan.added, rescan.removed) == (0, 1), "\(rescan)")
        #expect(try queryCount() == 4)

        // The same through the command, into one index.
        let other = fixtures.path("other.sqlite")
        for folder in ["one", "two"] {
            let scan = try ToolRunner.run(["library", "scan", music + "/" + folder, "--db", other])
            #expect(scan.status == 0, "\(scan.stderr)")
            #expect(scan.stdout.contains(" 0 removed"), "\(scan.stdout)")
        }
        let query = try ToolRunner.run(["library", "query", "--db", other])
        #expect(query.status == 0, "\(query.stderr)")
        #expect(query.stdout.split(separator: "\n").count == 4, "\(query.stdout)")
    }

    @Test func aFolderThatCannotBeListedKeepsWhatTheIndexHeld() throws {
        try makeSongs(2)
        try makeSongs(2, in: "locked")
        try makeSongs(1, in: "locked/deeper")
        try makeSongs(2, in: "unsearchable")
        try fixtures.folder("index")
        try fixtures.run("chown", ["-R", "65534:65534", fixtures.directory.path])
        try NobodyIdentity.run {
            #expect(try library().scan().added == 7)
            // "locked" cannot be listed; "unsearchable" can be, but nothing in it can be looked at.
            #expect(chmod(music + "/locked", 0) == 0)
            #expect(chmod(music + "/unsearchable", 0o444) == 0)
            defer {
                chmod(music + "/locked", 0o755)
                chmod(music + "/unsearchable", 0o755)
            }
            let rescan = try library().scan()
            #expect((rescan.added, rescan.updated, rescan.removed) == (0, 0, 0), "\(rescan)")
            #expect(
                rescan.warnings.contains { $0.path == music + "/locked" && $0.reason.contains("cannot list folder") },
                "\(rescan.warnings)")
            #expect(rescan.failed.filter { $0.path.hasPrefix(music + "/unsearchable/") }.count == 2, "\(rescan.failed)")
            #expect(try queryCount() == 7)

            // The whole library folder unlistable: still nothing removed.
            #expect(chmod(music, 0) == 0)
            let blind = try library().scan()
            #expect(chmod(music, 0o755) == 0)
            #expect(blind.removed == 0, "\(blind)")
            #expect(blind.warnings.contains { $0.path == music && $0.reason.contains("cannot list folder") })
            #expect(try queryCount() == 7)
        }
        // Listable again, and a file really deleted: that one goes.
        try FileManager.default.removeItem(atPath: music + "/locked/deeper/song 0.wav")
        let healed = try library().scan()
        #expect((healed.removed, healed.failed.count) == (1, 0), "\(healed)")
        #expect(try queryCount() == 6)
    }

    @Test func aFolderDeeperThanPathMaxIsReported() throws {
        try makeSongs(1)
        let song = try fixtures.bytes(of: music + "/song 0.wav")
        // Folders of 200-byte names, nested past PATH_MAX, made relative to each other (no path could name them).
        var folder = open(music, O_RDONLY | O_DIRECTORY)
        try #require(folder >= 0)
        let name = String(repeating: "d", count: 200)
        var depth = music.utf8.count
        while depth <= Int(PATH_MAX) + 400 {
            try #require(mkdirat(folder, name, 0o755) == 0)
            let next = openat(folder, name, O_RDONLY | O_DIRECTORY)
            close(folder)
            folder = next
            try #require(folder >= 0)
            depth += 201
        }
        let file = openat(folder, "deep.wav", O_WRONLY | O_CREAT, 0o644)
        try #require(file >= 0)
        #expect(song.withUnsafeBytes { write(file, $0.baseAddress, $0.count) } == song.count)
        close(file)
        close(folder)
        defer { _ = try? fixtures.run("rm", ["-rf", music + "/" + name]) }  // past PATH_MAX: rm walks it with openat

        let report = try library().scan()
        #expect(report.added == 1)
        let deep = report.warnings.filter { $0.reason.contains("PATH_MAX") }
        #expect(deep.count == 1, "\(report.warnings)")
        #expect(deep.first.map { $0.path.utf8.count > Int(PATH_MAX) } == true)

        // The command prints it with the report, and the log says it too.
        let command = try ToolRunner.run(["library", "scan", music, "--db", fixtures.path("command.sqlite")])
        #expect(command.status == 0, "\(command.stderr)")
        #expect(
            command.stdout.split(separator: "\n").contains { $0.hasPrefix("warning: ") && $0.contains("PATH_MAX") },
            "\(command.stdout)")
        #expect(
            command.stderrLines.contains { $0.hasPrefix("ambience: warning: library: ") && $0.contains("PATH_MAX") },
            "\(command.stderr)")
    }

    // MARK: - The index file

    @Test func aReadOnlyIndexAnswersAndLeavesNothingBehind() throws {
        try makeSongs(4)
        try fixtures.folder("index")
        try fixtures.run("chown", ["-R", "65534:65534", fixtures.directory.path])
        try NobodyIdentity.run {
            #expect(try library().scan().added == 4)
            let healthy = try indexFolder()
            #expect(healthy == ["library.sqlite"])

            // The file read-only: a query reads it; a scan is told, and moves nothing.
            #expect(chmod(databasePath, 0o444) == 0)
            #expect(try queryCount() == 4)
            var scanOutcome = "no error"
            do { try library().scan() } catch { scanOutcome = "\(error)" }
            #expect(scanOutcome.contains("read-only"), "\(scanOutcome)")
            #expect(try indexFolder() == healthy)
            #expect(chmod(databasePath, 0o644) == 0)

            // Its folder read-only: the same.
            #expect(chmod(fixtures.path("index"), 0o555) == 0)
            #expect(try queryCount() == 4)
            try makeSongs(1, in: "new")
            var dirOutcome = "no error"
            do { try library().scan() } catch { dirOutcome = "\(error)" }
            #expect(dirOutcome.contains("read-only"), "\(dirOutcome)")
            #expect(chmod(fixtures.path("index"), 0o755) == 0)
            #expect(try indexFolder() == healthy)

            // Permission given back: everything works, nothing was left half-made.
            let report = try library().scan()
            #expect((report.added, report.removed) == (1, 0), "\(report)")
            #expect(report.warnings.isEmpty, "\(report.warnings)")
            #expect(try queryCount() == 5)
        }
    }

    @Test func anIndexTruncatedUnderARunningReaderIsAnErrorNotSIGBUS() throws {
        try makeSongs(300)
        let library = try library()
        #expect(try library.scan().added == 300)
        #expect(MediaQuery(library: library).items.count == 300)
        // No part of the index is mapped into memory (a page read through a map past a new end is SIGBUS). Checked
        // first, so that a mapped index fails here instead of killing the test process below.
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        try #require(!maps.contains(databasePath), "the index is memory-mapped")

        var size = stat()
        try #require(stat(databasePath, &size) == 0 && size.st_size > 4 * 4096)
        #expect(truncate(databasePath, 8192) == 0)
        #expect(throws: LibraryError.self) { try MediaQuery(library: library).results() }
        #expect(throws: LibraryError.self) { try queryCount() }
        // A scan finds the damage, keeps the file aside and rebuilds.
        let report = try library.scan()
        #expect(report.added == 300)
        #expect(report.warnings.first?.reason.contains("moved to \(databasePath).broken") == true, "\(report.warnings)")
        #expect(MediaQuery(library: library).items.count == 300)
    }

    @Test func anIndexInWriteAheadLogModeFromAnEarlierVersionIsConvertedByTheFirstScan() throws {
        try makeSongs(3)
        #expect(try library().scan().added == 3)
        #expect(try fixtures.run("sqlite3", [databasePath, "PRAGMA journal_mode=WAL;"]).contains("wal"))
        #expect(try queryCount() == 3)  // read as it is
        let report = try library().scan()
        #expect((report.added, report.removed) == (0, 0), "\(report)")
        // Bytes 18 and 19 of the header: 1 for a rollback journal, 2 for WAL.
        #expect(try fixtures.bytes(of: databasePath)[18...19] == [1, 1])
        #expect(try indexFolder() == ["library.sqlite"])
        #expect(try queryCount() == 3)
    }

    @Test func twoDamagedIndexesLeaveTwoBrokenFiles() throws {
        try makeSongs(2)
        try fixtures.folder("index")
        let first = Array(String(repeating: "first damage ", count: 400).utf8)
        let second = Array(String(repeating: "second damage ", count: 400).utf8)
        var warnings: [String] = []
        for garbage in [first, second] {
            _ = try fixtures.write("index/library.sqlite", bytes: garbage)
            let report = try library().scan()
            #expect(report.added == 2)
            warnings += report.warnings.map(\.reason)
        }
        #expect(try indexFolder() == ["library.sqlite", "library.sqlite.broken", "library.sqlite.broken.2"])
        #expect(try fixtures.bytes(of: databasePath + ".broken") == first)
        #expect(try fixtures.bytes(of: databasePath + ".broken.2") == second)
        #expect(warnings.count == 2 && warnings[1].contains("moved to \(databasePath).broken.2"), "\(warnings)")
        #expect(try queryCount() == 2)
    }
}

/// The file-system identity of `nobody` (uid and gid 65534) for the calling thread only. Linux keeps a file-system
/// uid and gid per thread (`setfsuid`, `setfsgid`; glibc does not pass them to other threads), and while the uid is
/// not 0 the thread loses CAP_DAC_OVERRIDE and the other file capabilities: a mode of 000 stops it as it would stop
/// a user. Glibc's Swift module does not export the two calls, so they are found with `dlsym`.
enum NobodyIdentity {
    private typealias SetIdentity = @convention(c) (UInt32) -> Int32

    private static func function(_ name: String) throws -> SetIdentity {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
            throw FixtureError.toolFailed("\(name) not found")
        }
        return unsafeBitCast(symbol, to: SetIdentity.self)
    }

    /// Runs `body` as `nobody`, on this thread (the body must not await), and then as root again.
    static func run<T>(_ body: () throws -> T) throws -> T {
        let setUser = try function("setfsuid"), setGroup = try function("setfsgid")
        _ = setGroup(65534)
        _ = setUser(65534)
        defer {
            _ = setUser(0)
            _ = setGroup(0)
        }
        // Each call returns the identity before it: asking for an impossible one reads the current one.
        guard setUser(UInt32.max) == 65534, setGroup(UInt32.max) == 65534 else {
            throw FixtureError.toolFailed("setfsuid(65534) did not take")
        }
        return try body()
    }
}
