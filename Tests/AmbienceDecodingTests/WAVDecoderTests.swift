import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceCore
@testable import AmbienceDecoding

// MARK: - Helpers

/// The bytes of a WAV file, built field by field so that a test can get any one of them wrong on purpose.
private struct WAVBytes {
    var magic = "RIFF"
    var formatTag: UInt16 = 1
    var channels: UInt16 = 1
    var sampleRate: UInt32 = 48_000
    var bitsPerSample: UInt16 = 16
    /// Defaults to `channels * bitsPerSample / 8`.
    var blockAlign: UInt16?
    /// When set, the fmt chunk is WAVE_FORMAT_EXTENSIBLE with this subformat (first two GUID bytes).
    var subformat: UInt16?
    var subformatTail: [UInt8] = [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
    var validBits: UInt16?
    /// Defaults to the real length of `data`.
    var dataClaim: UInt32?
    var data: [UInt8] = []
    var includeFmt = true
    var includeData = true
    /// Whole chunks (use `chunk`) placed before fmt, between fmt and data, and after data.
    var beforeFmt: [UInt8] = []
    var beforeData: [UInt8] = []
    var afterData: [UInt8] = []

    static func chunk(_ id: String, _ body: [UInt8], claim: UInt32? = nil) -> [UInt8] {
        Array(id.utf8) + le32(claim ?? UInt32(body.count)) + body + (body.count % 2 == 1 ? [0] : [])
    }

    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func le32(_ v: UInt32) -> [UInt8] { le16(UInt16(v & 0xFFFF)) + le16(UInt16(v >> 16)) }
    static func le64(_ v: UInt64) -> [UInt8] { le32(UInt32(v & 0xFFFF_FFFF)) + le32(UInt32(v >> 32)) }

    var fmtBody: [UInt8] {
        let align = blockAlign ?? UInt16(truncatingIfNeeded: Int(channels) * Int(bitsPerSample) / 8)
        var body = Self.le16(subformat == nil ? formatTag : 0xFFFE) + Self.le16(channels) + Self.le32(sampleRate)
        body += Self.le32(sampleRate &* UInt32(align)) + Self.le16(align) + Self.le16(bitsPerSample)
        if let subformat {
            body +=
                Self.le16(22) + Self.le16(validBits ?? bitsPerSample) + Self.le32(0) + Self.le16(subformat)
                + subformatTail
        }
        return body
    }

    var bytes: [UInt8] {
        var chunks = beforeFmt
        if includeFmt { chunks += Self.chunk("fmt ", fmtBody) }
        chunks += beforeData
        if includeData { chunks += Self.chunk("data", data, claim: dataClaim) }
        chunks += afterData
        return Array(magic.utf8) + Self.le32(UInt32(4 + chunks.count)) + Array("WAVE".utf8) + chunks
    }
}

func decodeAll(_ path: String) throws -> (info: AudioInfo, signal: Signal) {
    let decoder = try WAVDecoder(path: path)
    let buffer = try PCMBuffer(decodingAllOf: decoder)
    return (decoder.info, Signal(buffer))
}

private func corruptReason(_ path: String) -> String? {
    do {
        _ = try WAVDecoder(path: path)
        return nil
    } catch {
        switch error {
        case .corrupt, .tooManyChannels: return error.reason
        default: return "not .corrupt: \(error)"
        }
    }
}

func files(in fixtures: Fixtures) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: fixtures.directory.path).sorted()
}

// MARK: - Decoding what sox writes

struct SoxWAV: Sendable, CustomTestStringConvertible {
    var bits: Int
    var float: Bool
    var channels: Int
    var testDescription: String { "\(float ? "float" : "int")\(bits) \(channels)ch" }

