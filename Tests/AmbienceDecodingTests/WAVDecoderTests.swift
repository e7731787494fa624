import Foundation
import Glibc
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceTestSupport

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

// MARK: - Bad input
