import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceTestSupport

/// Ogg Vorbis and MP3 decoding, against files made by oggenc and lame: exact lengths, the tone that went in,
/// sample-exact seeking, tags and artwork, and typed errors for damaged files.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct CompressedDecoderTests {

    // MARK: - Ogg Vorbis

    @Test(arguments: [1, 2])
    func oggSineDecodesToExactLengthToneAndLevel(channels: Int) throws {
        let fixtures = try Fixtures()
        let path = try fixtures.sineOgg("sine.ogg", seconds: 1, rate: 48_000, channels: channels)

        let info = try AudioFile.info(path)
        #expect(info.format == .ogg)
        #expect(info.sampleRate == 48_000)
        #expect(info.channels == channels)
        #expect(info.frames == 48_000)

        let pcm = try AudioFile.decode(path)
        #expect(pcm.sampleRate == 48_000 && pcm.channels == channels)
        #expect(pcm.frames == 48_000)
        let signal = Signal(pcm)
        for channel in 0..<channels {
            #expect(abs(signal.dominantFrequency(channel: channel) - 440) < 1)
            #expect(abs(signal.rms(channel: channel) - 0.3536) < 0.02)
        }
    }

    @Test func oggSeekIsSampleExact() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.sweepOgg("sweep.ogg", seconds: 2, rate: 48_000, channels: 2)
        let full = try AudioFile.decode(path)
        #expect(full.frames == 96_000)

        let decoder = try AudioFile.open(path)
        for target in [12_345, 77_777, 0, 48_000] {
            try decoder.seek(toFrame: Int64(target))
            #expect(decoder.position == Int64(target))
            let chunk = try decoder.readFrames(4_096)
            #expect(chunk.count == 4_096 * 2)
            #expect(decoder.position == Int64(target + 4_096))
            let expected = Array(full.samples[(target * 2)..<((target + 4_096) * 2)])
            #expect(maxDifference(chunk, expected) < 1e-5, "after seek to \(target)")
        }
        // Near and past the end: the rest of the stream, then nothing.
        try decoder.seek(toFrame: 96_000 - 100)
        #expect(try decoder.readFrames(4_096).count == 100 * 2)
        #expect(try decoder.readFrames(4_096).isEmpty)
        try decoder.seek(toFrame: 1_000_000)
        #expect(decoder.position == 96_000)
        #expect(try decoder.readFrames(4_096).isEmpty)
    }

    @Test func oggTagsAreReadCaseInsensitivelyIncludingNonASCII() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.sineOgg(
            "tagged.ogg",
            utf8Comments: [
                "title=Ünïcødé Ñight — 夜", "Artist=Ärtist", "ALBUM=Albüm", "Album Artist=Bänd", "genre=Ambient",
                "COMPOSER=Çomposer", "TrackNumber=3/12", "DISCNUMBER=2"
            ])
        let tags = try AudioFile.info(path).tags
        #expect(tags.title == "Ünïcødé Ñight — 夜")
        #expect(tags.artist == "Ärtist")
        #expect(tags.album == "Albüm")
        #expect(tags.albumArtist == "Bänd")
        #expect(tags.genre == "Ambient")
        #expect(tags.composer == "Çomposer")
        #expect(tags.trackNumber == 3)
        #expect(tags.discNumber == 2)
        #expect(tags.hasArtwork == false)
        let decoder = try #require(try AudioFile.open(path) as? VorbisDecoder)
        #expect(decoder.embeddedPicture == nil)

        let albumArtist = try fixtures.sineOgg(
            "albumartist.ogg", utf8Comments: ["ALBUMARTIST=Ensemble", "TRACKNUMBER=7"])
        #expect(try AudioFile.info(albumArtist).tags.albumArtist == "Ensemble")
        #expect(try AudioFile.info(albumArtist).tags.trackNumber == 7)
    }

    @Test func oggPictureBlockIsDecoded() throws {
        let fixtures = try Fixtures()
        let block = flacPictureBlock(type: 3, mime: "image/png", description: "Cover", image: redPNG)
        let path = try fixtures.sineOgg(
            "cover.ogg",
            utf8Comments: [
                "TITLE=With cover", "METADATA_BLOCK_PICTURE=\(Data(block).base64EncodedString())"
            ])
        #expect(try AudioFile.info(path).tags.hasArtwork)
        let decoder = try #require(try AudioFile.open(path) as? VorbisDecoder)
        let picture = try #require(decoder.embeddedPicture)
        #expect(picture.mimeType == "image/png")
        #expect(picture.data == redPNG)
        #expect(decoder.info.tags.title == "With cover")
    }

    @Test func oggLegacyCoverArtIsDecoded() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.sineOgg(
            "coverart.ogg", utf8Comments: ["COVERART=\(Data(redPNG).base64EncodedString())"])
        let decoder = try #require(try AudioFile.open(path) as? VorbisDecoder)
        #expect(decoder.info.tags.hasArtwork)
        #expect(decoder.embeddedPicture == EmbeddedPicture(mimeType: "image/png", data: redPNG))
    }

    @Test func pictureBlockLengthsAreBoundsChecked() {
        let block = flacPictureBlock(type: 3, mime: "image/png", description: "", image: redPNG)
        #expect(EmbeddedPicture(flacPictureBlock: block)?.data == redPNG)
        // Cut anywhere: never a picture, never a crash.
        for cut in 0..<block.count { #expect(EmbeddedPicture(flacPictureBlock: Array(block.prefix(cut))) == nil) }
        // A data length beyond the block, and one over the 16 MiB limit.
        var lying = block
        lying.replaceSubrange(
            (block.count - redPNG.count - 4)..<(block.count - redPNG.count), with: bigEndian(UInt32.max))
        #expect(EmbeddedPicture(flacPictureBlock: lying) == nil)
        var huge = flacPictureBlock(type: 3, mime: "image/png", description: "", image: [])
        huge.replaceSubrange((huge.count - 4)..<huge.count, with: bigEndian(UInt32(16 << 20) + 1))
        huge += [UInt8](repeating: 0, count: (16 << 20) + 1)
        #expect(EmbeddedPicture(flacPictureBlock: huge) == nil)
        #expect(VorbisDecoder.decodeBase64(Array("not base64!".utf8), limit: 100) == nil)
        #expect(VorbisDecoder.decodeBase64(Array(Data(redPNG).base64EncodedString().utf8), limit: 100) == redPNG)
    }

    @Test func chainedOggWithOneFormatPlaysThroughAndMixedFormatsAreRefused() throws {
        let fixtures = try Fixtures()
        let a = try fixtures.bytes(of: fixtures.sineOgg("a.ogg", seconds: 0.5, rate: 48_000))
        let b = try fixtures.bytes(of: fixtures.sineOgg("b.ogg", seconds: 0.25, rate: 48_000))
        let chained = try fixtures.write("chained.ogg", bytes: a + b)
        #expect(try AudioFile.info(chained).frames == 36_000)
        #expect(try AudioFile.decode(chained).frames == 36_000)

        let c = try fixtures.bytes(of: fixtures.sineOgg("c.ogg", seconds: 0.25, rate: 44_100))
        let mixed = try fixtures.write("mixed.ogg", bytes: a + c)
        let error = decodingError { try AudioFile.open(mixed) }
        #expect(error?.isCorrupt(mentioning: "chained") == true, "\(String(describing: error))")
    }

    // MARK: - MP3

    @Test(arguments: [1, 2])
    func lameSineDecodesToOriginalLengthThanksToGaplessHeader(channels: Int) throws {
        let fixtures = try Fixtures()
        let path = try fixtures.sineMP3("sine.mp3", seconds: 1, rate: 44_100, channels: channels)

        let info = try AudioFile.info(path)
        #expect(info.format == .mp3)
        #expect(info.sampleRate == 44_100)
        #expect(info.channels == channels)
        #expect(info.frames == 44_100)

        let pcm = try AudioFile.decode(path)
        #expect(pcm.frames == 44_100)
        let signal = Signal(pcm)
        for channel in 0..<channels {
            #expect(abs(signal.dominantFrequency(channel: channel) - 440) < 1)
            #expect(abs(signal.rms(channel: channel) - 0.3536) < 0.02)
        }
        // Gapless: the tone starts at the first frame, not after the encoder delay.
        #expect(signal.firstFrame(above: 0.01).map { $0 < 10 } == true)
    }

    @Test func mp3OtherRateDecodesExactly() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.sineMP3("sine48.mp3", hz: 1_000, seconds: 0.5, rate: 48_000)
        let pcm = try AudioFile.decode(path)
        #expect(pcm.sampleRate == 48_000)
        #expect(pcm.frames == 24_000)
        #expect(abs(Signal(pcm).dominantFrequency() - 1_000) < 1)
    }

    @Test func mp3SeekLandsOnTheRightSample() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.sweepMP3("sweep.mp3", seconds: 2, rate: 44_100)
        let full = try AudioFile.decode(path)
        #expect(full.frames == 88_200)

        let decoder = try AudioFile.open(path)
        for target in [12_345, 60_001, 0, 44_100] {
            try decoder.seek(toFrame: Int64(target))
            #expect(decoder.position == Int64(target))
            let chunk = try decoder.readFrames(4_096)
            #expect(chunk.count == 4_096)
            #expect(decoder.position == Int64(target + 4_096))
            #expect(bestLag(of: chunk, in: full.samples, at: target, within: 32) == 0, "after seek to \(target)")
            let expected = Array(full.samples[target..<(target + 4_096)])
            #expect(maxDifference(chunk, expected) < 1e-5, "after seek to \(target)")
        }
        try decoder.seek(toFrame: 88_200 - 100)
        #expect(try decoder.readFrames(4_096).count == 100)
        #expect(try decoder.readFrames(4_096).isEmpty)
        try decoder.seek(toFrame: 1_000_000)
        #expect(decoder.position == 88_200)
        #expect(try decoder.readFrames(4_096).isEmpty)
        try decoder.seek(toFrame: -5)
        #expect(decoder.position == 0)
        #expect(maxDifference(try decoder.readFrames(1_000), Array(full.samples[0..<1_000])) < 1e-5)
    }

    @Test func mp3WithJunkAfterTheLastFrameStillDecodesEveryFrame() throws {
        let fixtures = try Fixtures()
        let clean = try fixtures.bytes(of: fixtures.sineMP3("clean.mp3", seconds: 1, rate: 44_100))
        var generator = SplitMix64(seed: 7)
        let junk = (0..<5_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let path = try fixtures.write("junk.mp3", bytes: clean + junk)
        let pcm = try AudioFile.decode(path)
        #expect(pcm.frames == 44_100)
        #expect(abs(Signal(pcm).dominantFrequency() - 440) < 1)
    }

    @Test func mp3ID3v2TagsIncludingUTF16() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.sineMP3(
            "tagged.mp3",
            lameTags: [
                "--id3v2-utf16", "--tt", "Ünïcødé Ñight — 夜", "--ta", "Ärtist", "--tl", "Albüm", "--tg", "Ambient",
                "--tn", "3/12", "--tv", "TPE2=Bänd", "--tv", "TCOM=Çomposer", "--tv", "TPOS=2/3", "--add-id3v2"
            ])
        let header = try fixtures.bytes(of: path).prefix(3)
        #expect(Array(header) == Array("ID3".utf8))
        let info = try AudioFile.info(path)
        #expect(info.frames == 44_100)
        let tags = info.tags
        #expect(tags.title == "Ünïcødé Ñight — 夜")
        #expect(tags.artist == "Ärtist")
        #expect(tags.album == "Albüm")
        #expect(tags.genre == "Ambient")
        #expect(tags.albumArtist == "Bänd")
        #expect(tags.composer == "Çomposer")
        #expect(tags.trackNumber == 3)
        #expect(tags.discNumber == 2)
        #expect(tags.hasArtwork == false)
        #expect(try #require(try AudioFile.open(path) as? MP3Decoder).embeddedPicture == nil)
    }

    @Test func mp3ID3v1OnlyTagIsLatin1() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.sineMP3(
            "v1.mp3",
            lameTags: [
                "--id3v1-only", "--tt", "Café", "--ta", "Motörhead", "--tl", "Señal", "--tg", "Jazz", "--tn", "7"
            ])
        let bytes = try fixtures.bytes(of: path)
        // "Café" in Latin-1
        #expect(Array(bytes.suffix(128).prefix(8)) == Array("TAG".utf8) + [0x43, 0x61, 0x66, 0xE9, 0x00])
        let tags = try AudioFile.info(path).tags
        #expect(tags.title == "Café")
        #expect(tags.artist == "Motörhead")
        #expect(tags.album == "Señal")
        #expect(tags.genre == "Jazz")
        #expect(tags.trackNumber == 7)
        #expect(try AudioFile.decode(path).frames == 44_100)
    }

    @Test func id3v2GenreCodesBecomeNames() {
        #expect(MP3Decoder.genreName(id3v2: "(17)") == "Rock")
        #expect(MP3Decoder.genreName(id3v2: "17") == "Rock")
        #expect(MP3Decoder.genreName(id3v2: "(17)Heavy Rock") == "Heavy Rock")
        #expect(MP3Decoder.genreName(id3v2: "(RX)") == "Remix")
        #expect(MP3Decoder.genreName(id3v2: "((Brackets)") == "(Brackets)")
        #expect(MP3Decoder.genreName(id3v2: "Chiptune") == "Chiptune")
        #expect(MP3Decoder.id3v1Genres.count == 148)
        #expect(MP3Decoder.id3v1Genres[26] == "Ambient")
    }

    @Test func mp3ArtworkIsExposed() throws {
        let fixtures = try Fixtures()
        let cover = try fixtures.write("cover.png", bytes: redPNG)
        let path = try fixtures.sineMP3("cover.mp3", lameTags: ["--tt", "With cover", "--ti", cover])
        let decoder = try #require(try AudioFile.open(path) as? MP3Decoder)
        #expect(decoder.info.tags.hasArtwork)
        #expect(decoder.info.tags.title == "With cover")
        let picture = try #require(decoder.embeddedPicture)
        #expect(picture.mimeType == "image/png")
        #expect(picture.data == redPNG)
        #expect(decoder.info.frames == 44_100)
    }

    // MARK: - Bad input

    @Test(arguments: ["empty.ogg", "empty.mp3"])
    func emptyFileIsEmpty(name: String) throws {
        let fixtures = try Fixtures()
        let path = try fixtures.write(name, bytes: [])
        #expect(decodingError { try AudioFile.open(path) } == .empty(path))
        #expect(decodingError { try AudioFile.decode(path) } == .empty(path))
        #expect(decodingError { try VorbisDecoder(path: path) } == .empty(path))
        #expect(decodingError { try MP3Decoder(path: path) } == .empty(path))
    }

    @Test func missingFilesDirectoriesAndFIFOsAreUnreadable() throws {
        let fixtures = try Fixtures()
        let missing = fixtures.path("absent.ogg")
        #expect(decodingError { try VorbisDecoder(path: missing) } == .unreadable(missing, errno: ENOENT))
        #expect(decodingError { try MP3Decoder(path: missing) } == .unreadable(missing, errno: ENOENT))
        let directory = fixtures.directory.path
        #expect(decodingError { try VorbisDecoder(path: directory) } == .unreadable(directory, errno: EISDIR))
        #expect(decodingError { try MP3Decoder(path: directory) } == .unreadable(directory, errno: EISDIR))
        // A FIFO with no writer would block a plain open forever.
        let fifo = fixtures.path("fifo.mp3")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(decodingError { try VorbisDecoder(path: fifo) } == .unreadable(fifo, errno: EINVAL))
        #expect(decodingError { try MP3Decoder(path: fifo) } == .unreadable(fifo, errno: EINVAL))
    }

    @Test func truncatedOggIsCorrupt() throws {
        let fixtures = try Fixtures()
        let bytes = try fixtures.bytes(of: fixtures.sineOgg("whole.ogg", seconds: 2))
        let path = try fixtures.write("half.ogg", bytes: Array(bytes.prefix(bytes.count / 2)))
        for error in [decodingError { try AudioFile.open(path) }, decodingError { try AudioFile.decode(path) }] {
            #expect(error?.isCorrupt(mentioning: "truncated") == true, "\(String(describing: error))")
            #expect(error?.isCorrupt(mentioning: "byte \(bytes.count / 2)") == true)
        }
        // Cut exactly at a page boundary: every page is whole, but the end-of-stream page is missing.
        let lastPage = try #require(lastPageStart(bytes))
        let atBoundary = try fixtures.write("boundary.ogg", bytes: Array(bytes.prefix(lastPage)))
        #expect(decodingError { try AudioFile.open(atBoundary) }?.isCorrupt(mentioning: "truncated") == true)
    }

    @Test func oggWithFlippedBytesReportsChecksumMismatch() throws {
        let fixtures = try Fixtures()
        var bytes = try fixtures.bytes(of: fixtures.sineOgg("whole.ogg", seconds: 2))
        let middle = bytes.count / 2
        for i in middle..<(middle + 64) { bytes[i] ^= 0xFF }
        let path = try fixtures.write("flipped.ogg", bytes: bytes)
        for error in [decodingError { try AudioFile.open(path) }, decodingError { try AudioFile.decode(path) }] {
            #expect(error?.isCorrupt(mentioning: "checksum") == true, "\(String(describing: error))")
        }
        // The reported offset is the start of the damaged page: before the flipped bytes, within one page of them.
        guard case .corrupt(_, let reason) = decodingError({ try AudioFile.open(path) }),
            let offset = reason.split(separator: " ").last.flatMap({ Int($0) })
        else {
            Issue.record("no byte offset in the reason"); return
        }
        #expect(offset <= middle + 63 && offset > middle - 65_536)
    }

    @Test func randomBytesAreRefused() throws {
        let fixtures = try Fixtures()
        var generator = SplitMix64(seed: 42)
        let noise = (0..<8_192).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let path = try fixtures.write("x.ogg", bytes: noise)
        #expect(decodingError { try AudioFile.open(path) } == .unsupportedFormat(path))
        #expect(decodingError { try AudioFile.decode(path) } == .unsupportedFormat(path))
        // Noise behind an Ogg capture pattern gets as far as the Ogg decoder, which calls it corrupt.
        let disguised = try fixtures.write("y.ogg", bytes: Array("OggS".utf8) + noise)
        let error = decodingError { try AudioFile.decode(disguised) }
        #expect(error.map { if case .corrupt = $0 { true } else { false } } == true, "\(String(describing: error))")
    }

    @Test func oggContainerWithoutVorbisIsNotVorbis() throws {
        let fixtures = try Fixtures()
        // One valid Ogg page (beginning and end of stream) whose packet is neither a Vorbis nor an Opus header
        // (an Opus one goes to the Opus decoder).
        let page = oggPage(payload: Array("Speex   ".utf8) + [1, 1, 0, 0, 0x80, 0xBB, 0, 0, 0, 0, 0])
        let path = try fixtures.write("speex.ogg", bytes: page)
        #expect(decodingError { try AudioFile.open(path) } == .corrupt(path, reason: "not an Ogg Vorbis stream"))
    }

    @Test func mp3WithOnlyAnID3TagHasNoFrames() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.write("tag-only.mp3", bytes: id3v2Tag(title: "Nothing but a tag"))
        #expect(try AudioFile.detectFormat(path) == .mp3)
        #expect(decodingError { try AudioFile.open(path) } == .corrupt(path, reason: "no MPEG audio frames"))
        #expect(decodingError { try AudioFile.decode(path) } == .corrupt(path, reason: "no MPEG audio frames"))

        // The same with padding after the tag.
        let padded = try fixtures.write(
            "tag-padded.mp3", bytes: id3v2Tag(title: "Tag") + [UInt8](repeating: 0, count: 4_000))
        #expect(decodingError { try AudioFile.open(padded) } == .corrupt(padded, reason: "no MPEG audio frames"))
    }

    @Test func errorsReadAsOneLine() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.write("tag-only.mp3", bytes: id3v2Tag(title: "x"))
        let error = try #require(decodingError { try AudioFile.open(path) })
        #expect(error.description == "\(path): no MPEG audio frames")
    }
}

