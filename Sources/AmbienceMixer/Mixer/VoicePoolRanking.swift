/// The scores of the voice pool's ranks (docs/ARCHITECTURE.md, "The crowd"): how much a voice matters, the margin a
/// real one keeps, and the questions asked of the latest rank. Pure, as the rest of the pool; the rank itself, which
/// writes the scores, is in VoicePool.swift.
extension VoicePool {
    /// How much a voice matters: priority first, then how loud it would be at the listener. A rank's score and a
    /// score made afresh from a slot both come here, so they agree bit for bit.
    static func importance(of key: RankKey, _ audibility: Audibility) -> Float {
        if key.paused { return -1 }
        let window = audibility.hdrOwner.isEmpty ? -1 : audibility.hdrOwner[Int(key.bus)]
        if window >= 0 { return hdrImportance(of: key, window: window, audibility) }
        // × 1 for a panned voice is exact: the score is the one computed without the cache.
        let audible = key.gain * audibility.busGains[Int(key.bus)] * key.attenuation
        return Float(key.priority) * 16 + min(audible, 15)
    }

    /// How much a voice matters, its attenuation computed now.
    static func importance(of slot: UnsafePointer<VoiceSlot>, _ audibility: Audibility) -> Float {
        importance(of: RankKey(slot, attenuation: attenuation(of: slot, audibility.listener)), audibility)
    }

    static func importance(of slot: VoiceSlot, _ audibility: Audibility) -> Float {
        withUnsafePointer(to: slot) { importance(of: $0, audibility) }
    }

    /// The importance of a slot in the pool, read in place: copying a slot would retain its sound.
    func importance(ofSlot slot: Int32, _ audibility: Audibility) -> Float {
        slots.withUnsafeBufferPointer { VoicePool.importance(of: $0.baseAddress! + Int(slot), audibility) }
    }

    /// The live voice that matters least: the one a new voice may steal when every slot is taken. Walks the keys,
    /// each attenuation computed now, as `importance(ofSlot:)` would.
    func leastImportantVoice(_ audibility: Audibility) -> (slot: Int32, importance: Float)? {
        var best: (Int32, Float)? = nil
        for (i, slot) in active.enumerated() {
            var key = rankKeys[i]
            key.attenuation = key.distanceAttenuation(by: audibility.listener)
            let score = VoicePool.importance(of: key, audibility)
            if score < best?.1 ?? .infinity { best = (slot, score) }
        }
        return best
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
    func wouldStayReal(_ importance: Float, priority: UInt8) -> Bool {
        lastThreshold.isNaN || VoicePool.realScore(importance, priority: priority, margin: realMargin) >= lastThreshold
    }

    /// The latest rank's score of a live voice.
    func rankScore(of slot: Int32) -> Float { scores[Int(slots[Int(slot)].activeIndex)] }
    /// The latest rank's score of the voice at `active[index]`.
    func rankScore(atActive index: Int) -> Float { scores[index] }

    /// Whether an unpaused voice that can be heard (gain above -60 dB before its buses) plays on `bus` or under
    /// it: what triggers a ducking rule.
    func hasAudibleVoices(under bus: Int, in graph: BusGraph) -> Bool {
        guard unpausedOnBus.indices.contains(where: { unpausedOnBus[$0] > 0 && graph.isBus($0, under: bus) }) else {
            return false
        }
        return rankKeys.contains { key in !key.paused && key.gain > 0.001 && graph.isBus(Int(key.bus), under: bus) }
    }
}
