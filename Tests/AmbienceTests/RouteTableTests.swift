import Glibc
import Testing
@testable import Ambience

/// Route handling as a table, with no server and no device: what PulseAudio reports (shaped as libpulse reports it)
/// goes through `RouteTracker` into session events, and through `SessionPolicy` into actions. One row per reason.
@Suite struct RouteTableTests {
    static let pid: pid_t = 4242
    static let speakers = SinkInfo(index: 0, name: "speakers", description: "Speakers", state: .running, isMuted: false)
    static let headphones = SinkInfo(index: 1, name: "headphones", description: "Headphones", state: .idle, isMuted: false)
    /// A sound card's sink as `pa_sink_info` gives it: two ports, the headphones jack in use.
    static let builtIn = SinkInfo(
        index: 5, name: "alsa_output.pci-0000_00_1f.3.analog-stereo", description: "Built-in Audio", state: .running, isMuted: false,
        ports: [SinkPort(name: "analog-output-speaker", description: "Speakers", priority: 10_000, availability: .unknown),
                SinkPort(name: "analog-output-headphones", description: "Headphones", priority: 9_900, availability: .yes)],
        activePortName: "analog-output-headphones")
    /// The same sink after the jack was pulled: the port is unavailable and the server switched to the speakers.
    static let builtInJackPulled = with(builtIn) {
        $0.ports[1].availability = .no
        $0.activePortName = "analog-output-speaker"
    }

    static func ourStream(on sink: SinkInfo) -> SinkInput {
        SinkInput(index: 7, sinkIndex: sink.index, isCorked: false, isMuted: false, applicationName: "game", processID: pid,
                  mediaRole: "game", mediaName: "Playback")
    }

    static func snapshot(_ sinks: [SinkInfo], default name: String?, stream: SinkInput?) -> PulseSnapshot {
        var snapshot = PulseSnapshot()
        for sink in sinks { _ = snapshot.update(sink) }
        _ = snapshot.setDefaultSinkName(name)
        if let stream { _ = snapshot.update(stream) }
        snapshot.isConnected = true
        return snapshot
    }

    static func route(_ sink: SinkInfo) -> AudioRoute { AudioRoute(name: sink.routeName, driver: "pulseaudio", sink: sink.name) }

    static func routeChange(_ reason: RouteChangeReason, _ previous: AudioRoute, _ current: AudioRoute) -> SessionAction {
        .notify(.routeChange(RouteChange(reason: reason, previous: previous, current: current)))
    }

    /// One server event and the server as the monitor reads it afterwards (its reports can lag: a stale default, a
    /// stream not yet moved).
    struct Step: Sendable {
        var event: PulseEvent
        var after: PulseSnapshot
        var nanoseconds = 0
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var before: PulseSnapshot
        var steps: [Step]
        var events: [SessionEvent]
        var actions: [SessionAction]
        var testDescription: String { name }
    }

