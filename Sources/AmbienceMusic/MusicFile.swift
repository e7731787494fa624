import AmbienceCore
import AmbienceDecoding
import AmbiencePlatform

/// A piece of music checked for playing, from a file on disk or from a file's bytes held in memory: the format its
/// bytes show, its tags and length, and the `MediaItem` that plays it through the `MusicPlayer`.
///
/// Made from bytes, the music lives in an anonymous in-memory file (nothing is written to disk) whose path is the
/// item's `url`: the item plays only while this object lives, so keep it for as long as the item is queued.
/// Opening checks what playing needs: a tracker module opens, a MIDI file has a SoundFont to play with
/// (`DecoderOptions.soundFont`, else Debian's defaults), and anything else is a format the engine decodes.
public final class MusicFile: Sendable {
    /// What a music file holds, as its bytes show it.
    public enum Format: String, Sendable, CaseIterable {
        /// RIFF WAVE (any codec the engine decodes).
        case wav
        /// Ogg Vorbis.
        case ogg
        /// MPEG layer III.
        case mp3
        /// FLAC.
        case flac
        /// Ogg Opus.
        case opus
        /// AAC or ALAC in an MP4/M4A container.
        case mp4
        /// A tracker module (MOD, XM, S3M, IT ...), rendered by libopenmpt.
        case module
        /// A Standard MIDI File, rendered by libfluidsynth.
        case midi
    }

    /// The format the bytes show.
    public let format: Format
    /// The item to queue: the file's path (or the in-memory file's) and its tags. Its `title` is the title tag, or
    /// for a file on disk with none, the file's name (as `MediaItem(path:)` does); for bytes with none, nil.
    public let item: MediaItem
    /// The title tag alone (nil when the file has none).
    public let titleTag: String?
    /// The module's message or the file's comment, when it has one.
    public let comment: String?
    /// Seconds of one play-through (a module's or MIDI file's own loop played once).
    public var duration: Double { item.playbackDuration }
    /// The in-memory file, for music made from bytes.
    private let memory: MemoryFileHolder?

    /// The music file at `path`, with `decoding` for what a MIDI file needs (its SoundFont). Throws
    /// `EngineError.decoding` when it cannot be read, is in no format the engine decodes, or is MIDI with no
    /// SoundFont to play it.
    public convenience init(path: String, decoding: DecoderOptions = DecoderOptions()) throws(EngineError) {
        try self.init(opening: path, name: path, memory: nil, decoding: decoding)
    }

    /// Music from a whole file's bytes (any format `init(path:decoding:)` takes), held in an anonymous in-memory
    /// file; `name` is how errors name it. Empty bytes are `DecodingError.empty`.
    public convenience init(bytes: [UInt8], name: String, decoding: DecoderOptions = DecoderOptions())
        throws(EngineError)
    {
        let file = try MemoryFile.holding(bytes, name: name)
        try self.init(opening: file.path, name: name, memory: MemoryFileHolder(file), decoding: decoding)
    }

    private init(opening path: String, name: String, memory: MemoryFileHolder?, decoding: DecoderOptions)
        throws(EngineError)
    {
        let info: AudioInfo
        do throws(DecodingError) {
            info = try AudioFile.info(path, options: decoding)
            if info.format == .midi { _ = try decoding.resolvedSoundFont(for: name) }
        } catch {
            throw .decoding(memory == nil ? error : error.naming(name))
        }
        self.memory = memory
        format = Format(rawValue: info.format.rawValue) ?? .wav
        titleTag = info.tags.title
        comment = info.tags.comment
        let fileName = memory == nil ? path.split(separator: "/").last.map(String.init) : nil
        // An in-memory file's path is reused once it closes: its item's ID is a count instead.
        let id =
            memory == nil
            ? MediaItem.stableID(path)
            : MusicFile.memoryItems.withLock { count in
                count &+= 1
                return count | 1 << 63
            }
        item = MediaItem(
            persistentID: id, url: path,
            title: info.tags.title ?? fileName, artist: info.tags.artist, albumTitle: info.tags.album,
            albumArtist: info.tags.albumArtist, genre: info.tags.genre, composer: info.tags.composer,
            trackNumber: info.tags.trackNumber, discNumber: info.tags.discNumber, playbackDuration: info.duration,
            hasArtwork: info.tags.hasArtwork)
    }

    /// Items made from bytes so far.
    private static let memoryItems = Lock<UInt64>(0)
}

/// A `MemoryFile` kept alive by a `MusicFile` (set once, then only read).
private final class MemoryFileHolder: @unchecked Sendable {
    let file: MemoryFile
    init(_ file: MemoryFile) { self.file = file }
}