// MARK: - Helpers

private extension Fixtures {
    /// An Ogg Vorbis sine with comments given as UTF-8 (oggenc's `--utf8`: no conversion from the locale).
    func sineOgg(_ name: String, seconds: Double = 1, utf8Comments: [String]) throws -> String {
        let wav = try sineWAV(name + ".src.wav", seconds: seconds)
        let out = path(name)
        try run("oggenc", ["-Q", "-q", "6", "--utf8"] + utf8Comments.flatMap { ["-c", $0] } + ["-o", out, wav])
        return out
    }

    /// A lame MP3 sine with tag options; lame reads non-ASCII arguments through the locale, so give it UTF-8.
    func sineMP3(_ name: String, lameTags: [String]) throws -> String {
        let wav = try sineWAV(name + ".src.wav", seconds: 1, rate: 44_100)
        let out = path(name)
        try Fixtures.run("lame", ["--quiet", "-b", "192"] + lameTags + [wav, out], environment: ["LC_ALL": "C.UTF-8"])
        return out
    }

    /// A logarithmic sweep from 100 Hz to 5 kHz: unlike a steady tone, no two stretches look alike, so a seek that
    /// lands off by a few samples shows.
    func sweepWAV(_ name: String, seconds: Double, rate: Int, channels: Int) throws -> String {
        let out = path(name)
        try run(
            "sox",
            [
                "-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "16", out,
                "synth", "\(seconds)", "sine", "100:5000", "vol", "0.5"
            ])
        return out
    }