    static let all: [SoxWAV] =
        [8, 16, 24, 32].flatMap { bits in [1, 2].map { SoxWAV(bits: bits, float: false, channels: $0) } }
        + [1, 2].map { SoxWAV(bits: 32, float: true, channels: $0) }
}

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct WAVDecoderTests {
    @Test(arguments: SoxWAV.all)
    func decodesSoxSine(_ variant: SoxWAV) throws {
        let fixtures = try Fixtures()
        let path = try fixtures.sineWAV(
            "sine.wav", hz: 440, seconds: 1, rate: 48_000, channels: variant.channels,
            bits: variant.bits, float: variant.float, amplitude: 0.5)
        let (info, signal) = try decodeAll(path)
        #expect(info.format == .wav)
        #expect(info.sampleRate == 48_000)
        #expect(info.channels == variant.channels)
        #expect(info.frames == 48_000)
        #expect(info.warnings.isEmpty)
        #expect(signal.frames == 48_000)
        for channel in 0..<variant.channels {
            #expect(abs(signal.dominantFrequency(channel: channel) - 440) <= 1)
            #expect(abs(signal.rms(channel: channel) - 0.5 / 2.0.squareRoot()) <= 0.01)
        }
        #expect(signal.peak() <= 0.51)
    }

    /// Every integer depth decodes to the same waveform as the float file, to within its own quantisation step.
    @Test(arguments: [8, 16, 24, 32])
    func integerDepthsMatchFloat(bits: Int) throws {
        let fixtures = try Fixtures()
        let reference = try decodeAll(fixtures.sineWAV("float.wav", channels: 2, float: true)).signal
        let decoded = try decodeAll(fixtures.sineWAV("int.wav", channels: 2, bits: bits)).signal
        #expect(decoded.samples.count == reference.samples.count)
        let step = 1 / Float(1 << (bits - 1))
        var worst: Float = 0
        for (a, b) in zip(decoded.samples, reference.samples) { worst = max(worst, abs(a - b)) }
        // sox may dither when it reduces depth: allow two steps, and float32's own precision.
        #expect(worst <= 2 * step + 1e-6, "worst difference \(worst) at \(bits) bits")
    }

    @Test func stereoChannelsStayApart() throws {
        let fixtures = try Fixtures()
        let path = fixtures.path("two-tones.wav")
        try fixtures.run(
            "sox",
            ["-n", "-r", "48000", "-c", "2", "-b", "24", path, "synth", "1", "sine", "440", "sine", "660", "vol", "0.5"]
        )
        let (info, signal) = try decodeAll(path)
        #expect(info.channels == 2)
        #expect(abs(signal.dominantFrequency(channel: 0) - 440) <= 1)
        #expect(abs(signal.dominantFrequency(channel: 1) - 660) <= 1)
    }

    @Test func audioFileOpensWAVThroughTheDecoder() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.sineWAV("sine.wav", seconds: 0.5, rate: 44_100, channels: 2)
        #expect(try AudioFile.detectFormat(path) == .wav)
        let buffer = try AudioFile.decode(path)
        #expect(buffer.frames == 22_050)
        #expect(buffer.sampleRate == 44_100)
        #expect(abs(Signal(buffer).dominantFrequency() - 440) <= 1)
    }

    @Test func seekGivesTheSameSamplesAsAFullDecode() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.sineWAV("sine.wav", seconds: 2, channels: 2, bits: 24)
        let full = try decodeAll(path).signal
        let decoder = try WAVDecoder(path: path)
        var chunk = [Float](repeating: .nan, count: 30_000 * 2)
        // 24-bit stereo is 6 bytes a frame: a 30 000-frame read crosses several 64 KiB file reads.
        for (start, count) in [(0, 1000), (1, 1000), (12_345, 30_000), (47_999, 3), (95_000, 30_000), (10_922, 2)] {
            try decoder.seek(toFrame: Int64(start))
            #expect(decoder.position == Int64(start))
            let got = try chunk.withUnsafeMutableBufferPointer {
                try decoder.read(into: $0.baseAddress!, frames: count)
            }
            #expect(got == min(count, 96_000 - start))
            #expect(decoder.position == Int64(start + got))
            #expect(
                Array(chunk[0..<(got * 2)]) == Array(full.samples[(start * 2)..<((start + got) * 2)]),
                "at frame \(start)")
        }
        try decoder.seek(toFrame: 1_000_000)
        #expect(decoder.position == 96_000)
        #expect(try chunk.withUnsafeMutableBufferPointer { try decoder.read(into: $0.baseAddress!, frames: 10) } == 0)
        try decoder.seek(toFrame: -5)
        #expect(decoder.position == 0)
        #expect(try chunk.withUnsafeMutableBufferPointer { try decoder.read(into: $0.baseAddress!, frames: 0) } == 0)
    }
}

