/// A piece of music: where it is and what its tags say. The media library fills every field; an item made from a
/// bare path reads the file's own tags.
public struct MediaItem: Sendable, Hashable, Identifiable {
    /// Stable across rescans of the library (derived from the path for items made from a path).
    public var persistentID: UInt64
    /// The file's path (called `url` as on iOS).
    public var url: String
    /// The title tag, when the file has one.
    public var title: String?
    /// The artist tag.
    public var artist: String?
    /// The album tag.
    public var albumTitle: String?
    /// The album artist tag.
    public var albumArtist: String?
    /// The genre tag.
    public var genre: String?
    /// The composer tag.
    public var composer: String?
    /// The track's number on its disc.
    public var trackNumber: Int?
    /// The disc's number in its album.
    public var discNumber: Int?
    /// Seconds.
    public var playbackDuration: Double
    /// Whether a cover picture was found, embedded or beside the file.
    public var hasArtwork: Bool
    /// Shared by every item of one album (the media library sets it; 0 for an item made from a bare path).
    public var albumPersistentID: UInt64 = 0
    /// Part of an album whose tracks have different artists, or whose album artist is "Various Artists".
    public var isCompilation: Bool = false
    /// Music, podcast or audiobook (`MediaType`).
    public var mediaType: MediaType = .music
    /// The file's path as raw bytes, set only when the path is not valid UTF-8: `url` is then a readable
    /// approximation (undecodable bytes shown as U+FFFD) and these bytes are what opens the file.
    public var pathBytes: [UInt8]? = nil
    /// The loudness the media library measured (nil until its analysis has run, `MediaLibrary.analyzeLoudness`).
    /// Loudness tags in the file itself (ReplayGain, R128) win over it when the player matches loudness.
    public var loudness: LoudnessMeasurement? = nil
    /// Where a desktop player says the cover is (`mpris:artUrl`), for the system music player's items; nil for the
    /// library's and a bare path's, whose artwork is in or beside the file. A `.file` picture is what `artwork` reads.
    public var artworkLocation: ArtworkLocation? = nil

    public var id: UInt64 { persistentID }

    /// The bytes that name the file on disk: `pathBytes` when set, otherwise `url` as UTF-8.
    public var fileSystemPath: [UInt8] { pathBytes ?? Array(url.utf8) }

    /// An item with these properties, as the library makes them (nothing is read from the file).
    public init(
        persistentID: UInt64, url: String, title: String? = nil, artist: String? = nil, albumTitle: String? = nil,
        albumArtist: String? = nil, genre: String? = nil, composer: String? = nil, trackNumber: Int? = nil,
        discNumber: Int? = nil, playbackDuration: Double = 0, hasArtwork: Bool = false
    ) {
        self.persistentID = persistentID
        self.url = url
        self.title = title
        self.artist = artist
        self.albumTitle = albumTitle
        self.albumArtist = albumArtist
        self.genre = genre
        self.composer = composer
        self.trackNumber = trackNumber
        self.discNumber = discNumber
        self.playbackDuration = playbackDuration
        self.hasArtwork = hasArtwork
    }

    /// Whether `other` is from the same album: the library's album ID when both have one, else the same album title
    /// by the same album artist (or artist).
    package func isSameAlbum(as other: MediaItem) -> Bool {
        if albumPersistentID != 0 && other.albumPersistentID != 0 {
            return albumPersistentID == other.albumPersistentID
        }
        guard let album = albumTitle, album == other.albumTitle else { return false }
        return (albumArtist ?? artist) == (other.albumArtist ?? other.artist)
    }

    /// FNV-1a of the path: the same file always gets the same ID.
    public static func stableID(_ path: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }
}

/// What kind of audio an item is (the iOS names). The library tells them apart by genre: "Podcast" makes a podcast,
/// "Audiobook" (or "Audio Book", "Spoken Word") an audiobook, anything else is music.
public struct MediaType: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Music: everything that is not a podcast or an audiobook.
    public static let music = MediaType(rawValue: 1 << 0)
    /// Genre "Podcast".
    public static let podcast = MediaType(rawValue: 1 << 1)
    /// Genre "Audiobook", "Audio Book" or "Spoken Word".
    public static let audioBook = MediaType(rawValue: 1 << 2)
    /// Every kind.
    public static let anyAudio = MediaType(rawValue: 0xFF)
}

/// An ordered group of items, as a queue or a picker's result.
public struct MediaItemCollection: Sendable, Hashable {
    /// The items, in order.
    public var items: [MediaItem]
    /// A collection of `items`, in their order.
    public init(items: [MediaItem]) { self.items = items }
    /// How many items it holds.
    public var count: Int { items.count }
    /// The item that best stands for the whole (the first).
    public var representativeItem: MediaItem? { items.first }
}