    func sweepOgg(_ name: String, seconds: Double, rate: Int, channels: Int) throws -> String {
        let wav = try sweepWAV(name + ".src.wav", seconds: seconds, rate: rate, channels: channels)
        let out = path(name)
        try run("oggenc", ["-Q", "-q", "6", "-o", out, wav])
        return out
    }

    func sweepMP3(_ name: String, seconds: Double, rate: Int) throws -> String {
        let wav = try sweepWAV(name + ".src.wav", seconds: seconds, rate: rate, channels: 1)
        let out = path(name)
        try run("lame", ["--quiet", "-b", "192", wav, out])
        return out
    }
}

/// The lag (in frames, mono) at which `chunk` best matches `full` around `start`, by least mean squared difference.
private func bestLag(of chunk: [Float], in full: [Float], at start: Int, within range: Int) -> Int {
    var best = (lag: Int.min, error: Double.infinity)
    for lag in -range...range where start + lag >= 0 && start + lag + chunk.count <= full.count {
        var sum = 0.0
        for i in chunk.indices { let d = Double(chunk[i] - full[start + lag + i]); sum += d * d }
        if sum < best.error { best = (lag, sum) }
    }
    return best.lag
}

/// A 2×2 red PNG, complete with valid CRCs.
private let redPNG: [UInt8] = [
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x02,
    0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0xFD, 0xD4, 0x9A, 0x73, 0x00, 0x00, 0x00, 0x10, 0x49, 0x44,
    0x41,
    0x54, 0x78, 0xDA, 0x63, 0xF8, 0xCF, 0xC0, 0x00, 0x44, 0x0C, 0x10, 0x0A, 0x00, 0x1F, 0xEE, 0x03, 0xFD, 0x63, 0x5E,
    0xBB,
    0x5B, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82
]

