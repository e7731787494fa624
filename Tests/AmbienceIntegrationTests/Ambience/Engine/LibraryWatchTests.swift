import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

/// A watched library's changes reach the game through the engine's `update()` (the library alone is
/// `MediaLibraryTests`, in AmbienceLibraryTests).
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct LibraryWatchTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    var music: String { fixtures.path("music") }
    var databasePath: String { fixtures.path("index/library.sqlite") }

    @Test func aWatchedLibraryNotifiesThroughTheEnginesUpdate() throws {
        let source = try fixtures.libraryOgg("source.ogg", ["TITLE=Copied"])
        try fixtures.libraryOgg("music/first.ogg", ["TITLE=First"])
        let library = try MediaLibrary(folders: [music], databasePath: databasePath, busyTimeout: 2)
        try library.scan()
        let engine = try AudioEngine(.offline())
        engine.watch(library)
        library.beginGeneratingLibraryChangeNotifications()
        defer { library.endGeneratingLibraryChangeNotifications() }
        try FileManager.default.copyItem(atPath: source, toPath: music + "/copied.ogg")
        var seen: [AudioEvent] = []
        let deadline = Date().addingTimeInterval(waitBound)
        while !seen.contains(.library(.libraryDidChange)) && Date() < deadline {
            seen += engine.update()
            usleep(20_000)
        }
        #expect(seen.filter { $0 == .library(.libraryDidChange) }.count == 1)
        #expect(library.items.map(\.title) == ["Copied", "First"])
    }
}
