import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceIntegrationSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// The effects mixer, heard through offline renders.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct MixerTests {
    func engine(realVoices: Int = 256, maxVoices: Int = 16_384) throws -> AudioEngine {
        var configuration = EngineConfiguration.offline(realVoices: realVoices)
        configuration.maxVoices = maxVoices
        return try AudioEngine(configuration)
    }

    /// One real source, held by a looping hum of top priority: every other voice is virtual.
    func engineWithItsOnlySourceTaken() throws -> AudioEngine {
        let engine = try engine(realVoices: 1)
        engine.play(
            try engine.makeSound(tone(hz: 600, seconds: 1), name: "hum"), PlayOptions(loop: true, priority: 250))
        return engine
    }

    @Test func highPriorityVoiceTakesTheSourceAndTheStolenOneIsSilent() throws {
        let engine = try engine(realVoices: 1, maxVoices: 1)
        let low = try engine.makeSound(tone(hz: 300, seconds: 2), name: "low")
        let high = try engine.makeSound(tone(hz: 700, seconds: 2), name: "high")
        let background = engine.play(low, PlayOptions(priority: 10))
        _ = try engine.render(frames: 4_800)
        let important = engine.play(high, PlayOptions(priority: 200))
        let out = try Signal(engine.render(frames: 9_600))
        #expect(abs(out.dominantFrequency(in: 512..<9_600) - 700) < 1)
        #expect(out.amplitude(of: 300, in: 512..<9_600) < 0.005)
        #expect(!background.isAlive)
        #expect(important.isPlaying)
        #expect(engine.update().contains(.voiceStolen(background)))
        // With the pool full of important voices, a less important one is refused and reported stale.
        let refused = engine.play(low, PlayOptions(priority: 1))
        #expect(!refused.isAlive)
        #expect(refused.stop() == .stale)
    }

    @Test func virtualVoiceResumesAtItsElapsedOffset() throws {
        let engine = try engine(realVoices: 1)
        // A ramp makes the playhead readable from any sample.
        let frames = 96_000
        let ramp = PCMBuffer(
            sampleRate: 48_000, channels: 1, samples: (0..<frames).map { Float($0) / Float(frames) * 0.5 })
        let quiet = try engine.makeSound(ramp, name: "ramp")
        let voice = engine.play(quiet, PlayOptions(gain: 1, priority: 100))
        _ = try engine.render(frames: 12_000)
        #expect(voice.isReal)
        // A louder, more important voice takes the only source: the ramp goes virtual and keeps time.
        let loud = try engine.makeSound(tone(hz: 500, seconds: 1), name: "loud")
        let interloper = engine.play(loud, PlayOptions(priority: 200))
        _ = try engine.render(frames: 2_048)
        #expect(!voice.isReal)
        _ = try engine.render(frames: 20_000 - 2_048)
        interloper.stop()
        engine.update()
        let out = try Signal(engine.render(frames: 4_096))
        #expect(voice.isReal)
        // 32,000 frames have passed; the ramp is heard from there (within one block), not from its start.
        // A centred mono source is mixed at 0.5956 (-4.5 dB), so a sample tells the playhead.
        let playhead = Double(out.samples[1_024 * 2]) / (0.5956 * 0.5) * Double(frames)
        #expect(abs(playhead - (32_000 + 1_024)) <= 512, "playhead \(playhead)")
    }

    @Test func oneShotEndingWhileVirtualFinishesAndIsReported() throws {
        let engine = try engineWithItsOnlySourceTaken()
        let blip = try engine.makeSound(tone(hz: 300, seconds: 0.1), name: "blip")
        let virtual = engine.play(blip, PlayOptions(priority: 1))
        _ = try engine.render(frames: 1_024)
        #expect(!virtual.isReal)
        _ = try engine.render(frames: 9_600)
        #expect(engine.update().contains(.voiceFinished(virtual)))
        #expect(!virtual.isAlive)
    }

    /// `Mixer.progress(of:)`, which the SDL_mixer stand-in ends a channel by: a real one-shot's output frames left,
    /// read from OpenAL's playhead (at its pitch), standing still and held while the session suspends the mixer, 0
    /// once OpenAL has played it out; a virtual one's from the voice clock; nil for a loop, which has no end.
    @Test func aOneShotsProgressIsWhatItHasLeftToPlay() throws {
        let engine = try engine()
        let half = try engine.makeSound(tone(hz: 300, seconds: 0.5), name: "half")
        let voice = engine.play(half, PlayOptions(pitch: 2))
        #expect(voice.isReal)
        _ = try engine.render(frames: 6_144)
        // 24,000 frames at pitch 2 are 12,000 output frames: 5,856 left, to the block.
        let playing = try #require(engine.mixer.progress(of: voice))
        #expect(abs(playing.framesLeft - 5_856) <= 512 && !playing.isHeld, "\(playing)")
        engine.mixer.setSuspended(true)
        _ = try engine.render(frames: 24_000)
        let held = try #require(engine.mixer.progress(of: voice))
        #expect(held.isHeld && held.framesLeft == playing.framesLeft, "\(held) after \(playing)")
        engine.mixer.setSuspended(false)
        _ = try engine.render(frames: playing.framesLeft + 1_024)
        #expect(engine.mixer.progress(of: voice)?.framesLeft == 0)
        #expect(engine.mixer.progress(of: engine.play(half, PlayOptions(loop: true))) == nil, "a loop never ends")

        let crowded = try engineWithItsOnlySourceTaken()
        let virtual = crowded.play(
            try crowded.makeSound(tone(hz: 300, seconds: 1), name: "blip"), PlayOptions(priority: 1))
        #expect(!virtual.isReal)
        _ = try crowded.render(frames: 12_000)
        #expect(crowded.mixer.progress(of: virtual) == VoiceProgress(framesLeft: 36_000, isHeld: false))
        #expect(crowded.mixer.progress(of: voice) == nil, "another mixer's voice")
    }

    /// `Mixer.stopIfPlayedOut`, which the SDL_mixer stand-in's Mix_Playing ends a one-shot by: `progress(of:)`'s
    /// answer, and a voice found played out let go by the same call (its handle dead at once, not at the next tick);
    /// one still sounding, or a loop, is left playing.
    @Test func aPlayedOutVoiceIsLetGoByTheCallThatFindsIt() throws {
        let engine = try engine()
        let half = try engine.makeSound(tone(hz: 300, seconds: 0.5), name: "half")
        let voice = engine.play(half)
        _ = try engine.render(frames: 6_144)
        let playing = try #require(engine.mixer.stopIfPlayedOut(voice))
        #expect(playing.framesLeft > 0 && voice.isAlive, "\(playing)")
        // The mixer's render alone, as a device's callback runs it: no tick, which would let the voice go itself.
        let frames = playing.framesLeft + 1_024
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: frames * 2)
        defer { buffer.deallocate() }
        engine.mixer.render(into: buffer, frames: frames)
        try #require(voice.isAlive, "played out, and not let go before the call")
        #expect(engine.mixer.stopIfPlayedOut(voice)?.framesLeft == 0)
        #expect(!voice.isAlive)
        let loop = engine.play(half, PlayOptions(loop: true))
        #expect(engine.mixer.stopIfPlayedOut(loop) == nil && loop.isAlive, "a loop never ends")
    }

    /// A virtual voice given the source its holder let go starts where it stood, at the next block (`PendingStarts`).
    /// Until then it reads that place, not the 0 OpenAL reads for a source that has not played; stopped before the
    /// block, it is never heard (review, stop 46).
    @Test func aStartNotYetPlayedStandsWhereItWillStart() throws {
        let engine = try engine(realVoices: 1)
        let hum = try engine.makeSound(tone(hz: 600, seconds: 1), name: "hum")
        let holder = engine.play(hum, PlayOptions(loop: true, priority: 250))
        let voice = engine.play(try engine.makeSound(tone(hz: 300, seconds: 1), name: "blip"), PlayOptions(priority: 1))
        #expect(holder.isReal && !voice.isReal)
        _ = try engine.render(frames: 12_000)
        holder.stop()
        engine.mixer.tick(frames: 0)
        try #require(voice.isReal && engine.mixer.pendingStarts.hasRecorded, "the freed source went to the blip")
        // 12,000 of its 48,000 frames stood behind it: 36,000 left, not 48,000.
        #expect(engine.mixer.progress(of: voice) == VoiceProgress(framesLeft: 36_000, isHeld: false))
        voice.stop()
        #expect(try Signal(engine.render(frames: 2_048)).peak() == 0)
    }

    /// A virtual voice keeps time exactly through pitch changes, pauses and session suspension, and a virtual
    /// one-shot ends when its (re-pitched) length has played, to the block.
    @Test func virtualVoiceKeepsTimeThroughPitchPauseAndSuspension() throws {
        let engine = try engineWithItsOnlySourceTaken()
        let blip = try engine.makeSound(tone(hz: 300, seconds: 1), name: "blip")
        let voice = engine.play(blip, PlayOptions(priority: 1))
        #expect(!voice.isReal)
        _ = try engine.render(frames: 12_000)
        #expect(abs((voice.elapsed ?? 0) - 0.25) < 1e-6)
        voice.setPitch(2)
        _ = try engine.render(frames: 6_000)
        #expect(abs((voice.elapsed ?? 0) - 0.5) < 1e-6)
        voice.pause()
        _ = try engine.render(frames: 24_000)
        #expect(abs((voice.elapsed ?? 0) - 0.5) < 1e-6)
        voice.resume()
        engine.mixer.setSuspended(true)
        _ = try engine.render(frames: 24_000)
        #expect(abs((voice.elapsed ?? 0) - 0.5) < 1e-6)
        engine.mixer.setSuspended(false)
        // 0.5 s of sound left at pitch 2 is 12,000 output frames.
        _ = try engine.render(frames: 11_000)
        #expect(!engine.update().contains(.voiceFinished(voice)))
        #expect(voice.isAlive && !voice.isReal)
        _ = try engine.render(frames: 1_024)
        #expect(engine.update().contains(.voiceFinished(voice)))
        #expect(!voice.isAlive)
    }

    @Test func virtualLoopWrapsAndNeverFinishes() throws {
        let engine = try engineWithItsOnlySourceTaken()
        let loop = try engine.makeSound(tone(hz: 300, seconds: 0.5), name: "loop")
        let voice = engine.play(loop, PlayOptions(pitch: 1.5, loop: true, priority: 1))
        _ = try engine.render(frames: 48_000)
        #expect(voice.isAlive && !voice.isReal)
        // 1.5 s of the sound played: three times round, the playhead back at the start.
        #expect(abs((voice.elapsed ?? 1) - 0) < 1e-6 || abs((voice.elapsed ?? 0) - 0.5) < 1e-6)
        _ = try engine.render(frames: 8_000)
        #expect(abs((voice.elapsed ?? 0) - 0.25) < 1e-6)
        #expect(!engine.update().contains(.voiceFinished(voice)))
    }

    @Test func duckingLowersMusicByNineDecibelsAndRestores() throws {
        let fixtures = try Fixtures()
        let engine = try engine()
        try engine.musicPlayer.setQueue(paths: [try fixtures.sineWAV("music.wav", hz: 300, seconds: 4)])
        engine.musicPlayer.play()
        let before = try Signal(engine.render(frames: 9_600)).amplitude(of: 300, in: 2_000..<9_600)
        let dialogue = try engine.makeSound(tone(hz: 900, seconds: 1), name: "line")
        #expect(engine.dialogue.name == "dialogue")
        engine.play(dialogue, PlayOptions(bus: engine.dialogue))
        // The default rule: attack 80 ms. After it the music is 9 dB down.
        let ducked = try Signal(engine.render(frames: 24_000))
        let depth = decibels(ducked.amplitude(of: 300, in: 6_000..<24_000), over: before)
        #expect(abs(depth + 9) < 1)
        // The line ends at 1 s; release 500 ms later the music is back.
        _ = try engine.render(frames: 24_000 + 24_000)
        let after = try Signal(engine.render(frames: 9_600)).amplitude(of: 300, in: 0..<9_600)
        #expect(abs(decibels(after, over: before)) < 0.2)
    }

    @Test func mutedBusIsSilentAndGainsMultiplyAlongTheChain() throws {
        let engine = try engine()
        let sound = try engine.makeSound(tone(hz: 440, seconds: 1), name: "t")
        let weapons = engine.makeBus(named: "weapons", parent: engine.sfx)
        engine.play(sound, PlayOptions(loop: true, bus: weapons))
        let full = try Signal(engine.render(frames: 4_800)).rms(512..<4_800)
        engine.sfx.gain = 0.5
        weapons.gain = 0.5
        #expect(weapons.effectiveGain == 0.25)
        let quarter = try Signal(engine.render(frames: 4_800)).rms(512..<4_800)
        #expect(abs(decibels(quarter, over: full) + 12.04) < 0.1)
        engine.sfx.isMuted = true
        #expect(try Signal(engine.render(frames: 4_800)).peak(512..<4_800) == 0)
    }

    @Test func voicePlacedLeftIsLouderOnTheLeft() throws {
        let engine = try engine()
        let sound = try engine.makeSound(tone(hz: 440, seconds: 1), name: "t")
        engine.listener = ListenerState()
        engine.play(sound, PlayOptions(placement: .world(x: -5, y: 0, z: 0)))
        let out = try Signal(engine.render(frames: 9_600))
        #expect(out.rms(512..<9_600, channel: 0) > 2 * out.rms(512..<9_600, channel: 1))
    }

    @Test func distanceAttenuatesWorldVoices() throws {
        let engine = try engine()
        let sound = try engine.makeSound(tone(hz: 440, seconds: 1), name: "t")
        engine.play(sound, PlayOptions(placement: .world(x: 0, y: 0, z: -1)))
        let near = try Signal(engine.render(frames: 9_600)).rms(512..<9_600)
        let engine2 = try self.engine()
        let sound2 = try engine2.makeSound(tone(hz: 440, seconds: 1), name: "t")
        engine2.play(sound2, PlayOptions(placement: .world(x: 0, y: 0, z: -4)))
        let far = try Signal(engine2.render(frames: 9_600)).rms(512..<9_600)
        // Inverse distance, reference 1, rolloff 1: four times as far is a quarter the amplitude.
        #expect(abs(decibels(far, over: near) + 12.04) < 0.3)
    }

    @Test func fadeEndsAtItsTarget() throws {
        let engine = try engine()
        let sound = try engine.makeSound(tone(hz: 440, seconds: 2), name: "t")
        let voice = engine.play(sound, PlayOptions(loop: true))
        let full = try Signal(engine.render(frames: 4_800)).amplitude(of: 440, in: 0..<4_800)
        voice.fade(to: 0.25, over: 0.5)
        _ = try engine.render(frames: 24_000)
        let after = try Signal(engine.render(frames: 4_800)).amplitude(of: 440, in: 0..<4_800)
        #expect(abs(after / full - 0.25) < 0.01)
        voice.stop(fade: 0.1)
        _ = try engine.render(frames: 4_800 + 1_024)
        #expect(!voice.isAlive)
        #expect(try Signal(engine.render(frames: 2_048)).peak() == 0)
    }

    @Test func staleHandleDoesNothing() throws {
        let engine = try engine()
        let sound = try engine.makeSound(tone(hz: 440, seconds: 0.05), name: "t")
        let voice = engine.play(sound)
        _ = try engine.render(frames: 9_600)
        engine.update()
        let other = engine.play(sound, PlayOptions(loop: true))  // reuses the slot under a new generation
        for result in [
            voice.stop(), voice.pause(), voice.resume(), voice.setGain(0), voice.setPitch(2),
            voice.setPlacement(.pan(1)), voice.fade(to: 0, over: 1)
        ] {
            #expect(result == .stale)
        }
        #expect(other.isPlaying)
        #expect(try Signal(engine.render(frames: 4_800)).rms(512..<4_800) > 0.1)
        #expect(Voice.none.stop() == .stale)
    }

    @Test func busHandlesOutlivingTheirEngineAreHarmless() throws {
        var engine: AudioEngine? = try self.engine()
        let sfx = try #require(engine).sfx
        let mine = try #require(engine).makeBus(named: "mine", parent: sfx)
        mine.gain = 0.5
        #expect(!mine.isStale && mine.name == "mine" && mine.gain == 0.5 && mine.description == "Bus(mine)")
        let voice = try #require(engine).play(
            try #require(engine).makeSound(tone(hz: 440, seconds: 1), name: "t"),
            PlayOptions(bus: mine))
        weak let mixer = engine?.mixer
        engine = nil
        // Like a voice, a bus holds its mixer weakly: the handles kept it alive before.
        #expect(mixer == nil, "a handle kept the mixer alive")
        #expect(voice.stop() == .stale)
        for bus in [sfx, mine] {
            #expect(bus.isStale)
            bus.gain = 0.25
            bus.isMuted = true
            try bus.setGain(0.25)
            try bus.fade(to: 1, over: 1)
            #expect(bus.name == "" && bus.gain == 0 && !bus.isMuted && bus.effectiveGain == 0)
            #expect(bus.description == "Bus(stale)")
        }
        #expect(sfx != mine && mine == mine)
    }

    @Test func pausedVoiceKeepsItsPlaceAndResumes() throws {
        let engine = try engine()
        let sound = try engine.makeSound(tone(hz: 440, seconds: 2), name: "t")
        let voice = engine.play(sound)
        _ = try engine.render(frames: 24_000)
        voice.pause()
        #expect(try Signal(engine.render(frames: 24_000)).peak(512..<24_000) == 0)
        #expect(abs((voice.elapsed ?? 0) - 0.5) < 0.02)
        voice.resume()
        #expect(try Signal(engine.render(frames: 4_800)).rms(512..<4_800) > 0.1)
    }

    /// A free source remembers what it was last told (its sound, position and gain), so a sound restarted where it
    /// stood is sent nothing but the play; a voice that differs, on a source that remembers other settings, is still
    /// heard where and as loud as it asks.
    @Test func aSourceKeepsItsSettingsForTheNextVoiceAndSendsOnlyWhatDiffers() throws {
        let engine = try engine(realVoices: 4)
        let sound = try engine.makeSound(tone(hz: 440, seconds: 1), name: "t")
        engine.listener = ListenerState()
        let left = PlayOptions(gain: 0.5, placement: .world(x: -5, y: 0, z: 0))
        let first = engine.play(sound, left)
        _ = try engine.render(frames: 2_048)
        first.stop()
        let sent = engine.mixer.withLock { engine.mixer.sources.propertyCalls }
        let again = engine.play(sound, left)
        #expect(again.isReal)
        #expect(engine.mixer.withLock { engine.mixer.sources.propertyCalls } == sent)
        let heardLeft = try Signal(engine.render(frames: 4_800))
        #expect(heardLeft.rms(512..<4_800, channel: 0) > 2 * heardLeft.rms(512..<4_800, channel: 1))
        again.stop()
        let louder = engine.play(sound, PlayOptions(gain: 1, placement: .world(x: 5, y: 0, z: 0)))
        #expect(louder.isReal)
        #expect(engine.mixer.withLock { engine.mixer.sources.propertyCalls } == sent + 2)  // position and gain
        let heardRight = try Signal(engine.render(frames: 4_800))
        #expect(heardRight.rms(512..<4_800, channel: 1) > 2 * heardRight.rms(512..<4_800, channel: 0))
        let rise = decibels(heardRight.rms(512..<4_800, channel: 1), over: heardLeft.rms(512..<4_800, channel: 0))
        #expect(abs(rise - 6.02) < 0.5, "\(rise) dB")
    }

    @Test func aVoiceStartedBeforeABlockIsAudibleInIt() throws {
        let engine = try engine()
        let sound = try engine.makeSound(tone(hz: 440, seconds: 1), name: "t")
        _ = try engine.render(frames: 512)
        engine.play(sound)
        let block = try Signal(engine.render(frames: 512))
        #expect(block.firstFrame(above: 0.001).map { $0 < 16 } == true)
    }

    /// A mixer made directly (the bench, the stand-in's tests) is held to the limits the engine checks: the mixer's
    /// own constant, which the engine's is to be read from once the two live in different targets.
    @Test func theMixersVoiceLimitsAreTheEngines() {
        #expect(MixerConfiguration.maxVoiceCounts == EngineConfiguration.maxVoiceCounts)
    }

    @Test func hundredThousandOneShotsLeakNothing() throws {
        let engine = try engine(realVoices: 64, maxVoices: 256)
        let sound = try engine.makeSound(tone(hz: 440, seconds: 0.01), name: "tick")
        let soundMemory = engine.soundMemory
        for _ in 0..<100 {
            for _ in 0..<1_000 { engine.play(sound) }
            _ = try engine.render(frames: 1_024)
            engine.update()
        }
        _ = try engine.render(frames: 4_800)
        engine.update()
        let stats = engine.stats
        #expect(stats.started == 100_000)
        #expect(stats.realVoices == 0 && stats.virtualVoices == 0)
        #expect(stats.finished + stats.stolen == 100_000)
        // Every source and voice slot is free again, no buffer was made, and nothing waits in the event queue:
        // the engine holds exactly what it held before. (Whole-process memory over a long run is measured by
        // `ambience stress --soak`, in a process of its own, since tests here share one.)
        #expect(engine.mixer.freeSourceCount == 64)
        #expect(engine.mixer.freeSlotCount == 256)
        #expect(engine.mixer.pendingEventCount == 0)
        #expect(engine.soundMemory == soundMemory)
    }

}
