import Glibc
import Testing

@testable import AmbienceCore
@testable import AmbienceTestSupport

/// Route handling as a table, with no server and no device: what PulseAudio reports (shaped as libpulse reports it)
/// goes through `RouteTracker` into session events, and through `SessionPolicy` into actions. One row per reason.
///
/// This machine has no sound card, so no jack can be pulled and no card profile switched for real: null sinks have no
/// ports and belong to no card, on PulseAudio and PipeWire alike, and no module gives a sink ports without hardware
/// (snd-dummy and ALSA's jack injection need kernel modules and debugfs, which are not here). So ports and profiles
/// are tested here as pure logic, over `pa_sink_info`/`pa_card_info`-shaped snapshots: ports with availability
/// unknown, no and yes, an active port, cards with profiles (and how many sinks each makes), sinks tied to a card.
@Suite(.offTheCooperativePool) struct RouteTableTests {
    static let pid: pid_t = 4242
    static let speakers = SinkInfo(index: 0, name: "speakers", description: "Speakers", state: .running, isMuted: false)
    static let headphones = SinkInfo(
        index: 1, name: "headphones", description: "Headphones", state: .idle, isMuted: false)
    /// A sound card's sink as `pa_sink_info` gives it: two ports, the headphones jack in use.
    static let builtIn = SinkInfo(
        index: 5, name: "alsa_output.pci-0000_00_1f.3.analog-stereo", description: "Built-in Audio", state: .running,
        isMuted: false,
        ports: [
            SinkPort(name: "analog-output-speaker", description: "Speakers", priority: 10_000, availability: .unknown),
            SinkPort(name: "analog-output-headphones", description: "Headphones", priority: 9_900, availability: .yes)
        ],
        activePortName: "analog-output-headphones", cardIndex: 0)
    /// The laptop's card, as `pa_card_info` gives it: analog or HDMI, or off.
    static let builtInCard = CardInfo(
        index: 0, name: "alsa_card.pci-0000_00_1f.3", description: "Built-in Audio",
        profiles: [
            CardProfile(
                name: "output:analog-stereo", description: "Analog Stereo Output", sinks: 1, priority: 6_000,
                isAvailable: true),
            CardProfile(
                name: "output:hdmi-stereo", description: "Digital Stereo (HDMI) Output", sinks: 1, priority: 5_400,
                isAvailable: true),
            CardProfile(name: "off", description: "Off", sinks: 0, priority: 0, isAvailable: true)
        ],
        activeProfileName: "output:analog-stereo")
    /// A Bluetooth headset's card: A2DP (music) or the headset profile (a call), each with its own sink.
    static let headsetCard = CardInfo(
        index: 1, name: "bluez_card.00_1B_66_AA_BB_CC", description: "WH-1000XM4",
        profiles: [
            CardProfile(
                name: "a2dp-sink", description: "High Fidelity Playback (A2DP Sink)", sinks: 1, priority: 40,
                isAvailable: true),
            CardProfile(
                name: "headset-head-unit", description: "Headset Head Unit (HSP/HFP)", sinks: 1, priority: 30,
                isAvailable: true),
            CardProfile(name: "off", description: "Off", sinks: 0, priority: 0, isAvailable: true)
        ],
        activeProfileName: "a2dp-sink")
    static let a2dp = SinkInfo(
        index: 8, name: "bluez_sink.00_1B_66_AA_BB_CC.a2dp_sink", description: "WH-1000XM4", state: .running,
        isMuted: false,
        ports: [SinkPort(name: "headphone-output", description: "Headphone", priority: 0, availability: .yes)],
        activePortName: "headphone-output", cardIndex: 1)
    static let headsetUnit = with(a2dp) {
        $0.index = 9
        $0.name = "bluez_sink.00_1B_66_AA_BB_CC.headset_head_unit"
    }
    /// The same sink after the jack was pulled: the port is unavailable and the server switched to the speakers.
    static let builtInJackPulled = with(builtIn) {
        $0.ports[1].availability = .no
        $0.activePortName = "analog-output-speaker"
    }

    static func ourStream(on sink: SinkInfo) -> SinkInput {
        SinkInput(
            index: 7, sinkIndex: sink.index, isCorked: false, isMuted: false, applicationName: "game", processID: pid,
            mediaRole: "game", mediaName: "Playback")
    }