// MARK: - Exact conversion of hand-made files

struct ExactCase: Sendable, CustomTestStringConvertible {
    var name: String
    var tag: UInt16
    var bits: UInt16
    var extensible: Bool
    var data: [UInt8]
    var expected: [Float]
    var testDescription: String { name }

    static func floats(_ values: [Float]) -> [UInt8] { values.flatMap { WAVBytes.le32($0.bitPattern) } }
    static func doubles(_ values: [Double]) -> [UInt8] { values.flatMap { WAVBytes.le64($0.bitPattern) } }

    static let all: [ExactCase] = [
        ExactCase(
            name: "u8", tag: 1, bits: 8, extensible: false, data: [0x00, 0x80, 0xFF, 0x40],
            expected: [-1, 0, 127.0 / 128, -0.5]),
        ExactCase(
            name: "s16", tag: 1, bits: 16, extensible: false, data: [0x00, 0x80, 0x00, 0x00, 0xFF, 0x7F, 0x00, 0x40],
            expected: [-1, 0, 32767.0 / 32768, 0.5]),
        ExactCase(
            name: "s24", tag: 1, bits: 24, extensible: false,
            data: [0x00, 0x00, 0x80, 0xFF, 0xFF, 0xFF, 0x01, 0x00, 0x00, 0x00, 0x00, 0x40],
            expected: [-1, -1.0 / 8_388_608, 1.0 / 8_388_608, 0.5]),
        ExactCase(
            name: "s32", tag: 1, bits: 32, extensible: false,
            data: [0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0xC0],
            expected: [-1, 0, 0.5, -0.5]),
        ExactCase(
            name: "f32 (clamped, NaN to 0)", tag: 3, bits: 32, extensible: false, data: floats([0.25, -0.75, 2, .nan]),
            expected: [0.25, -0.75, 1, 0]),
        ExactCase(
            name: "f64", tag: 3, bits: 64, extensible: false, data: doubles([0.125, -3, .infinity, -0.5]),
            expected: [0.125, -1, 1, -0.5]),
        ExactCase(
            name: "extensible s24", tag: 1, bits: 24, extensible: true,
            data: [0x00, 0x00, 0x80, 0xFF, 0xFF, 0xFF, 0x01, 0x00, 0x00, 0x00, 0x00, 0x40],
            expected: [-1, -1.0 / 8_388_608, 1.0 / 8_388_608, 0.5]),
        ExactCase(
            name: "extensible f32", tag: 3, bits: 32, extensible: true, data: floats([0.25, -0.75, 0.5, -1]),
            expected: [0.25, -0.75, 0.5, -1])
    ]
}

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct WAVExactDecodingTests {
    @Test(arguments: ExactCase.all)
    func convertsEveryEncodingExactly(_ c: ExactCase) throws {
        let fixtures = try Fixtures()
        var wav = WAVBytes(formatTag: c.tag, channels: 2, bitsPerSample: c.bits, data: c.data)
        if c.extensible { wav.subformat = c.tag }
        let (info, signal) = try decodeAll(fixtures.write("exact.wav", bytes: wav.bytes))
        #expect(info.channels == 2)
        #expect(info.frames == 2)
        #expect(signal.samples == c.expected)
    }

    @Test func extensibleWithFewerValidBitsUsesTheContainer() throws {
        let fixtures = try Fixtures()
        // 20 valid bits, left-justified in 24-bit containers.
        let wav = WAVBytes(bitsPerSample: 24, subformat: 1, validBits: 20, data: [0x00, 0x00, 0x40, 0x00, 0x00, 0xC0])
        let (info, signal) = try decodeAll(fixtures.write("x.wav", bytes: wav.bytes))
        #expect(info.frames == 2)
        #expect(signal.samples == [0.5, -0.5])
    }

    @Test func skipsUnknownChunksAndTheirPadBytes() throws {
        let fixtures = try Fixtures()
        var wav = WAVBytes(data: [0x00, 0x40, 0x00, 0xC0])
        wav.beforeFmt = WAVBytes.chunk("junk", [1, 2, 3])  // odd: followed by a pad byte
        wav.beforeData = WAVBytes.chunk("fact", [9, 9, 9, 9]) + WAVBytes.chunk("odd!", [7])
        wav.afterData = WAVBytes.chunk("id3 ", [0x49, 0x44, 0x33])
        let (info, signal) = try decodeAll(fixtures.write("chunks.wav", bytes: wav.bytes))
        #expect(info.frames == 2)
        #expect(signal.samples == [0.5, -0.5])
    }

    @Test func readsListInfoTags() throws {
        let fixtures = try Fixtures()
        let info: [UInt8] =
            Array("INFO".utf8)
            + WAVBytes.chunk("INAM", Array("Rain Loop\0".utf8))
            + WAVBytes.chunk("IART", Array("Café Sound\0".utf8))  // odd length: padded
            + WAVBytes.chunk("IPRD", Array("Weather".utf8))
            + WAVBytes.chunk("ICMT", Array("ignored\0".utf8))
            + WAVBytes.chunk("IGNR", [0x41, 0x6D, 0x62, 0x69, 0xE9, 0x6E, 0x74, 0])  // "Ambiént" in Latin-1
            + WAVBytes.chunk("ITRK", Array("7/12\0".utf8))
        var wav = WAVBytes(data: [0, 0])
        wav.afterData = WAVBytes.chunk("LIST", info)
        let tags = try WAVDecoder(path: fixtures.write("tags.wav", bytes: wav.bytes)).info.tags
        #expect(tags.title == "Rain Loop")
        #expect(tags.artist == "Café Sound")
        #expect(tags.album == "Weather")
        #expect(tags.genre == "Ambiént")
        #expect(tags.trackNumber == 7)
        #expect(tags.hasArtwork == false)
    }

    @Test func readsRF64WithItsDS64Size() throws {
        let fixtures = try Fixtures()
        let samples: [UInt8] = [0x00, 0x40, 0x00, 0xC0, 0x00, 0x20]
        let ds64 = WAVBytes.le64(0) + WAVBytes.le64(UInt64(samples.count)) + WAVBytes.le64(3) + WAVBytes.le32(0)
        var wav = WAVBytes(magic: "RF64", dataClaim: 0xFFFF_FFFF, data: samples)
        wav.beforeFmt = WAVBytes.chunk("ds64", ds64)
        let (info, signal) = try decodeAll(fixtures.write("rf64.wav", bytes: wav.bytes))
        #expect(info.frames == 3)
        #expect(info.warnings.isEmpty)
        #expect(signal.samples == [0.5, -0.5, 0.25])
    }
}

