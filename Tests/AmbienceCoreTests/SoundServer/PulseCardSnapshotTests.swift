import Glibc
import Testing

@testable import AmbienceCore
@testable import AmbienceTestSupport

/// The snapshot's cards, as libpulse's card events fill it: keyed by index, each change an event, nothing for a card
/// read again unchanged.
@Suite(.offTheCooperativePool) struct PulseCardSnapshotTests {
    @Test func cardsAreKeptByIndexAndEachChangeIsAnEvent() {
        var snapshot = PulseSnapshot()
        let card = RouteTableTests.headsetCard
        #expect(snapshot.update(card) == .cardAdded(card))
        #expect(snapshot.update(card) == nil, "read again, unchanged: no event")
        let switched = with(card) { $0.activeProfileName = "headset-head-unit" }
        #expect(snapshot.update(switched) == .cardChanged(from: card, to: switched))
        #expect(snapshot.cardsByIndex[1]?.activeProfile?.name == "headset-head-unit")
        _ = snapshot.update(RouteTableTests.a2dp)
        _ = snapshot.update(RouteTableTests.builtIn)
        #expect(snapshot.sinks(ofCard: 1).map(\.name) == [RouteTableTests.a2dp.name])
        #expect(snapshot.removeCard(index: 1) == .cardRemoved(switched))
        #expect(snapshot.removeCard(index: 1) == nil)
    }
}
