import AmbienceCore
import AmbiencePlatform
import Foundation

/// A property of a media item that a query can filter on (the iOS `MPMediaItemProperty…` names).
public enum MediaItemProperty: String, Sendable, Hashable, CaseIterable {
    /// The item's `persistentID`, and its text tags: title, artist, album, album artist, genre and composer.
    case persistentID, title, artist, albumTitle, albumArtist, genre, composer
    /// The item's numbers and flags: track and disc number, `albumPersistentID`, whether it is part of a compilation,
    /// and its `MediaType`.
    case trackNumber, discNumber, albumPersistentID, isCompilation, mediaType

    /// The indexed column a predicate compares with. Text properties compare folded keys.
    var column: String {
        switch self {
        case .persistentID: "items.id"
        case .title: "items.title_key"
        case .artist: "items.artist_key"
        case .albumTitle: "items.album_key"
        case .albumArtist: "items.album_artist_key"
        case .genre: "items.genre_key"
        case .composer: "items.composer_key"
        case .trackNumber: "items.track"
        case .discNumber: "items.disc"
        case .albumPersistentID: "items.album_id"
        case .isCompilation: "items.compilation"
        case .mediaType: "items.media_type"
        }
    }

    var isText: Bool {
        switch self {
        case .title, .artist, .albumTitle, .albumArtist, .genre, .composer: true
        default: false
        }
    }
}

/// How a predicate compares. Text comparisons ignore case and diacritics: "bjork" equals "Björk".
public enum MediaPredicateComparison: Sendable, Hashable {
    /// The property equals the value.
    case equalTo
    /// The property contains the value (text only; numbers compare equal).
    case contains
}

/// The value a predicate compares with.
public enum MediaPropertyValue: Sendable, Hashable {
    /// For the text properties.
    case text(String)
    /// For the numeric properties and IDs.
    case number(Int64)
    /// For `isCompilation`.
    case flag(Bool)
}

/// One filter of a query: items whose `property` matches `value`. Several predicates must all match.
public struct MediaPropertyPredicate: Sendable, Hashable {
    /// The value the property is compared with.
    public let value: MediaPropertyValue
    /// The property compared.
    public let property: MediaItemProperty
    /// How it is compared.
    public let comparisonType: MediaPredicateComparison

    /// Items whose text `property` equals (or contains) `value`, ignoring case and diacritics.
    public init(
        value: String, forProperty property: MediaItemProperty, comparisonType: MediaPredicateComparison = .equalTo
    ) {
        self.value = .text(value)
        self.property = property
        self.comparisonType = comparisonType
    }

    /// Items whose numeric `property` (track or disc number) equals `value`.
    public init(
        value: Int, forProperty property: MediaItemProperty, comparisonType: MediaPredicateComparison = .equalTo
    ) {
        self.value = .number(Int64(value))
        self.property = property
        self.comparisonType = comparisonType
    }

    /// For `persistentID` and `albumPersistentID`.
    public init(
        value: UInt64, forProperty property: MediaItemProperty, comparisonType: MediaPredicateComparison = .equalTo
    ) {
        self.value = .number(Int64(bitPattern: value))
        self.property = property
        self.comparisonType = comparisonType
    }

    /// Items whose flag `property` (`isCompilation`) is `value`.
    public init(
        value: Bool, forProperty property: MediaItemProperty, comparisonType: MediaPredicateComparison = .equalTo
    ) {
        self.value = .flag(value)
        self.property = property
        self.comparisonType = comparisonType
    }

    /// Items of any of the given types (`forProperty: .mediaType`).
    public init(value: MediaType, forProperty property: MediaItemProperty = .mediaType) {
        self.value = .number(Int64(value.rawValue))
        self.property = property
        self.comparisonType = .equalTo
    }