    static func snapshot(_ sinks: [SinkInfo], default name: String?, stream: SinkInput?, cards: [CardInfo] = [])
        -> PulseSnapshot
    {
        var snapshot = PulseSnapshot()
        for sink in sinks { _ = snapshot.update(sink) }
        for card in cards { _ = snapshot.update(card) }
        _ = snapshot.setDefaultSinkName(name)
        if let stream { _ = snapshot.update(stream) }
        snapshot.isConnected = true
        return snapshot
    }

    static func route(_ sink: SinkInfo) -> AudioRoute {
        AudioRoute(name: sink.routeName, driver: "pulseaudio", sink: sink.name, port: sink.activePortName)
    }

    static func routeChange(_ reason: RouteChangeReason, _ previous: AudioRoute, _ current: AudioRoute) -> SessionAction
    {
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
        // The headphones plugged in, their port not yet switched to; and the speakers picked by hand instead.
        let pluggedNotUsed = with(builtInJackPulled) { $0.ports[1].availability = .yes }
        let speakerPicked = with(builtIn) { $0.activePortName = "analog-output-speaker" }
        let withLineOut = with(builtIn) {
            $0.ports.append(
                SinkPort(name: "analog-output-lineout", description: "Line Out", priority: 9_000, availability: .yes))
        }
        let lineOutPulled = with(withLineOut) { $0.ports[2].availability = .no }
        // The headset's card: in A2DP, switched to the headset profile, switched off.
        let headsetProfile = with(headsetCard) { $0.activeProfileName = "headset-head-unit" }
        let headsetOff = with(headsetCard) { $0.activeProfileName = "off" }
        let onHeadset = snapshot(
            [builtIn, a2dp], default: a2dp.name, stream: ourStream(on: a2dp), cards: [builtInCard, headsetCard])
        // Right after the removal the server has not yet said where the stream went, nor read the card again.
        let a2dpGone = snapshot(
            [builtIn], default: a2dp.name, stream: ourStream(on: a2dp), cards: [builtInCard, headsetCard])
        let switchedToHeadsetUnit = snapshot(
            [builtIn, headsetUnit], default: headsetUnit.name, stream: ourStream(on: headsetUnit),
            cards: [builtInCard, headsetProfile])
        return [
            Row(
                name: "oldDeviceUnavailable: the sink in use is removed",
                before: both,
                steps: [Step(event: .sinkRemoved(speakers, streams: [ourStream(on: speakers)]), after: speakersGone)],
                events: [.currentDeviceRemoved(previous: route(speakers), current: route(headphones))],
                actions: [
                    .followDefaultDevice, .pauseAppAudio(.routeChange),
                    routeChange(.oldDeviceUnavailable, route(speakers), route(headphones))
                ]),
            Row(
                name: "oldDeviceUnavailable: the active port becomes unavailable on the same sink",
                before: onBuiltIn,
                steps: [Step(event: .sinkChanged(from: builtIn, to: builtInJackPulled), after: onBuiltInPulled)],
                events: [.currentDeviceRemoved(previous: route(builtIn), current: route(builtInJackPulled))],
                actions: [
                    .followDefaultDevice, .pauseAppAudio(.routeChange),
                    routeChange(.oldDeviceUnavailable, route(builtIn), route(builtInJackPulled))
                ]),
            Row(
                name: "oldDeviceUnavailable once: the port goes, then the server switches ports",
                before: onBuiltIn,
                steps: [
                    Step(
                        event: .sinkChanged(from: builtIn, to: builtInPulledNoSwitch),
                        after: snapshot([builtInPulledNoSwitch], default: builtIn.name, stream: ourStream(on: builtIn))),
                    Step(
                        event: .sinkChanged(from: builtInPulledNoSwitch, to: builtInJackPulled), after: onBuiltInPulled)
                ],
                events: [.currentDeviceRemoved(previous: route(builtIn), current: route(builtInPulledNoSwitch))],
                actions: [
                    .followDefaultDevice, .pauseAppAudio(.routeChange),
                    routeChange(.oldDeviceUnavailable, route(builtIn), route(builtInPulledNoSwitch))
                ]),
            Row(
                name: "nothing: a sink we do not play on is removed",
                before: both,
                steps: [
                    Step(event: .sinkRemoved(headphones, streams: []), after: with(both) { $0.sinksByIndex[1] = nil })
                ],
                events: [], actions: []),
            Row(
                name: "nothing: a sink we do not play on changes state",
                before: both,
                steps: [
                    Step(
                        event: .sinkChanged(from: headphones, to: with(headphones) { $0.state = .running }), after: both
                    )
                ],
                events: [], actions: []),
            Row(
                name: "newDeviceAvailable: a sink is added",
                before: both,
                steps: [Step(event: .sinkAdded(usb), after: with(both) { _ = $0.update(usb) })],
                events: [.deviceAdded(route(usb), current: route(speakers))],
                actions: [routeChange(.newDeviceAvailable, route(speakers), route(speakers))]),
            Row(
                name: "newDeviceAvailable: a jack is plugged into the sink in use and its port takes over",
                before: onBuiltInPulled,
                steps: [Step(event: .sinkChanged(from: builtInJackPulled, to: jackBack), after: onBuiltIn)],
                events: [
                    .activePortChanged(
                        previous: route(builtInJackPulled), current: route(jackBack), newlyAvailable: true)
                ],
                actions: [routeChange(.newDeviceAvailable, route(builtInJackPulled), route(jackBack))]),
            Row(
                name: "newDeviceAvailable twice: a jack plugged, then the server switches to its port",
                before: onBuiltInPulled,
                steps: [
                    Step(
                        event: .sinkChanged(from: builtInJackPulled, to: pluggedNotUsed),
                        after: snapshot([pluggedNotUsed], default: builtIn.name, stream: ourStream(on: builtIn))),
                    Step(
                        event: .sinkChanged(from: pluggedNotUsed, to: jackBack), after: onBuiltIn,
                        nanoseconds: 100_000_000)
                ],
                events: [
                    .deviceAdded(route(pluggedNotUsed), current: route(pluggedNotUsed)),
                    .activePortChanged(previous: route(pluggedNotUsed), current: route(jackBack), newlyAvailable: true)
                ],
                actions: [
                    routeChange(.newDeviceAvailable, route(pluggedNotUsed), route(pluggedNotUsed)),
                    routeChange(.newDeviceAvailable, route(pluggedNotUsed), route(jackBack))
                ]),
            Row(
                name: "routeConfigurationChange: a port picked by hand while the old one is still available",
                before: onBuiltIn,
                steps: [
                    Step(
                        event: .sinkChanged(from: builtIn, to: speakerPicked),
                        after: snapshot([speakerPicked], default: builtIn.name, stream: ourStream(on: builtIn)))
                ],
                events: [
                    .activePortChanged(previous: route(builtIn), current: route(speakerPicked), newlyAvailable: false)
                ],
                actions: [routeChange(.routeConfigurationChange, route(builtIn), route(speakerPicked))]),
            Row(
                name: "routeConfigurationChange: a port plugged long before it is picked",
                before: onBuiltInPulled,
                steps: [
                    Step(
                        event: .sinkChanged(from: builtInJackPulled, to: pluggedNotUsed),
                        after: snapshot([pluggedNotUsed], default: builtIn.name, stream: ourStream(on: builtIn))),
                    Step(
                        event: .sinkChanged(from: pluggedNotUsed, to: jackBack), after: onBuiltIn,
                        nanoseconds: 5_000_000_000)
                ],
                events: [
                    .deviceAdded(route(pluggedNotUsed), current: route(pluggedNotUsed)),
                    .activePortChanged(previous: route(pluggedNotUsed), current: route(jackBack), newlyAvailable: false)
                ],
                actions: [
                    routeChange(.newDeviceAvailable, route(pluggedNotUsed), route(pluggedNotUsed)),
                    routeChange(.routeConfigurationChange, route(pluggedNotUsed), route(jackBack))
                ]),
            Row(
                name: "nothing: a port of our sink that is not in use becomes unavailable",
                before: snapshot([withLineOut], default: builtIn.name, stream: ourStream(on: builtIn)),
                steps: [
                    Step(
                        event: .sinkChanged(from: withLineOut, to: lineOutPulled),
                        after: snapshot([lineOutPulled], default: builtIn.name, stream: ourStream(on: builtIn)))
                ],
                events: [], actions: []),
            Row(
                name: "nothing: a port of another sink becomes unavailable",
                before: snapshot([speakers, builtIn], default: "speakers", stream: ourStream(on: speakers)),
                steps: [
                    Step(
                        event: .sinkChanged(from: builtIn, to: builtInJackPulled),
                        after: snapshot(
                            [speakers, builtInJackPulled], default: "speakers", stream: ourStream(on: speakers)))
                ],
                events: [], actions: []),
            Row(
                name:
                    "profile switch, the new sink already there: oldDeviceUnavailable, then routeConfigurationChange to it",
                before: onHeadset,
                steps: [Step(event: .sinkRemoved(a2dp, streams: [ourStream(on: a2dp)]), after: switchedToHeadsetUnit)],
                events: [
                    .currentDeviceRemoved(previous: route(a2dp), current: route(headsetUnit)),
                    .defaultDeviceChanged(previous: route(a2dp), current: route(headsetUnit))
                ],
                actions: [
                    .followDefaultDevice, .pauseAppAudio(.routeChange),
                    routeChange(.oldDeviceUnavailable, route(a2dp), route(headsetUnit)),
                    .followDefaultDevice, .moveStream(toSink: headsetUnit.name),
                    routeChange(.routeConfigurationChange, route(a2dp), route(headsetUnit))
                ]),
            Row(
                name:
                    "profile switch, the new sink a moment later: the removal, then the card's new sink as the default",
                before: onHeadset,
                steps: [
                    Step(event: .sinkRemoved(a2dp, streams: [ourStream(on: a2dp)]), after: a2dpGone),
                    Step(event: .sinkAdded(headsetUnit), after: switchedToHeadsetUnit, nanoseconds: 50_000_000),
                    Step(
                        event: .cardChanged(from: headsetCard, to: headsetProfile), after: switchedToHeadsetUnit,
                        nanoseconds: 60_000_000)
                ],
                events: [
                    .currentDeviceRemoved(previous: route(a2dp), current: route(builtIn)),
                    .defaultDeviceChanged(previous: route(builtIn), current: route(headsetUnit))
                ],
                actions: [
                    .followDefaultDevice, .pauseAppAudio(.routeChange),
                    routeChange(.oldDeviceUnavailable, route(a2dp), route(builtIn)),
                    .followDefaultDevice, .moveStream(toSink: headsetUnit.name),
                    routeChange(.routeConfigurationChange, route(builtIn), route(headsetUnit))
                ]),
            Row(
                name:
                    "profile switch of the only card: no route, then the new sink ends the interruption and is followed",
                before: snapshot([a2dp], default: a2dp.name, stream: ourStream(on: a2dp), cards: [headsetCard]),
                steps: [
                    Step(
                        event: .sinkRemoved(a2dp, streams: [ourStream(on: a2dp)]),
                        after: snapshot([], default: a2dp.name, stream: nil, cards: [headsetCard])),
                    Step(
                        event: .sinkAdded(headsetUnit),
                        after: snapshot([headsetUnit], default: headsetUnit.name, stream: nil, cards: [headsetProfile]),
                        nanoseconds: 50_000_000)
                ],
                events: [
                    .currentDeviceRemoved(previous: route(a2dp), current: nil),
                    .deviceAdded(route(headsetUnit), current: .none),
                    .defaultDeviceChanged(previous: route(a2dp), current: route(headsetUnit))
                ],
                actions: [
                    .renderToNullDevice, routeChange(.noSuitableRouteForCategory, route(a2dp), .none),
                    .pauseAppAudio(.interruption), .notify(.interruption(.began)),
                    .followDefaultDevice, routeChange(.newDeviceAvailable, .none, route(headsetUnit)),
                    .resumeAppAudio, .notify(.interruption(.ended(shouldResume: true))),
                    .followDefaultDevice, .moveStream(toSink: headsetUnit.name),
                    routeChange(.routeConfigurationChange, route(a2dp), route(headsetUnit))
                ]),
            Row(
                name: "card switched off: a plain removal; its sink coming back later is a new device",
                before: onHeadset,
                steps: [
                    Step(
                        event: .sinkRemoved(a2dp, streams: [ourStream(on: a2dp)]),
                        after: snapshot([builtIn], default: builtIn.name, stream: nil, cards: [builtInCard, headsetOff])
                    ),
                    Step(event: .sinkAdded(a2dp), after: onHeadset, nanoseconds: 50_000_000)
                ],
                events: [
                    .currentDeviceRemoved(previous: route(a2dp), current: route(builtIn)),
                    .deviceAdded(route(a2dp), current: route(builtIn))
                ],
                actions: [
                    .followDefaultDevice, .pauseAppAudio(.routeChange),
                    routeChange(.oldDeviceUnavailable, route(a2dp), route(builtIn)),
                    routeChange(.newDeviceAvailable, route(builtIn), route(builtIn))
                ]),
            Row(
                name: "a card's new sink more than a second after the removal is just a new device",
                before: onHeadset,
                steps: [
                    Step(event: .sinkRemoved(a2dp, streams: [ourStream(on: a2dp)]), after: a2dpGone),
                    Step(event: .sinkAdded(headsetUnit), after: switchedToHeadsetUnit, nanoseconds: 1_500_000_000)
                ],
                events: [
                    .currentDeviceRemoved(previous: route(a2dp), current: route(builtIn)),
                    .deviceAdded(route(headsetUnit), current: route(builtIn))
                ],
                actions: [
                    .followDefaultDevice, .pauseAppAudio(.routeChange),
                    routeChange(.oldDeviceUnavailable, route(a2dp), route(builtIn)),
                    routeChange(.newDeviceAvailable, route(builtIn), route(builtIn))
                ]),
            Row(
                name: "a card removed with its sink: nothing replaces ours",
                before: onHeadset,
                steps: [
                    Step(event: .sinkRemoved(a2dp, streams: [ourStream(on: a2dp)]), after: a2dpGone),
                    Step(
                        event: .cardRemoved(headsetCard),
                        after: snapshot([builtIn], default: builtIn.name, stream: nil, cards: [builtInCard]),
                        nanoseconds: 10_000_000),
                    Step(
                        event: .sinkAdded(with(headsetUnit) { $0.index = 12 }),
                        after: switchedToHeadsetUnit, nanoseconds: 20_000_000)
                ],
                events: [
                    .currentDeviceRemoved(previous: route(a2dp), current: route(builtIn)),
                    .deviceAdded(route(headsetUnit), current: route(builtIn))
                ],
                actions: [
                    .followDefaultDevice, .pauseAppAudio(.routeChange),
                    routeChange(.oldDeviceUnavailable, route(a2dp), route(builtIn)),
                    routeChange(.newDeviceAvailable, route(builtIn), route(builtIn))
                ]),
            Row(
                name: "routeConfigurationChange: a new default is followed",
                before: both,
                steps: [Step(event: .defaultSinkChanged(from: "speakers", to: "headphones"), after: toHeadphones)],
                events: [.defaultDeviceChanged(previous: route(speakers), current: route(headphones))],
                actions: [
                    .followDefaultDevice, .moveStream(toSink: "headphones"),
                    routeChange(.routeConfigurationChange, route(speakers), route(headphones))
                ]),
            Row(
                name: "nothing: the default becomes the sink we already play on",
                before: both,
                steps: [Step(event: .defaultSinkChanged(from: "headphones", to: "speakers"), after: both)],
                events: [], actions: []),
            Row(
                name: "noSuitableRouteForCategory: the last sink is removed",
                before: both,
                steps: [
                    Step(event: .sinkRemoved(headphones, streams: []), after: speakersOnly),
                    Step(event: .sinkRemoved(speakers, streams: [ourStream(on: speakers)]), after: nothing)
                ],
                events: [.currentDeviceRemoved(previous: route(speakers), current: nil)],
                actions: [
                    .renderToNullDevice, routeChange(.noSuitableRouteForCategory, route(speakers), .none),
                    .pauseAppAudio(.interruption), .notify(.interruption(.began))
                ]),
            Row(
                name: "a sink coming back after none ends the interruption",
                before: both,
                steps: [
                    Step(event: .sinkRemoved(headphones, streams: []), after: speakersOnly),
                    Step(event: .sinkRemoved(speakers, streams: [ourStream(on: speakers)]), after: nothing),
                    Step(event: .sinkAdded(speakers), after: snapshot([speakers], default: "speakers", stream: nil))
                ],
                events: [
                    .currentDeviceRemoved(previous: route(speakers), current: nil),
                    .deviceAdded(route(speakers), current: .none)
                ],
                actions: [
                    .renderToNullDevice, routeChange(.noSuitableRouteForCategory, route(speakers), .none),
                    .pauseAppAudio(.interruption), .notify(.interruption(.began)),
                    .followDefaultDevice, routeChange(.newDeviceAvailable, .none, route(speakers)),
                    .resumeAppAudio, .notify(.interruption(.ended(shouldResume: true)))
                ])
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
}

/// A copy of `value` changed by `change`: table rows read as "this, except that".
func with<T>(_ value: T, _ change: (inout T) -> Void) -> T {
    var copy = value
    change(&copy)
    return copy
}