private func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }

/// A FLAC picture block as Vorbis comments carry it (before base64).
private func flacPictureBlock(type: UInt32, mime: String, description: String, image: [UInt8]) -> [UInt8] {
    bigEndian(type) + bigEndian(UInt32(mime.utf8.count)) + Array(mime.utf8)
        + bigEndian(UInt32(description.utf8.count)) + Array(description.utf8)
        + bigEndian(2) + bigEndian(2) + bigEndian(24) + bigEndian(0)
        + bigEndian(UInt32(image.count)) + image
}

/// An ID3v2.3 tag with one TIT2 frame (ISO-8859-1 text) and nothing else.
private func id3v2Tag(title: String) -> [UInt8] {
    let text: [UInt8] = [0] + Array(title.utf8)
    let frame = Array("TIT2".utf8) + bigEndian(UInt32(text.count)) + [0, 0] + text
    let size = frame.count  // syncsafe: 7 bits per byte
    let syncsafe = (0..<4).map { UInt8((size >> (21 - 7 * $0)) & 0x7F) }
    return Array("ID3".utf8) + [3, 0, 0] + syncsafe + frame
}

/// A single Ogg page carrying one packet, flagged as both the first and the last page of its stream.
private func oggPage(payload: [UInt8]) -> [UInt8] {
    precondition(payload.count < 255)
    var page = Array("OggS".utf8) + [0, 0x02 | 0x04] + [UInt8](repeating: 0, count: 8)  // version, BOS|EOS, granule
    page += [0x78, 0x56, 0x34, 0x12] + [0, 0, 0, 0] + [0, 0, 0, 0]  // serial, sequence, CRC
    page += [1, UInt8(payload.count)] + payload
    OggPageChecksum.stamp(&page, page: 0..<page.count)
    return page
}

/// Where the last Ogg page begins (the last "OggS" capture pattern).
private func lastPageStart(_ bytes: [UInt8]) -> Int? {
    let capture = Array("OggS".utf8)
    return stride(from: bytes.count - 4, through: 1, by: -1).first { Array(bytes[$0..<($0 + 4)]) == capture }
}
