import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

/// AAC and ALAC in MP4/M4A, made by ffmpeg, decoded through FFmpeg's libraries and checked against the ffmpeg
/// command, against the source they were encoded from, across gapless joins, and in the library.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct MP4Tests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    enum Codec: String, Sendable, CaseIterable {
        case aac, alac
        var ffmpegArguments: [String] { self == .aac ? ["-c:a", "aac", "-b:a", "256k"] : ["-c:a", "alac"] }
    }

    /// Encodes a WAV to M4A with ffmpeg.
    @discardableResult
    func m4a(_ wav: String, _ name: String, _ codec: Codec, extra: [String] = []) throws -> String {
        let out = fixtures.path(name)
        try fixtures.run("ffmpeg", ["-v", "error", "-i", wav] + codec.ffmpegArguments + extra + [out])
        return out
    }

    /// What the ffmpeg command decodes, as interleaved float.
    func ffmpegDecode(_ path: String) throws -> [Float] {
        let raw = path + ".f32"
        try fixtures.run("ffmpeg", ["-v", "error", "-i", path, "-f", "f32le", "-c:a", "pcm_f32le", raw])
        return try rawFloats(raw)
    }

    @Test(arguments: Codec.allCases)
    func decodesLikeFFmpegAtTheSourcesExactLength(_ codec: Codec) throws {
        let source = try fixtures.sineWAV("source.wav", hz: 441, seconds: 1.5, rate: 44_100, channels: 2, bits: 16)
        let file = try m4a(source, "song.m4a", codec)
        #expect(try AudioFile.detectFormat(file) == .mp4)
        let (info, samples) = try decodedSamples(AudioFile.open(file))
        #expect(info.format == .mp4 && info.sampleRate == 44_100 && info.channels == 2)
        // Exactly the frames encoded: the encoder delay is skipped and the padding cut.
        #expect(info.frames == 66_150)
        #expect(samples.count == 66_150 * 2)
        // ffmpeg skips the delay too, but (for AAC) keeps the last frame's padding: the frames both have must agree.
        let reference = try ffmpegDecode(file)
        #expect(reference.count >= samples.count)
        if codec == .alac { #expect(reference.count == samples.count) }
        let ratio = snr(samples[...], reference[..<samples.count])
        #expect(ratio >= 60, "SNR against ffmpeg \(ratio) dB")
        // And the sound is the source's, in time with it (an offset of one sample would cost far more than this).
        let original = try decodedSamples(AudioFile.open(source)).samples
        let againstSource = snr(samples[...], original[...])
        #expect(againstSource >= (codec == .alac ? 90 : 20), "SNR against the source \(againstSource) dB")
    }

    @Test(arguments: Codec.allCases)
    func seekLandsOnTheExactFrame(_ codec: Codec) throws {
        let source = try fixtures.sineWAV("source.wav", hz: 441, seconds: 2, rate: 48_000, channels: 2, bits: 16)
        let file = try m4a(source, "song.m4a", codec)
        let full = try decodedSamples(AudioFile.open(file)).samples
        let decoder = try AudioFile.open(file)
        var chunk = [Float](repeating: .nan, count: 5_000 * 2)
        for start in [0, 1, 1_023, 1_024, 4_097, 47_999, 60_000, 95_000, 40_000, 3] {
            try decoder.seek(toFrame: Int64(start))
            #expect(decoder.position == Int64(start))
            let got = try chunk.withUnsafeMutableBufferPointer {
                try decoder.read(into: $0.baseAddress!, frames: 5_000)
            }
            #expect(got == min(5_000, 96_000 - start))
            var worst: Float = 0
            for index in 0..<(got * 2) { worst = max(worst, abs(chunk[index] - full[start * 2 + index])) }
            // Decoded from a packet before the target rather than from the start, AAC differs in its last bits only;
            // a frame out of place would be off by a large fraction of the 0.5 amplitude.
            #expect(worst < 1e-3, "at frame \(start): off by \(worst)")
        }
        try decoder.seek(toFrame: 10_000_000)
        #expect(decoder.position == 96_000)
        #expect(try chunk.withUnsafeMutableBufferPointer { try decoder.read(into: $0.baseAddress!, frames: 10) } == 0)
    }

    /// A sine cut at an odd frame into two files by ffmpeg plays back as the one sine: the same test as the Ogg and
    /// MP3 pairs in MusicPlayerTests, and for lossless ALAC, sample for sample.
    @Test(arguments: Codec.allCases)
    func splitSineJoinsWithoutAGap(_ codec: Codec) throws {
        let cut = 48_000 + 1_234 + 1
        let whole = try fixtures.sineWAV("whole.wav", hz: 441, seconds: 2, rate: 48_000, channels: 1, bits: 16)
        let wa = fixtures.path("a.wav"), wb = fixtures.path("b.wav")
        try fixtures.run("sox", [whole, wa, "trim", "0s", "\(cut)s"])
        try fixtures.run("sox", [whole, wb, "trim", "\(cut)s"])
        let a = try m4a(wa, "a.m4a", codec), b = try m4a(wb, "b.m4a", codec)
        #expect(try AudioFile.info(a).frames == Int64(cut))
        #expect(try AudioFile.info(b).frames == Int64(96_000 - cut))

        let engine = try AudioEngine(.offline(sampleRate: 48_000))
        try engine.musicPlayer.setQueue(paths: [a, b])
        engine.musicPlayer.play()
        let out = try Signal(engine.render(frames: 110_000))
        let original = try AudioFile.decode(whole).samples
        #expect(out.rmsError(against: original, (cut - 4_000)..<(cut - 400)) < 0.03)
        #expect(out.rmsError(against: original, (cut + 400)..<(cut + 4_000)) < 0.03)
        #expect(out.rms((cut - 400)..<(cut + 400)) > 0.3)
        let end = try #require((0..<out.frames).last { abs(out.samples[$0 * 2]) > 1e-4 })
        #expect(abs(end - 96_000) <= 30)
        if codec == .alac {
            var worst: Float = 0
            for frame in 0..<96_000 { worst = max(worst, abs(out.samples[frame * 2] - original[frame])) }
            #expect(worst < 1e-6, "ALAC join off by \(worst)")
        }
    }

    /// An AAC item at 44.1 kHz after an MS ADPCM WAV at 48 kHz: resampled into the stream with no gap.
    @Test func aJoinBetweenFormatsAtDifferentRatesHasNoGap() throws {
        let first = try fixtures.sineWAV("first.wav", hz: 440, seconds: 1, rate: 48_000)
        let adpcm = fixtures.path("first-adpcm.wav")
        try fixtures.run("sox", [first, "-e", "ms-adpcm", adpcm])
        let second = try m4a(try fixtures.sineWAV("second.wav", hz: 660, seconds: 1, rate: 44_100), "second.m4a", .aac)
        let firstFrames = Int(try AudioFile.info(adpcm).frames)
        let engine = try AudioEngine(.offline(sampleRate: 48_000))
        try engine.musicPlayer.setQueue(paths: [adpcm, second])
        engine.musicPlayer.play()
        let out = try Signal(engine.render(frames: 120_000))
        let start = try #require(out.firstFrame(above: 0.01))
        for window in stride(from: start, to: start + 96_000 - 240, by: 240) {
            #expect(out.rms(window..<(window + 240)) > 0.05, "quiet 5 ms at frame \(window)")
        }
        #expect(abs(out.dominantFrequency(in: (start + 10_000)..<(start + 40_000)) - 440) < 2)
        #expect(
            abs(out.dominantFrequency(in: (start + firstFrames + 10_000)..<(start + firstFrames + 40_000)) - 660) < 2)
        #expect(out.peak((start + firstFrames + 48_000 + 64)..<120_000) < 0.01)
    }

    @Test(arguments: Codec.allCases)
    func readsTagsInUnicodeAndTheCover(_ codec: Codec) throws {
        let source = try fixtures.sineWAV("source.wav", seconds: 0.5, rate: 44_100)
        let cover = BuildProducts.root + "/Assets/Music/cover.png"
        let file = fixtures.path("tagged.m4a")
        try fixtures.run(
            "ffmpeg",
            ["-v", "error", "-i", source, "-i", cover, "-map", "0", "-map", "1"] + codec.ffmpegArguments
                + [
                    "-c:v", "copy", "-disposition:v", "attached_pic",
                    "-metadata", "title=Ḿüšïč ♪ 音楽", "-metadata", "artist=Sigur Rós", "-metadata",
                    "album=Ágætis byrjun",
                    "-metadata", "album_artist=Various Artists", "-metadata", "genre=Post-Rock", "-metadata",
                    "composer=Jón Þór",
                    "-metadata", "track=4/9", "-metadata", "disc=2/3", file
                ])
        let decoder = try #require(try AudioFile.open(file) as? MP4Decoder)
        let tags = decoder.info.tags
        #expect(tags.title == "Ḿüšïč ♪ 音楽")
        #expect(tags.artist == "Sigur Rós")
        #expect(tags.album == "Ágætis byrjun")
        #expect(tags.albumArtist == "Various Artists")
        #expect(tags.genre == "Post-Rock")
        #expect(tags.composer == "Jón Þór")
        #expect(tags.trackNumber == 4)
        #expect(tags.discNumber == 2)
        #expect(tags.hasArtwork)
        #expect(decoder.embeddedPicture == EmbeddedPicture(mimeType: "image/png", data: try fixtures.bytes(of: cover)))
        #expect(decoder.info.frames == 22_050)
    }

    // MARK: - Bad input

    @Test func badFilesGetTypedErrors() throws {
        let empty = try fixtures.write("empty.m4a", bytes: [])
        #expect(throws: DecodingError.empty(empty)) { try AudioFile.open(empty) }
        let header = try fixtures.write(
            "header.m4a",
            bytes: [0, 0, 0, 0x18] + Array("ftypM4A ".utf8) + [0, 0, 2, 0]
                + Array("M4A isom".utf8))
        let headerError = #expect(throws: DecodingError.self) { try AudioFile.open(header) }
        #expect(headerError?.path == header)
        let missing = fixtures.path("missing.m4a")
        #expect(throws: DecodingError.unreadable(missing, errno: ENOENT)) { try MP4Decoder(path: missing) }
        // An MP4 holding MP3 audio is a typed refusal that names the codec.
        let source = try fixtures.sineWAV("source.wav", seconds: 0.2)
        let mp3InMP4 = fixtures.path("mp3.mp4")
        try fixtures.run("ffmpeg", ["-v", "error", "-i", source, "-c:a", "libmp3lame", mp3InMP4])
        #expect(throws: DecodingError.corrupt(mp3InMP4, reason: "unsupported codec mp3 (AAC and ALAC are supported)")) {
            try AudioFile.open(mp3InMP4)
        }
    }

    /// Sample tables that claim a billion entries in a file of a few kilobytes: refused quickly, nothing allocated
    /// for the claim (FFmpeg's allocations are capped, and it finds the entries are not there).
    @Test func absurdSampleTableClaimsAreRefusedQuickly() throws {
        let source = try fixtures.sineWAV("source.wav", seconds: 0.2, rate: 44_100)
        let whole = try fixtures.bytes(of: try m4a(source, "song.m4a", .aac))
        for box in ["stsz", "stts", "stsc", "stco"] {
            let at = try #require(
                (0..<(whole.count - 4)).first { whole[$0..<($0 + 4)].elementsEqual(box.utf8) }, "\(box)")
            var bytes = whole
            // stsz: version/flags, sample size, count; the others: version/flags, count.
            let count = at + (box == "stsz" ? 12 : 8)
            bytes.replaceSubrange(count..<(count + 4), with: [0x3F, 0xFF, 0xFF, 0xF0])
            let path = try fixtures.write("\(box).m4a", bytes: bytes)
            let started = ContinuousClock.now
            do {
                let decoder = try AudioFile.open(path)
                let buffer = try PCMBuffer(decodingAllOf: decoder, limit: 100_000_000)
                #expect(Int64(buffer.frames) <= decoder.info.frames, "\(box)")
            } catch {
                #expect(error.path == path)
            }
            #expect(ContinuousClock.now - started < .seconds(5), "\(box)")
        }
    }

    /// FFmpeg's reads go through our descriptor: positioned, bounded by the file, and refused once a call has run
    /// past its time limit (which is what the interrupt callback also reports, stopping FFmpeg's loops).
    @Test func ffmpegReadsStopAtTheDeadline() throws {
        let path = try fixtures.write("bytes.bin", bytes: Array(0..<100))
        let (file, size) = try AudioFile.openRegularFile(path)
        let state = MP4Decoder.IOState(file: file, size: size)
        var buffer = [UInt8](repeating: 0, count: 64)
        state.startCall()
        #expect(state.seek(90, SEEK_SET) == 90)
        #expect(buffer.withUnsafeMutableBufferPointer { state.read($0.baseAddress!, 64) } == 10)
        #expect(buffer[0] == 90)
        #expect(buffer.withUnsafeMutableBufferPointer { state.read($0.baseAddress!, 64) } == MP4Decoder.Input.endOfFile)
        let avseekSize: Int32 = 0x10000  // AVSEEK_SIZE
        #expect(state.seek(0, avseekSize) == 100)
        #expect(state.seek(-200, SEEK_CUR) < 0)
        #expect(state.seek(-10, SEEK_END) == 90)
        state.deadline = 0
        #expect(state.pastDeadline)
        #expect(buffer.withUnsafeMutableBufferPointer { state.read($0.baseAddress!, 64) } == MP4Decoder.Input.endOfFile)
        withExtendedLifetime(file) {}
    }

    /// Cut anywhere, or with bytes changed: a typed error, or a stream no longer than it says, in [-1, 1].
    @Test(arguments: Codec.allCases)
    func truncatedAndDamagedFilesNeverCrash(_ codec: Codec) throws {
        let source = try fixtures.sineWAV("source.wav", seconds: 0.5, rate: 44_100, channels: 2)
        let whole = try fixtures.bytes(of: try m4a(source, "song.m4a", codec, extra: ["-metadata", "title=x"]))
        var random = SplitMix64(seed: 0x4D50_3421)
        var opened = 0, refused = 0
        for round in 0..<120 {
            var bytes = whole
            if round % 2 == 0 {
                bytes = Array(whole.prefix(Int.random(in: 0..<whole.count, using: &random)))
            } else {
                for _ in 0..<Int.random(in: 1...8, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            }
            let path = try fixtures.write("bad\(round).m4a", bytes: bytes)
            do {
                let decoder = try AudioFile.open(path)
                let buffer = try PCMBuffer(decodingAllOf: decoder)
                #expect(Int64(buffer.frames) <= decoder.info.frames, "round \(round)")
                #expect(buffer.samples.allSatisfy { $0 >= -1 && $0 <= 1 }, "round \(round)")
                opened += 1
            } catch {
                #expect(error.path == path)
                refused += 1
            }
            unlink(path)
        }
        #expect(opened > 0 && refused > 0, "opened \(opened), refused \(refused)")
    }
}
