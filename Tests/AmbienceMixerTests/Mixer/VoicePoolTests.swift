import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// The mixer's pure parts, tested directly: no OpenAL, no device. `MixerTests` and `EngineRenderTests` keep
/// listening to the whole.
@Suite(.offTheCooperativePool) struct VoicePoolTests {
    static let noBuses = Audibility(busGains: [1, 1, 1, 1, 1], listener: ListenerState())

    /// A voice of `frames` sound frames at 1 sound frame per output frame.
    func voice(
        frames: Double = 1000, gain: Float = 1, priority: UInt8 = 128, loop: Bool = false,
        placement: Placement = .pan(0), bus: Int = 2
    ) -> VoiceSlot {
        var slot = VoiceSlot()
        // A live voice holds its sound; this one's buffer is never given to OpenAL.
        slot.sound = Sound(
            name: "test", buffer: ALBuffer(id: 0), retired: RetiredBuffers(), sampleRate: 48_000,
            channels: 1, frames: Int(frames))
        slot.soundFrames = frames
        slot.gain = gain
        slot.priority = priority
        slot.loop = loop
        slot.placement = placement
        slot.bus = bus
        return slot
    }

    /// A new voice's slot; the test fails when the pool is full.
    func occupy(_ pool: inout VoicePool, _ fresh: VoiceSlot) throws -> Int32 {
        let slot = pool.occupy(fresh)
        return try #require(slot)
    }

