import AmbiencePlatform

/// The container and codec of an audio file, detected from its bytes.
package enum AudioFileFormat: String, Sendable, CaseIterable {
    case wav, ogg, mp3
    case flac
    case opus
    /// AAC or ALAC in an MP4/M4A container.
    case mp4
    /// A tracker module (MOD, XM, S3M, IT and whatever else libopenmpt opens), rendered by libopenmpt.
    case module
    /// A Standard MIDI File (type 0 or 1), rendered by libfluidsynth with a General MIDI SoundFont.
    case midi
}

/// Tags found in a file. Every field is optional: files in the wild carry any subset.
package struct AudioTags: Sendable, Equatable {
    package var title: String?
    package var artist: String?
    package var album: String?
    package var albumArtist: String?
    package var genre: String?
    package var composer: String?
    package var trackNumber: Int?
    package var discNumber: Int?
    /// Free text the file carries beside its tags: a tracker module's message (libopenmpt's `message`).
    package var comment: String?
    /// Whether the file embeds a picture (ID3v2 APIC, Vorbis METADATA_BLOCK_PICTURE or COVERART, MP4 covr).
    package var hasArtwork: Bool = false
    /// ReplayGain or R128 figures, when the file carries them (`LoudnessTags` parses them).
    package var loudness: LoudnessMeasurement?

    package init() {}
}

/// What a decoder knows about its stream before decoding any audio.
package struct AudioInfo: Sendable, Equatable {
    package var format: AudioFileFormat
    package var sampleRate: Int
    package var channels: Int
    /// The exact length in sample frames (after gapless trimming for MP3).
    package var frames: Int64
    package var tags: AudioTags
    /// Things that were wrong but could be worked around, for example a WAV data chunk longer than the file.
    package var warnings: [String] = []

    package init(
        format: AudioFileFormat, sampleRate: Int, channels: Int, frames: Int64, tags: AudioTags,
        warnings: [String] = []
    ) {
        self.format = format
        self.sampleRate = sampleRate
        self.channels = channels
        self.frames = frames
        self.tags = tags
        self.warnings = warnings
    }

    package var duration: Double { sampleRate > 0 ? Double(frames) / Double(sampleRate) : 0 }

    /// Bytes the whole stream takes decoded: `frames × channels` 32-bit floats (saturating, never trapping).
    package var decodedBytes: Int64 {
        let (samples, overflow1) = max(frames, 0).multipliedReportingOverflow(by: Int64(max(channels, 0)))
        let (bytes, overflow2) = samples.multipliedReportingOverflow(by: Int64(MemoryLayout<Float>.size))
        return overflow1 || overflow2 ? .max : bytes
    }
}

// MARK: - What a header may claim

extension AudioInfo {
    /// The sample rates a decoder accepts from a header: 1 Hz to 768 kHz. Anything else is damage, not audio.
    package static let sampleRates = 1...768_000
    /// The most channels a stream may have: 8, a 7.1 layout. Wider streams are refused with
    /// `DecodingError.tooManyChannels`; the mixer folds anything over two channels to stereo when it loads a sound.
    package static let maximumChannels = 8
    /// The longest stream, in frames: 2^40, more than 260 days at 48 kHz. Within it, every product of a position
    /// and a sample rate that the engine computes fits in 64 bits.
    package static let maximumFrames: Int64 = 1 << 40

    /// A header's sample rate and channel count as the engine's integers, or why they are refused.
    package static func checkedFormat(
        sampleRate: some BinaryInteger, channels: some BinaryInteger,
        path: String
    ) throws(DecodingError) -> (sampleRate: Int, channels: Int) {
        let channelCount: Int
        do {
            channelCount = try channels.checked(Int.self, in: 1...Int.max, "channels")
        } catch {
            throw .corrupt(path, reason: "\(channels) channels")
        }
        guard channelCount <= maximumChannels else { throw .tooManyChannels(path, channels: channelCount) }
        do {
            let rate = try sampleRate.checked(
                Int.self, in: sampleRates.lowerBound...sampleRates.upperBound, "sample rate")
            return (rate, channelCount)
        } catch {
            throw .corrupt(path, reason: "sample rate \(sampleRate) Hz is out of range")
        }
    }

    /// The frame `seconds` into the stream, where a seek to that time goes: clamped to `0...frames`. NaN and
    /// infinities are refused, so no caller's time reaches a decoder unchecked.
    package func frame(atTime seconds: Double) throws(InvalidNumber) -> Int64 {
        let time = min(max(try seconds.finite("seek time"), 0), duration)
        // Within 0...duration, the product is at most `frames` (give or take rounding): it always fits.
        return min(try (time * Double(sampleRate)).integer(Int64.self, rounding: .down, "seek frame"), frames)
    }

    /// A stream length the decoder worked out or read, refused when it is negative or over `maximumFrames`.
    package static func checkedLength(_ frames: Int64, path: String) throws(DecodingError) -> Int64 {
        guard frames >= 0 else { throw .corrupt(path, reason: "negative length (\(frames) frames)") }
        guard frames <= maximumFrames else {
            throw .corrupt(path, reason: "claims \(frames) frames, more than the \(maximumFrames) a stream may have")
        }
        return frames
    }
}

/// A stream of decoded audio. Output is interleaved 32-bit float in the file's own rate and channel count.
///
/// A decoder is owned by one thread at a time; it is not internally synchronised.
package protocol AudioDecoder: AnyObject {
    var info: AudioInfo { get }
    /// The frame the next `read` starts at.
    var position: Int64 { get }
    /// Decodes up to `frames` frames into `buffer` (room for `frames * channels` floats).
    /// Returns the number of frames written; 0 means the end of the stream.
    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(DecodingError) -> Int
    /// Moves to an exact frame, clamped to the stream's length.
    func seek(toFrame frame: Int64) throws(DecodingError)
    /// Lets a song that plays its own loop forever (`DecoderOptions.loopsForever`) end where the pass under way
    /// ends: `read` then returns 0 there. The music player calls it when repeat-one is turned off mid-song.
    func endLoopAfterThisPass()
}

extension AudioDecoder {
    /// Formats that carry samples never loop by themselves: nothing to end.
    package func endLoopAfterThisPass() {}
}
