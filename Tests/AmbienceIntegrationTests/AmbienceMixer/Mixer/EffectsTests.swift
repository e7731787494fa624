import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceIntegrationSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport

@Suite(.offTheCooperativePool) struct EffectsTests {
    func clickAndTail(reverb: ReverbPreset?) throws -> Signal {
        let engine = try AudioEngine(.offline())
        if let reverb { #expect(engine.setReverb(reverb, on: engine.sfx)) }
        let click = try engine.makeSound(tone(hz: 1_000, seconds: 0.05), name: "click")
        engine.play(click)
        return try Signal(engine.render(frames: 48_000))
    }

    @Test(arguments: [ReverbPreset.room, .hall, .cave, .underwater])
    func reverbLeavesATail(preset: ReverbPreset) throws {
        let dry = try clickAndTail(reverb: nil)
        let wet = try clickAndTail(reverb: preset)
        let tail = 4_800..<9_600  // 50 ms after the click ended
        #expect(dry.peak(tail) == 0)
        #expect(wet.rms(tail) > 0.001)
    }

    @Test func reverbZoneAppliesInsideOnly() throws {
        func tail(at x: Float) throws -> Double {
            let engine = try AudioEngine(.offline())
            #expect(
                engine.setReverbZones([
                    ReverbZone(center: Vector3(x: 10, y: 0, z: 0), radius: 5, reverb: ReverbPreset.cave.parameters)
                ]))
            let click = try engine.makeSound(tone(hz: 1_000, seconds: 0.05), name: "click")
            engine.play(click, PlayOptions(placement: .world(x: x, y: 0, z: -1)))
            return try Signal(engine.render(frames: 9_600)).rms(4_800..<9_600)
        }
        #expect(try tail(at: 10) > 0.001)
        #expect(try tail(at: -10) == 0)
    }

