import AmbienceCore
import AmbienceDecoding

// Reading a file's tags needs the decoders; the item itself does not, so this initializer lives apart from it.
extension MediaItem {
    /// An item for a file, with its tags when they can be read. A file that cannot be read still makes an item:
    /// playing it reports a `playbackError` and the player moves on.
    public init(path: String) {
        self.init(persistentID: MediaItem.stableID(path), url: path)
        if let info = try? AudioFile.info(path) {
            title = info.tags.title
            artist = info.tags.artist
            albumTitle = info.tags.album
            albumArtist = info.tags.albumArtist
            genre = info.tags.genre
            composer = info.tags.composer
            trackNumber = info.tags.trackNumber
            discNumber = info.tags.discNumber
            playbackDuration = info.duration
            hasArtwork = info.tags.hasArtwork
        }
        if title == nil { title = path.split(separator: "/").last.map(String.init) }
    }
}