    static let rows: [Row] = {
        let both = snapshot([speakers, headphones], default: "speakers", stream: ourStream(on: speakers))
        let speakersGone = snapshot([headphones], default: "speakers", stream: ourStream(on: speakers))  // reports lag
        let speakersOnly = snapshot([speakers], default: "speakers", stream: ourStream(on: speakers))
        let nothing = snapshot([], default: nil, stream: nil)
        let usb = SinkInfo(index: 2, name: "usb", description: "USB Headset", state: .idle, isMuted: false)
        let onBuiltIn = snapshot([builtIn], default: builtIn.name, stream: ourStream(on: builtIn))
        let onBuiltInPulled = snapshot([builtInJackPulled], default: builtIn.name, stream: ourStream(on: builtIn))
        let builtInPulledNoSwitch = with(builtIn) { $0.ports[1].availability = .no }
        let jackBack = with(builtInJackPulled) {
            $0.ports[1].availability = .yes
            $0.activePortName = "analog-output-headphones"
        }
        let toHeadphones = with(both) { $0.defaultSinkName = "headphones" }
        return [
            Row(name: "oldDeviceUnavailable: the sink in use is removed",
                before: both,
                steps: [Step(event: .sinkRemoved(speakers, streams: [ourStream(on: speakers)]), after: speakersGone)],
                events: [.currentDeviceRemoved(previous: route(speakers), current: route(headphones))],
                actions: [.followDefaultDevice, .pauseAppAudio(.routeChange),
                          routeChange(.oldDeviceUnavailable, route(speakers), route(headphones))]),
            Row(name: "oldDeviceUnavailable: the active port becomes unavailable on the same sink",
                before: onBuiltIn,
                steps: [Step(event: .sinkChanged(from: builtIn, to: builtInJackPulled), after: onBuiltInPulled)],
                events: [.currentDeviceRemoved(previous: route(builtIn), current: route(builtInJackPulled))],
                actions: [.followDefaultDevice, .pauseAppAudio(.routeChange),
                          routeChange(.oldDeviceUnavailable, route(builtIn), route(builtInJackPulled))]),
            Row(name: "oldDeviceUnavailable once: the port goes, then the server switches ports",
                before: onBuiltIn,
                steps: [Step(event: .sinkChanged(from: builtIn, to: builtInPulledNoSwitch),
                             after: snapshot([builtInPulledNoSwitch], default: builtIn.name, stream: ourStream(on: builtIn))),
                        Step(event: .sinkChanged(from: builtInPulledNoSwitch, to: builtInJackPulled), after: onBuiltInPulled)],
                events: [.currentDeviceRemoved(previous: route(builtIn), current: route(builtInPulledNoSwitch))],
                actions: [.followDefaultDevice, .pauseAppAudio(.routeChange),
                          routeChange(.oldDeviceUnavailable, route(builtIn), route(builtInPulledNoSwitch))]),
            Row(name: "nothing: a sink we do not play on is removed",
                before: both,
                steps: [Step(event: .sinkRemoved(headphones, streams: []), after: with(both) { $0.sinksByIndex[1] = nil })],
                events: [], actions: []),
            Row(name: "nothing: a sink we do not play on changes state",
                before: both,
                steps: [Step(event: .sinkChanged(from: headphones, to: with(headphones) { $0.state = .running }), after: both)],
                events: [], actions: []),
            Row(name: "newDeviceAvailable: a sink is added",
                before: both,
                steps: [Step(event: .sinkAdded(usb), after: with(both) { _ = $0.update(usb) })],
                events: [.deviceAdded(route(usb), current: route(speakers))],
                actions: [routeChange(.newDeviceAvailable, route(speakers), route(speakers))]),
            Row(name: "newDeviceAvailable: a jack is plugged into the sink in use",
                before: onBuiltInPulled,
                steps: [Step(event: .sinkChanged(from: builtInJackPulled, to: jackBack), after: onBuiltIn)],
                events: [.deviceAdded(route(jackBack), current: route(jackBack))],
                actions: [routeChange(.newDeviceAvailable, route(jackBack), route(jackBack))]),
            Row(name: "routeConfigurationChange: a new default is followed",
                before: both,
                steps: [Step(event: .defaultSinkChanged(from: "speakers", to: "headphones"), after: toHeadphones)],
                events: [.defaultDeviceChanged(previous: route(speakers), current: route(headphones))],
                actions: [.followDefaultDevice, .moveStream(toSink: "headphones"),
                          routeChange(.routeConfigurationChange, route(speakers), route(headphones))]),
            Row(name: "nothing: the default becomes the sink we already play on",
                before: both,
                steps: [Step(event: .defaultSinkChanged(from: "headphones", to: "speakers"), after: both)],
                events: [], actions: []),
            Row(name: "noSuitableRouteForCategory: the last sink is removed",
                before: both,
                steps: [Step(event: .sinkRemoved(headphones, streams: []), after: speakersOnly),
                        Step(event: .sinkRemoved(speakers, streams: [ourStream(on: speakers)]), after: nothing)],
                events: [.currentDeviceRemoved(previous: route(speakers), current: nil)],
                actions: [.renderToNullDevice, routeChange(.noSuitableRouteForCategory, route(speakers), .none),
                          .pauseAppAudio(.interruption), .notify(.interruption(.began))]),
            Row(name: "a sink coming back after none ends the interruption",
                before: both,
                steps: [Step(event: .sinkRemoved(headphones, streams: []), after: speakersOnly),
                        Step(event: .sinkRemoved(speakers, streams: [ourStream(on: speakers)]), after: nothing),
                        Step(event: .sinkAdded(speakers), after: snapshot([speakers], default: "speakers", stream: nil))],
                events: [.currentDeviceRemoved(previous: route(speakers), current: nil), .deviceAdded(route(speakers), current: .none)],
                actions: [.renderToNullDevice, routeChange(.noSuitableRouteForCategory, route(speakers), .none),
                          .pauseAppAudio(.interruption), .notify(.interruption(.began)),
                          .followDefaultDevice, routeChange(.newDeviceAvailable, .none, route(speakers)),
                          .resumeAppAudio, .notify(.interruption(.ended(shouldResume: true)))]),
        ]
    }()

