import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceMixer
@testable import AmbienceTestSupport

@Suite(.offTheCooperativePool) struct BusGraphTests {
    func graph() -> BusGraph { BusGraph(root: "master", children: ["music", "sfx", "ui", "dialogue"]) }

    /// (master gain, sfx gain, child gain, master muted, sfx muted, the child's effective gain)
    static let chains: [(Float, Float, Float, Bool, Bool, Float)] = [
        (1, 1, 1, false, false, 1), (0.5, 0.5, 0.5, false, false, 0.125), (1, 2, 0.25, false, false, 0.5),
        (1, 1, 1, true, false, 0), (1, 1, 1, false, true, 0), (0, 1, 1, false, false, 0)
    ]

    @Test(arguments: chains)
    func effectiveGainsMultiplyDownTheChain(
        master: Float, sfx: Float, child: Float, masterMuted: Bool, sfxMuted: Bool, expected: Float
    ) {
        var graph = graph()
        let footsteps = graph.add(named: "footsteps", parent: 2)
        _ = graph.setGain(0, to: master, over: 0)
        _ = graph.setGain(2, to: sfx, over: 0)
        _ = graph.setGain(footsteps, to: child, over: 0)
        graph.setMuted(0, masterMuted)
        graph.setMuted(2, sfxMuted)
        #expect(abs(graph.effective[footsteps] - expected) < 1e-6)
        #expect(graph.effective[1] == (masterMuted ? 0 : master), "music is beside sfx, not under it")
        #expect(
            graph.isBus(footsteps, under: 2) && graph.isBus(footsteps, under: 0) && !graph.isBus(footsteps, under: 1))
    }

    @Test func gainRampsMoveOnlyWhenAdvanced() {
        var graph = graph()
        let step11 = graph.setGain(1, to: 0, over: 1)
        #expect(!step11, "a ramp changes nothing until the clock moves")
        #expect(graph.effective[1] == 1)
        let step12 = graph.advance(0.25) { _, _ in false }
        #expect(step12)
        #expect(abs(graph.effective[1] - 0.75) < 1e-6)
        let step13 = graph.advance(1) { _, _ in false }
        #expect(step13)
        #expect(graph.effective[1] == 0 && graph.nodes[1].gainRamp == nil)
        let step14 = graph.advance(1) { _, _ in false }
        #expect(!step14, "nothing moves once the ramp is done")
    }

    /// (depth dB, attack s, seconds sounding, expected duck in dB)
    static let attacks: [(Float, Double, Double, Double)] = [
        (9, 0.08, 0.04, -4.5), (9, 0.08, 0.08, -9), (9, 0.08, 1, -9), (12, 0, 0.001, -12), (6, 0.5, 0.25, -3)
    ]

    @Test(arguments: attacks)
    func duckingAttacksInDecibelsToItsDepth(depth: Float, attack: Double, seconds: Double, expectedDB: Double) {
        var graph = graph()
        graph.setDucking([BusGraph.Ducking(trigger: 4, target: 1, depth: depth, attack: attack, release: 0.5)])
        var left = seconds
        while left > 1e-9 {
            let step = min(left, 0.01)
            _ = graph.advance(step) { bus, _ in bus == 4 }
            left -= step
        }
        let db = 20 * log10(Double(graph.effective[1]))
        #expect(abs(db - expectedDB) < 0.05, "\(db) dB")
        #expect(graph.effective[2] == 1, "only the target ducks")
    }

    @Test func duckingReleasesAndRulesCanBeCleared() {
        var graph = graph()
        graph.setDucking([BusGraph.Ducking(trigger: 4, target: 1, depth: 9, attack: 0, release: 0.5)])
        _ = graph.advance(0.01) { _, _ in true }
        #expect(abs(20 * log10(Double(graph.effective[1])) + 9) < 0.01)
        _ = graph.advance(0.25) { _, _ in false }
        #expect(abs(20 * log10(Double(graph.effective[1])) + 4.5) < 0.01, "half the release: half the depth back")
        _ = graph.advance(0.01) { _, _ in true }
        graph.setDucking([])
        #expect(graph.effective[1] == 1 && graph.ducking.isEmpty)
        graph.setDucking([BusGraph.Ducking(trigger: 99, target: 1, depth: 9, attack: 0, release: 0)])
        #expect(graph.ducking.isEmpty, "a rule naming no bus of this graph is dropped")
    }
}
