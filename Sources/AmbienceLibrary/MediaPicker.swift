import AmbienceCore

/// How a picker session ended.
public enum MediaPickerResult: Sendable, Equatable {
    /// The items picked, in the order they were selected.
    case didPick(MediaItemCollection)
    /// The picker was cancelled, or finished with nothing selected.
    case didCancel
}

/// Told how a picker session ended (the iOS `MPMediaPickerControllerDelegate` shape).
public protocol MediaPickerDelegate: AnyObject {
    /// The picker finished with `collection`, the items selected in the order they were selected.
    func mediaPicker(_ picker: MediaPicker, didPick collection: MediaItemCollection)
    /// The picker was cancelled, or finished with nothing selected.
    func mediaPickerDidCancel(_ picker: MediaPicker)
}

/// A headless media picker: the state a picker screen shows and the choices it makes, without drawing anything.
/// It browses like the iPod's picker (`browser`): tabs for playlists, artists, albums and songs, each row of a group
/// opening on its own list, and back. The game draws `browser.shownRows` (with `sections` for an A–Z index), forwards
/// typing to `filterText`, taps on a song to `toggleSelection(_:)` and on a group to `open(_:)`, offers
/// `selectAll()` ("add all") on every list, and calls `done()` or `cancel()`. The outcome goes to `delegate` and
/// `onFinish`, once.
///
/// Used from one thread (the game's). Call `reload()` after `.libraryDidChange`.
public final class MediaPicker {
    /// The library the picker offers items from.
    public let library: MediaLibrary
    /// Which items are offered: music by default.
    public var mediaTypes: MediaType { didSet { if mediaTypes != oldValue { reload() } } }
    /// When false, selecting an item replaces the selection.
    public var allowsPickingMultipleItems = false {
        didSet {
            if !allowsPickingMultipleItems && selectedItems.count > 1 {
                selectedItems = [selectedItems[selectedItems.count - 1]]
            }
        }
    }
    /// The line shown above the list, for example "Choose songs for the radio".
    public var prompt: String?
    /// The filter of the list in front: it shows only rows whose title (for songs: title, artist or album) contains
    /// every word typed, ignoring case and diacritics. Each list keeps its own.
    public var filterText: String {
        get { browser.filterText }
        set { browser.filterText = newValue }
    }

    /// Where the picker is: the tab, the lists opened from it, and the rows shown.
    public private(set) var browser: MediaBrowser
    /// Every song under the rows shown, each once, in the order shown (on the Songs tab: the songs shown).
    public var shownItems: [MediaItem] { browser.shownItems }
    /// The rows shown, in runs under A–Z and `#`.
    public var sections: [MediaQuerySection] { browser.sections }
    /// The selection, in the order it was made. Items hidden by the filter stay selected.
    public private(set) var selectedItems: [MediaItem] = []
    /// Set by `done()` or `cancel()`; afterwards both do nothing.
    public private(set) var isFinished = false

    /// Told how the session ended, once, before `onFinish`. Held weakly.
    public weak var delegate: MediaPickerDelegate?
    /// Called once with the outcome, after the delegate.
    public var onFinish: ((MediaPickerResult) -> Void)?

    /// A picker over `library`'s items of `mediaTypes`, on the Songs tab, read at once.
    public init(library: MediaLibrary, mediaTypes: MediaType = .music) {
        self.library = library
        self.mediaTypes = mediaTypes
        browser = MediaBrowser(library: library, mediaTypes: mediaTypes)
    }

    /// Reads the offered items from the library again (after `.libraryDidChange`), keeping the tab, the lists
    /// opened and their filters. Selected items that are gone are deselected.
    public func reload() {
        if browser.mediaTypes != mediaTypes {
            browser = MediaBrowser(library: library, mediaTypes: mediaTypes, tab: browser.tab)
        } else {
            browser.reload()
        }
        let offered = MediaQuery(library: library, filterPredicates: [MediaPropertyPredicate(value: mediaTypes)])
        let present = Set(offered.items.map(\.persistentID))
        let inPlaylists = Set(library.playlists.flatMap(\.items).map(\.persistentID))
        selectedItems.removeAll { !present.contains($0.persistentID) && !inPlaylists.contains($0.persistentID) }
    }

    /// Shows `tab`'s list, with nothing opened.
    public func show(_ tab: MediaBrowser.Tab) { browser.show(tab) }

    /// Opens the list under `row` (an artist's albums, an album's or a playlist's songs); false for a song.
    @discardableResult
    public func open(_ row: MediaBrowser.Row) -> Bool { browser.open(row) }

    /// Back to the list the one in front was opened from; false on a tab's own list.
    @discardableResult
    public func goBack() -> Bool { browser.goBack() }

    /// "Add all": selects every song under the rows shown that is not selected yet, in list order. Returns how many
    /// were added. With single picking, selects the last of them.
    @discardableResult
    public func selectAll() -> Int {
        guard !isFinished else { return 0 }
        let selected = Set(selectedItems.map(\.persistentID))
        let added = browser.shownItems.filter { !selected.contains($0.persistentID) }
        guard let last = added.last else { return 0 }
        if allowsPickingMultipleItems {
            selectedItems += added
        } else {
            selectedItems = [last]
        }
        return added.count
    }

    /// Whether `item` is in the selection (compared by `persistentID`).
    public func isSelected(_ item: MediaItem) -> Bool {
        selectedItems.contains { $0.persistentID == item.persistentID }
    }

    /// Selects the item, or deselects it when it is selected. Returns whether it is selected now.
    @discardableResult
    public func toggleSelection(_ item: MediaItem) -> Bool {
        guard !isFinished else { return isSelected(item) }
        if let index = selectedItems.firstIndex(where: { $0.persistentID == item.persistentID }) {
            selectedItems.remove(at: index)
            return false
        }
        if !allowsPickingMultipleItems { selectedItems.removeAll() }
        selectedItems.append(item)
        return true
    }

    /// Deselects everything; does nothing once the picker has finished.
    public func clearSelection() { if !isFinished { selectedItems.removeAll() } }

    /// Ends the session with the selection: `didPick` when something is selected, `didCancel` when nothing is.
    public func done() {
        guard !isFinished else { return }
        if selectedItems.isEmpty { return cancel() }
        isFinished = true
        let collection = MediaItemCollection(items: selectedItems)
        delegate?.mediaPicker(self, didPick: collection)
        onFinish?(.didPick(collection))
    }

    /// Ends the session without picking.
    public func cancel() {
        guard !isFinished else { return }
        isFinished = true
        delegate?.mediaPickerDidCancel(self)
        onFinish?(.didCancel)
    }
}
