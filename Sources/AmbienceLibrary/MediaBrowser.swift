import AmbienceCore

/// The iPod picker's way through a library: tabs for playlists, artists, albums and songs, and a drill-down from each
/// (artist → its albums → an album's songs; album → songs; playlist → songs) with a way back. The filter and the
/// A–Z index work on whatever list is in front, and every list can hand over all the songs under it ("add all").
///
/// A value: going back, filtering, the index and "add all" read nothing. Opening a tab or a row reads the library,
/// grouped by `MediaQuery` (a playlist's songs come from `MediaLibrary.playlists`).
public struct MediaBrowser: Sendable {
    /// The lists a browser opens on.
    public enum Tab: String, Sendable, Hashable, CaseIterable {
        /// Every playlist; each opens on its songs, in playlist order.
        case playlists
        /// Every artist; each opens on their albums.
        case artists
        /// Every album; each opens on its songs, in disc and track order.
        case albums
        /// Every song, by title.
        case songs
    }

    /// What a row stands for.
    public enum RowKind: Sendable, Hashable {
        /// One song.
        case song
        /// A playlist, by its `persistentID`.
        case playlist(UInt64)
        /// An artist, by name (nil: the songs without one).
        case artist(String?)
        /// An album, by its `albumPersistentID`.
        case album(UInt64)
        /// One artist's songs on an album (a row of an artist's list): on a compilation, only theirs.
        case artistsAlbum(artist: String?, album: UInt64)
    }

    /// One row of a list: a song, or a group of songs that opens on a list of its own.
    public struct Row: Sendable, Hashable {
        /// What the row stands for.
        public var kind: RowKind
        /// The song's title or the group's name; nil when the tags have none (the screen names it "Unknown").
        public var title: String?
        /// Every song under the row (the song itself, for a song), in the order the row's own list shows them.
        public var items: [MediaItem]
        /// The row's A–Z index letter, or `#`.
        public var sectionTitle: String
        /// Folded title, artist and album, for the filter.
        var search: String

        /// Whether the row opens on a list of its own.
        public var opens: Bool { kind != .song }
    }

    /// One list: a tab's, or one opened from a row, with its own filter.
    public struct List: Sendable {
        /// The tab the list belongs to.
        public var tab: Tab
        /// The row it was opened from; nil for the tab's own list.
        public var openedFrom: RowKind?
        /// The opened row's title (nil for the tab's own list, or a group without a name).
        public var title: String?
        /// Every row, unfiltered.
        public var rows: [Row]
        /// Shows only rows whose title (and, for songs, artist and album) contain every word typed, ignoring case
        /// and diacritics.
        public var filterText = ""
    }

    /// The library browsed.
    public let library: MediaLibrary
    /// Which items are offered (playlists hold whatever they name).
    public let mediaTypes: MediaType
    /// The lists open: the tab's first, then each one opened from a row of the one before.
    public private(set) var path: [List]
    /// The rows of the list in front that pass its filter.
    public private(set) var shownRows: [Row] = []
    /// `shownRows` in runs under their index letters.
    public private(set) var sections: [MediaQuerySection] = []

    /// A browser over `library`, on `tab`'s list, read at once.
    public init(library: MediaLibrary, mediaTypes: MediaType = .music, tab: Tab = .songs) {
        self.library = library
        self.mediaTypes = mediaTypes
        path = [Self.list(for: tab, openedFrom: nil, title: nil, in: library, mediaTypes: mediaTypes)]
        applyFilter()
    }

    /// The list in front.
    public var list: List { path[path.count - 1] }
    /// The tab in front.
    public var tab: Tab { path[0].tab }
    /// Whether a list was opened from a row, so `goBack()` has somewhere to go.
    public var canGoBack: Bool { path.count > 1 }

    /// The filter of the list in front; each list keeps its own, so going back shows the filter that was typed there.
    public var filterText: String {
        get { list.filterText }
        set {
            guard newValue != list.filterText else { return }
            path[path.count - 1].filterText = newValue
            applyFilter()
        }
    }

    /// Every song under the rows shown (each once, in the order shown): what "add all" adds.
    public var shownItems: [MediaItem] {
        var seen = Set<UInt64>()
        return shownRows.flatMap(\.items).filter { seen.insert($0.persistentID).inserted }
    }

    /// The index letters of the rows shown, in list order.
    public var indexTitles: [String] { sections.map(\.title) }

    /// The position in `shownRows` of the first row under `letter` (`A`…`Z` or `#`), or nil when none is shown.
    public func firstRow(under letter: String) -> Int? {
        let wanted = letter.uppercased()
        return shownRows.firstIndex { $0.sectionTitle == wanted }
    }

    /// Shows `tab`'s list, read again, with nothing opened.
    public mutating func show(_ tab: Tab) {
        path = [Self.list(for: tab, openedFrom: nil, title: nil, in: library, mediaTypes: mediaTypes)]
        applyFilter()
    }