    /// The SQL condition (column names come from the closed property list) and its bound values.
    var condition: (sql: String, values: [SQLiteValue]) {
        let column = property.column
        if property.isText {
            let text: String
            switch value {
            case .text(let t): text = t
            case .number(let n): text = String(n)
            case .flag(let f): text = f ? "1" : "0"
            }
            switch comparisonType {
            case .equalTo: return ("\(column) = ?", [.text(LibraryKey.sortKey(text))])
            case .contains: return ("instr(\(column), ?) > 0", [.text(LibraryKey.fold(text))])
            }
        }
        let number: Int64?
        switch value {
        case .number(let n): number = n
        case .flag(let f): number = f ? 1 : 0
        case .text(let t): number = Int64(t.trimmingCharacters(in: .whitespaces))
        }
        guard let number else { return ("0", []) }  // "track 'abc'" matches nothing
        if property == .mediaType { return ("(\(column) & ?) <> 0", [.integer(number)]) }
        if property == .isCompilation { return ("\(column) = ?", [.bool(number != 0)]) }
        return ("\(column) = ?", [.integer(number)])
    }
}

/// How a query groups its items into collections (the iOS `MPMediaGrouping` names).
public enum MediaGrouping: String, Sendable, Hashable, CaseIterable {
    /// Songs one by one (`title`), or grouped by album, artist, album artist, composer, genre or playlist.
    case title, album, artist, albumArtist, composer, genre, playlist
}

/// A run of a query's items or collections under one index title: `A`…`Z`, or `#` for anything else.
public struct MediaQuerySection: Sendable, Hashable {
    /// `A`…`Z`, or `#`.
    public var title: String
    /// The positions, in the items or collections the section belongs to, that it covers.
    public var range: Range<Int>
    /// A section titled `title` over `range`.
    public init(title: String, range: Range<Int>) { self.title = title; self.range = range }
}

/// A collection's name and size, without its items: what a list of albums or artists shows.
public struct MediaGroup: Sendable, Hashable {
    /// The album, artist, genre, composer or playlist name; nil for items without that tag.
    public var name: String?
    /// Items in the group.
    public var count: Int
    /// The album's `albumPersistentID`, the playlist's ID, or a stable hash of the group's key.
    public var persistentID: UInt64
    /// Whether the group is a compilation album.
    public var isCompilation: Bool
}

/// A playlist from a `.m3u`/`.m3u8` file in the library.
public struct MediaPlaylist: Sendable, Hashable, Identifiable {
    /// Stable across rescans while the playlist file stays where it is.
    public var persistentID: UInt64
    /// `#PLAYLIST:` when the file has it, otherwise the file name without its extension.
    public var name: String
    /// The playlist file.
    public var url: String
    /// The items it names that are in the library, in playlist order.
    public var items: [MediaItem]
    public var id: UInt64 { persistentID }
    /// `items` as a collection, ready for `MusicPlayer.setQueue(with:)`.
    public var collection: MediaItemCollection { MediaItemCollection(items: items) }
}

/// Everything one query returns, fetched together.
public struct MediaQueryResults: Sendable, Hashable {
    /// The matching items, sorted for the grouping.
    public var items: [MediaItem] = []
    /// `items` in runs under A–Z and `#`.
    public var itemSections: [MediaQuerySection] = []
    /// The items grouped by the query's grouping, in order.
    public var collections: [MediaItemCollection] = []
    /// `collections` in runs under A–Z and `#`.
    public var collectionSections: [MediaQuerySection] = []
}

/// A question to the media library: filter predicates (all must match) and a grouping.
///
/// Items come sorted for the grouping: by title for songs; by album, then disc and track for albums; by artist, album,
/// disc and track for artists. Collections are sorted by name, letters A–Z first and everything else (`#`) after,
/// ignoring case and diacritics. Every value reaches SQL as a bound parameter.
public struct MediaQuery: Sendable {
    /// The library the query reads.
    public let library: MediaLibrary
    /// The filters; an item must match all of them.
    public var filterPredicates: Set<MediaPropertyPredicate>
    /// How items are grouped into `collections`.
    public var groupingType: MediaGrouping

    /// A query over `library` with these filters and grouping.
    public init(
        library: MediaLibrary, filterPredicates: Set<MediaPropertyPredicate> = [], groupingType: MediaGrouping = .title
    ) {
        self.library = library
        self.filterPredicates = filterPredicates
        self.groupingType = groupingType
    }

