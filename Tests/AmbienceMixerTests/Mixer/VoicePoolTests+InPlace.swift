import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// A start written into a free slot in place (`VoicePool.occupy(_:_:bus:outputRate:)`, what `play` does when no
/// window or steal is involved) leaves the slot as a slot built fresh and moved in would be, whatever the slot's last
/// voice left in it.
extension VoicePoolTests {
    /// The fields `VoiceSlot.start` leaves to the pool.
    static let poolFields: Set<String> = ["generation", "timing", "activeIndex", "anchor", "fadeIndex"]

    static let startOptions: [PlayOptions] = [
        PlayOptions(),
        PlayOptions(
            gain: 0.4, pitch: 1.5, loop: true, priority: 7, placement: .world(x: 3, y: -2, z: 8), fadeIn: 0.25,
            loudness: -12),
        PlayOptions(gain: 0, pitch: 0.5, priority: 255, placement: .pan(-0.7), loudness: 6)
    ]

    @Test(arguments: startOptions) func aSlotStartedInPlaceIsAFreshOne(options: PlayOptions) throws {
        var pool = VoicePool(capacity: 1, buses: 5)
        let old = try occupy(&pool, voice(frames: 5000, gain: 0.2, priority: 3, loop: true, placement: .pan(1)))
        pool.fade(old, to: 0.5, over: 1, thenStop: true)
        pool.advanceClock(by: 700)
        let staleGeneration = pool.slots[Int(old)].generation
        pool.free(old)
        // What a freed slot may still hold from its last voice, beyond what `free` clears.
        pool.slots[Int(old)].paused = true
        pool.slots[Int(old)].source = 9
        pool.slots[Int(old)].occlusion = 0.8
        pool.slots[Int(old)].elapsedFrames = 1234
        pool.slots[Int(old)].attenuation = 0.1
        pool.slots[Int(old)].attenuationEpoch = 3
        pool.slots[Int(old)].fadeGain = 0.3
        pool.slots[Int(old)].loudnessGain = 9
        pool.slots[Int(old)].stopAfterFade = true
        pool.slots[Int(old)].fade = Ramp(from: 1, to: 0, duration: 2)

        let sound = Sound(
            name: "in place", buffer: ALBuffer(id: 0), retired: RetiredBuffers(), sampleRate: 44_100, channels: 1,
            frames: 22_050)
        try sound.setLoudness(-3)
        let taken = pool.occupy(sound, options, bus: 3, outputRate: 48_000)
        let slot = try #require(taken)
        var fresh = VoiceSlot()
        fresh.start(sound, options, bus: 3, outputRate: 48_000)

        let inPlace = Mirror(reflecting: pool.slots[Int(slot)]).children
        let built = Mirror(reflecting: fresh).children
        #expect(inPlace.count == built.count && inPlace.count > 20)
        for (a, b) in zip(inPlace, built) where !Self.poolFields.contains(a.label ?? "") {
            #expect(a.label == b.label)
            #expect(String(describing: a.value) == String(describing: b.value), "\(a.label ?? "?")")
        }
        let started = pool.slots[Int(slot)]
        #expect(started.sound === sound && started.generation == staleGeneration &+ 1)
        #expect(started.activeIndex == 0 && pool.active == [slot] && started.anchor == 700)
        #expect(pool.unpausedOnBus[3] == 1 && pool.unpausedOnBus[2] == 0)
        let fades = options.fadeIn > 0
        #expect(pool.fading == (fades ? [slot] : []) && started.fadeIndex == (fades ? 0 : -1))
    }
}
