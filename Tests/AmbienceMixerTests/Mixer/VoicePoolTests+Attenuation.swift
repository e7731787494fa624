import Testing

@testable import AmbienceMixer

/// What a rank does to a crowd between two ranks, for the attenuation cache's table.
enum CrowdChange: Sendable {
    case nothing
    case listenerMoves
    case listenerTurnsAndSpeeds
    case rolloffChanges
    case voiceMoves
    case voicePlacedWhereItStands
    case gainChanges
    case voicePauses
    case voiceStarts
}

extension VoicePoolTests {
    /// Four world voices at 1, 2, 4 and 8 m and one panned voice, ranked once (every attenuation computed).
    func rankedCrowd() throws -> (pool: VoicePool, slots: [Int32], audibility: Audibility) {
        var pool = VoicePool(capacity: 8, buses: 5)
        var slots: [Int32] = []
        for z: Float in [-1, -2, -4, -8] { slots.append(try occupy(&pool, voice(placement: .world(x: 0, y: 0, z: z)))) }
        slots.append(try occupy(&pool, voice(gain: 0.3, placement: .pan(0.5))))
        _ = pool.rank(keep: 2, Self.noBuses)
        #expect(pool.attenuationsComputed == 5)
        return (pool, slots, Self.noBuses)
    }

    /// (what changes, attenuations the next rank computes, indices into the crowd whose score changes; 5 is the
    /// voice `voiceStarts` adds)
    static let attenuationCache: [(CrowdChange, Int, Set<Int>)] = [
        (.nothing, 0, []),
        (.listenerMoves, 5, [0, 1, 2, 3]),  // the panned voice is restamped, its score unchanged
        (.listenerTurnsAndSpeeds, 0, []),  // orientation and velocity do not attenuate
        (.rolloffChanges, 5, [1, 2, 3]),  // at the reference distance (1 m) rolloff changes nothing
        (.voiceMoves, 1, [2]),
        (.voicePlacedWhereItStands, 1, []),  // a placement written is recomputed, not compared
        (.gainChanges, 0, [1]),  // gain is not cached: the score follows it without recomputing distance
        (.voicePauses, 0, [3]),
        (.voiceStarts, 1, [5])
    ]

    @Test(arguments: attenuationCache)
    func ranksRecomputeAttenuationOnlyWhenTheVoiceOrTheListenerMoves(
        change: CrowdChange, computed: Int, changed: Set<Int>
    ) throws {
        var (pool, slots, audibility) = try rankedCrowd()
        var before = slots.map { pool.rankScore(of: $0) }
        switch change {
        case .nothing: break
        case .listenerMoves: audibility.listener.position.z = 1
        case .listenerTurnsAndSpeeds:
            audibility.listener.forward = Vector3(x: 1, y: 0, z: 0)
            audibility.listener.velocity = Vector3(x: 0, y: 0, z: 3)
        case .rolloffChanges: audibility.listener.rolloff = 2
        case .voiceMoves: pool.setPlacement(slots[2], .world(x: 0, y: 0, z: -3))
        case .voicePlacedWhereItStands: pool.setPlacement(slots[2], .world(x: 0, y: 0, z: -4))
        case .gainChanges: pool.setGain(slots[1], 0.5)
        case .voicePauses: pool.setPaused(slots[3], true)
        case .voiceStarts:
            slots.append(try occupy(&pool, voice(placement: .world(x: 3, y: 0, z: 0))))
            before.append(.nan)
        }
        _ = pool.rank(keep: 2, audibility)
        #expect(pool.attenuationsComputed - 5 == computed)
        let after = slots.map { pool.rankScore(of: $0) }
        #expect(Set(slots.indices.filter { before[$0] != after[$0] }) == changed)
        for slot in slots {
            // No voice has a source, so a rank's score is the importance computed afresh, bit for bit.
            let fresh = pool.importance(ofSlot: slot, audibility)
            #expect(pool.rankScore(of: slot).bitPattern == fresh.bitPattern, "slot \(slot)")
        }
    }

    /// The epoch wraps after 65,535 listener moves: 0 is skipped, and every score stays the one computed afresh.
    @Test func attenuationCacheSurvivesTheEpochWrapping() throws {
        let crowd = try rankedCrowd()
        var pool = crowd.pool
        var audibility = crowd.audibility
        var epochs = Set<UInt16>()
        for step in 0..<70_000 {
            audibility.listener.position.x = Float(step % 7 + 1)  // never the last position: every rank a new epoch
            _ = pool.rank(keep: 2, audibility)
            epochs.insert(pool.listenerEpoch)
        }
        #expect(epochs.count == 65_535 && !epochs.contains(0))
        #expect(pool.attenuationsComputed == 5 + 70_000 * 5)
        for slot in crowd.slots {
            #expect(pool.rankScore(of: slot).bitPattern == pool.importance(ofSlot: slot, audibility).bitPattern)
        }
    }
}
