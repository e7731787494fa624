import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceBench
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

// `bench --openal-options` and the engine's resampler and limiter options. The comparison maths is checked on
// signals made here; the bench and the options on real OpenAL Soft renders. No speed threshold anywhere: costs are
// the bench's business.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct OpenALOptionsTests {
    /// Interleaved stereo: a sine in both channels.
    static func stereoSine(hz: Double, frames: Int, amplitude: Double = 0.5, delay: Int = 0) -> [Float] {
        (0..<frames).flatMap { i -> [Float] in
            let v = Float(amplitude * sin(2 * Double.pi * hz * Double(i - delay) / 48_000))
            return [v, v]
        }
    }

    @Test func comparisonOfASignalWithItselfIsIdentical() throws {
        let reference = Self.stereoSine(hz: 440, frames: 8_000)
        let same = try #require(SignalComparison.compare(reference: reference, signal: reference))
        #expect(same.isIdentical && same.snrDB == .infinity && same.lagFrames == 0)
        #expect(same.frames == 8_000 - 2 * (1024 + 64))
    }

    @Test func comparisonFindsTheLagAndTheNoiseLevel() throws {
        let reference = Self.stereoSine(hz: 440, frames: 8_000)
        // The same sine three frames late: found, and then identical.
        let late = try #require(
            SignalComparison.compare(reference: reference, signal: Self.stereoSine(hz: 440, frames: 8_000, delay: 3)))
        #expect(late.lagFrames == 3 && late.isIdentical)
        // A second sine at a tenth of the amplitude added: 20 dB below the reference.
        let other = Self.stereoSine(hz: 1_234, frames: 8_000, amplitude: 0.05)
        let noisy = zip(reference, other).map { $0 + $1 }
        let comparison = try #require(SignalComparison.compare(reference: reference, signal: noisy))
        #expect(comparison.lagFrames == 0)
        #expect(abs(comparison.snrDB - 20) < 0.2, "\(comparison.snrDB) dB")
        // Out of the lag range it is no match at all, and says so by a low SNR.
        let far = try #require(
            SignalComparison.compare(
                reference: reference, signal: Self.stereoSine(hz: 440, frames: 8_000, delay: 30), maxLag: 8))
        #expect(far.snrDB < 10)
    }

    /// A sample-wise SNR counts a fraction of a frame's delay; the spectral one does not, yet sees a level change.
    @Test func spectralComparisonIgnoresTimingButNotLevel() throws {
        func sine(delay: Double, amplitude: Double) -> [Float] {
            (0..<8_000).flatMap { i -> [Float] in
                let v = Float(amplitude * sin(2 * Double.pi * 3_000 * (Double(i) - delay) / 48_000))
                return [v, v]
            }
        }
        let reference = sine(delay: 0, amplitude: 0.5)
        let late = try #require(
            SignalComparison.compare(reference: reference, signal: sine(delay: 0.4, amplitude: 0.5)))
        // 2·sin(π·3000·0.4/48000) of the amplitude is left over: about 16 dB.
        #expect(abs(late.snrDB - 16.1) < 0.5, "\(late.snrDB) dB")
        #expect(late.spectralSNRDB > 40, "\(late.spectralSNRDB) dB")
        let quieter = try #require(
            SignalComparison.compare(reference: reference, signal: sine(delay: 0, amplitude: 0.25)))
        #expect(abs(quieter.spectralSNRDB - 6.02) < 0.1 && abs(quieter.snrDB - 6.02) < 0.1)
        #expect(SignalComparison.compare(reference: reference, signal: reference)?.spectralSNRDB == .infinity)
    }

    @Test func comparisonRefusesWhatItCannotMeasure() {
        let reference = Self.stereoSine(hz: 440, frames: 8_000)
        #expect(SignalComparison.compare(reference: [Float](repeating: 0, count: 16_000), signal: reference) == nil)
        #expect(SignalComparison.compare(reference: Array(reference[0..<4_000]), signal: reference) == nil)
        #expect(SignalComparison.compare(reference: reference, signal: reference, channels: 0) == nil)
    }

    @Test func benchRunsEveryOptionAndRanksTheResamplers() throws {
        let result = try ToolRunner.run(
            ["bench", "--openal-options", "--seconds", "0.2", "--runs", "1", "--quality-seconds", "0.5", "--json"],
            timeout: 240)
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        // The scene renders the same twice: the proof that every comparison compares like with like.
        #expect(json["referenceSelfSNR"] as? String == "identical")
        #expect((json["referencePeak"] as? Double ?? 0) > 0)
        // The comparison's own resampler, there and back, loses only the band above 22.05 kHz: far less than a
        // broken one (a wrong rate or scale) would.
        #expect((json["soxRoundTripSNR"] as? Double ?? 0) > 25)
        let resamplers = try #require(json["resamplers"] as? [String])
        #expect(resamplers.contains("Nearest") && resamplers.contains("23rd order Sinc"))
        let options = try #require(json["options"] as? [[String: Any]])
        let names = options.compactMap { $0["name"] as? String }
        #expect(names.first == "default")
        #expect(
            Set(names).isSuperset(of: [
                "stereo buffers", "limiter on", "limiter off", "22050 Hz", "32000 Hz", "44100 Hz",
                "44100 Hz, resampler 23rd order Sinc"
            ]))
        #expect(names.filter { $0.hasPrefix("resampler ") }.count == resamplers.count)
        var snr: [String: Double] = [:]
        for option in options {
            let name = option["name"] as? String ?? "?"
            #expect(option["error"] == nil, "\(name): \(option["error"] ?? "")")
            let rtf = option["rtf"] as? Double ?? .nan, ratio = option["costRatio"] as? Double ?? .nan
            #expect(rtf.isFinite && rtf > 0 && ratio.isFinite && ratio > 0, "\(name): rtf \(rtf), ratio \(ratio)")
            let spectral =
                option["spectralSNRDB"] as? Double
                ?? (option["spectralSNRDB"] as? String == "identical" ? .infinity : .nan)
            #expect(!spectral.isNaN, "\(name): spectral \(option["spectralSNRDB"] ?? "nil")")
            if let value = option["snrDB"] as? Double {
                #expect(value.isFinite, "\(name)")
                snr[name] = value
            } else {
                #expect(option["snrDB"] as? String == "identical", "\(name): \(option["snrDB"] ?? "nil")")
                snr[name] = .infinity
            }
        }
        // The reference's own configuration matches it bit for bit; the nearest sample is worse than either sinc.
        #expect(snr["resampler 23rd order Sinc"] == .infinity)
        let nearest = try #require(snr["resampler Nearest"])
        #expect(nearest < (snr["resampler 11th order Sinc"] ?? -.infinity))
        #expect(nearest < (snr["resampler Linear"] ?? -.infinity))
    }

    /// A pitched voice of a bright tone through an offline engine with the given options.
    static func render(_ configure: (inout EngineConfiguration) -> Void, voices: Int = 1, pitch: Float = 1.37)
        throws -> [Float]
    {
        var configuration = EngineConfiguration(output: .offline, blockFrames: 512)
        configure(&configuration)
        let engine = try AudioEngine(configuration)
        defer { engine.shutdown() }
        let sound = try engine.makeSound(tone(hz: 7_000, seconds: 1), name: "tone")
        for _ in 0..<voices { engine.play(sound, PlayOptions(pitch: pitch)) }
        return try engine.render(frames: 24_000).samples
    }

    @Test func theResamplerOptionChangesAPitchedVoice() throws {
        let standard = try Self.render { _ in }
        let linear = try Self.render { $0.resampler = .linear }
        let point = try Self.render { $0.resampler = .point }
        let sinc24 = try Self.render { $0.resampler = .sinc24 }
        #expect(standard == linear, "linear is OpenAL Soft's default: asking for it changes nothing")
        #expect(point != linear && sinc24 != linear)
        // Against the best resampler, linear interpolation is closer than the nearest sample.
        let pointSNR = try #require(SignalComparison.compare(reference: sinc24, signal: point)).snrDB
        let linearSNR = try #require(SignalComparison.compare(reference: sinc24, signal: linear)).snrDB
        #expect(linearSNR > pointSNR + 3, "linear \(linearSNR) dB, point \(pointSNR) dB")
    }

    @Test func theLimiterHoldsALoudSumBelowFullScale() throws {
        // Eight centred voices of a 0.5 sine sum to about 2.4 per channel.
        let unlimited = try Self.render({ _ in }, voices: 8, pitch: 1)
        let limited = try Self.render({ $0.outputLimiter = true }, voices: 8, pitch: 1)
        let peak = { (samples: [Float]) in samples.reduce(0) { max($0, abs($1)) } }
        #expect(peak(unlimited) > 1.5, "off by default: the float mix goes past 1.0")
        #expect(peak(limited) <= 1.01, "peak \(peak(limited))")
        #expect(peak(limited) > 0.5, "the limiter turns the mix down, not off")
    }
}