// MARK: - Bad input

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct WAVBadInputTests {
    @Test func emptyFile() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.write("empty.wav", bytes: [])
        #expect(throws: DecodingError.empty(path)) { try WAVDecoder(path: path) }
    }

    @Test func zeroChannels() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.write("c0.wav", bytes: WAVBytes(channels: 0, blockAlign: 2, data: [0, 0]).bytes)
        #expect(throws: DecodingError.corrupt(path, reason: "0 channels")) { try WAVDecoder(path: path) }
    }

    @Test(arguments: [UInt32(0), 768_001, 1_000_000_000])
    func sampleRateOutOfRange(rate: UInt32) throws {
        let fixtures = try Fixtures()
        let path = try fixtures.write("rate.wav", bytes: WAVBytes(sampleRate: rate, data: [0, 0]).bytes)
        #expect(throws: DecodingError.corrupt(path, reason: "sample rate \(rate) Hz is out of range")) {
            try WAVDecoder(path: path)
        }
    }

    @Test func highestAndLowestRatesAreAccepted() throws {
        let fixtures = try Fixtures()
        for rate: UInt32 in [1, 768_000] {
            let path = try fixtures.write("rate\(rate).wav", bytes: WAVBytes(sampleRate: rate, data: [0, 0]).bytes)
            #expect(try WAVDecoder(path: path).info.sampleRate == Int(rate))
        }
    }

    @Test func malformedHeadersSayWhatIsWrong() throws {
        let fixtures = try Fixtures()
        // libsndfile's reasons, word for word: each names the chunk or field that is wrong.
        let cases: [(WAVBytes, String)] = [
            (WAVBytes(includeFmt: false), "Error in WAV file. No 'data' chunk marker."),
            (WAVBytes(includeData: false), "Error in WAV file. No 'data' chunk marker."),
            (WAVBytes(channels: 9), "9 channels is more than the 8 supported"),
            (WAVBytes(formatTag: 2, bitsPerSample: 4), "Error in WAV/W64/RF64 file. Malformed 'fmt ' chunk."),
            (WAVBytes(formatTag: 0x55), "Error in WAV/W64/RF64 file. Malformed 'fmt ' chunk."),
            (
                WAVBytes(subformat: 1, subformatTail: Array(repeating: 0xAB, count: 14)),
                "File contains data in an unimplemented format."
            ),
            (WAVBytes(formatTag: 3, bitsPerSample: 16), "Unspecified internal error.")
        ]
        for (index, (wav, reason)) in cases.enumerated() {
            let path = try fixtures.write("bad\(index).wav", bytes: wav.bytes)
            #expect(corruptReason(path) == reason)
        }
        let shortFmt =
            Array("RIFF".utf8) + WAVBytes.le32(20) + Array("WAVE".utf8) + WAVBytes.chunk("fmt ", [1, 0, 1, 0])
        #expect(
            corruptReason(try fixtures.write("short-fmt.wav", bytes: shortFmt))
                == "Error in WAV/W64/RF64 file. Short 'fmt ' chunk.")
        let shortRIFF = try fixtures.write("short.wav", bytes: Array("RIFF".utf8) + [1, 2, 3])
        #expect(throws: DecodingError.unsupportedFormat(shortRIFF)) { try WAVDecoder(path: shortRIFF) }
    }

    /// What the hand-written parser refused and libsndfile reads: extensible µ-law (a codec the issue asks for),
    /// and headers whose block align or bit depth disagree with the samples, which libsndfile reads by their size.
    @Test func oddHeadersThatLibsndfileReads() throws {
        let fixtures = try Fixtures()
        let ulaw = try decodeAll(
            fixtures.write("ulaw.wav", bytes: WAVBytes(bitsPerSample: 8, subformat: 7, data: [0xFF, 0x00, 0x80]).bytes))
        #expect(ulaw.info.frames == 3)
        #expect(ulaw.signal.samples[0] == 0)
        #expect(ulaw.signal.samples[1] < -0.9 && ulaw.signal.samples[2] > 0.9)
        for (name, wav) in [
            ("pcm4", WAVBytes(bitsPerSample: 4, data: [0, 0])),
            ("align3", WAVBytes(channels: 2, blockAlign: 3, data: [0, 0, 0, 0x40]))
        ] {
            let (info, signal) = try decodeAll(fixtures.write("\(name).wav", bytes: wav.bytes))
            #expect(Int64(signal.frames) == info.frames, "\(name)")
            #expect(signal.samples.allSatisfy { $0 >= -1 && $0 <= 1 }, "\(name)")
        }
    }

    @Test func notRIFFWAVEIsUnsupported() throws {
        let fixtures = try Fixtures()
        let avi = try fixtures.write("movie.wav", bytes: Array("RIFF".utf8) + [4, 0, 0, 0] + Array("AVI ".utf8))
        #expect(throws: DecodingError.unsupportedFormat(avi)) { try WAVDecoder(path: avi) }
        let text = try fixtures.write("text.wav", bytes: Array("hello, world".utf8))
        #expect(throws: DecodingError.unsupportedFormat(text)) { try WAVDecoder(path: text) }
    }

    @Test func directoryMissingAndNonRegularFiles() throws {
        let fixtures = try Fixtures()
        let folder = fixtures.directory.path
        #expect(throws: DecodingError.unreadable(folder, errno: EISDIR)) { try WAVDecoder(path: folder) }
        let missing = fixtures.path("missing.wav")
        #expect(throws: DecodingError.unreadable(missing, errno: ENOENT)) { try WAVDecoder(path: missing) }
        // Tests run as root, and root reads a chmod-000 file anyway, so permission denial cannot be tested here.
        // A FIFO stands in for an unreadable file: it must be refused at once, not block waiting for a writer.
        let fifo = fixtures.path("fifo.wav")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: DecodingError.unreadable(fifo, errno: EINVAL)) { try WAVDecoder(path: fifo) }
    }

    @Test func truncatedDataChunkDecodesWhatIsThere() throws {
        let fixtures = try Fixtures()
        let wav = WAVBytes(data: [UInt8](repeating: 0, count: 96_000))
        var bytes = wav.bytes
        let headerSize = bytes.count - 96_000
        let full = try decodeAll(fixtures.sineWAV("sine.wav")).signal
        // Keep 1000 frames of a real sine, plus half of the next frame.
        bytes =
            Array(bytes[0..<headerSize])
            + Array(try fixtures.bytes(of: fixtures.path("sine.wav")).suffix(96_000).prefix(2001))
        let path = try fixtures.write("cut.wav", bytes: bytes)
        let (info, signal) = try decodeAll(path)
        #expect(info.frames == 1000)
        #expect(info.warnings == ["data chunk claims 96000 bytes but only 2001 are present"])
        #expect(signal.samples == Array(full.samples.prefix(1000)))
    }

    @Test func hugeClaimsAllocateNothing() throws {
        let fixtures = try Fixtures()
        // A 4 GiB data claim in a tiny file, and an RF64 ds64 claim near Int64.max.
        let claim = try fixtures.write("claim.wav", bytes: WAVBytes(dataClaim: 0xFFFF_FFFE, data: [0, 0x40]).bytes)
        let claimed = try decodeAll(claim)
        #expect(claimed.info.frames == 1)
        #expect(claimed.info.warnings == ["data chunk claims 4294967294 bytes but only 2 are present"])
        #expect(claimed.signal.samples == [0.5])

        var rf64 = WAVBytes(magic: "RF64", dataClaim: 0xFFFF_FFFF, data: [0, 0x40])
        rf64.beforeFmt = WAVBytes.chunk("ds64", WAVBytes.le64(.max) + WAVBytes.le64(.max - 1) + WAVBytes.le64(.max))
        // libsndfile refuses an RF64 whose ds64 sizes run past the file, before allocating anything.
        #expect(
            corruptReason(try fixtures.write("rf64.wav", bytes: rf64.bytes))
                == "Error in RF64 file. No 'data' chunk marker.")
    }

    @Test func manyTinyChunksDoNotHang() throws {
        let fixtures = try Fixtures()
        // 200 000 empty chunks before fmt: the walk gives up after a bounded number and reports it.
        var wav = WAVBytes(data: [0, 0])
        wav.beforeFmt = [UInt8](repeating: 0, count: 8 * 200_000)
        let start = ContinuousClock.now
        #expect(
            corruptReason(try fixtures.write("tiny.wav", bytes: wav.bytes))
                == "Error in WAV file. No 'data' chunk marker.")
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    /// Whatever the bytes, the decoder either throws a DecodingError or delivers exactly `info.frames` frames in [-1, 1].
    @Test func randomAndMutatedBytesNeverCrash() throws {
        let fixtures = try Fixtures()
        var random = SplitMix64(seed: 0xA3B1_E9C4)
        var seed = WAVBytes(channels: 2, bitsPerSample: 24, data: (0..<600).map { UInt8(truncatingIfNeeded: $0 &* 37) })
        seed.beforeData = WAVBytes.chunk("LIST", Array("INFO".utf8) + WAVBytes.chunk("INAM", Array("x".utf8)))
        let valid = seed.bytes
        var opened = 0, refused = 0
        for round in 0..<600 {
            var bytes: [UInt8]
            switch round % 3 {
            case 0:  // noise, sometimes behind a RIFF/WAVE header
                bytes = (0..<Int.random(in: 0...300, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
                if round % 2 == 0 { bytes = Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVE".utf8) + bytes }
            case 1:  // a valid file with a few bytes of its header changed
                bytes = valid
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    bytes[Int.random(in: 0..<80, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            default:  // a valid file cut short anywhere
                bytes = Array(valid.prefix(Int.random(in: 0...valid.count, using: &random)))
            }
            let path = try fixtures.write("fuzz\(round).wav", bytes: bytes)
            do {
                let decoder = try WAVDecoder(path: path)
                let buffer = try PCMBuffer(decodingAllOf: decoder)
                #expect(Int64(buffer.frames) == decoder.info.frames, "round \(round)")
                #expect(buffer.samples.allSatisfy { $0 >= -1 && $0 <= 1 }, "round \(round)")
                opened += 1
            } catch {
                refused += 1
            }
            unlink(path)
        }
        // Both paths were exercised.
        #expect(opened > 50)
        #expect(refused > 50)
    }
}
