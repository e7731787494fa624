import Foundation
import Testing

@testable import AmbienceTestSupport

/// `ambience library`: scan and query from the command line, its JSON and its exit statuses (the library itself is
/// `MediaLibraryTests`, in AmbienceLibraryTests).
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct LibraryCommandTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    var music: String { fixtures.path("music") }
    var databasePath: String { fixtures.path("index/library.sqlite") }

    @Test func commandScansAndQueries() throws {
        try fixtures.libraryCollection()
        try fixtures.libraryOgg("music/bad.ogg")
        _ = try fixtures.write("music/bad.ogg", bytes: Array("junk".utf8))
        let scan = try ToolRunner.run(["library", "scan", music, "--db", databasePath])
        #expect(scan.status == 0, "\(scan.stderr)")
        #expect(scan.stdout.split(separator: "\n").last == "\(music): 8 files, 7 added, 0 updated, 0 removed, 1 failed")
        #expect(
            scan.stdout.contains(
                "failed: \(music)/bad.ogg: not a WAV, Ogg Vorbis, Ogg Opus, FLAC, MP3, MP4 (AAC, ALAC), tracker module or MIDI file"
            ))
        #expect(!scan.stdout.contains("\u{1B}"))  // no progress bar when stdout is not a terminal

        let items = try ToolRunner.run(["library", "query", "--artist", "SIGUR ROS", "--db", databasePath, "--json"])
        #expect(items.status == 0, "\(items.stderr)")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(items.stdout.utf8)) as? [[String: Any]])
        #expect(list.map { $0["title"] as? String } == ["Starálfur", "Svefn-g-englar"])
        #expect(list.allSatisfy { Set($0.keys) == ["title", "artist", "album", "duration", "path"] })
        #expect(list.first?["duration"] as? Double == 0.5)
        #expect(list.first?["path"] as? String == music + "/Sigur Rós/Ágætis byrjun/2.mp3")

        let albums = try ToolRunner.run(["library", "query", "--group", "albums", "--db", databasePath, "--json"])
        let groups = try #require(try JSONSerialization.jsonObject(with: Data(albums.stdout.utf8)) as? [[String: Any]])
        #expect(groups.map { $0["name"] as? String } == ["Ágætis byrjun", "Now Ambient", "Post", "99 Luftballons"])
        #expect(groups.map { $0["count"] as? Int } == [2, 2, 2, 1])

        let contains = try ToolRunner.run(["library", "query", "--title", "ball", "--contains", "--db", databasePath])
        #expect(
            contains.stdout.split(separator: "\n").map { $0.split(separator: "\t").first } == [
                "Hyperballad", "99 Luftballons"
            ])

        let missing = try ToolRunner.run(["library", "query", "--db", fixtures.path("nothing.sqlite")])
        #expect(missing.status == 1)
        #expect(missing.stderrLines.count == 1 && missing.stderr.hasPrefix("ambience: "))
        #expect(!FileManager.default.fileExists(atPath: fixtures.path("nothing.sqlite")))
        #expect(
            try ToolRunner.run(["library", "scan", fixtures.path("no-such-folder"), "--db", databasePath]).status == 1)
        #expect(try ToolRunner.run(["library", "query", "--group", "moods", "--db", databasePath]).status == 2)
        #expect(try ToolRunner.run(["library"]).status == 2)
        #expect(try ToolRunner.run(["library", "scan", music, "--db", databasePath, "--json"]).status == 2)
        #expect(try ToolRunner.run(["library", "--help"]).status == 0)
    }
}
