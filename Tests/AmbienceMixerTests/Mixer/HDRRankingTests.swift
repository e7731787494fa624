import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// HDR in the mixer's pure parts (docs/HDR.md): the windows in the bus graph, the loudest level under each, and a
/// ranking that makes culled voices the first virtual. No OpenAL: the sounds' buffers are never given to it.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct HDRRankingTests {
    static let sfx = 2

    func voice(
        loudness: Float, gain: Float = 1, priority: UInt8 = 128, bus: Int = HDRRankingTests.sfx,
        placement: Placement = .pan(0)
    ) -> VoiceSlot {
        var slot = VoiceSlot()
        slot.sound = Sound(
            name: "test", buffer: ALBuffer(id: 0), retired: RetiredBuffers(), sampleRate: 48_000, channels: 1,
            frames: 48_000)
        slot.soundFrames = 48_000
        slot.gain = gain
        slot.priority = priority
        slot.placement = placement
        slot.bus = bus
        slot.loudnessGain = HDRWindow.linear(loudness)
        return slot
    }

    /// A new voice's slot; the test fails when the pool is full.
    func occupy(_ pool: inout VoicePool, _ fresh: VoiceSlot) throws -> Int32 {
        let slot = pool.occupy(fresh)
        return try #require(slot)
    }

    /// The built-in buses with a window 40 dB wide on sfx that jumps (no attack, no release).
    func graph() -> BusGraph {
        var graph = BusGraph(root: "master", children: ["music", "sfx", "ui", "dialogue"])
        graph.setHDR(Self.sfx, HDRSettings(width: 40, threshold: 0, attack: 0, release: 0))
        return graph
    }

    func audibility(_ graph: BusGraph, listener: ListenerState = ListenerState()) -> Audibility {
        Audibility(
            busGains: graph.effective, listener: listener, hdrOwner: graph.hdrOwner, hdrScale: graph.hdrScale,
            hdrFloor: graph.hdrFloor)
    }

    /// Levels go through 10^(dB/20) and back: equal to a few millionths of a decibel.
    func near(_ level: Float?, _ expected: Float) -> Bool { level.map { abs($0 - expected) < 0.001 } ?? false }

    /// Measures the loudest voices and lets the windows follow, as a tick does.
    func follow(_ pool: VoicePool, _ graph: inout BusGraph, listener: ListenerState = ListenerState()) {
        var peaks = [Float](repeating: 0, count: graph.count)
        pool.loudestLevels(into: &peaks, audibility(graph, listener: listener))
        _ = graph.followHDR(peaks: peaks)
        _ = graph.advanceHDR(0.02)
    }

    /// The scene: footsteps 50, ambience 40, and an explosion whose level at the listener is 85. Culled
    /// voices score under every audible one whatever their priority. (loudnesses, priorities, keep, kept, culled)
    static let scenes: [([Float], [UInt8], Int, Set<Int>, Set<Int>)] = [
        ([50, 40], [128, 128], 2, [0, 1], []),
        ([50, 40, 85], [128, 128, 128], 2, [0, 2], [1]),
        ([50, 40, 85], [0, 255, 0], 2, [0, 2], [1]),
        ([50, 40, 85], [0, 255, 0], 3, [0, 2], [1]),
        ([50, 40, 130], [255, 255, 0], 1, [2], [0, 1]),
        ([30, 30, 30], [1, 2, 3], 2, [1, 2], [])
    ]

    @Test(arguments: scenes)
    func culledVoicesRankBelowEveryAudibleOne(
        loudness: [Float], priorities: [UInt8], keep: Int, kept: Set<Int>, culled: Set<Int>
    ) throws {
        var pool = VoicePool(capacity: 8, buses: 5)
        var graph = graph()
        let slots = try loudness.indices.map { i in
            try occupy(&pool, voice(loudness: loudness[i], priority: priorities[i]))
        }
        follow(pool, &graph)
        #expect(near(graph.hdr[Self.sfx]?.top, max(loudness.max()!, 0)))
        let levels = audibility(graph)
        let threshold = pool.rank(keep: keep, levels)
        let above = Set(
            slots.indices.filter { pool.rankScore(of: slots[$0]) >= threshold && pool.rankScore(of: slots[$0]) >= 0 })
        #expect(above == kept)
        #expect(Set(slots.indices.filter { pool.isCulled(slots[$0], levels) }) == culled)
        if let first = culled.first {
            #expect(
                pool.leastImportantVoice(levels).map { culled.contains(slots.firstIndex(of: $0.slot)!) } == true)
            #expect(pool.rankScore(of: slots[first]) == VoicePool.culled)
        }
    }

    /// A real voice culled loses its bonus: its score is exactly `culled`, which the mixer demotes whatever the
    /// threshold.
    @Test func aCulledRealVoiceGetsNoBonus() throws {
        var pool = VoicePool(capacity: 4, buses: 5)
        var graph = graph()
        let ambience = try occupy(&pool, voice(loudness: 40))
        pool.becameReal(ambience, on: 0)
        _ = try occupy(&pool, voice(loudness: 85))
        follow(pool, &graph)
        _ = pool.rank(keep: 2, audibility(graph))
        #expect(pool.rankScore(of: ambience) == VoicePool.culled)
    }

    /// The level is the loudness with gain, fade and distance applied; bus gains are not part of it.
    /// (gain, fade, distance, sfx bus gain, culled under a top of 85)
    static let levels: [(Float, Float, Float, Float, Bool)] = [
        (1, 1, 1, 1, false), (0.5, 1, 1, 1, true), (1, 0.5, 1, 1, true), (1, 1, 4, 1, true), (1, 1, 1, 0.01, false),
        (0.6, 1, 1, 1, false)
    ]

    @Test(arguments: levels)
    func theLevelIsTheLoudnessWithGainFadeAndDistance(
        gain: Float, fade: Float, distance: Float, busGain: Float, culled: Bool
    ) throws {
        var pool = VoicePool(capacity: 4, buses: 5)
        var graph = graph()
        _ = graph.setGain(Self.sfx, to: busGain, over: 0)
        var footsteps = voice(loudness: 50, gain: gain, placement: .world(x: 0, y: 0, z: -distance))
        footsteps.fadeGain = fade
        let slot = try occupy(&pool, footsteps)
        pool.becameReal(slot, on: 0)  // heard: the bottom itself culls it (not the 1 dB of hysteresis)
        _ = try occupy(&pool, voice(loudness: 85))
        follow(pool, &graph)
        #expect(near(graph.hdr[Self.sfx]?.top, 85))
        #expect(pool.isCulled(slot, audibility(graph)) == culled)
    }

    /// Hysteresis at the bottom (45 dB under a top of 85): a voice with a source is culled below the bottom; one
    /// without (culled, or not yet heard) comes back only 1 dB above it. (level in dB, has a source, culled)
    static let hysteresis: [(Float, Bool, Bool)] = [
        (44.5, true, true), (45.5, true, false), (44.5, false, true), (45.5, false, true), (45.9, false, true),
        (46.1, false, false)
    ]

    @Test(arguments: hysteresis)
    func aCulledVoiceReturnsOnly1dBAboveTheBottom(level: Float, real: Bool, culled: Bool) throws {
        var pool = VoicePool(capacity: 4, buses: 5)
        var graph = graph()
        let slot = try occupy(&pool, voice(loudness: level))
        if real { pool.becameReal(slot, on: 0) }
        _ = try occupy(&pool, voice(loudness: 85))
        follow(pool, &graph)
        #expect(near(graph.hdr[Self.sfx]?.top, 85))
        #expect(pool.isCulled(slot, audibility(graph)) == culled)
    }

    /// The windows follow the loudest unpaused voice under them, each its own; voices under no window count for
    /// none. A bus added under a window's bus answers to it; a window of its own takes its voices.
    @Test func eachWindowFollowsTheLoudestVoiceUnderIt() throws {
        var pool = VoicePool(capacity: 8, buses: 5)
        var graph = graph()
        let weapons = graph.add(named: "weapons", parent: Self.sfx)
        pool.addBus()
        #expect(graph.hdrOwner == [-1, -1, 2, -1, -1, 2])
        _ = try occupy(&pool, voice(loudness: 60))
        let paused = try occupy(&pool, voice(loudness: 150))
        pool.setPaused(paused, true)
        _ = try occupy(&pool, voice(loudness: 90, bus: weapons))
        _ = try occupy(&pool, voice(loudness: 170, bus: 1))  // music: no window
        follow(pool, &graph)
        #expect(near(graph.hdr[Self.sfx]?.top, 90))

        graph.setHDR(weapons, HDRSettings(width: 40, threshold: 0, attack: 0, release: 0))
        #expect(graph.hdrOwner == [-1, -1, 2, -1, -1, 5])
        follow(pool, &graph)
        #expect(near(graph.hdr[Self.sfx]?.top, 60) && near(graph.hdr[weapons]?.top, 90))

        graph.setHDR(Self.sfx, nil)
        graph.setHDR(weapons, nil)
        #expect(!graph.hasHDR && graph.hdrOwner.allSatisfy { $0 == -1 })
    }

    /// Under a window at rest on its threshold, with loudness 0 everywhere and gains up to 1, every voice scores
    /// as it did without HDR: turning a window on changes nothing until a loudness is set.
    @Test func aWindowAtRestScoresAsNoWindow() throws {
        var pool = VoicePool(capacity: 8, buses: 5)
        var graph = graph()
        let gains: [Float] = [1, 0.5, 0.1, 0.02]
        var slots: [Int32] = []
        for gain in gains { slots.append(try occupy(&pool, voice(loudness: 0, gain: gain))) }
        follow(pool, &graph)
        #expect(graph.hdr[Self.sfx]?.top == 0)
        let plain = Audibility(busGains: graph.effective, listener: ListenerState())
        for slot in slots {
            #expect(pool.importance(ofSlot: slot, audibility(graph)) == pool.importance(ofSlot: slot, plain))
        }
    }

    /// The loudest voice's importance counts its gain under the window, at most full scale; and a window's levels
    /// move only when its top does.
    @Test func aRisingTopMovesTheLevelsTheRankReads() throws {
        var graph = BusGraph(root: "master", children: ["music", "sfx"])
        graph.setHDR(Self.sfx, HDRSettings(width: 40, threshold: 0, attack: 0.1, release: 1))
        #expect(graph.hdrScale[Self.sfx] == 1 && abs(graph.hdrFloor[Self.sfx] - 0.01) < 1e-6)
        var peaks: [Float] = [0, 0, HDRWindow.linear(80)]
        let jumped = graph.followHDR(peaks: peaks)
        let rose = graph.advanceHDR(0.05)
        #expect(!jumped && rose)
        #expect(abs(HDRWindow.decibels(graph.hdrScale[Self.sfx]) + 40) < 0.01)
        #expect(abs(HDRWindow.decibels(graph.hdrFloor[Self.sfx])) < 0.01)
        peaks[2] = 0
        _ = graph.followHDR(peaks: peaks)
        let fell = graph.advanceHDR(0.5)
        #expect(fell && abs(graph.hdr[Self.sfx]!.top - 20) < 0.01)
        let landed = graph.advanceHDR(0.5)
        #expect(landed && graph.hdr[Self.sfx]!.top == 0)
        let rests = !graph.advanceHDR(0.5)
        #expect(rests)
    }
}
