import Glibc
import Testing

@testable import AmbienceCore
@testable import AmbienceTestSupport

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

    /// A refresh with the snapshot of the last one is skipped (RouteMonitor) unless time alone can change the
    /// tracker: while a move is trusted, until a refresh after the trust ran out.
    @Test func aRefreshIsDueWithTheSameSnapshotOnlyWhileTimeCanChangeIt() {
        var tracker = RouteTracker(processID: Self.pid, appName: "game")
        let both = Self.snapshot(
            [Self.speakers, Self.headphones], default: "speakers", stream: Self.ourStream(on: Self.speakers))
        tracker.refresh(both, now: 0)
        #expect(!tracker.refreshIsDue(since: 0))
        let stale = with(both) { $0.defaultSinkName = "headphones" }
        _ = tracker.observe(
            .defaultSinkChanged(from: "speakers", to: "headphones"), in: stale, driver: "pulseaudio", now: 0)
        tracker.refresh(stale, now: 500_000_000)
        #expect(tracker.refreshIsDue(since: 500_000_000), "the trust runs out later: the same snapshot then differs")
        let trustEnds = RouteTracker.moveTrustNanoseconds
        tracker.refresh(stale, now: trustEnds)
        #expect(!tracker.refreshIsDue(since: trustEnds) && tracker.ourSink?.name == "speakers")
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
