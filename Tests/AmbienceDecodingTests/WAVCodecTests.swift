import Foundation
import Glibc
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceTestSupport

/// Every WAV codec of the issue, made by sox (and RF64 by ffmpeg), decodes like sox decodes it.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct WAVCodecTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    struct Codec: Sendable, CustomTestStringConvertible {
        var soxArguments: [String]
        var minimumSNR: Double
        var testDescription: String { soxArguments.joined(separator: " ") }
        static let all: [Codec] = [
            Codec(soxArguments: ["-e", "ms-adpcm"], minimumSNR: 40),
            Codec(soxArguments: ["-e", "ima-adpcm"], minimumSNR: 40),
            Codec(soxArguments: ["-e", "a-law"], minimumSNR: 60),
            Codec(soxArguments: ["-e", "u-law"], minimumSNR: 60),
            Codec(soxArguments: ["-b", "8", "-e", "unsigned-integer"], minimumSNR: 60),
            Codec(soxArguments: ["-b", "24"], minimumSNR: 60),
            Codec(soxArguments: ["-e", "floating-point", "-b", "64"], minimumSNR: 60)
        ]
    }

    @Test(arguments: Codec.all)
    func decodesLikeSox(_ codec: Codec) throws {
        let source = try fixtures.sineWAV("source.wav", hz: 441, seconds: 1.5, rate: 44_100, channels: 2, bits: 16)
        let encoded = fixtures.path("encoded.wav"), reference = fixtures.path("reference.f32")
        try fixtures.run("sox", [source] + codec.soxArguments + [encoded])
        try fixtures.run("sox", [encoded, "-t", "f32", "-e", "floating-point", "-b", "32", reference])
        let expected = try rawFloats(reference)
        let (info, samples) = try decodedSamples(AudioFile.open(encoded))
        #expect(info.format == .wav)
        #expect(info.sampleRate == 44_100 && info.channels == 2)
        // The frames encoded, as the `fact` chunk says. sox and libsndfile also count the rest of ADPCM's last block,
        // which the `fact` chunk says is padding.
        #expect(info.frames == 66_150)
        #expect(samples.count == 66_150 * 2)
        #expect(expected.count >= samples.count)
        #expect(codec.minimumSNR < 60 || expected.count == samples.count)
        let ratio = snr(samples[...], expected[..<min(samples.count, expected.count)])
        #expect(ratio >= codec.minimumSNR, "SNR against sox \(ratio) dB")
        // The tone itself survives, whatever the codec.
        #expect(
            abs(
                Signal(PCMBuffer(sampleRate: 44_100, channels: 2, samples: samples)).dominantFrequency(
                    in: 4_096..<36_864) - 441) < 2)
    }

    @Test func rf64AndExtensibleFromFFmpegDecodeLikeSox() throws {
        let source = try fixtures.sineWAV("source.wav", hz: 441, seconds: 1, rate: 48_000, channels: 2, bits: 24)
        let rf64 = fixtures.path("rf64.wav"), reference = fixtures.path("reference.f32")
        try fixtures.run("ffmpeg", ["-v", "error", "-i", source, "-c:a", "pcm_s24le", "-rf64", "always", rf64])
        #expect(try fixtures.bytes(of: rf64).starts(with: Array("RF64".utf8)))
        try fixtures.run("sox", [source, "-t", "f32", "-e", "floating-point", "-b", "32", reference])
        let (info, samples) = try decodedSamples(AudioFile.open(rf64))
        #expect(info.frames == 48_000)
        #expect(samples == (try rawFloats(reference)))
    }

    /// ID3v2 in a WAV's `id3 ` chunk: libsndfile finds the chunk and libmpg123 reads the tag (UTF-16 text from lame,
    /// its picture); LIST/INFO fills only what ID3 lacks.
    @Test func readsTheID3ChunkWithUnicodeAndItsPicture() throws {
        let source = try fixtures.sineWAV("source.wav", hz: 440, seconds: 0.25, rate: 44_100, channels: 1)
        let cover = BuildProducts.root + "/Assets/Music/cover.png"
        let mp3 = fixtures.path("tagged.mp3")
        try fixtures.run(
            "lame",
            [
                "--quiet", "--id3v2-only", "--id3v2-utf16", "--tt", "Ḿüšïč ♪ 音楽", "--ta", "Sigur Rós",
                "--tl", "Ágætis byrjun", "--tg", "Post-Rock", "--tn", "4/9",
                "--tv", "TPE2=Various Artists", "--tv", "TCOM=Jón Þór", "--tv", "TPOS=2/3",
                "--ti", cover, source, mp3
            ])
        let listed = fixtures.path("listed.wav")
        try fixtures.run("sox", [source, "--comment", "", listed])
        let wav = try fixtures.write(
            "id3.wav",
            bytes: appendingChunk(
                "id3 ", try id3v2Tag(ofMP3: mp3),
                toWAV: try fixtures.bytes(of: listed)))
        let decoder = try #require(try AudioFile.open(wav) as? WAVDecoder)
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
        #expect(decoder.info.frames == 11_025)
    }

    @Test func listInfoTagsFromSox() throws {
        let source = try fixtures.sineWAV("source.wav", seconds: 0.1)
        let tagged = fixtures.path("tagged.wav")
        try fixtures.run("sox", [source, "--comment", "Ünïcode comment", tagged])
        let decoder = try #require(try AudioFile.open(tagged) as? WAVDecoder)
        #expect(decoder.info.tags.hasArtwork == false)
        #expect(decoder.embeddedPicture == nil)
        #expect(decoder.info.frames == 4_800)
    }

    /// libsndfile seeks inside ADPCM blocks to the exact frame.
    @Test(arguments: ["ms-adpcm", "ima-adpcm", "u-law"])
    func seeksLandOnTheExactFrame(codec: String) throws {
        let source = try fixtures.sineWAV("source.wav", hz: 441, seconds: 1, rate: 48_000, channels: 2)
        let encoded = fixtures.path("encoded.wav")
        try fixtures.run("sox", [source, "-e", codec, encoded])
        let full = try decodedSamples(AudioFile.open(encoded)).samples
        let decoder = try AudioFile.open(encoded)
        var chunk = [Float](repeating: .nan, count: 3_000 * 2)
        for start in [0, 1, 1_017, 2_036, 2_037, 30_001, 47_999, 12] {
            try decoder.seek(toFrame: Int64(start))
            let got = try chunk.withUnsafeMutableBufferPointer {
                try decoder.read(into: $0.baseAddress!, frames: 3_000)
            }
            #expect(got == min(3_000, 48_000 - start))
            #expect(
                Array(chunk[0..<(got * 2)]) == Array(full[(start * 2)..<((start + got) * 2)]),
                "\(codec) at frame \(start)")
        }
    }

    /// An ADPCM file cut short anywhere: a typed error, or the whole blocks that are there.
    @Test func truncatedADPCMNeverCrashes() throws {
        let source = try fixtures.sineWAV("source.wav", seconds: 0.5, channels: 2)
        let adpcm = fixtures.path("adpcm.wav")
        try fixtures.run("sox", [source, "-e", "ima-adpcm", adpcm])
        let whole = try fixtures.bytes(of: adpcm)
        let full = try decodedSamples(AudioFile.open(adpcm)).samples
        for length in [0, 11, 44, 60, 61, 600, 2048, whole.count / 2, whole.count - 1] {
            let path = try fixtures.write("cut\(length).wav", bytes: Array(whole.prefix(length)))
            do {
                let (info, samples) = try decodedSamples(AudioFile.open(path))
                #expect(samples.count == Int(info.frames) * 2, "cut at \(length)")
                #expect(info.frames <= Int64(full.count / 2), "cut at \(length)")
            } catch {
                #expect(error.path == path)
                #expect(!error.reason.isEmpty)
            }
        }
    }
}