    /// Adds a filter.
    public mutating func addFilterPredicate(_ predicate: MediaPropertyPredicate) { filterPredicates.insert(predicate) }
    /// Removes a filter.
    public mutating func removeFilterPredicate(_ predicate: MediaPropertyPredicate) {
        filterPredicates.remove(predicate)
    }

    // MARK: Presets (music only, as on iOS; playlists hold whatever they name)

    /// Every music item, by title.
    public static func songs(in library: MediaLibrary) -> MediaQuery { music(library, .title) }
    /// Music by album: one collection per album.
    public static func albums(in library: MediaLibrary) -> MediaQuery { music(library, .album) }
    /// Music by artist: one collection per artist.
    public static func artists(in library: MediaLibrary) -> MediaQuery { music(library, .artist) }
    /// Music by album artist.
    public static func albumArtists(in library: MediaLibrary) -> MediaQuery { music(library, .albumArtist) }
    /// Music by genre.
    public static func genres(in library: MediaLibrary) -> MediaQuery { music(library, .genre) }
    /// Music by composer.
    public static func composers(in library: MediaLibrary) -> MediaQuery { music(library, .composer) }
    /// Every playlist in the library, one collection each.
    public static func playlists(in library: MediaLibrary) -> MediaQuery {
        MediaQuery(library: library, groupingType: .playlist)
    }
    /// Albums whose tracks have several artists, or whose album artist is "Various Artists".
    public static func compilations(in library: MediaLibrary) -> MediaQuery {
        var query = music(library, .album)
        query.addFilterPredicate(MediaPropertyPredicate(value: true, forProperty: .isCompilation))
        return query
    }

    private static func music(_ library: MediaLibrary, _ grouping: MediaGrouping) -> MediaQuery {
        MediaQuery(library: library, filterPredicates: [MediaPropertyPredicate(value: .music)], groupingType: grouping)
    }

    // MARK: Results

    /// The matching items (empty if the index cannot be read; `results()` says why).
    public var items: [MediaItem] { (try? results().items) ?? [] }
    /// The items grouped by `groupingType`, in order.
    public var collections: [MediaItemCollection] { (try? results().collections) ?? [] }
    /// `items` in runs under A–Z and `#`, by the grouping's name (the title for songs).
    public var itemSections: [MediaQuerySection] { (try? results().itemSections) ?? [] }
    /// `collections` in runs under A–Z and `#`, by collection name.
    public var collectionSections: [MediaQuerySection] { (try? results().collectionSections) ?? [] }

    /// Items, collections and sections from one read of the index.
    public func results() throws(LibraryError) -> MediaQueryResults {
        let fetched = try library.read { (db) throws(SQLiteError) -> FetchedRows in try fetch(db) }
        var results = MediaQueryResults()
        results.items = fetched.items
        results.itemSections = Self.sections(fetched.sections.lazy.map(LibraryKey.sectionTitle(firstByte:)))
        results.collections.reserveCapacity(fetched.groupStarts.count)
        for (index, start) in fetched.groupStarts.enumerated() {
            let end = index + 1 < fetched.groupStarts.count ? fetched.groupStarts[index + 1] : fetched.items.count
            results.collections.append(MediaItemCollection(items: Array(fetched.items[start..<end])))
        }
        results.collectionSections = Self.sections(
            fetched.groupStarts.lazy.map { LibraryKey.sectionTitle(firstByte: fetched.sections[$0]) })
        return results
    }

    /// The items in order, the first byte of each one's section key (all a section title needs), and where each
    /// group starts.
    private struct FetchedRows: Sendable {
        var items: [MediaItem] = []
        var sections: [UInt8] = []
        var groupStarts: [Int] = []

        /// Notes the current row's group key: a new group starts where it differs from the previous row's.
        mutating func noteGroup(_ row: SQLiteRow, column: Int32, integer: Bool, last: inout (Int64?, String?)) {
            if integer {
                let group = row.integer(column)
                if group != last.0 || groupStarts.isEmpty { groupStarts.append(sections.count - 1); last.0 = group }
            } else {
                let group = row.text(column) ?? ""
                if group != last.1 || groupStarts.isEmpty { groupStarts.append(sections.count - 1); last.1 = group }
            }
        }
    }