    @Test func slotsHandOutNewGenerationsAndRefuseWhenFull() throws {
        var pool = VoicePool(capacity: 2, buses: 5)
        let first = try occupy(&pool, voice())
        let generation = pool.slots[Int(first)].generation
        let second = try occupy(&pool, voice())
        #expect(first != second)
        let refused = pool.occupy(voice())
        #expect(pool.isFull && refused == nil)
        #expect(pool.active.count == 2 && pool.unpausedOnBus[2] == 2)
        let step1 = pool.free(first)
        #expect(step1 == generation)
        #expect(!pool.isFull && pool.active == [second] && pool.slots[Int(second)].activeIndex == 0)
        let again = try occupy(&pool, voice())
        #expect(
            again == first && pool.slots[Int(again)].generation == generation &+ 1, "an old handle to the slot is stale"
        )
        #expect(pool.weakestReal.slot == -1)
    }

    /// (loop, paused, clock, expected playhead) for a 1000-frame sound at step 1.
    static let playheads: [(Bool, Bool, Int, Double)] = [
        (false, false, 0, 0), (false, false, 300, 300), (false, false, 1000, 1000), (false, false, 5000, 1000),
        (true, false, 1300, 300), (true, false, 2000, 0), (false, true, 700, 0), (true, true, 1300, 0)
    ]

    @Test(arguments: playheads)
    func virtualPlayheadFollowsTheClock(loop: Bool, paused: Bool, clock: Int, expected: Double) throws {
        var pool = VoicePool(capacity: 4, buses: 5)
        let slot = try occupy(&pool, voice(loop: loop))
        if paused { pool.setPaused(slot, true) }
        pool.advanceClock(by: clock)
        #expect(pool.virtualPlayhead(slot) == expected)
    }

    @Test func settlingAtANewSpeedKeepsThePlayhead() throws {
        var pool = VoicePool(capacity: 1, buses: 5)
        let slot = try occupy(&pool, voice(frames: 10_000))
        pool.advanceClock(by: 1000)
        pool.settle(slot)
        pool.slots[Int(slot)].step = 2
        pool.advanceClock(by: 500)
        #expect(pool.virtualPlayhead(slot) == 2000)
    }

    @Test func virtualOneShotsEndInOrderAndStaleEndingsAreDropped() throws {
        var pool = VoicePool(capacity: 8, buses: 5)
        var slots: [Int32] = []
        for frames in [900.0, 300, 600, 1200] {
            let slot = try occupy(&pool, voice(frames: frames))
            pool.scheduleEnding(slot)
            slots.append(slot)
        }
        let looping = try occupy(&pool, voice(frames: 100, loop: true))
        pool.scheduleEnding(looping)  // a loop never ends
        pool.setPaused(slots[2], true)  // its ending is stale
        pool.advanceClock(by: 1000)
        var ended: [Int32] = []
        while let slot = pool.nextEndedVirtualVoice() {
            ended.append(slot)
            pool.free(slot)
        }
        #expect(ended == [slots[1], slots[0]])
        pool.setPaused(slots[2], false)  // 0 of 600 played: ends 600 frames from now, at 1600
        pool.advanceClock(by: 599)
        let step2 = pool.nextEndedVirtualVoice()
        #expect(step2 == slots[3])
        pool.free(slots[3])
        let step3 = pool.nextEndedVirtualVoice()
        #expect(step3 == nil)
        pool.advanceClock(by: 1)
        let step4 = pool.nextEndedVirtualVoice()
        #expect(step4 == slots[2])
        let step5 = pool.nextEndedVirtualVoice()
        #expect(step5 == nil, "a loop never ends")
    }

    /// A heap full of stale endings (pause, resume, pause, resume) is compacted by the pool's own rule, and the
    /// voice ends once, at the end its last resume plans.
    @Test func staleEndingsAreCompactedAndTheVoiceEndsOnce() throws {
        var pool = VoicePool(capacity: 1, buses: 5)  // the heap holds 2 endings
        let slot = try occupy(&pool, voice(frames: 1000))
        pool.scheduleEnding(slot)
        pool.advanceClock(by: 100)
        pool.setPaused(slot, true)
        pool.setPaused(slot, false)  // the heap is full of one stale and one current ending
        pool.setPaused(slot, true)
        pool.setPaused(slot, false)  // this push compacts first
        pool.advanceClock(by: 899)  // 100 played before the pause: 900 left, from clock 100
        let early = pool.nextEndedVirtualVoice()
        #expect(early == nil)
        pool.advanceClock(by: 1)
        let due = pool.nextEndedVirtualVoice()
        #expect(due == slot)
        let again = pool.nextEndedVirtualVoice()
        #expect(again == nil, "one ending, not one per resume")
    }

    @Test func fadesMoveEndAndStop() throws {
        var pool = VoicePool(capacity: 2, buses: 5)
        let fading = try occupy(&pool, voice(gain: 0.8))
        let stopping = try occupy(&pool, voice())
        pool.fade(fading, to: 0.4, over: 0.1, thenStop: false)
        pool.fade(stopping, to: 0, over: 0.1, thenStop: true)
        #expect(pool.fading.count == 2 && pool.slots[Int(fading)].gain == 1 && pool.slots[Int(fading)].fadeGain == 0.8)
        let step6 = pool.advanceFade(fading, by: 0.05)
        #expect(step6 == .moving)
        #expect(abs(pool.slots[Int(fading)].fadeGain - 0.6) < 1e-6)
        let step7 = pool.advanceFade(fading, by: 0.06)
        #expect(step7 == .ended)
        let step8 = pool.advanceFade(stopping, by: 0.1)
        #expect(step8 == .endedThenStop)
        #expect(pool.fading.isEmpty && abs(pool.slots[Int(fading)].fadeGain - 0.4) < 1e-6)
        let step9 = pool.advanceFade(fading, by: 0.05)
        #expect(step9 == .idle)
    }

    /// Priority outranks loudness; among equals the louder wins; a paused voice never ranks.
    /// (priorities, gains, paused, keep, the indices expected at or above the threshold)
    static let ranks: [([UInt8], [Float], [Bool], Int, Set<Int>)] = [
        ([128, 128, 128, 128], [0.1, 0.9, 0.5, 0.3], [false, false, false, false], 2, [1, 2]),
        ([10, 200, 128, 128], [1, 0.01, 0.5, 0.6], [false, false, false, false], 2, [1, 3]),
        ([128, 128, 128], [1, 0.2, 0.5], [true, false, false], 2, [1, 2]),
        ([0, 0, 255], [15, 15, 0], [false, false, false], 1, [2])
    ]

    @Test(arguments: ranks)
    func rankKeepsTheMostImportant(priorities: [UInt8], gains: [Float], paused: [Bool], keep: Int, expected: Set<Int>)
        throws
    {
        var pool = VoicePool(capacity: 8, buses: 5)
        var slots: [Int32] = []
        for i in priorities.indices {
            let slot = try occupy(&pool, voice(gain: gains[i], priority: priorities[i]))
            if paused[i] { pool.setPaused(slot, true) }
            slots.append(slot)
        }
        let threshold = pool.rank(keep: keep, Self.noBuses)
        let kept = Set(slots.indices.filter { pool.rankScore(of: slots[$0]) >= threshold })
        #expect(kept == expected)
        let least = try #require(pool.leastImportantVoice(Self.noBuses))
        #expect(
            paused.contains(true)
                ? paused[slots.firstIndex(of: least.slot)!]
                : least.importance == slots.map { pool.importance(ofSlot: $0, Self.noBuses) }.min())
    }

    @Test func aRealVoiceKeepsItsSourceAgainstANearEqual() throws {
        var pool = VoicePool(capacity: 2, buses: 5)
        let real = try occupy(&pool, voice(gain: 0.5))
        let rival = try occupy(&pool, voice(gain: 0.6))
        pool.becameReal(real, on: 0)
        let threshold = pool.rank(keep: 1, Self.noBuses)
        #expect(pool.rankScore(of: real) >= threshold && pool.rankScore(of: rival) < threshold)
        pool.setGain(rival, 0.8)  // more than the 0.25 bonus
        let next = pool.rank(keep: 1, Self.noBuses)
        #expect(pool.rankScore(of: rival) >= next && pool.rankScore(of: real) < next)
    }

    /// The selection started from the last threshold finds what sorting finds, whichever side of the answer the
    /// guess falls on: above it (more values below), on it, a few short (a real voice ended), far off, or none.
    @Test func selectionFromAGuessMatchesSorting() {
        var rng = SplitMix64(seed: 7)
        for trial in 0..<400 {
            let count = Int.random(in: 1...600, using: &rng)
            // Few distinct values in some trials, so that ties at the threshold are common.
            let distinct = trial % 3 == 0 ? 5 : 1_000_000
            let values = (0..<count).map { _ in Float(Int.random(in: 0..<distinct, using: &rng)) / 7 }
            let k = Int.random(in: 1...count, using: &rng)
            let sorted = values.sorted(by: >)
            let guesses: [Float] = [
                sorted[k - 1], sorted[min(k + 3, count - 1)], sorted[max(k - 4, 0)], sorted[min(k + 40, count - 1)],
                sorted[0] + 1, sorted[count - 1] - 1, .nan, .infinity
            ]
            for guess in guesses {
                var scratch = values
                let found = scratch.withUnsafeMutableBufferPointer { kthLargest($0, count: count, k: k, near: guess) }
                #expect(found == sorted[k - 1], "k \(k) of \(count), guess \(guess)")
            }
        }
    }

    @Test func aRankStartsFromTheLastThresholdAndStillFollowsChanges() throws {
        var pool = VoicePool(capacity: 64, buses: 5)
        var slots: [Int32] = []
        for i in 0..<64 { slots.append(try occupy(&pool, voice(gain: Float(i + 1) / 64))) }
        let first = pool.rank(keep: 8, Self.noBuses)
        #expect(Set(slots.indices.filter { pool.rankScore(of: slots[$0]) >= first }) == Set(56..<64))
        // The loudest fall silent: the next rank, started from the old threshold, finds the new eight.
        for i in 60..<64 { pool.setGain(slots[i], 0) }
        let second = pool.rank(keep: 8, Self.noBuses)
        #expect(Set(slots.indices.filter { pool.rankScore(of: slots[$0]) >= second }) == Set(52..<60))
        // Quiet ones grow loud: the threshold rises.
        for i in 0..<8 { pool.setGain(slots[i], 2) }
        let third = pool.rank(keep: 8, Self.noBuses)
        #expect(Set(slots.indices.filter { pool.rankScore(of: slots[$0]) >= third }) == Set(0..<8))
    }

    @Test func distanceAndBusGainsWeighAudibility() {
        var listener = ListenerState()
        listener.referenceDistance = 1
        listener.rolloff = 1
        let audibility = Audibility(busGains: [1, 1, 0.5, 1, 1], listener: listener)
        let near = VoicePool.importance(of: voice(placement: .world(x: 0, y: 0, z: -1)), audibility)
        let far = VoicePool.importance(of: voice(placement: .world(x: 0, y: 0, z: -4)), audibility)
        #expect(abs(near - (128 * 16 + 0.5)) < 1e-4 && abs(far - (128 * 16 + 0.125)) < 1e-4)
        #expect(listener.attenuation(Vector3(x: 0, y: 0, z: -10)) == 0.1)
    }

    /// (live voices, sources, free sources, a rank owed, frames since the last, due)
    static let schedules: [(Int, Int, Int, Bool, Int, Bool)] = [
        (4, 8, 4, false, 1024, false),  // every live voice is real: nothing waits
        (4, 8, 4, true, 1024, true),  // a voice paused or started: rank now
        (4, 8, 6, false, 1024, true),  // some voice is virtual though sources are free
        (20, 8, 0, true, 1024, false),  // competing: wait for 40 ms
        (20, 8, 0, false, 1920, true)  // 40 ms at 48 kHz
    ]

    @Test(arguments: schedules)
    func ranksAreDueAtOnceWithoutCompetitionElseEvery40ms(
        live: Int, sources: Int, free: Int, owed: Bool, frames: Int, due: Bool
    ) throws {
        var pool = VoicePool(capacity: 32, buses: 5)
        for _ in 0..<live { _ = try occupy(&pool, voice()) }
        pool.ranked()
        pool.needsRank = owed
        let step10 = pool.rankIsDue(afterFrames: frames, sources: sources, freeSources: free, sampleRate: 48_000)
        #expect(step10 == due)
    }

    @Test func duckingTriggersSeeOnlyAudibleUnpausedVoicesUnderTheBus() throws {
        var graph = BusGraph(root: "master", children: ["music", "sfx", "ui", "dialogue"])
        let child = graph.add(named: "barks", parent: 4)
        var pool = VoicePool(capacity: 4, buses: graph.count)
        #expect(!pool.hasAudibleVoices(under: 4, in: graph))
        let quiet = try occupy(&pool, voice(gain: 0.0001, bus: child))
        #expect(!pool.hasAudibleVoices(under: 4, in: graph))
        pool.setGain(quiet, 1)
        #expect(pool.hasAudibleVoices(under: 4, in: graph) && pool.hasAudibleVoices(under: 0, in: graph))
        #expect(!pool.hasAudibleVoices(under: 1, in: graph))
        pool.setPaused(quiet, true)
        #expect(!pool.hasAudibleVoices(under: 4, in: graph))
    }

    /// What a rank reads of each live voice stays in the slot's first 64 bytes.
    @Test func rankedFieldsShareTheFirstCacheLine() {
        let last = MemoryLayout<VoiceSlot>.offset(of: \VoiceSlot.activeIndex)! + MemoryLayout<Int32>.size
        #expect(last <= 64)
        for offset in [\VoiceSlot.gain, \VoiceSlot.fadeGain].map({ MemoryLayout<VoiceSlot>.offset(of: $0)! }) {
            #expect(offset < 64)
        }
        #expect(
            MemoryLayout<VoiceSlot>.offset(of: \VoiceSlot.bus)! < 64
                && MemoryLayout<VoiceSlot>.offset(of: \VoiceSlot.priority)! < 64)
    }
}
