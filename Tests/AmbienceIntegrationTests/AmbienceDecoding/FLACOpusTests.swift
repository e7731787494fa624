import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

/// FLAC (libFLAC) and Ogg Opus (libopusfile), against files made by the reference encoders (`flac`, `metaflac`,
/// `opusenc`) and compared with the reference decoders (`flac -d`, `opusdec`): lengths, samples, exact seeks, gapless
/// joins, tags and covers, the library's index, and typed errors for damaged files.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct FLACOpusTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    // MARK: - Decoding like the reference decoders

    @Test(arguments: [(16, 44_100, 2), (24, 96_000, 2), (32, 48_000, 1), (16, 8_000, 6)])
    func flacDecodesLikeFlacD(bits: Int, rate: Int, channels: Int) throws {
        let wav = try fixtures.sineWAV("source.wav", hz: 997, seconds: 1.3, rate: rate, channels: channels, bits: bits)
        let flac = fixtures.path("sine.flac"), reference = fixtures.path("reference.wav")
        try fixtures.run("flac", ["-s", "-f", wav, "-o", flac])
        try fixtures.run("flac", ["-s", "-f", "-d", flac, "-o", reference])

        let info = try AudioFile.info(flac)
        #expect(info.format == .flac)
        #expect(info.sampleRate == rate && info.channels == channels)
        let expected = try AudioFile.decode(reference)
        #expect(info.frames == Int64(expected.frames))
        #expect(info.frames == Int64((1.3 * Double(rate)).rounded()))
        let decoded = try AudioFile.decode(flac)
        #expect(decoded.frames == expected.frames)
        // Lossless: the same integers, scaled the same way.
        #expect(snr(decoded.samples, expected.samples) >= 60)
        #expect(maxDifference(decoded.samples, expected.samples) < 1e-6)
    }

    @Test(arguments: [(1, 48_000), (2, 44_100)])
    func opusDecodesLikeOpusdecAt48kHz(channels: Int, inputRate: Int) throws {
        let wav = try fixtures.sineWAV(
            "source.wav", hz: 441, seconds: 1.5, rate: inputRate, channels: channels, float: true)
        let opus = fixtures.path("sine.opus"), reference = fixtures.path("reference.wav")
        try fixtures.run("opusenc", ["--quiet", "--bitrate", "128", wav, opus])
        try fixtures.run("opusdec", ["--quiet", "--rate", "48000", "--float", opus, reference])

        let info = try AudioFile.info(opus)
        #expect(info.format == .opus)
        #expect(info.sampleRate == 48_000 && info.channels == channels)
        // Pre-skip and end trim: exactly the input's length, at 48 kHz.
        #expect(info.frames == 72_000)
        let expected = try AudioFile.decode(reference)
        #expect(expected.frames == 72_000)
        let decoded = try AudioFile.decode(opus)
        #expect(decoded.frames == expected.frames)
        #expect(snr(decoded.samples, expected.samples) >= 60, "SNR \(snr(decoded.samples, expected.samples)) dB")
        let signal = Signal(decoded)
        #expect(abs(signal.dominantFrequency(channel: 0) - 441) < 1)
    }

    @Test(arguments: ["flac", "opus"])
    func seekIsSampleExact(format: String) throws {
        let path = try encode(
            fixtures.sineWAV("sweep.wav", hz: 300, seconds: 2, rate: 48_000, channels: 2, bits: 24),
            as: format)
        let full = try AudioFile.decode(path)
        #expect(full.frames == 96_000)
        let decoder = try AudioFile.open(path)
        for target in [12_345, 77_777, 0, 48_001, 95_000] {
            try decoder.seek(toFrame: Int64(target))
            #expect(decoder.position == Int64(target))
            let chunk = try decoder.readFrames(1_000)
            #expect(chunk.count == 1_000 * 2)
            #expect(decoder.position == Int64(target + 1_000))
            let expected = Array(full.samples[(target * 2)..<((target + 1_000) * 2)])
            if format == "flac" {
                #expect(chunk == expected, "after seek to \(target)")
            } else if target > 0 {
                // libopusfile restarts the decoder 80 ms before the target, so the audio just after a seek is not
                // bit for bit that of a decode from the start: the codec's state converges over the next few hundred
                // milliseconds (about 6 dB per 1000 frames on this sine). At the right frame it converges to the very
                // same samples; one frame off, it never would.
                #expect(snr(chunk, expected) >= 20, "after seek to \(target)")
                try decoder.seek(toFrame: Int64(target))
                let long = try decoder.readFrames(min(20_000, 96_000 - target))
                let tail = (long.count / 2 - 1_000)..<(long.count / 2)
                let converged = maxDifference(
                    Array(long[(tail.lowerBound * 2)..<(tail.upperBound * 2)]),
                    Array(full.samples[((target + tail.lowerBound) * 2)..<((target + tail.upperBound) * 2)]))
                #expect(converged < 1e-6 || long.count / 2 < 15_000, "after seek to \(target): \(converged)")
            } else {
                #expect(chunk == expected)
            }
        }
        try decoder.seek(toFrame: 96_000 - 100)
        #expect(try decoder.readFrames(4_096).count == 100 * 2)
        #expect(try decoder.readFrames(4_096).isEmpty)
        try decoder.seek(toFrame: 1_000_000)
        #expect(decoder.position == 96_000)
        #expect(try decoder.readFrames(4_096).isEmpty)
        try decoder.seek(toFrame: 10)
        #expect(try decoder.readFrames(5).count == 10)
    }

    /// A FLAC encoded to a pipe cannot go back to fill in STREAMINFO's length: it says 0. The decoder counts the
    /// samples when it opens the file, and seeks in it as in any other.
    @Test func flacOfUnknownLengthIsCountedAndSeekable() throws {
        let wav = try fixtures.sineWAV("source.wav", hz: 440, seconds: 1, rate: 44_100, channels: 2)
        let flac = fixtures.path("piped.flac")
        try fixtures.run(
            "bash",
            [
                "-c",
                "sox \"$0\" -t raw - | flac -s --force-raw-format --endian=little --sign=signed "
                    + "--channels=2 --bps=16 --sample-rate=44100 - -o - > \"$1\"", wav, flac
            ])
        #expect(
            try fixtures.run("metaflac", ["--show-total-samples", flac]).trimmingCharacters(in: .whitespacesAndNewlines)
                == "0")
        let info = try AudioFile.info(flac)
        #expect(info.frames == 44_100)
        let full = try AudioFile.decode(flac)
        #expect(full.samples == (try AudioFile.decode(wav)).samples)
        let decoder = try AudioFile.open(flac)
        try decoder.seek(toFrame: 30_001)
        #expect(try decoder.readFrames(500) == Array(full.samples[60_002..<61_002]))
    }

    @Test func oggIsToldApartByItsFirstPacketAndFLACBehindAnID3TagIsFLAC() throws {
        let wav = try fixtures.sineWAV("source.wav", seconds: 0.2)
        #expect(try AudioFile.detectFormat(encode(wav, as: "opus")) == .opus)
        #expect(try AudioFile.detectFormat(fixtures.sineOgg("vorbis.ogg", seconds: 0.2)) == .ogg)
        // An ID3v2.4 tag of 20 bytes (size in 7-bit bytes), then the FLAC stream, as some taggers write it.
        let flac = try fixtures.bytes(of: encode(wav, as: "flac"))
        let tagged = try fixtures.write(
            "id3.flac", bytes: Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 20] + [UInt8](repeating: 0, count: 20) + flac)
        #expect(try AudioFile.detectFormat(tagged) == .flac)
        #expect(try AudioFile.info(tagged).frames == 9_600)
    }

    // MARK: - Gapless

    /// A continuous sine cut at an odd sample into two files by the reference encoder plays back as the one sine.
    @Test(arguments: ["flac", "opus"])
    func splitSineJoinsWithoutAGap(format: String) throws {
        let cut = 48_000 + 1_235
        let whole = try fixtures.sineWAV("whole.wav", hz: 441, seconds: 2, rate: 48_000, channels: 1, bits: 24)
        let wa = fixtures.path("a.wav"), wb = fixtures.path("b.wav")
        try fixtures.run("sox", [whole, wa, "trim", "0s", "\(cut)s"])
        try fixtures.run("sox", [whole, wb, "trim", "\(cut)s"])
        let a = try encode(wa, as: format), b = try encode(wb, as: format)
        #expect(try AudioFile.info(a).frames == Int64(cut))
        #expect(try AudioFile.info(b).frames == Int64(96_000 - cut))

        let engine = try AudioEngine(.offline(sampleRate: 48_000))
        try engine.musicPlayer.setQueue(paths: [a, b])
        engine.musicPlayer.play()
        let out = try Signal(engine.render(frames: 110_000))
        let original = try AudioFile.decode(whole).samples
        if format == "flac" {
            // Lossless: every sample of both files, in place, and silence after.
            var worst: Float = 0
            for f in 0..<original.count { worst = max(worst, abs(out.samples[f * 2] - original[f])) }
            #expect(worst < 1e-5)
            #expect(out.peak(96_000..<110_000) == 0)
        } else {
            // As the Ogg Vorbis and MP3 joins are held to (MusicPlayerTests): both sides follow the one sine.
            #expect(out.rmsError(against: original, (cut - 4_000)..<(cut - 400)) < 0.03)
            #expect(out.rmsError(against: original, (cut + 400)..<(cut + 4_000)) < 0.03)
            #expect(out.rms((cut - 400)..<(cut + 400)) > 0.3)
            let end = try #require((0..<out.frames).last { abs(out.samples[$0 * 2]) > 1e-4 })
            #expect(abs(end - 96_000) <= 30)
        }
    }

    /// A FLAC at 44.1 kHz followed by an Opus (48 kHz) and a FLAC at 96 kHz: no gap at either join, each at its own
    /// pitch and for its own length.
    @Test func joinsAcrossFormatsAndRatesHaveNoGap() throws {
        let a = try encode(fixtures.sineWAV("a.wav", hz: 440, seconds: 1, rate: 44_100), as: "flac")
        let b = try encode(fixtures.sineWAV("b.wav", hz: 660, seconds: 1, rate: 48_000, float: true), as: "opus")
        let c = try encode(fixtures.sineWAV("c.wav", hz: 550, seconds: 1, rate: 96_000, bits: 24), as: "flac")
        let engine = try AudioEngine(.offline(sampleRate: 48_000))
        try engine.musicPlayer.setQueue(paths: [a, b, c])
        engine.musicPlayer.play()
        let out = try Signal(engine.render(frames: 170_000))
        let start = try #require(out.firstFrame(above: 0.01))
        for window in stride(from: start, to: start + 144_000 - 240, by: 240) {
            #expect(out.rms(window..<(window + 240)) > 0.05, "quiet 5 ms at frame \(window)")
        }
        #expect(abs(out.dominantFrequency(in: (start + 10_000)..<(start + 40_000)) - 440) < 2)
        #expect(abs(out.dominantFrequency(in: (start + 58_000)..<(start + 90_000)) - 660) < 2)
        #expect(abs(out.dominantFrequency(in: (start + 106_000)..<(start + 138_000)) - 550) < 2)
        #expect(out.peak((start + 144_000 + 64)..<170_000) == 0)
    }

    // MARK: - Tags and covers

    @Test func flacTagsAndFrontCoverFromFlacAndMetaflac() throws {
        let (front, back) = try covers()
        let flac = try encode(fixtures.sineWAV("source.wav", seconds: 0.5), as: "flac", tags: tagArguments(for: "flac"))
        // The back cover first: the front cover (type 3) is still the one chosen.
        try fixtures.run("metaflac", ["--import-picture-from=4||back||\(back)", flac])
        try fixtures.run("metaflac", ["--import-picture-from=3||front||\(front)", flac])
        let decoder = try #require(try AudioFile.open(flac) as? FLACDecoder)
        expectAllTags(decoder.info.tags)
        #expect(decoder.info.tags.hasArtwork)
        #expect(decoder.embeddedPicture == EmbeddedPicture(mimeType: "image/png", data: try fixtures.bytes(of: front)))
    }

    @Test func opusTagsAndFrontCoverFromOpusenc() throws {
        let (front, back) = try covers()
        let opus = try encode(
            fixtures.sineWAV("source.wav", seconds: 0.5, float: true), as: "opus",
            tags: tagArguments(for: "opus") + ["--picture", "4||back||\(back)", "--picture", "3||front||\(front)"])
        let decoder = try #require(try AudioFile.open(opus) as? OpusDecoder)
        expectAllTags(decoder.info.tags)
        #expect(decoder.info.tags.hasArtwork)
        #expect(decoder.embeddedPicture == EmbeddedPicture(mimeType: "image/png", data: try fixtures.bytes(of: front)))
        let plain = try #require(
            try AudioFile.open(encode(fixtures.sineWAV("plain.wav", seconds: 0.2), as: "opus")) as? OpusDecoder)
        #expect(!plain.info.tags.hasArtwork && plain.embeddedPicture == nil)
    }

    /// The library scans FLAC and Opus files tagged by the encoders: every field, exact durations, every cover.
    @Test func libraryIndexesFLACAndOpusWithEveryFieldAndCover() throws {
        let (front, _) = try covers()
        try FileManager.default.createDirectory(
            atPath: fixtures.path("music/Sigur Rós"), withIntermediateDirectories: true)
        let flac = try encode(
            fixtures.sineWAV("flac.wav", seconds: 0.75, rate: 44_100), as: "flac", tags: tagArguments(for: "flac"))
        try fixtures.run("metaflac", ["--import-picture-from=\(front)", flac])
        try FileManager.default.moveItem(atPath: flac, toPath: fixtures.path("music/Sigur Rós/1.flac"))
        var opusTags = tagArguments(for: "opus")
        opusTags[opusTags.firstIndex(of: "Ünïcødé Ñight — 夜")!] = "Opus — 夜"
        let opus = try encode(
            fixtures.sineWAV("opus.wav", seconds: 1.25, float: true), as: "opus",
            tags: opusTags + ["--picture", front])
        try FileManager.default.moveItem(atPath: opus, toPath: fixtures.path("music/Sigur Rós/2.opus"))

        let library = try MediaLibrary(
            folders: [fixtures.path("music")], databasePath: fixtures.path("index/library.sqlite"))
        let report = try library.scan()
        #expect(report.files == 2 && report.added == 2 && report.failed.isEmpty, "\(report)")
        let items = Dictionary(uniqueKeysWithValues: library.items.map { ($0.title ?? "", $0) })
        for (title, duration) in [("Ünïcødé Ñight — 夜", 0.75), ("Opus — 夜", 1.25)] {
            let item = try #require(items[title], "\(items.keys)")
            #expect(item.artist == "Sigur Rós")
            #expect(item.albumTitle == "Ágætis byrjun")
            #expect(item.albumArtist == "Bänd")
            #expect(item.genre == "Post-Rock")
            #expect(item.composer == "Çomposer")
            #expect(item.trackNumber == 3)
            #expect(item.discNumber == 2)
            #expect(item.playbackDuration == duration)
            #expect(item.hasArtwork)
            let artwork = try #require(item.artwork, "\(title)")
            #expect(artwork.source == .embedded(mimeType: "image/png"))
            #expect(artwork.bounds == ArtworkSize(width: 2, height: 2))
            let pixel = try #require(artwork.image(size: ArtworkSize(width: 1, height: 1))).pixel(x: 0, y: 0)
            #expect(pixel.0 > 250 && pixel.1 < 5 && pixel.2 < 5, "\(pixel)")
        }
        #expect(
            MediaQuery(
                library: library, filterPredicates: [MediaPropertyPredicate(value: "sigur ros", forProperty: .artist)]
            )
            .items.count == 2)
        // A rescan with nothing changed reads nothing again.
        let rescan = try library.scan()
        #expect(rescan.added == 0 && rescan.updated == 0 && rescan.removed == 0)
    }

    // MARK: - Damaged files

    @Test(arguments: ["flac", "opus"])
    func truncatedAndDamagedFilesGetTypedErrors(format: String) throws {
        let good = try fixtures.bytes(
            of: encode(
                fixtures.sineWAV("source.wav", seconds: 2, float: format == "opus"),
                as: format))
        for cut in [good.count / 2, good.count - 3, 60] {
            let path = try fixtures.write("cut\(cut).\(format)", bytes: Array(good.prefix(cut)))
            let error = decodingError { try AudioFile.decode(path) }
            #expect(error?.isCorrupt(mentioning: "truncated") == true, "cut at \(cut): \(String(describing: error))")
        }
        // A byte flipped in the middle of the audio: a frame checksum (FLAC) or page checksum (Ogg) mismatch, or, when
        // the byte lands in a FLAC frame header (sox dithers the source, so where frames start varies), lost sync.
        var flipped = good
        flipped[good.count / 2] ^= 0x5A
        let damaged = try fixtures.write("damaged.\(format)", bytes: flipped)
        let damage = decodingError { try AudioFile.decode(damaged) }
        #expect(
            damage?.isCorrupt(mentioning: "checksum") == true
                || (format == "flac" && damage?.isCorrupt(mentioning: "lost sync") == true),
            "\(String(describing: damage))")
        // The magic alone, then garbage after it.
        let magic = format == "flac" ? Array("fLaC".utf8) : Array(good.prefix(36))
        var generator = SystemRandomNumberGenerator()
        for bytes in [magic, magic + (0..<4_000).map { _ in UInt8.random(in: 0...255, using: &generator) }] {
            let path = try fixtures.write("garbage.\(format)", bytes: bytes)
            let error = decodingError { try AudioFile.decode(path) }
            if case .corrupt = error {
            } else {
                Issue.record("\(format) magic + \(bytes.count - magic.count) bytes: \(String(describing: error))")
            }
        }
    }

    /// A file cut short while it streams (as FaultTests does for the other formats): the player reports a playback
    /// error for it and the next item plays.
    @Test(arguments: ["flac", "opus"])
    func musicFileTruncatedWhileItStreams(format: String) throws {
        let long = try encode(fixtures.sineWAV("long.wav", hz: 440, seconds: 20, float: format == "opus"), as: format)
        let next = try fixtures.sineWAV("next.wav", hz: 660, seconds: 10)
        let engine = try AudioEngine(.offline(sampleRate: 48_000))
        let player = engine.musicPlayer
        player.beginGeneratingPlaybackNotifications()
        try player.setQueue(paths: [long, next])
        player.play()
        _ = try engine.render(frames: 48_000)
        let size = try #require(RawPath.fileStatus(Array(long.utf8))?.size)
        #expect(truncate(long, off_t(size / 5)) == 0)
        var events: [MusicEvent] = []
        var tail: [Float] = []
        for second in 0..<8 {
            let block = try engine.render(frames: 48_000)
            events += engine.update().compactMap { if case .music(let e) = $0 { e } else { nil } }
            if second >= 5 { tail += block.samples }
        }
        let error = events.first { if case .playbackError(let item, _) = $0 { item.url == long } else { false } }
        #expect(error != nil, "no playbackError for the truncated \(format); events: \(events)")
        if case .playbackError(_, let reason) = error { #expect(reason.description.contains(long)) }
        let out = Signal(tail, channels: 2, sampleRate: 48_000)
        #expect(out.rms() > 0.05)
        #expect(abs(out.dominantFrequency() - 660) < 2)
    }

    // MARK: - Helpers

    /// Encodes a WAV with the format's reference encoder, with extra encoder arguments (tags, pictures).
    func encode(_ wav: String, as format: String, tags: [String] = []) throws -> String {
        let out = String(wav.dropLast(4)) + "." + format
        if format == "flac" {
            try fixtures.run("flac", ["-s", "-f"] + tags + [wav, "-o", out])
        } else {
            try fixtures.run("opusenc", ["--quiet", "--bitrate", "128"] + tags + [wav, out])
        }
        return out
    }

    /// Every field the library keeps, with Unicode, as each encoder's own options set them.
    func tagArguments(for format: String) -> [String] {
        let fields = [
            ("TITLE", "Ünïcødé Ñight — 夜"), ("ARTIST", "Sigur Rós"), ("ALBUM", "Ágætis byrjun"),
            ("ALBUMARTIST", "Bänd"), ("GENRE", "Post-Rock"), ("COMPOSER", "Çomposer"),
            ("TRACKNUMBER", "3/12"), ("DISCNUMBER", "2")
        ]
        if format == "flac" { return fields.map { "--tag=\($0.0)=\($0.1)" } }
        let own = ["TITLE": "--title", "ARTIST": "--artist", "ALBUM": "--album", "GENRE": "--genre"]
        return fields.flatMap { key, value in own[key].map { [$0, value] } ?? ["--comment", "\(key)=\(value)"] }
    }

    func expectAllTags(_ tags: AudioTags) {
        #expect(tags.title == "Ünïcødé Ñight — 夜")
        #expect(tags.artist == "Sigur Rós")
        #expect(tags.album == "Ágætis byrjun")
        #expect(tags.albumArtist == "Bänd")
        #expect(tags.genre == "Post-Rock")
        #expect(tags.composer == "Çomposer")
        #expect(tags.trackNumber == 3)
        #expect(tags.discNumber == 2)
    }

    /// A 2×2 red PNG (the front cover) and a 3×3 blue one (the back), made by ffmpeg.
    func covers() throws -> (front: String, back: String) {
        let front = fixtures.path("front.png"), back = fixtures.path("back.png")
        for (color, size, path) in [("red", "2x2", front), ("blue", "3x3", back)] {
            try fixtures.run(
                "ffmpeg",
                [
                    "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=\(color):s=\(size),format=rgb24",
                    "-frames:v", "1", path
                ])
        }
        return (front, back)
    }
}

/// Signal-to-noise ratio of `a` against the reference `b`, in dB (infinite when they are equal).
private func snr(_ a: [Float], _ b: [Float]) -> Double {
    guard a.count == b.count, !a.isEmpty else { return -.infinity }
    var signal = 0.0, noise = 0.0
    for (x, y) in zip(a, b) {
        signal += Double(y) * Double(y)
        noise += Double(x - y) * Double(x - y)
    }
    return noise == 0 ? .infinity : 10 * log10(signal / noise)
}
