import Foundation
import Glibc
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceTestSupport

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
