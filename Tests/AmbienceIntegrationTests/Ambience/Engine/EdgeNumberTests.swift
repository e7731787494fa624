import AmbienceBench
import AmbienceHost
import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceIntegrationSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport
@testable import AmbienceTool

/// Numbers at the edges the first pass of the reliability work left out: audio made in memory, the SDL host's
/// configuration and sizes, the benchmark's options, the system player's seek and the `--sfx` time. Each is refused
/// with a typed error (or clamped, where the rule says so), never trapped on.
@Suite(.offTheCooperativePool) struct EdgeNumberTests {
    @Test func audioMadeInMemoryIsHeldToTheRulesOfAFilesHeader() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let refused: [(PCMBuffer, String)] = [
            (PCMBuffer(sampleRate: 0, channels: 1, samples: [0]), "sample rate"),
            (PCMBuffer(sampleRate: 768_001, channels: 1, samples: [0]), "sample rate"),
            (PCMBuffer(sampleRate: 48_000, channels: 0, samples: [0]), "channels"),
            (PCMBuffer(sampleRate: 48_000, channels: 9, samples: [Float](repeating: 0, count: 9)), "channels"),
            (PCMBuffer(sampleRate: 48_000, channels: 2, samples: [0, 0, 0]), "samples"),
            (PCMBuffer(sampleRate: 48_000, channels: 1, samples: []), "samples"),
            (PCMBuffer(sampleRate: 48_000, channels: 1, samples: [0, .nan, 0]), "a sample"),
            (PCMBuffer(sampleRate: 48_000, channels: 1, samples: [.infinity]), "a sample")
        ]
        for (pcm, what) in refused {
            let error = #expect(throws: EngineError.self) { try engine.makeSound(pcm, name: "made") }
            guard case .invalidNumber(let refusal)? = error else {
                Issue.record("\(pcm.sampleRate) Hz, \(pcm.channels) channels: \(String(describing: error))")
                continue
            }
            #expect(refusal.what == "made: \(what)", "\(refusal)")
        }
        // Six channels are folded to stereo, as a loaded file's would be, and play.
        let six = try engine.makeSound(
            PCMBuffer(sampleRate: 48_000, channels: 6, samples: [Float](repeating: 0.25, count: 6 * 4800)),
            name: "six")
        #expect(six.channels == 2)
        engine.play(six)
        #expect(try engine.render(seconds: 0.05).samples.contains { $0 != 0 })
    }

    /// OpenAL's limit on its own, with a budget far above it: a real (sparse) 1.1 GB 16-bit WAV decodes to 2.2 GB of
    /// floats, more than one OpenAL buffer holds (Int32.max bytes), and is refused before any of it is decoded.
    @Test func aSoundOverOneOpenALBufferIsRefusedWhateverTheBudget() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ambience-edge-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/long.wav"
        let dataBytes: UInt32 = 1_100_000_000
        var header =
            Array("RIFF".utf8) + withUnsafeBytes(of: (dataBytes + 36).littleEndian, Array.init) + Array("WAVEfmt ".utf8)
        header += withUnsafeBytes(of: UInt32(16).littleEndian, Array.init)
        header += [1, 0, 1, 0] + withUnsafeBytes(of: UInt32(48_000).littleEndian, Array.init)
        header += withUnsafeBytes(of: UInt32(96_000).littleEndian, Array.init) + [2, 0, 16, 0]
        header += Array("data".utf8) + withUnsafeBytes(of: dataBytes.littleEndian, Array.init)
        try Data(header).write(to: URL(fileURLWithPath: path))
        #expect(truncate(path, off_t(header.count) + off_t(dataBytes)) == 0)

        var configuration = EngineConfiguration.offline()
        configuration.soundMemoryBudget = 16 << 30
        let engine = try AudioEngine(configuration)
        defer { engine.shutdown() }
        let error = #expect(throws: EngineError.self) { try engine.load(path) }
        #expect(
            error == .decoding(.tooLarge(path, bytes: Int64(dataBytes) * 2, limit: Int64(Int32.max))),
            "\(String(describing: error))")
        #expect(engine.soundMemory == 0)
    }

    /// The C API fuzzer's find: at 8 kHz OpenAL Soft 1.19's reverb turns a world voice's mix into NaN. Below
    /// 11,025 Hz effects are off, and the mix stays finite; from there up reverb works as before.
    @Test(arguments: [8_000, 9_000, 11_025])
    func effectsAreOffWhereOpenALsReverbCannotWork(sampleRate: Int) throws {
        let engine = try AudioEngine(.offline(sampleRate: sampleRate))
        defer { engine.shutdown() }
        let low = sampleRate < 11_025
        let tone = try engine.makeSound(
            PCMBuffer(
                sampleRate: sampleRate, channels: 1,
                samples: (0..<sampleRate / 10).map { sin(Float($0) * 0.3) * 0.5 }), name: "tone")
        #expect(engine.capabilities.effects == !low)
        #expect(engine.setReverb(.room, on: engine.sfx) == !low)
        engine.play(tone, PlayOptions(loop: true, placement: .world(x: 2, y: 0, z: 0)))
        let mix = try engine.render(seconds: 0.5)
        #expect(mix.samples.allSatisfy { $0.isFinite })
        #expect(mix.samples.contains { $0 != 0 })
    }

    @Test func theHostRefusesNumbersItCannotRunWith() throws {
        let refused: [(HostConfiguration, String)] = [
            (HostConfiguration(window: nil, updateRate: .nan), "updateRate"),
            (HostConfiguration(window: nil, updateRate: 0), "updateRate"),
            (HostConfiguration(window: nil, updateRate: 1e300), "updateRate"),
            (HostConfiguration(window: nil, maxFrameRate: -1), "maxFrameRate"),
            (HostConfiguration(window: nil, maxFrameRate: 1e-300), "maxFrameRate"),
            (HostConfiguration(window: nil, maxFrameRate: .infinity), "maxFrameRate"),
            (HostConfiguration(window: HostConfiguration.WindowOptions(width: 0)), "width"),
            (HostConfiguration(window: nil, offscreenSize: (width: 64, height: Int.max)), "height")
        ]
        for (configuration, what) in refused {
            let error = #expect(throws: HostError.self) { try configuration.validated() }
            guard case .invalidNumber(let refusal)? = error else {
                Issue.record("\(String(describing: error))"); continue
            }
            #expect(refusal.what == what, "\(refusal)")
        }
        #expect(throws: HostError.self) { try Canvas(offscreenWidth: 1 << 40, height: 10) }
        #expect(Picture(width: Int.max, height: 2, pixels: []) == nil)
        // The fixed step itself, a pure part games may use alone, clamps instead.
        var step = FixedTimestep(rate: 0)
        #expect(step.step == 1)
        #expect(step.advance(by: .infinity) == 0 && step.advance(by: .nan) == 0)
        #expect(step.advance(by: 1e300) == step.maxStepsPerFrame)
        #expect(FixedTimestep(rate: .nan).step == 1.0 / 60)
    }

    @Test func theBenchmarkRefusesOptionsItCannotRun() {
        for options in [
            BenchOptions(seconds: .nan), BenchOptions(seconds: 0), BenchOptions(seconds: 1e9),
            BenchOptions(voiceCounts: [0]), BenchOptions(voiceCounts: [Int.max]), BenchOptions(musicSeconds: -.infinity)
        ] {
            #expect(throws: InvalidNumber.self) { try Benchmark.run(options) }
        }
        // The hitches bench refuses before it makes a file or opens a device.
        for options in [
            HitchOptions(seconds: .nan), HitchOptions(seconds: 1e12), HitchOptions(skipEvery: 0),
            HitchOptions(skipEvery: .infinity), HitchOptions(itemMinutes: -1), HitchOptions(itemMinutes: .nan)
        ] {
            #expect(throws: InvalidNumber.self) { try Hitches.run(options) }
        }
        #expect(throws: Never.self) { try HitchOptions(seconds: 2, itemMinutes: 0.5).validated() }
    }

    @Test func theSystemPlayersSeekFollowsTheApplicationPlayersRule() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        #expect(throws: InvalidNumber.self) { try engine.systemMusicPlayer.seek(to: .nan) }
        #expect(throws: InvalidNumber.self) { try engine.musicPlayer.seek(to: .nan) }
        try engine.systemMusicPlayer.seek(to: -5)  // the start: no player to move, and no refusal
    }

    @Test func anSFXTimeTakesTheClockFormOfEveryOtherTime() throws {
        #expect(try SFXCue(parsing: "a@b.wav@1:30,gain=0.5").time == 90)
        #expect(try SFXCue(parsing: "laser.wav@0.25").time == 0.25)
        for text in ["x.wav@nan", "x.wav@-1", "x.wav@24:00:01", "x.wav@1e400", "x.wav@"] {
            #expect(throws: UsageError.self, "\(text)") { try SFXCue(parsing: text) }
        }
    }
}
