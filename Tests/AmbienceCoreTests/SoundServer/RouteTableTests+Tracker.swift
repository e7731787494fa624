import Glibc
import Testing

@testable import Ambience
@testable import AmbienceCore

extension RouteTableTests {
    /// The server reports our stream on its new sink a moment after the default changes: until it does (or a
    /// second passes), the route is the new default, not the old report.
    @Test func aMoveIsTrustedUntilTheServerReportsIt() {
        var tracker = RouteTracker(processID: Self.pid, appName: "game")
        let both = Self.snapshot(
            [Self.speakers, Self.headphones], default: "speakers", stream: Self.ourStream(on: Self.speakers))
        tracker.refresh(both, now: 0)
        let stale = with(both) { $0.defaultSinkName = "headphones" }
        _ = tracker.observe(
            .defaultSinkChanged(from: "speakers", to: "headphones"), in: stale, driver: "pulseaudio", now: 0)
        tracker.refresh(stale, now: 500_000_000)
        #expect(tracker.ourSink?.name == "headphones")
        tracker.refresh(stale, now: RouteTracker.moveTrustNanoseconds)
        #expect(tracker.ourSink?.name == "speakers", "after a second the server's report wins")
    }

    /// Only this process's stream under the app's name is ours: another stream of the process (a probe) is not.
    @Test func onlyOurStreamMakesARemovalOurs() {
        var tracker = RouteTracker(processID: Self.pid, appName: "game")
        let probe = with(Self.ourStream(on: Self.headphones)) { $0.applicationName = "game-probe" }
        let before = Self.snapshot(
            [Self.speakers, Self.headphones], default: "speakers", stream: Self.ourStream(on: Self.speakers))
        tracker.refresh(before, now: 0)
        let after = with(before) { $0.sinksByIndex[1] = nil }
        #expect(
            tracker.observe(.sinkRemoved(Self.headphones, streams: [probe]), in: after, driver: "pulseaudio", now: 0)
                .isEmpty)
    }

    @Test func aRouteWithAnActivePortIsNamedByPortAndSink() {
        #expect(Self.builtIn.routeName == "Headphones (Built-in Audio)")
        let tracker = RouteTracker(processID: Self.pid, appName: "game")
        let route = tracker.route(of: Self.builtIn, driver: "pulseaudio")
        #expect(
            route.name == "Headphones (Built-in Audio)" && route.sink == Self.builtIn.name
                && route.port == "analog-output-headphones")
        #expect(tracker.route(of: Self.speakers, driver: "pulseaudio").port == nil)
        #expect(Self.builtInJackPulled.routeName == "Speakers (Built-in Audio)")
        #expect(Self.speakers.routeName == "Speakers")
    }
}

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
