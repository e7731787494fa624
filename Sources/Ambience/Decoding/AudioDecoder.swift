/// The container and codec of an audio file, detected from its bytes.
public enum AudioFileFormat: String, Sendable, CaseIterable {
    case wav, ogg, mp3
}

/// Tags found in a file. Every field is optional: files in the wild carry any subset.
public struct AudioTags: Sendable, Equatable {
    public var title: String?
    public var artist: String?
    public var album: String?
    public var albumArtist: String?
    public var genre: String?
    public var composer: String?
    public var trackNumber: Int?
    public var discNumber: Int?
    /// Whether the file embeds a picture (ID3v2 APIC, Vorbis METADATA_BLOCK_PICTURE or COVERART).
    public var hasArtwork: Bool = false

    public init() {}
}

/// What a decoder knows about its stream before decoding any audio.
public struct AudioInfo: Sendable, Equatable {
    public var format: AudioFileFormat
    public var sampleRate: Int
    public var channels: Int
    /// The exact length in sample frames (after gapless trimming for MP3).
    public var frames: Int64
    public var tags: AudioTags
    /// Things that were wrong but could be worked around, for example a WAV data chunk longer than the file.
    public var warnings: [String] = []

    public var duration: Double { sampleRate > 0 ? Double(frames) / Double(sampleRate) : 0 }
}

/// A stream of decoded audio. Output is interleaved 32-bit float in the file's own rate and channel count.
///
/// A decoder is owned by one thread at a time; it is not internally synchronised.
public protocol AudioDecoder: AnyObject {
    var info: AudioInfo { get }
    /// The frame the next `read` starts at.
    var position: Int64 { get }
    /// Decodes up to `frames` frames into `buffer` (room for `frames * channels` floats).
    /// Returns the number of frames written; 0 means the end of the stream.
    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(DecodingError) -> Int
    /// Moves to an exact frame, clamped to the stream's length.
    func seek(toFrame frame: Int64) throws(DecodingError)
}
