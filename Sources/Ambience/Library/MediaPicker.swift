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
/// The game draws `shownItems` (with `sections` for an A–Z index), forwards typing to `filterText` and taps to
/// `toggleSelection(_:)`, and calls `done()` or `cancel()`. The outcome goes to `delegate` and `onFinish`, once.
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
    /// Shows only items whose title, artist or album contain every word typed, ignoring case and diacritics.
    public var filterText = "" { didSet { if filterText != oldValue { applyFilter() } } }

    /// The items offered, filtered, sorted by title.
    public private(set) var shownItems: [MediaItem] = []
    /// `shownItems` in runs under A–Z and `#`.
    public private(set) var sections: [MediaQuerySection] = []
    /// The selection, in the order it was made. Items hidden by the filter stay selected.
    public private(set) var selectedItems: [MediaItem] = []
    /// Set by `done()` or `cancel()`; afterwards both do nothing.
    public private(set) var isFinished = false

    /// Told how the session ended, once, before `onFinish`. Held weakly.
    public weak var delegate: MediaPickerDelegate?
    /// Called once with the outcome, after the delegate.
    public var onFinish: ((MediaPickerResult) -> Void)?

    /// Every offered item with its folded search text.
    private var candidates: [(item: MediaItem, search: String, section: String)] = []

    /// A picker over `library`'s items of `mediaTypes`, read at once.
    public init(library: MediaLibrary, mediaTypes: MediaType = .music) {
        self.library = library
        self.mediaTypes = mediaTypes
        reload()
    }

    /// Reads the offered items from the library again (after `.libraryDidChange`). Selected items that are gone are
    /// deselected.
    public func reload() {
        let query = MediaQuery(
            library: library, filterPredicates: [MediaPropertyPredicate(value: mediaTypes)], groupingType: .title)
        candidates = query.items.map { item in
            let search = [item.title, item.artist, item.albumTitle].compactMap { $0.map(LibraryKey.fold) }.joined(
                separator: "\u{1}")
            return (item, search, LibraryKey.sectionTitle(LibraryKey.sortKey(item.title)))
        }
        let present = Set(candidates.map(\.item.persistentID))
        selectedItems.removeAll { !present.contains($0.persistentID) }
        applyFilter()
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

    private func applyFilter() {
        let terms = LibraryKey.fold(filterText).split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        let shown =
            terms.isEmpty
            ? candidates
            : candidates.filter { candidate in
                terms.allSatisfy { candidate.search.contains($0) }
            }
        shownItems = shown.map(\.item)
        sections = MediaQuery.sections(shown.map(\.section))
    }
}