    /// Opens the list under `row` (an artist's albums, an album's or a playlist's songs). Returns false, and changes
    /// nothing, for a song.
    @discardableResult
    public mutating func open(_ row: Row) -> Bool {
        guard row.opens else { return false }
        path.append(Self.list(for: tab, openedFrom: row.kind, title: row.title, in: library, mediaTypes: mediaTypes))
        applyFilter()
        return true
    }

    /// Back to the list the one in front was opened from. Returns false on a tab's own list.
    @discardableResult
    public mutating func goBack() -> Bool {
        guard canGoBack else { return false }
        path.removeLast()
        applyFilter()
        return true
    }

    /// Reads every open list again (after `.libraryDidChange`), keeping the filters. A list whose group is gone
    /// closes, with those opened from it.
    public mutating func reload() {
        var fresh: [List] = []
        for old in path {
            var list = Self.list(
                for: old.tab, openedFrom: old.openedFrom, title: old.title, in: library, mediaTypes: mediaTypes)
            if old.openedFrom != nil && list.rows.isEmpty { break }
            list.filterText = old.filterText
            fresh.append(list)
        }
        path = fresh
        applyFilter()
    }

    private mutating func applyFilter() {
        let terms = LibraryKey.fold(list.filterText).split(whereSeparator: { $0 == " " || $0 == "\t" }).map(
            String.init)
        shownRows =
            terms.isEmpty ? list.rows : list.rows.filter { row in terms.allSatisfy { row.search.contains($0) } }
        sections = MediaQuery.sections(shownRows.map(\.sectionTitle))
    }

    // MARK: Reading the lists

    /// A tab's list, or the list under a row of it.
    static func list(
        for tab: Tab, openedFrom: RowKind?, title: String?, in library: MediaLibrary, mediaTypes: MediaType
    ) -> List {
        let offered = MediaPropertyPredicate(value: mediaTypes)
        let rows: [Row]
        switch openedFrom {
        case nil:
            switch tab {
            case .playlists: rows = library.playlists.map(playlistRow)
            case .artists:
                rows = groupRows(MediaQuery(library: library, filterPredicates: [offered], groupingType: .artist)) {
                    .artist($0.artist)
                }
            case .albums:
                rows = groupRows(MediaQuery(library: library, filterPredicates: [offered], groupingType: .album)) {
                    .album($0.albumPersistentID)
                }
            case .songs:
                rows = MediaQuery(library: library, filterPredicates: [offered], groupingType: .title).items.map(
                    songRow)
            }
        case .artist(let name)?:
            // The songs without an artist tag have the empty name's key, so "" finds them.
            let artist = MediaPropertyPredicate(value: name ?? "", forProperty: .artist)
            rows = groupRows(MediaQuery(library: library, filterPredicates: [offered, artist], groupingType: .album)) {
                .artistsAlbum(artist: name, album: $0.albumPersistentID)
            }
        case .album(let id)?:
            let album = MediaPropertyPredicate(value: id, forProperty: .albumPersistentID)
            rows = MediaQuery(library: library, filterPredicates: [offered, album], groupingType: .album).items.map(
                songRow)
        case .artistsAlbum(let name, let id)?:
            let album = MediaPropertyPredicate(value: id, forProperty: .albumPersistentID)
            let artist = MediaPropertyPredicate(value: name ?? "", forProperty: .artist)
            rows = MediaQuery(library: library, filterPredicates: [offered, album, artist], groupingType: .album)
                .items.map(songRow)
        case .playlist(let id)?:
            rows = (library.playlists.first { $0.persistentID == id }?.items ?? []).map(songRow)
        case .song?:
            rows = []
        }
        return List(tab: tab, openedFrom: openedFrom, title: title, rows: rows)
    }

    private static func songRow(_ item: MediaItem) -> Row {
        Row(
            kind: .song, title: item.title, items: [item], sectionTitle: section(item.title),
            search: searchText([item.title, item.artist, item.albumTitle]))
    }

    private static func playlistRow(_ playlist: MediaPlaylist) -> Row {
        Row(
            kind: .playlist(playlist.persistentID), title: playlist.name, items: playlist.items,
            sectionTitle: section(playlist.name), search: searchText([playlist.name]))
    }

    /// One row per collection of `query`, named by its grouping (artist or album; an album's artist is searched too).
    private static func groupRows(_ query: MediaQuery, kind: (MediaItem) -> RowKind) -> [Row] {
        query.collections.compactMap { collection in
            guard let first = collection.items.first else { return nil }
            let name = query.groupingType == .artist ? first.artist : first.albumTitle
            let search = query.groupingType == .artist ? [name] : [name, first.albumArtist ?? first.artist]
            return Row(
                kind: kind(first), title: name, items: collection.items, sectionTitle: section(name),
                search: searchText(search))
        }
    }

    private static func section(_ name: String?) -> String { LibraryKey.sectionTitle(LibraryKey.sortKey(name)) }

    private static func searchText(_ parts: [String?]) -> String {
        parts.compactMap { $0.map(LibraryKey.fold) }.joined(separator: "\u{1}")
    }
}
