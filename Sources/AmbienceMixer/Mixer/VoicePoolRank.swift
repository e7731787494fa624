/// Ranking by priority × audibility: a voice's importance, the rank that gives the real sources to the most
/// important voices (incremental while the global inputs hold: RankCache.swift), and the voice a start may steal.
extension VoicePool {
    /// How much a voice matters: priority first, then how loud it would be at the listener.
    static func importance(of slot: UnsafePointer<VoiceSlot>, _ audibility: Audibility) -> Float {
        importance(of: slot, audibility, attenuation: attenuation(of: slot, audibility.listener))
    }

    /// The importance of a voice whose distance attenuation is known (1 for a panned voice): what a rank computes
    /// with the slot's cached attenuation.
    static func importance(
        of slot: UnsafePointer<VoiceSlot>, _ audibility: Audibility, attenuation: Float
    ) -> Float {
        if slot.pointee.paused { return -1 }
        let window = audibility.hdrOwner.isEmpty ? -1 : audibility.hdrOwner[slot.pointee.bus]
        if window >= 0 { return hdrImportance(of: slot, window: window, audibility, attenuation: attenuation) }
        return importance(of: slot, busGain: audibility.busGains[slot.pointee.bus], attenuation: attenuation)
    }

    /// The importance of a voice on a bus without an HDR window, whose bus gain and attenuation are known: what
    /// `play` computes without gathering an `Audibility` (its arrays' retains and releases, per start).
    static func importance(of slot: UnsafePointer<VoiceSlot>, busGain: Float, attenuation: Float) -> Float {
        if slot.pointee.paused { return -1 }
        // × 1 for a panned voice is exact: the score is the one computed without the cache.
        let audible = slot.pointee.gain * slot.pointee.fadeGain * busGain * attenuation
        return Float(slot.pointee.priority) * 16 + min(audible, 15)
    }

    static func importance(of slot: VoiceSlot, _ audibility: Audibility) -> Float {
        withUnsafePointer(to: slot) { importance(of: $0, audibility) }
    }

    /// The importance of a slot in the pool, read in place: copying a slot would retain its sound.
    func importance(ofSlot slot: Int32, _ audibility: Audibility) -> Float {
        slots.withUnsafeBufferPointer { VoicePool.importance(of: $0.baseAddress! + Int(slot), audibility) }
    }

    /// The live voice that matters least: the one a new voice may steal when every slot is taken.
    func leastImportantVoice(_ audibility: Audibility) -> (slot: Int32, importance: Float)? {
        var best: (Int32, Float)? = nil
        for slot in active {
            let score = importance(ofSlot: slot, audibility)
            if score < best?.1 ?? .infinity { best = (slot, score) }
        }
        return best
    }

    /// Forgets the last rank: every voice that wants a source has one, so none is weakest and no score is needed.
    mutating func forgetRank() {
        weakestReal = (-1, .infinity)
        rankCache.invalidate()
    }

    /// A real voice's score in a rank: its audibility (not its priority) raised by the margin, so a virtual voice of
    /// the same priority takes its place only when more than `realMargin` louder (docs/ARCHITECTURE.md, "The
    /// crowd"). Culled and paused voices get nothing: they are to lose their source.
    static func realScore(_ score: Float, priority: UInt8, margin: Float) -> Float {
        guard score >= 0 else { return score }
        let base = Float(priority) * 16
        return base + min((score - base) * margin, 15)
    }

    /// The score a new voice of importance `importance` would have once real: what `play` compares with the last
    /// rank's threshold to decide whether it may take a free source between ranks.
    @inline(__always)  // called on the mixer's stored pool, it had the whole pool copied for it, per start
    func wouldStayReal(_ importance: Float, priority: UInt8) -> Bool {
        let last = rankCache.threshold
        return last.isNaN || VoicePool.realScore(importance, priority: priority, margin: realMargin) >= last
    }

    /// Scores the live voices (a real one's audibility raised by the margin, so near-equals do not swap every
    /// rank) and returns the score a voice needs to be among the `keep` most important: the real ones are those at
    /// or above it. While the global inputs (bus gains, the listener's attenuation, HDR windows, `keep`) are the
    /// last rank's, only the voices changed since are scored again (RankCache); else every one.
    mutating func rank(keep: Int, _ audibility: Audibility) -> Float {
        let epoch = attenuationEpoch(for: audibility.listener)
        let k = min(max(keep, 1), active.count)
        guard rankCache.globalsHold(audibility, keep: keep, listenerEpoch: epoch) else {
            return rankAll(k: k, audibility, epoch: epoch)
        }
        let margin = realMargin
        var computed = 0
        slots.withUnsafeMutableBufferPointer { pool in
            rankCache.rescoreDirty(isLive: { pool[Int($0)].activeIndex >= 0 }) { slot in
                VoicePool.rankScore(
                    pool.baseAddress! + Int(slot), audibility, epoch: epoch, margin: margin, computed: &computed)
            }
        }
        attenuationsComputed &+= computed
        let threshold = scratch.withUnsafeMutableBufferPointer { rankCache.select(k: k, active: active, scratch: $0) }
        // Debug builds check every rank of a pool small enough (the tests' scenes) against one made afresh: a write
        // of a score's input that bypassed the pool's methods shows here. Larger ones would pay a sort per rank.
        assert(active.count > 2_048 || rankMatchesAfresh(keep: keep, audibility), "an incremental rank differs")
        return threshold
    }