    /// Zones replaced again and again while voices come and go: every old slot is freed (an idle source still
    /// sending to a slot would keep it alive, and OpenAL Soft has only 64), so the last zone still works.
    @Test func replacingReverbZonesFreesTheOldOnes() throws {
        let engine = try AudioEngine(.offline())
        let click = try engine.makeSound(tone(hz: 1_000, seconds: 0.01), name: "click")
        for round in 0..<100 {
            #expect(
                engine.setReverbZones([
                    ReverbZone(center: Vector3(x: 10, y: 0, z: 0), radius: 5, reverb: ReverbPreset.hall.parameters)
                ]),
                "round \(round)")
            engine.play(click, PlayOptions(placement: .world(x: 10, y: 0, z: -1)))
            _ = try engine.render(frames: 1_024)
        }
        engine.play(click, PlayOptions(placement: .world(x: 10, y: 0, z: -1)))
        #expect(try Signal(engine.render(frames: 9_600)).rms(4_800..<9_600) > 0.0005)
    }

    /// A one-shot whose last sample played just before it was paused is finished, not started again on resume.
    @Test func aOneShotThatEndedBeforeItsPauseIsFinished() throws {
        let engine = try AudioEngine(.offline())
        let blip = try engine.makeSound(tone(hz: 440, seconds: 0.05), name: "blip")  // 2,400 frames
        let voice = engine.play(blip)
        _ = try engine.render(frames: 2_560)  // it ends inside the last block; the next tick finds it stopped
        #expect(voice.pause() == .ok)
        _ = try engine.render(frames: 512)
        #expect(engine.update().contains(.voiceFinished(voice)))
        #expect(voice.resume() == .stale)
        #expect(try Signal(engine.render(frames: 4_800)).peak() == 0)
    }

    /// A real one-shot is reported finished right after its last sound, however its speed changed on the way:
    /// the mixer asks OpenAL only near the end it predicts, so each change of speed must move that prediction.
    @Test(arguments: [
        "plain", "pitch raised", "paused a while", "moving voice", "moving listener", "pitch set every frame"
    ])
    func aRealOneShotIsFinishedRightAfterItsLastSound(change: String) throws {
        let engine = try AudioEngine(.offline())
        let note = try engine.makeSound(tone(hz: 440, seconds: 1), name: "note")
        // Doppler plays it faster than its pitch: a fifth with the voice closing in at 60 m/s, a third with the
        // listener closing in at 120 m/s.
        let velocity = change == "moving voice" ? Vector3(x: 0, y: 0, z: 60) : .zero
        let voice = engine.play(note, PlayOptions(placement: .world(x: 0, y: 0, z: -2, velocity: velocity)))
        #expect(voice.isReal)
        var lastSound = -1
        var reported: Int? = nil
        for block in 0..<120 where reported == nil {
            switch (change, block) {
            case ("pitch raised", 10): voice.setPitch(2)
            case ("paused a while", 10): voice.pause()
            case ("paused a while", 30): voice.resume()
            case ("moving listener", 10): engine.listener.velocity = Vector3(x: 0, y: 0, z: -120)
            case ("pitch set every frame", _): voice.setPitch(1)  // a game that sets it each frame, ended or not
            default: break
            }
            if try Signal(engine.render(frames: 1_024)).peak() > 1e-4 { lastSound = block }
            if engine.update().contains(.voiceFinished(voice)) { reported = block }
        }
        let end = try #require(reported, "never reported finished")
        // Not before the sound has ended, and by the next tick after it.
        #expect(end >= lastSound && end <= lastSound + 2, "last sound in block \(lastSound), finished in block \(end)")
        // The change did change the length, and nothing cut it short: a second of sound is 47 blocks at pitch 1.
        let length = [
            "plain": 45...48, "pitch raised": 27...30, "paused a while": 65...68, "moving voice": 36...40,
            "moving listener": 35...39, "pitch set every frame": 45...48
        ][change]
        #expect(try #require(length).contains(lastSound), "last sound in block \(lastSound)")
    }

    /// Resumed at once, with no tick between the pause and the resume, a one-shot that had played out stays
    /// finished: playing its stopped source again would start it from the top.
    @Test func aOneShotThatEndedBeforeItsPauseStaysSilentWhenResumedAtOnce() throws {
        let engine = try AudioEngine(.offline())
        let blip = try engine.makeSound(tone(hz: 440, seconds: 0.05), name: "blip")  // 2,400 frames
        let voice = engine.play(blip)
        _ = try engine.render(frames: 2_560)
        #expect(voice.pause() == .ok)
        #expect(voice.resume() == .ok)
        engine.mixer.setSuspended(true)
        engine.mixer.setSuspended(false)
        #expect(try Signal(engine.render(frames: 4_800)).peak() == 0)
        #expect(engine.update().contains(.voiceFinished(voice)))
    }

    @Test func occlusionTakesTheHighs() throws {
        func highs(occlusion: Float) throws -> Double {
            let engine = try AudioEngine(.offline())
            var random = SplitMix64(seed: 7)
            let noise = PCMBuffer(
                sampleRate: 48_000, channels: 1,
                samples: (0..<48_000).map { _ in Float(Int64(bitPattern: random.next()) >> 40) / Float(1 << 24) * 0.5 })
            let sound = try engine.makeSound(noise, name: "noise")
            engine.play(sound).setOcclusion(occlusion)
            let out = try Signal(engine.render(frames: 24_000))
            // The first difference is a crude high-pass: its energy is the noise's highs.
            let left = out.channel(0, 512..<24_000)
            return
                (zip(left.dropFirst(), left).reduce(0.0) { $0 + Double(($1.0 - $1.1) * ($1.0 - $1.1)) }
                / Double(left.count)).squareRoot()
        }
        #expect(decibels(try highs(occlusion: 1), over: try highs(occlusion: 0)) < -12)
    }

    @Test func capabilitiesReportWhatIsThere() throws {
        let engine = try AudioEngine(.offline())
        let capabilities = engine.capabilities
        #expect(capabilities.effects == capabilities.extensions.contains("ALC_EXT_EFX"))
        #expect(capabilities.missing.isEmpty == (capabilities.effects && capabilities.hrtf))
        #expect(capabilities.realVoices == 256)
        #expect(capabilities.renderer.hasPrefix("OpenAL Soft"))
    }

    @Test func hrtfChangesHowAWorldVoiceSounds() throws {
        func render(hrtf: Bool) throws -> Signal {
            let engine = try AudioEngine(.offline())
            if hrtf { #expect(engine.setHRTF(true)) }
            #expect(engine.capabilities.hrtfEnabled == hrtf)
            let sound = try engine.makeSound(tone(hz: 440, seconds: 1), name: "t")
            engine.play(sound, PlayOptions(placement: .world(x: -3, y: 0, z: -1)))
            return try Signal(engine.render(frames: 9_600))
        }
        let plain = try render(hrtf: false), binaural = try render(hrtf: true)
        #expect(binaural.rms(2_000..<9_600) > 0.01)
        #expect(
            abs(decibels(binaural.rms(2_000..<9_600, channel: 1), over: plain.rms(2_000..<9_600, channel: 1))) > 0.5)
    }
}
