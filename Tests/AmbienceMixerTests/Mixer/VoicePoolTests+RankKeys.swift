import Testing

@testable import AmbienceCore
@testable import AmbienceMixer

extension VoicePoolTests {
    /// Buses as the mixer has them (master, music, sfx, ui, dialogue), with an HDR window on sfx (2) when `hdr`.
    static func keyAudibility(_ rng: inout SplitMix64, hdr: Bool) -> Audibility {
        var listener = ListenerState()
        listener.position = Vector3(x: Float.random(in: -3...3, using: &rng), y: 0, z: 0)
        let gains = (0..<5).map { _ in Float.random(in: 0...1.5, using: &rng) }
        guard hdr else { return Audibility(busGains: gains, listener: listener) }
        return Audibility(
            busGains: gains, listener: listener, hdrOwner: [-1, -1, 2, -1, -1], hdrScale: [1, 1, 0.4, 1, 1],
            hdrFloor: [0, 0, Float.random(in: 0...0.2, using: &rng), 0, 0])
    }

    /// A rank reads only the keys kept beside the live list; every change a mixer makes to a voice goes through the
    /// pool, which keeps its key in step. After a few thousand random changes (starts, frees, gains, fades, moves,
    /// pauses, sources given and taken back, the listener moving, an HDR window), each rank's score is the one made
    /// afresh from the slot, bit for bit, and so are the ducking question and the HDR windows' loudest levels.
    @Test(arguments: [false, true])
    func rankKeysFollowEveryChangeToTheirVoices(hdr: Bool) throws {
        var pool = VoicePool(capacity: 48, buses: 5)
        var rng = SplitMix64(seed: hdr ? 341 : 34)
        var nextSource: Int32 = 0
        var compared = 0
        func somePlacement() -> Placement {
            Bool.random(using: &rng)
                ? .pan(Float.random(in: -1...1, using: &rng))
                : .world(
                    x: Float.random(in: -20...20, using: &rng), y: 0, z: Float.random(in: -20...20, using: &rng))
        }
        for round in 0..<300 {
            for _ in 0..<12 {
                let live = pool.active
                let slot = live.isEmpty ? -1 : live[Int.random(in: 0..<live.count, using: &rng)]
                switch Int.random(in: 0..<10, using: &rng) {
                case 0, 1:
                    var fresh = voice(
                        gain: Float.random(in: 0...1, using: &rng), priority: UInt8.random(in: 127...129, using: &rng),
                        placement: somePlacement(), bus: Int.random(in: 1...4, using: &rng))
                    fresh.loudnessGain = Float.random(in: 0.1...2, using: &rng)
                    _ = pool.occupy(fresh)
                case 2 where slot >= 0:
                    if pool.slots[Int(slot)].source >= 0 { pool.becameVirtual(slot, at: 0) }
                    pool.free(slot)
                case 3 where slot >= 0: pool.setGain(slot, Float.random(in: 0...2, using: &rng))
                case 4 where slot >= 0: pool.setPlacement(slot, somePlacement())
                case 5 where slot >= 0: pool.setPaused(slot, !pool.slots[Int(slot)].paused)
                case 6 where slot >= 0:
                    pool.fade(slot, to: Float.random(in: 0...1, using: &rng), over: 0.1, thenStop: false)
                case 7 where slot >= 0: _ = pool.advanceFade(slot, by: 0.03)
                case 8 where slot >= 0:
                    if pool.slots[Int(slot)].source >= 0 {
                        pool.becameVirtual(slot, at: 10)
                    } else {
                        pool.becameReal(slot, on: nextSource)
                        nextSource &+= 1
                    }
                default: break
                }
            }
            guard !pool.active.isEmpty else { continue }
            let audibility = Self.keyAudibility(&rng, hdr: hdr && round % 3 != 0)
            _ = pool.rank(keep: 8, audibility)
            for slot in pool.active {
                var fresh = pool.importance(ofSlot: slot, audibility)
                let s = pool.slots[Int(slot)]
                if s.source >= 0 { fresh = VoicePool.realScore(fresh, priority: s.priority, margin: pool.realMargin) }
                #expect(pool.rankScore(of: slot).bitPattern == fresh.bitPattern, "round \(round), slot \(slot)")
                compared += 1
            }
            let graph = BusGraph(root: "master", children: ["music", "sfx", "ui", "dialogue"])
            let audible = pool.active.contains {
                let s = pool.slots[Int($0)]
                return s.gain * s.fadeGain > 0.001 && !s.paused && s.bus == 3
            }
            #expect(pool.hasAudibleVoices(under: 3, in: graph) == audible)
            var peaks = [Float](repeating: 0, count: 5)
            pool.loudestLevels(into: &peaks, audibility)
            var expected = [Float](repeating: 0, count: 5)
            if !audibility.hdrOwner.isEmpty {
                for slot in pool.active where pool.slots[Int(slot)].bus == 2 && !pool.slots[Int(slot)].paused {
                    let level = pool.slots.withUnsafeBufferPointer {
                        VoicePool.heard($0.baseAddress! + Int(slot), audibility.listener)
                    }
                    expected[2] = max(expected[2], level * pool.slots[Int(slot)].loudnessGain)
                }
            }
            #expect(peaks.map(\.bitPattern) == expected.map(\.bitPattern), "round \(round)")
        }
        #expect(compared > 3_000, "the crowd was ranked: \(compared) scores compared")
    }
}
