import Foundation
import Glibc
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
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

}

private final class PickerDelegate: MediaPickerDelegate {
    var picked: [MediaItemCollection] = []
    var cancelled = 0
    func mediaPicker(_ picker: MediaPicker, didPick collection: MediaItemCollection) { picked.append(collection) }
    func mediaPickerDidCancel(_ picker: MediaPicker) { cancelled += 1 }
}