    /// Every row, in every category: route handling does not depend on the category.
    @Test(arguments: SessionCategory.allCases, rows)
    func routeEventsBecomeActions(category: SessionCategory, row: Row) {
        var tracker = RouteTracker(processID: Self.pid, appName: "game")
        tracker.refresh(row.before, now: 0)
        var policy = SessionPolicy()
        _ = policy.handle(.setCategory(category, [], playingPlayers: []))
        _ = policy.handle(.activate(playingPlayers: []))
        var events: [SessionEvent] = []
        var actions: [SessionAction] = []
        for step in row.steps {
            let observed = tracker.observe(step.event, in: step.after, driver: "pulseaudio", now: step.nanoseconds)
            tracker.refresh(step.after, now: step.nanoseconds)
            events += observed
            for event in observed { actions += policy.handle(event) }
        }
        #expect(events == row.events)
        #expect(actions == row.actions)
    }

    /// The server reports our stream on its new sink a moment after the default changes: until it does (or a
    /// second passes), the route is the new default, not the old report.
    @Test func aMoveIsTrustedUntilTheServerReportsIt() {
        var tracker = RouteTracker(processID: Self.pid, appName: "game")
        let both = Self.snapshot([Self.speakers, Self.headphones], default: "speakers", stream: Self.ourStream(on: Self.speakers))
        tracker.refresh(both, now: 0)
        let stale = with(both) { $0.defaultSinkName = "headphones" }
        _ = tracker.observe(.defaultSinkChanged(from: "speakers", to: "headphones"), in: stale, driver: "pulseaudio", now: 0)
        tracker.refresh(stale, now: 500_000_000)
        #expect(tracker.ourSink?.name == "headphones")
        tracker.refresh(stale, now: RouteTracker.moveTrustNanoseconds)
        #expect(tracker.ourSink?.name == "speakers", "after a second the server's report wins")
    }

    /// Only this process's stream under the app's name is ours: another stream of the process (a probe) is not.
    @Test func onlyOurStreamMakesARemovalOurs() {
        var tracker = RouteTracker(processID: Self.pid, appName: "game")
        let probe = with(Self.ourStream(on: Self.headphones)) { $0.applicationName = "game-probe" }
        let before = Self.snapshot([Self.speakers, Self.headphones], default: "speakers", stream: Self.ourStream(on: Self.speakers))
        tracker.refresh(before, now: 0)
        let after = with(before) { $0.sinksByIndex[1] = nil }
        #expect(tracker.observe(.sinkRemoved(Self.headphones, streams: [probe]), in: after, driver: "pulseaudio", now: 0).isEmpty)
    }

    @Test func aRouteWithAnActivePortIsNamedByPortAndSink() {
        #expect(Self.builtIn.routeName == "Headphones (Built-in Audio)")
        #expect(Self.builtInJackPulled.routeName == "Speakers (Built-in Audio)")
        #expect(Self.speakers.routeName == "Speakers")
    }
}

/// A copy of `value` changed by `change`: table rows read as "this, except that".
func with<T>(_ value: T, _ change: (inout T) -> Void) -> T {
    var copy = value
    change(&copy)
    return copy
}