    /// One query, ordered so that every group is one contiguous run (the grouping indexes give that order).
    private func fetch(_ db: SQLiteDatabase) throws(SQLiteError) -> FetchedRows {
        let (filter, values) = whereClause()
        let whereText = filter.isEmpty ? "" : "WHERE " + filter
        let sql: String
        if groupingType == .playlist {
            // Playlists repeat items, in their own order.
            sql = """
                SELECT \(LibraryRow.itemColumns), playlists.name_key, playlists.id FROM playlists
                JOIN playlist_entries e ON e.playlist_id = playlists.id JOIN items ON items.path = e.path
                \(whereText) ORDER BY playlists.name_key, playlists.id, e.position
                """
        } else {
            let shape = groupingType.shape
            sql =
                "SELECT \(LibraryRow.itemColumns), \(shape.section), \(shape.group) FROM items \(whereText) ORDER BY \(shape.order)"
        }
        var fetched = FetchedRows()
        var last: (Int64?, String?) = (nil, nil)
        try db.query(sql, values) { row in
            fetched.items.append(LibraryRow.item(row))
            fetched.sections.append(row.firstByte(LibraryRow.itemColumnCount))
            fetched.noteGroup(
                row, column: LibraryRow.itemColumnCount + 1, integer: groupingType.groupIsInteger, last: &last)
        }
        return fetched
    }

    /// The collections' names and sizes, counted by the index without loading items: cheap even for every album of
    /// a large library. For playlists without predicates, empty playlists are included.
    public func groups() throws(LibraryError) -> [MediaGroup] {
        let (filter, values) = whereClause()
        let sql: String
        if groupingType == .playlist {
            let join = filter.isEmpty ? "" : " AND " + filter
            sql = """
                SELECT playlists.name, COUNT(items.id), playlists.id, 0 FROM playlists
                LEFT JOIN playlist_entries e ON e.playlist_id = playlists.id
                LEFT JOIN items ON items.path = e.path\(join)
                GROUP BY playlists.id \(filter.isEmpty ? "" : "HAVING COUNT(items.id) > 0")
                ORDER BY playlists.name_key, playlists.id
                """
        } else {
            let shape = groupingType.shape
            // Grouped and ordered by the sort key first, so the grouping index is read in order.
            let groupBy = shape.section == shape.group ? shape.group : "\(shape.section), \(shape.group)"
            sql = """
                SELECT MIN(\(shape.name)), COUNT(*), MIN(\(shape.idSource)), MAX(items.compilation) FROM items
                \(filter.isEmpty ? "" : "WHERE " + filter)
                GROUP BY \(groupBy) ORDER BY \(groupBy)
                """
        }
        let idIsHash = groupingType != .playlist && groupingType != .album
        return try library.read { (db) throws(SQLiteError) -> [MediaGroup] in
            var groups: [MediaGroup] = []
            try db.query(sql, values) { row in
                let id = idIsHash ? RawPath.stableID(Array((row.text(2) ?? "").utf8)) : row.id(2)
                groups.append(
                    MediaGroup(
                        name: row.text(0), count: Int(row.integer(1)), persistentID: id, isCompilation: row.bool(3)))
            }
            return groups
        }
    }

    private func whereClause() -> (String, [SQLiteValue]) {
        // Sorted, so the same predicates always make the same SQL text (one prepared statement).
        let conditions = filterPredicates.map(\.condition).sorted {
            $0.sql < $1.sql || ($0.sql == $1.sql && "\($0.values)" < "\($1.values)")
        }
        return (conditions.map { "(\($0.sql))" }.joined(separator: " AND "), conditions.flatMap(\.values))
    }

    /// Contiguous runs of equal titles.
    static func sections<Titles: Collection>(_ titles: Titles) -> [MediaQuerySection] where Titles.Element == String {
        var sections: [MediaQuerySection] = []
        for (index, title) in titles.enumerated() {
            if let last = sections.last, last.title == title {
                sections[sections.count - 1].range = last.range.lowerBound..<(index + 1)
            } else {
                sections.append(MediaQuerySection(title: title, range: index..<(index + 1)))
            }
        }
        return sections
    }
}

