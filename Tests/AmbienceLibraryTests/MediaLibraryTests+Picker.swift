import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

extension MediaLibraryTests {
    // MARK: - Picker

    @Test func pickerFiltersSelectsAndDelivers() throws {
        try makeCollection()
        try fixtures.libraryOgg("music/show.ogg", ["TITLE=Episode", "GENRE=Podcast"])
        let library = try openLibrary()
        try library.scan()

        let picker = MediaPicker(library: library)
        picker.prompt = "Choose the radio's songs"
        #expect(picker.shownItems.count == 7)
        #expect(picker.sections.map(\.title) == ["A", "H", "S", "X", "#"])
        picker.filterText = "BJORK"
        #expect(picker.shownItems.map(\.title) == ["Army of Me", "Hyperballad"])
        picker.filterText = "hyper  björk"
        #expect(picker.shownItems.map(\.title) == ["Hyperballad"])
        picker.filterText = "ágætis"
        #expect(picker.shownItems.map(\.title) == ["Starálfur", "Svefn-g-englar"])
        picker.filterText = ""
        #expect(picker.shownItems.count == 7)

        // One item at a time unless multiple picking is allowed.
        let items = picker.shownItems
        #expect(picker.toggleSelection(items[0]))
        #expect(picker.toggleSelection(items[1]))
        #expect(picker.selectedItems == [items[1]])
        picker.allowsPickingMultipleItems = true
        #expect(picker.toggleSelection(items[4]))
        #expect(picker.toggleSelection(items[2]))
        #expect(!picker.toggleSelection(items[1]))
        #expect(picker.selectedItems == [items[4], items[2]])
        picker.filterText = "xyz"
        #expect(picker.shownItems.isEmpty)
        #expect(picker.selectedItems.count == 2)  // hidden, still selected

        let delegate = PickerDelegate()
        picker.delegate = delegate
        var finished: [MediaPickerResult] = []
        picker.onFinish = { finished.append($0) }
        picker.done()
        picker.done()
        picker.cancel()
        #expect(delegate.picked == [MediaItemCollection(items: [items[4], items[2]])])
        #expect(delegate.cancelled == 0)
        #expect(finished == [.didPick(MediaItemCollection(items: [items[4], items[2]]))])
        #expect(picker.isFinished)

        let other = MediaPicker(library: library, mediaTypes: .podcast)
        #expect(other.shownItems.map(\.title) == ["Episode"])
        other.delegate = delegate
        other.done()  // nothing selected: a cancel
        #expect(delegate.cancelled == 1)
        other.mediaTypes = .anyAudio
        #expect(other.shownItems.count == 8)
    }

    // MARK: - The command

    @Test func commandScansAndQueries() throws {
        try makeCollection()
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

private final class PickerDelegate: MediaPickerDelegate {
    var picked: [MediaItemCollection] = []
    var cancelled = 0
    func mediaPicker(_ picker: MediaPicker, didPick collection: MediaItemCollection) { picked.append(collection) }
    func mediaPickerDidCancel(_ picker: MediaPicker) { cancelled += 1 }
}
