import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

@Suite(.offTheCooperativePool) struct EngineRenderTests {
    let block = 512

    func engine() throws -> AudioEngine {
        try AudioEngine(EngineConfiguration(output: .offline, blockFrames: block))
    }

    @Test func sfxStartsWhereAsked() throws {
        let engine = try engine()
        let beep = try engine.makeSound(tone(hz: 440, seconds: 0.2), name: "beep")
        var out = try Signal(engine.render(frames: 24_000))
        engine.play(beep)
        out.samples += try engine.render(frames: 24_000).samples
        let onset = try #require(out.firstFrame(above: 0.01))
        #expect(abs(onset - 24_000) <= block)
        #expect(abs(out.dominantFrequency(in: 24_500..<33_000) - 440) < 1)
        #expect(out.rms(0..<24_000) == 0)
    }

    @Test func centredMonoLevelMatchesOpenAL() throws {
        let engine = try engine()
        let sound = try engine.makeSound(tone(hz: 440, seconds: 1), name: "sine")
        engine.play(sound)
        let out = try Signal(engine.render(frames: 24_000))
        // OpenAL Soft renders a centred mono source at about -4.5 dB per channel.
        #expect(abs(out.rms(4_800..<24_000, channel: 0) - 0.2106) < 0.01)
        #expect(abs(out.rms(4_800..<24_000, channel: 1) - 0.2106) < 0.01)
    }

    @Test(arguments: [Float(-1), 1])
    func panFavoursItsSide(pan: Float) throws {
        let engine = try engine()
        let sound = try engine.makeSound(tone(hz: 440, seconds: 1), name: "sine")
        engine.play(sound, PlayOptions(placement: .pan(pan)))
        let out = try Signal(engine.render(frames: 24_000))
        let left = out.rms(4_800..<24_000, channel: 0), right = out.rms(4_800..<24_000, channel: 1)
        if pan < 0 { #expect(left > 2 * right) } else { #expect(right > 2 * left) }
    }

    @Test func twoVoicesSum() throws {
        let single = try engine()
        let a = try single.makeSound(tone(hz: 440, seconds: 1, amplitude: 0.25), name: "a")
        single.play(a)
        let one = try Signal(single.render(frames: 12_000)).rms(2_000..<12_000)
        let double = try engine()
        let b = try double.makeSound(tone(hz: 440, seconds: 1, amplitude: 0.25), name: "b")
        double.play(b)
        double.play(b)
        let both = try Signal(double.render(frames: 12_000)).rms(2_000..<12_000)
        // Two copies in phase are twice as loud: +6 dB.
        #expect(abs(decibels(both, over: one) - 6.02) < 0.2)
    }

    @Test func stoppedVoiceIsSilentAndItsHandleStale() throws {
        let engine = try engine()
        let sound = try engine.makeSound(tone(hz: 440, seconds: 1), name: "sine")
        let voice = engine.play(sound, PlayOptions(loop: true))
        #expect(voice.isPlaying)
        _ = try engine.render(frames: 4_800)
        #expect(voice.stop() == .ok)
        let after = try Signal(engine.render(frames: 4_800))
        #expect(after.peak(block..<4_800) == 0)
        #expect(voice.stop() == .stale)
        #expect(voice.setGain(0.5) == .stale)
        #expect(!voice.isPlaying)
    }

    @Test func oneShotFinishesAndIsReported() throws {
        let engine = try engine()
        let sound = try engine.makeSound(tone(hz: 440, seconds: 0.05), name: "blip")
        let voice = engine.play(sound)
        _ = try engine.render(frames: 9_600)
        let events = engine.update()
        #expect(events == [.voiceFinished(voice)])
        #expect(!voice.isAlive)
    }

    @Test func pitchShiftsFrequency() throws {
        let engine = try engine()
        let sound = try engine.makeSound(tone(hz: 440, seconds: 1), name: "sine")
        engine.play(sound, PlayOptions(pitch: 1.5))
        let out = try Signal(engine.render(frames: 24_000))
        #expect(abs(out.dominantFrequency(in: 2_000..<24_000) - 660) < 1)
    }

    @Test func renderingIntoABufferGivesTheSameMix() throws {
        func mix(_ render: (AudioEngine) throws -> [Float]) throws -> [Float] {
            let engine = try engine()
            engine.play(
                try engine.makeSound(tone(hz: 440, seconds: 1), name: "sine"),
                PlayOptions(pitch: 1.1, placement: .pan(-0.5)))
            return try render(engine)
        }
        let allocated = try mix { try $0.render(frames: 4_800).samples }
        let inPlace = try mix { engine in
            var samples = [Float](repeating: .nan, count: 9_600)
            try samples.withUnsafeMutableBufferPointer { (buffer) throws(EngineError) in try engine.render(into: buffer)
            }
            return samples
        }
        #expect(Signal(PCMBuffer(sampleRate: 48_000, channels: 2, samples: inPlace)).rms() > 0.1)
        #expect(inPlace == allocated)
    }

    @Test func offlineEngineSaysSo() throws {
        let engine = try AudioEngine(EngineConfiguration(output: .offline))
        #expect(engine.outputDriver == "offline")
    }
}