    /// The full rank: every live voice scored, the threshold selected over all, the members made again.
    private mutating func rankAll(k: Int, _ audibility: Audibility, epoch: UInt16) -> Float {
        let count = active.count
        let margin = realMargin
        var computed = 0
        slots.withUnsafeMutableBufferPointer { pool in
            scratch.withUnsafeMutableBufferPointer { scratch in
                func score(_ slot: UnsafeMutablePointer<VoiceSlot>) {
                    let score = VoicePool.rankScore(slot, audibility, epoch: epoch, margin: margin, computed: &computed)
                    rankCache.record(Int32(slot - pool.baseAddress!), score)
                    scratch[Int(slot.pointee.activeIndex)] = score
                }
                // A crowded pool is read in memory order, which the prefetcher follows; the live list visits the
                // same voices in no order, a cache miss each.
                if count * 4 >= pool.count {
                    for s in 0..<pool.count where pool[s].activeIndex >= 0 { score(pool.baseAddress! + s) }
                } else {
                    for slot in active { score(pool.baseAddress! + Int(slot)) }
                }
            }
        }
        attenuationsComputed &+= computed
        let threshold = scratch.withUnsafeMutableBufferPointer {
            kthLargest($0, count: count, k: k, near: rankCache.threshold)
        }
        rankCache.rebuild(threshold: threshold, active: active)
        return threshold
    }

    /// A live voice's rank score, with its cached attenuation (computed again when stale, counted in `computed`).
    private static func rankScore(
        _ slot: UnsafeMutablePointer<VoiceSlot>, _ audibility: Audibility, epoch: UInt16, margin: Float,
        computed: inout Int
    ) -> Float {
        if slot.pointee.attenuationEpoch != epoch {
            slot.pointee.attenuation = VoicePool.attenuation(of: slot, audibility.listener)
            slot.pointee.attenuationEpoch = epoch
            computed += 1
        }
        let score = importance(of: slot, audibility, attenuation: slot.pointee.attenuation)
        guard slot.pointee.source >= 0 else { return score }
        return realScore(score, priority: slot.pointee.priority, margin: margin)
    }

    /// The latest rank's score of a live voice.
    func rankScore(of slot: Int32) -> Float { rankCache.scores[Int(slot)] }

    /// The live voices the latest rank scored at or above its threshold, and not culled or paused (0 or more): the
    /// only ones that can be real after it.
    var rankMembers: [Int32] { rankCache.members }

    /// The `index`th of `rankMembers`.
    func rankMember(_ index: Int) -> Int32 { rankCache.members[index] }

    /// Puts `rankMembers` in the order of the live list, the order a walk over every live voice meets them; returns
    /// how many they are.
    mutating func sortRankMembers() -> Int {
        slots.withUnsafeBufferPointer { pool in rankCache.sortMembers { pool[Int($0)].activeIndex } }
        return rankCache.members.count
    }

    /// Whether the latest rank's scores, threshold and members are what a rank made afresh would make, bit for bit:
    /// every score computed again from the slot, the threshold by sorting. Allocates; for checks and tests.
    func rankMatchesAfresh(keep: Int, _ audibility: Audibility) -> Bool {
        let fresh = active.map { slot in
            slots.withUnsafeBufferPointer { pool in
                let s = pool.baseAddress! + Int(slot)
                let score = VoicePool.importance(of: s, audibility)
                guard s.pointee.source >= 0 else { return score }
                return VoicePool.realScore(score, priority: s.pointee.priority, margin: realMargin)
            }
        }
        let k = min(max(keep, 1), active.count)
        let threshold = fresh.sorted(by: >)[k - 1]
        let members = Set(active.indices.filter { fresh[$0] >= max(threshold, 0) }.map { active[$0] })
        return threshold.bitPattern == rankCache.threshold.bitPattern && members == Set(rankCache.members)
            && active.indices.allSatisfy { fresh[$0].bitPattern == rankCache.scores[Int(active[$0])].bitPattern }
    }
}
