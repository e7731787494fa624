import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceTestSupport

/// The music player's bridge between items at different rates.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct ResampledDecoderTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    func readAll(_ decoder: any AudioDecoder) throws -> [Float] {
        var all: [Float] = []
        var chunk = [Float](repeating: 0, count: 1_000 * decoder.info.channels)
        while true {
            let got = try chunk.withUnsafeMutableBufferPointer { (buffer) throws(DecodingError) in
                try decoder.read(into: buffer.baseAddress!, frames: 1_000)
            }
            if got == 0 { return all }
            all += chunk[0..<(got * decoder.info.channels)]
        }
    }

    @Test func a44100HzSineComesOutAt48000HzWithItsPitchAndLength() throws {
        // An exact sine (sox's own is up to 1e-3 off the ideal one), stereo, as float.
        let sine = (0..<44_100).flatMap { f -> [Float] in
            let v = Float(0.5 * sin(2 * Double.pi * 440 * Double(f) / 44_100))
            return [v, v]
        }
        let bytes = sine.flatMap { WAVBytes.le32($0.bitPattern) }
        let wav = WAVBytes(formatTag: 3, channels: 2, sampleRate: 44_100, bitsPerSample: 32, data: bytes)
        let path = try fixtures.write("sine.wav", bytes: wav.bytes)
        let decoder = ResampledDecoder(try AudioFile.open(path), rate: 48_000)
        #expect(decoder.info.sampleRate == 48_000 && decoder.info.frames == 48_000 && decoder.info.channels == 2)
        let out = try readAll(decoder)
        #expect(out.count == 96_000)
        #expect(decoder.position == 48_000)
        // Against the ideal sine at the new rate: linear interpolation of 440 Hz at 44.1 kHz is off by at most
        // 0.5 × (2π × 440 / 44,100)² / 8 ≈ 2.5e-4. The very last frame lies past the source's last sample and
        // holds it, so it is left out.
        var worst: Float = 0
        for f in 0..<47_999 {
            let ideal = Float(0.5 * sin(2 * Double.pi * 440 * Double(f) / 48_000))
            worst = max(worst, abs(out[f * 2] - ideal), abs(out[f * 2 + 1] - ideal))
        }
        #expect(worst < 3e-4, "worst error \(worst)")
    }

    @Test func wrappingADecoderPartWayInStartsWhereItStands() throws {
        let path = try fixtures.sineWAV("part.wav", hz: 300, seconds: 1, rate: 44_100, channels: 1, float: true)
        let whole = try readAll(ResampledDecoder(try AudioFile.open(path), rate: 48_000))
        let source = try AudioFile.open(path)
        try source.seek(toFrame: 1_000)
        let decoder = ResampledDecoder(source, rate: 48_000)
        #expect(decoder.position == 1_089)  // the first output frame at or after source frame 1,000
        let rest = try readAll(decoder)
        #expect(rest == Array(whole[1_089...]))
    }

    /// A source that lands later than asked (as the pipeline fuzzer's MP3 did, where reading then indexed before the
    /// window and trapped): the resampler goes on from where the source stands.
    @Test func aSourceThatSeeksPastTheAskedFrameIsFollowed() throws {
        final class Overshooting: AudioDecoder {
            let inner: any AudioDecoder
            init(_ inner: any AudioDecoder) { self.inner = inner }
            var info: AudioInfo { inner.info }
            var position: Int64 { inner.position }
            func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(DecodingError) -> Int {
                try inner.read(into: buffer, frames: frames)
            }
            func seek(toFrame frame: Int64) throws(DecodingError) {
                try inner.seek(toFrame: min(frame + 5_000, inner.info.frames))
            }
        }
        let path = try fixtures.sineWAV("over.wav", hz: 300, seconds: 1, rate: 44_100, channels: 1, float: true)
        let whole = try readAll(ResampledDecoder(try AudioFile.open(path), rate: 48_000))
        let decoder = ResampledDecoder(Overshooting(try AudioFile.open(path)), rate: 48_000)
        try decoder.seek(toFrame: 10_000)
        #expect(decoder.position == (Int64(10_000) * 44_100 / 48_000 + 5_000) * 48_000 / 44_100 + 1)
        let start = Int(decoder.position)
        let rest = try readAll(decoder)
        #expect(!rest.isEmpty && rest == Array(whole[start...]))
    }

    @Test func seekingLandsOnTheSameSamplesAsReadingThere() throws {
        let path = try fixtures.sineWAV("sweep.wav", hz: 1_000, seconds: 1, rate: 22_050, channels: 1, float: true)
        let whole = try readAll(ResampledDecoder(try AudioFile.open(path), rate: 48_000))
        let decoder = ResampledDecoder(try AudioFile.open(path), rate: 48_000)
        for target in [30_001, 0, 47_999, 12_345] {
            try decoder.seek(toFrame: Int64(target))
            var part = [Float](repeating: 0, count: 500)
            let got = try part.withUnsafeMutableBufferPointer { (buffer) throws(DecodingError) in
                try decoder.read(into: buffer.baseAddress!, frames: 500)
            }
            #expect(got == min(500, 48_000 - target))
            #expect(Array(part[0..<got]) == Array(whole[target..<(target + got)]), "at \(target)")
        }
    }
}
