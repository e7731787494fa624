import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

extension MediaLibraryTests {
    // MARK: - The index file

    @Test func aFileThatIsNotADatabaseIsMovedAsideAndRebuilt() throws {
        try fixtures.libraryOgg("music/a.ogg", ["TITLE=A"])
        try fixtures.folder("index")
        _ = try fixtures.write(
            "index/library.sqlite", bytes: Array(String(repeating: "not a database ", count: 400).utf8))
        let library = try openLibrary()
        #expect(library.openingWarnings.isEmpty)  // opening touches nothing: the first write finds the damage
        let report = try library.scan()
        let warning = try #require(report.warnings.first)
        #expect(warning.path == databasePath)
        #expect(warning.reason.contains("not a database"))
        #expect(warning.reason.contains("moved to \(databasePath).broken"))
        #expect(report.added == 1)
        #expect(FileManager.default.fileExists(atPath: databasePath + ".broken"))
        #expect(library.openingWarnings.isEmpty)  // reported once
    }

    @Test func aDamagedIndexIsDetectedAndRebuilt() throws {
        try makeCollection()
        do {
            let library = try openLibrary()
            try library.scan()
        }  // closed: the write-ahead log is checkpointed into the file
        var bytes = try fixtures.bytes(of: databasePath)
        #expect(bytes.count > 3 * 4096)
        for offset in 4096..<min(bytes.count, 3 * 4096) { bytes[offset] = 0xA5 }
        _ = try fixtures.write("index/library.sqlite", bytes: bytes)

        let library = try openLibrary()
        let report = try library.scan()
        #expect(report.warnings.first?.path == databasePath)
        #expect(report.warnings.first?.reason.contains("database is damaged") == true, "\(report.warnings)")
        #expect(report.added == 7)
        #expect(library.items.count == 7)
    }

    @Test func aDatabaseLockedPastTheTimeoutIsAnErrorAndKept() throws {
        try fixtures.libraryOgg("music/a.ogg", ["TITLE=A"])
        try fixtures.folder("index")
        let holder = try SQLiteDatabase(path: databasePath)
        try holder.execute("CREATE TABLE t(x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1);")
        let library = try openLibrary(busyTimeout: 0.2)
        #expect(throws: LibraryError.self) { try library.scan() }
        try holder.execute("ROLLBACK")
        #expect(try holder.integer("SELECT COUNT(*) FROM t") == 0)  // the same file: not moved aside
        let report = try library.scan()
        #expect(report.warnings.isEmpty, "\(report.warnings)")
        #expect(report.added == 1)
        #expect(!FileManager.default.fileExists(atPath: databasePath + ".broken"))
    }

    @Test func queryWithoutAnIndexIsAnError() throws {
        #expect(throws: LibraryError.noIndex(databasePath)) {
            try MediaLibrary(folders: [music], databasePath: databasePath, createIfMissing: false)
        }
        #expect(throws: LibraryError.folderUnreadable(music, errno: ENOENT)) { try openLibrary().scan() }
    }

    // MARK: - Defaults

    @Test func defaultFolderAndIndexFollowXDG() throws {
        let config = try fixtures.folder("config")
        let home = "/home/player"
        func folder(_ userDirs: String?, _ extra: [String: String] = [:]) throws -> String {
            try? FileManager.default.removeItem(atPath: config + "/user-dirs.dirs")
            if let userDirs { _ = try fixtures.write("config/user-dirs.dirs", bytes: Array(userDirs.utf8)) }
            return MediaLibrary.defaultFolder(
                environment: ["HOME": home, "XDG_CONFIG_HOME": config].merging(extra) { $1 })
        }
        #expect(
            try folder("# comment\nXDG_DESKTOP_DIR=\"$HOME/Desktop\"\nXDG_MUSIC_DIR=\"$HOME/Tunes\"\n")
                == "/home/player/Tunes")
        #expect(try folder("XDG_MUSIC_DIR=\"/srv/My Music/\"") == "/srv/My Music")
        #expect(try folder("XDG_MUSIC_DIR=\"$HOME/\"") == "/home/player/Music")  // "$HOME/" means disabled
        #expect(try folder(nil) == "/home/player/Music")
        #expect(try folder("XDG_MUSIC_DIR=\"$HOME/Tunes\"", ["XDG_MUSIC_DIR": "/mnt/music"]) == "/mnt/music")
        #expect(
            MediaLibrary.defaultDatabasePath(environment: ["HOME": home, "XDG_CACHE_HOME": "/var/cache/me"])
                == "/var/cache/me/ambience/library.sqlite")
        #expect(
            MediaLibrary.defaultDatabasePath(environment: ["HOME": home, "XDG_CACHE_HOME": "relative"])
                == "/home/player/.cache/ambience/library.sqlite")
        #expect(
            MediaLibrary.defaultDatabasePath(environment: ["HOME": home])
                == "/home/player/.cache/ambience/library.sqlite")
    }
}