private extension MediaGrouping {
    /// Whether the group key is an integer column (album and playlist IDs) rather than a text key.
    var groupIsInteger: Bool { self == .album || self == .playlist }

    /// For each grouping: the key that makes a group, the sortable key its section title comes from, the name shown,
    /// where a group's ID comes from, and the item order (which keeps every group contiguous).
    var shape: (group: String, section: String, name: String, idSource: String, order: String) {
        let albumArtistKey = """
            (CASE WHEN items.album_artist IS NOT NULL THEN items.album_artist_key \
            WHEN items.compilation THEN 'various artists' ELSE items.artist_key END)
            """
        let albumArtistName = """
            (CASE WHEN items.album_artist IS NOT NULL THEN items.album_artist \
            WHEN items.compilation THEN 'Various Artists' ELSE items.artist END)
            """
        let inAlbum = "items.disc, items.track, items.title_key, items.id"
        switch self {
        case .title:
            return (
                "items.title_key", "items.title_key", "items.title", "items.title_key",
                "items.title_key, items.artist_key, items.album_key, items.id"
            )
        case .album:
            return (
                "items.album_id", "items.album_key", "items.album", "items.album_id",
                "items.album_key, items.album_id, \(inAlbum)"
            )
        case .artist:
            return (
                "items.artist_key", "items.artist_key", "items.artist", "items.artist_key",
                "items.artist_key, items.album_key, items.album_id, \(inAlbum)"
            )
        case .albumArtist:
            return (
                albumArtistKey, albumArtistKey, albumArtistName, albumArtistKey,
                "\(albumArtistKey), items.album_key, items.album_id, \(inAlbum)"
            )
        case .composer:
            return (
                "items.composer_key", "items.composer_key", "items.composer", "items.composer_key",
                "items.composer_key, items.title_key, items.id"
            )
        case .genre:
            return (
                "items.genre_key", "items.genre_key", "items.genre", "items.genre_key",
                "items.genre_key, items.artist_key, items.album_key, items.album_id, \(inAlbum)"
            )
        case .playlist:
            return (
                "playlists.id", "playlists.name_key", "playlists.name", "playlists.id",
                "playlists.name_key, playlists.id"
            )
        }
    }
}

// MARK: - Folded keys

/// The indexed form of tag text: case and diacritics folded away, so "BJÖRK", "Björk" and "bjork" are one key.
///
/// A sort key also puts everything that does not start with a letter a–z after the letters, so the `#` section
/// comes last and every section is one contiguous run in SQLite's byte order.
enum LibraryKey {
    /// Never in folded text (control characters are dropped), and sorts after every ASCII letter.
    static let otherMarker = "\u{7F}"

    /// Case- and diacritic-insensitive text for matching: lower case, accents removed, control characters dropped.
    static func fold(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            // The common case, without Foundation: ASCII lower-casing.
            var bytes: [UInt8] = []
            bytes.reserveCapacity(text.utf8.count)
            for byte in text.utf8 where byte >= 0x20 && byte != 0x7F {
                bytes.append(byte >= 65 && byte <= 90 ? byte + 32 : byte)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        var scalars = String.UnicodeScalarView()
        for scalar in folded.unicodeScalars where scalar.properties.generalCategory != .control {
            scalars.append(scalar)
        }
        return String(scalars)
    }

    /// The folded text, marked to sort after A–Z unless it starts with a letter a–z. Missing text sorts with `#`.
    static func sortKey(_ text: String?) -> String {
        let folded = fold(text ?? "")
        if let first = folded.utf8.first, first >= 97, first <= 122 { return folded }
        return otherMarker + folded
    }

    /// `A`…`Z` for a key that starts with that letter (after folding: "É" is under E), otherwise `#`.
    static func sectionTitle(_ key: String) -> String { sectionTitle(firstByte: key.utf8.first ?? 0) }

    static func sectionTitle(firstByte first: UInt8) -> String {
        guard first >= 97, first <= 122 else { return "#" }
        return String(UnicodeScalar(first - 32))
    }
}
