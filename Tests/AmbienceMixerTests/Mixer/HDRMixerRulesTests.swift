import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// The mixer's HDR rules where a game's calls meet the window (docs/HDR.md), on an offline mixer: a play the pool
/// refuses moves no window, and a loud one takes a culled voice's slot; a culled newcomer ends no culled voice; a
/// voice turned down or moved away under its window's bottom is culled at the next block, and back once louder.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct HDRMixerRulesTests {
    /// A window 40 dB wide that moves at once (attack and release 0), on a bus of its own under sfx.
    private static func mixer(maxVoices: Int = 64) throws -> (Mixer, Bus) {
        let mixer = try Mixer(
            MixerConfiguration(sampleRate: 48_000, realVoices: min(8, maxVoices), maxVoices: maxVoices))
        let world = mixer.makeBus(named: "world", parent: mixer.bus(.sfx))
        try world.setHDR(HDRSettings(width: 40, threshold: 0, attack: 0, release: 0))
        return (mixer, world)
    }

    private static func loop(_ mixer: Mixer, loudness: Float) throws -> Sound {
        let sound = try #require(mixer.makeSound(tone(hz: 440, seconds: 0.5), name: "tone at \(loudness)"))
        sound.loudness = loudness
        return sound
    }

    /// A full pool of priority-255 voices at 100 dB, still inside a 40 dB window under a 120 dB newcomer of
    /// priority 0: the play is refused, and the window stays where it was. Before, the refused play had lifted the
    /// top to 120 on its way to the refusal, and the voices that stayed played 20 dB down for the whole release.
    @Test func aPlayThePoolRefusesMovesNoWindow() throws {
        let (mixer, world) = try Self.mixer(maxVoices: 4)
        defer { mixer.close() }
        let engines = try Self.loop(mixer, loudness: 100)
        let staying = (0..<4).map { _ in mixer.play(engines, PlayOptions(loop: true, bus: world, priority: 255)) }
        _ = mixer.render(frames: 1_024)
        #expect(world.hdrWindowTop.map { abs($0 - 100) < 0.01 } == true)
        let explosion = try Self.loop(mixer, loudness: 120)
        #expect(
            mixer.play(explosion, PlayOptions(bus: world, priority: 0)) == .none, "a full pool of louder priorities")
        #expect(world.hdrWindowTop.map { abs($0 - 100) < 0.01 } == true, "no window moved for a voice never played")
        _ = mixer.render(frames: 1_024)
        #expect(world.hdrWindowTop.map { abs($0 - 100) < 0.01 } == true)
        #expect(staying.allSatisfy { $0.isReal && $0.isPlaying })
    }

    /// The window's point, in a full pool: a 120 dB newcomer pushes 50 dB voices under the bottom (80), and a culled
    /// voice is the first to give up its slot, whatever its priority.
    @Test func aLoudNewcomerTakesTheSlotOfAVoiceItCulls() throws {
        let (mixer, world) = try Self.mixer(maxVoices: 4)
        defer { mixer.close() }
        let steps = try Self.loop(mixer, loudness: 50)
        let staying = (0..<4).map { _ in mixer.play(steps, PlayOptions(loop: true, bus: world, priority: 255)) }
        _ = mixer.render(frames: 1_024)
        let boom = mixer.play(try Self.loop(mixer, loudness: 120), PlayOptions(bus: world, priority: 0))
        #expect(boom != .none)
        #expect(world.hdrWindowTop.map { abs($0 - 120) < 0.01 } == true)
        _ = mixer.render(frames: 1_024)
        #expect(boom.isReal && boom.isPlaying)
        #expect(staying.filter { $0.isPlaying }.count == 3, "one culled voice gave up its slot")
        #expect(staying.allSatisfy { !$0.isReal }, "the others are culled: virtual")
    }

    /// Every culled voice scores the same: a culled newcomer ends no culled voice (it would not have come back).
    @Test func aCulledNewcomerTakesNoCulledVoicesSlot() throws {
        let (mixer, world) = try Self.mixer(maxVoices: 4)
        defer { mixer.close() }
        let loud = mixer.play(try Self.loop(mixer, loudness: 120), PlayOptions(loop: true, bus: world))
        let steps = try Self.loop(mixer, loudness: 50)
        let culled = (0..<3).map { _ in mixer.play(steps, PlayOptions(loop: true, bus: world, priority: 255)) }
        _ = mixer.render(frames: 1_024)
        #expect(loud.isReal && culled.allSatisfy { !$0.isReal && $0.isPlaying })
        #expect(mixer.play(steps, PlayOptions(bus: world, priority: 255)) == .none)
        #expect(culled.allSatisfy { $0.isPlaying })
    }

    /// Before, a voice turned down under the bottom kept its source until something else made the pool rank again.
    @Test func aVoiceTurnedDownUnderTheBottomIsCulledAndComesBackWhenTurnedUp() throws {
        let (mixer, world) = try Self.mixer()
        defer { mixer.close() }
        let loud = mixer.play(try Self.loop(mixer, loudness: 60), PlayOptions(loop: true, bus: world))
        let quiet = mixer.play(try Self.loop(mixer, loudness: 40), PlayOptions(loop: true, bus: world))
        _ = mixer.render(frames: 1_024)
        #expect(loud.isReal && quiet.isReal, "20 dB under a top of 60: inside a 40 dB window")
        #expect(quiet.setGain(0.01) == .ok, "−40 dB: its level 0, under the bottom (20)")
        _ = mixer.render(frames: 1_024)
        #expect(!quiet.isReal && quiet.isPlaying, "culled: virtual, still playing")
        #expect(loud.isReal)
        #expect(quiet.setGain(1) == .ok)
        _ = mixer.render(frames: 1_024)
        #expect(quiet.isReal, "back above the bottom: real again")
    }

    /// The same through distance: a world voice moved 1,000 m away (−60 dB) is culled; moved back, it returns.
    @Test func aVoiceMovedAwayUnderTheBottomIsCulledAndComesBackWhenNear() throws {
        let (mixer, world) = try Self.mixer()
        defer { mixer.close() }
        let loud = mixer.play(try Self.loop(mixer, loudness: 60), PlayOptions(loop: true, bus: world))
        let far = mixer.play(
            try Self.loop(mixer, loudness: 50),
            PlayOptions(loop: true, bus: world, placement: .world(x: 0, y: 0, z: -1)))
        _ = mixer.render(frames: 1_024)
        #expect(loud.isReal && far.isReal)
        #expect(far.setPlacement(.world(x: 0, y: 0, z: -1_000)) == .ok)
        _ = mixer.render(frames: 1_024)
        #expect(!far.isReal && far.isPlaying)
        #expect(far.setPlacement(.world(x: 0, y: 0, z: -1)) == .ok)
        _ = mixer.render(frames: 1_024)
        #expect(far.isReal)
    }
}
