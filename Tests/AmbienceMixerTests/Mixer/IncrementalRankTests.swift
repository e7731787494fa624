import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// The incremental rank (RankCache) against the full one: random scenes and operations, and after every step a rank
/// of the pool as it is against a rank of a copy made to score everything again. The real set then moves as the
/// mixer's `rebalance` moves it, so that voices cross between real and virtual and the margin counts.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct IncrementalRankTests {
    /// A scene's pool, its sources (a model of the mixer's: which are free), and what ranks read.
    struct Scene {
        var pool: VoicePool
        var sources: Int
        var freeSources: [Int32]
        var audibility: Audibility
        var rng: SplitMix64
        /// Ranks made incrementally and made whole: the test must have exercised both.
        var ranks = (incremental: 0, full: 0, belowZero: 0)

        init(seed: UInt64) {
            rng = SplitMix64(seed: seed)
            let capacity = Int.random(in: 8...120, using: &rng)
            pool = VoicePool(capacity: capacity, buses: 5)
            sources = Int.random(in: 0...max(capacity / 3, 1), using: &rng)
            freeSources = (0..<Int32(sources)).reversed()
            audibility = Audibility(busGains: [1, 1, 1, 1, 1], listener: ListenerState())
            if Bool.random(using: &rng) {
                // A window on bus 3: culled voices, and a floor that depends on the source.
                audibility.hdrOwner = [-1, -1, -1, 3, -1]
                audibility.hdrScale = [1, 1, 1, 2, 1]
                audibility.hdrFloor = [0, 0, 0, 0.05, 0]
            }
        }

        /// A value from a short list, so that ties are common.
        mutating func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &rng)] }

        mutating func placement() -> Placement {
            Bool.random(using: &rng)
                ? .pan(pick([-1, 0, 0.5]))
                : .world(x: pick([0, 1, 3]), y: 0, z: pick([-1, -2, -8, -40]))
        }

        mutating func start() {
            var slot = VoiceSlot()
            slot.sound = Sound(
                name: "test", buffer: ALBuffer(id: 0), retired: RetiredBuffers(), sampleRate: 48_000, channels: 1,
                frames: 48_000)
            slot.soundFrames = 48_000
            slot.gain = pick([0, 0.1, 0.25, 0.5, 1, 2, 16])
            slot.priority = pick([0, 128, 128, 128, 255])
            slot.bus = pick([2, 2, 3])
            slot.loudnessGain = pick([0.1, 1, 3])
            slot.placement = placement()
            slot.paused = Int.random(in: 0..<8, using: &rng) == 0
            _ = pool.occupy(slot)
        }

        mutating func anyLive() -> Int32? {
            pool.active.isEmpty ? nil : pool.active[Int.random(in: 0..<pool.active.count, using: &rng)]
        }

        mutating func makeVirtual(_ slot: Int32) {
            freeSources.append(pool.slots[Int(slot)].source)
            pool.becameVirtual(slot, at: 0)
        }

        /// One operation on one voice, as the mixer's controls and a tick make them.
        mutating func changeAVoice() {
            guard let slot = anyLive() else { return start() }
            switch Int.random(in: 0..<9, using: &rng) {
            case 0, 1: start()
            case 2:
                if pool.slots[Int(slot)].source >= 0 { makeVirtual(slot) }
                pool.free(slot)
            case 3: pool.setPaused(slot, !pool.slots[Int(slot)].paused)
            case 4: pool.setGain(slot, pick([0, 0.1, 0.5, 1, 4]))
            case 5: pool.setPlacement(slot, placement())
            case 6: pool.fade(slot, to: pick([0, 1]), over: 0.1, thenStop: false)
            case 7: for fading in pool.fading { _ = pool.advanceFade(fading, by: 0.03) }
            default:
                // What `play` does between ranks: a free source taken, or the weakest real voice demoted.
                if pool.slots[Int(slot)].source >= 0 {
                    makeVirtual(slot)
                } else if let source = freeSources.popLast() {
                    pool.becameReal(slot, on: source)
                }
            }
        }

        /// One change of what every score reads.
        mutating func changeTheWorld() {
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: audibility.listener.position.x = pick([0, 0.5, 2])
            case 1: audibility.busGains[pick([2, 3])] = pick([0, 0.5, 1])
            case 2 where !audibility.hdrFloor.isEmpty: audibility.hdrFloor[3] = pick([0.01, 0.05, 0.2, 2])
            default:
                // A source more or fewer (a device reset): the voices on the sources gone lose them.
                let wanted = max(sources + pick([-1, 1]), 0)
                for slot in pool.active where pool.slots[Int(slot)].source >= Int32(wanted) {
                    pool.becameVirtual(slot, at: 0)
                }
                sources = wanted
                freeSources = (0..<Int32(wanted)).filter { source in
                    !pool.active.contains { pool.slots[Int($0)].source == source }
                }
            }
        }

        /// A rank compared with a full one on a copy, then the real set moved as `Mixer.rebalance` moves it.
        mutating func rankAndCompare() {
            guard pool.active.count > sources else {
                for slot in pool.active where pool.slots[Int(slot)].source < 0 && !pool.slots[Int(slot)].paused {
                    guard let source = freeSources.popLast() else { break }
                    pool.becameReal(slot, on: source)
                }
                pool.forgetRank()
                return
            }
            var full = pool
            full.forgetRank()
            let fullBefore = pool.rankCache.fullRanks
            let threshold = pool.rank(keep: sources, audibility)
            if pool.rankCache.fullRanks == fullBefore { ranks.incremental += 1 } else { ranks.full += 1 }
            let expected = full.rank(keep: sources, audibility)
            #expect(threshold.bitPattern == expected.bitPattern)
            if threshold < 0 { ranks.belowZero += 1 }
            for slot in pool.active {
                #expect(pool.rankScore(of: slot).bitPattern == full.rankScore(of: slot).bitPattern)
            }
            #expect(pool.rankMatchesAfresh(keep: sources, audibility))
            #expect(Set(pool.rankMembers) == Set(full.rankMembers))
            let candidates = pool.sortRankMembers()
            #expect(full.sortRankMembers() == candidates)
            // The voices the mixer visits, in its order: those a walk over the live list finds at or above the
            // threshold and not culled or paused.
            let walked = pool.active.filter { pool.rankScore(of: $0) >= threshold && pool.rankScore(of: $0) >= 0 }
            #expect(pool.rankMembers == walked && full.rankMembers == walked)
            for slot in pool.active where pool.slots[Int(slot)].source >= 0 {
                let score = pool.rankScore(of: slot)
                if score < threshold || score == VoicePool.culled { makeVirtual(slot) }
            }
            for slot in walked where pool.slots[Int(slot)].source < 0 {
                guard let source = freeSources.popLast() else { continue }
                pool.becameReal(slot, on: source)
            }
        }
    }

    @Test(arguments: 0..<40)
    func anIncrementalRankDecidesAsAFullOne(seed: UInt64) {
        var scene = Scene(seed: seed)
        for _ in 0..<scene.pool.capacity { scene.start() }
        for step in 0..<600 {
            if Int.random(in: 0..<25, using: &scene.rng) == 0 {
                scene.changeTheWorld()
            } else {
                for _ in 0..<Int.random(in: 0...4, using: &scene.rng) { scene.changeAVoice() }
            }
            if step % 3 == 0 { scene.rankAndCompare() }
        }
        #expect(scene.ranks.incremental > 20 && scene.ranks.full > 1, "seed \(seed): \(scene.ranks)")
    }

    /// The members' sort, by insertion on a list nearly in order and by heapsort past its budget (a shuffled or
    /// reversed list), finds what the standard sort finds.
    @Test func membersSortAsTheStandardSort() {
        var rng = SplitMix64(seed: 11)
        for trial in 0..<300 {
            let count = Int.random(in: 0...300, using: &rng)
            var values = (0..<count).map { _ in Int64.random(in: 0..<1_000, using: &rng) }.sorted()
            switch trial % 3 {
            case 0:
                for _ in 0..<Int.random(in: 0...4, using: &rng) where count > 1 {
                    values.swapAt(Int.random(in: 0..<count, using: &rng), Int.random(in: 0..<count, using: &rng))
                }
            case 1: values.shuffle(using: &rng)
            default: values.reverse()
            }
            let expected = values.sorted()
            values.withUnsafeMutableBufferPointer { sortNearlySorted($0) }
            #expect(values == expected, "trial \(trial)")
        }
    }

    /// A rank with nothing changed reads no slot: the scores are those kept, and the attenuations are not made again.
    @Test func aRankWithNothingChangedScoresNothingAgain() throws {
        var pool = VoicePool(capacity: 64, buses: 5)
        let audibility = Audibility(busGains: [1, 1, 1, 1, 1], listener: ListenerState())
        var slots: [Int32] = []
        for i in 0..<64 {
            var slot = VoiceSlot()
            slot.sound = Sound(
                name: "test", buffer: ALBuffer(id: 0), retired: RetiredBuffers(), sampleRate: 48_000, channels: 1,
                frames: 48_000)
            slot.placement = .world(x: Float(i), y: 0, z: -1)
            let occupied = pool.occupy(slot)
            slots.append(try #require(occupied))
        }
        let first = pool.rank(keep: 8, audibility)
        #expect(pool.attenuationsComputed == 64 && pool.rankCache.isValid)
        #expect(pool.rank(keep: 8, audibility) == first && pool.attenuationsComputed == 64)
        // One voice moves next to the listener: only its attenuation is made again, and it joins the eight.
        pool.setPlacement(slots[63], .world(x: 0, y: 0, z: -0.5))
        let next = pool.rank(keep: 8, audibility)
        #expect(pool.attenuationsComputed == 65)
        #expect(pool.rankScore(of: slots[63]) >= next && pool.rankScore(of: slots[7]) < next)
        #expect(Set(pool.rankMembers) == Set(slots[0..<7] + [slots[63]]))
    }
}
