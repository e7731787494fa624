import Glibc

/// An output device of the sound server: a PulseAudio sink.
package struct SinkInfo: Sendable, Hashable {
    package enum State: String, Sendable, Hashable {
        case running, idle, suspended, unknown
    }

    /// The server's number for the sink, unique while the server runs.
    package var index: UInt32
    /// The stable name (`speakers`, `alsa_output.pci-0000_00_1f.3.analog-stereo`).
    package var name: String
    /// What a person reads ("Speakers").
    package var description: String
    package var state: State
    package var isMuted: Bool
    /// Its outputs (`pa_sink_info.ports`): the jacks and speakers of a sound card. Null sinks and most Bluetooth
    /// and USB sinks have none.
    package var ports: [SinkPort] = []
    /// The name of the port in use (`pa_sink_info.active_port`), nil when the sink has no ports.
    package var activePortName: String?
    /// The sound card the sink belongs to (`pa_sink_info.card`), nil for sinks of no card (null sinks, most virtual
    /// ones). A card's profile switch replaces its sinks: the new one has the same card.
    package var cardIndex: UInt32? = nil

    package init(
        index: UInt32, name: String, description: String, state: State, isMuted: Bool, ports: [SinkPort] = [],
        activePortName: String? = nil, cardIndex: UInt32? = nil
    ) {
        self.index = index
        self.name = name
        self.description = description
        self.state = state
        self.isMuted = isMuted
        self.ports = ports
        self.activePortName = activePortName
        self.cardIndex = cardIndex
    }

    package var activePort: SinkPort? { activePortName.flatMap(port(named:)) }
    package func port(named name: String) -> SinkPort? { ports.first { $0.name == name } }

    /// What a person calls this output: the active port and its sink ("Headphones (Built-in Audio)"), else the sink.
    package var routeName: String { activePort.map { "\($0.description) (\(description))" } ?? description }
}

/// One output of a sink, as libpulse's `pa_sink_port_info` describes it.
package struct SinkPort: Sendable, Hashable {
    /// `pa_port_available`: whether something is plugged in, when the card can tell.
    package enum Availability: String, Sendable, Hashable {
        case unknown, no, yes
    }

    /// The stable name (`analog-output-headphones`).
    package var name: String
    /// What a person reads ("Headphones").
    package var description: String
    /// Higher is a better default.
    package var priority: UInt32
    package var availability: Availability

    package init(name: String, description: String, priority: UInt32, availability: Availability) {
        self.name = name
        self.description = description
        self.priority = priority
        self.availability = availability
    }
}

/// A sound card, as libpulse's `pa_card_info` describes it: its profiles and the one in use. Switching the profile
/// (Bluetooth A2DP to headset, analog to HDMI) removes the card's sinks and makes new ones.
package struct CardInfo: Sendable, Hashable {
    package var index: UInt32
    /// The stable name (`alsa_card.pci-0000_00_1f.3`, `bluez_card.00_11_22_33_44_55`).
    package var name: String
    /// What a person reads (`device.description`: "Built-in Audio").
    package var description: String
    package var profiles: [CardProfile]
    /// The profile in use (`pa_card_info.active_profile2`).
    package var activeProfileName: String?

    package init(
        index: UInt32, name: String, description: String, profiles: [CardProfile], activeProfileName: String? = nil
    ) {
        self.index = index
        self.name = name
        self.description = description
        self.profiles = profiles
        self.activeProfileName = activeProfileName
    }

    package var activeProfile: CardProfile? { profiles.first { $0.name == activeProfileName } }
}

/// One way a card can be used (`pa_card_profile_info2`): `output:analog-stereo`, `a2dp-sink`, `off`.
package struct CardProfile: Sendable, Hashable {
    package var name: String
    package var description: String
    /// How many sinks the card has in this profile (0: none, as for `off` or an input-only profile).
    package var sinks: UInt32
    package var priority: UInt32
    package var isAvailable: Bool

    package init(name: String, description: String, sinks: UInt32, priority: UInt32, isAvailable: Bool) {
        self.name = name
        self.description = description
        self.sinks = sinks
        self.priority = priority
        self.isAvailable = isAvailable
    }
}

/// One playing stream on the server (a PulseAudio sink input): ours, or another application's.
package struct SinkInput: Sendable, Hashable {
    package var index: UInt32
    /// The sink the stream plays on.
    package var sinkIndex: UInt32
    /// A corked stream is paused by its application.
    package var isCorked: Bool
    package var isMuted: Bool
    /// `application.name`.
    package var applicationName: String?
    /// `application.process.id`.
    package var processID: pid_t?
    /// `media.role` (`music`, `game`, `video`, ...).
    package var mediaRole: String?
    /// The stream's own name (`media.name`).
    package var mediaName: String?

    package init(
        index: UInt32, sinkIndex: UInt32, isCorked: Bool, isMuted: Bool, applicationName: String? = nil,
        processID: pid_t? = nil, mediaRole: String? = nil, mediaName: String? = nil
    ) {
        self.index = index
        self.sinkIndex = sinkIndex
        self.isCorked = isCorked
        self.isMuted = isMuted
        self.applicationName = applicationName
        self.processID = processID
        self.mediaRole = mediaRole
        self.mediaName = mediaName
    }

    package var isPlaying: Bool { !isCorked }
}

/// A change on the sound server, in the order the server reported it.
package enum PulseEvent: Sendable, Hashable {
    case sinkAdded(SinkInfo)
    /// Its description, state or mute changed.
    case sinkChanged(from: SinkInfo, to: SinkInfo)
    /// Carries the sink as it was (the server names only the index of a removed sink) and the streams the snapshot
    /// had on it then: the server moves them off before it reports the removal, but says where only afterwards.
    case sinkRemoved(SinkInfo, streams: [SinkInput])
    case defaultSinkChanged(from: String?, to: String?)
    case sinkInputAdded(SinkInput)
    /// It was corked or uncorked, muted, moved to another sink, or renamed.
    case sinkInputChanged(from: SinkInput, to: SinkInput)
    case sinkInputRemoved(SinkInput)
    case cardAdded(CardInfo)
    /// Its profile (or its description, or a profile's availability) changed.
    case cardChanged(from: CardInfo, to: CardInfo)
    case cardRemoved(CardInfo)
    /// The server went away. The monitor does not reconnect; the snapshot keeps its last contents.
    case connectionLost(String)
    /// The server asked the cork listener's stream to cork (`PA_STREAM_EVENT_REQUEST_CORK`: module-role-cork, when a
    /// stream of a trigger role such as `phone` appeared), and so the game's output, which has the same role.
    case corkRequested
    /// The server asked it to uncork (`PA_STREAM_EVENT_REQUEST_UNCORK`: the trigger stream went).
    case uncorkRequested
}

/// What the monitor knows about the server at one moment. Pure data: the updates below do no I/O.
package struct PulseSnapshot: Sendable, Equatable {
    package var sinksByIndex: [UInt32: SinkInfo] = [:]
    package var defaultSinkName: String?
    package var sinkInputsByIndex: [UInt32: SinkInput] = [:]
    package var cardsByIndex: [UInt32: CardInfo] = [:]
    package var isConnected = false
    /// The cork listener's own stream (PulseCorkListener.swift), once the server has it: corked, silent, never a
    /// stream the game plays on.
    package var corkListenerIndex: UInt32?

    package init() {}

    /// The name the cork listener's stream shows in `pactl list sink-inputs` and mixers (PulseCorkListener.swift
    /// names its stream so): how a snapshot tells another monitor's listener from a stream the game plays on.
    package static let corkStreamName = "Interruptions (silent)"

    package var sinks: [SinkInfo] { sinksByIndex.values.sorted { $0.index < $1.index } }
    package var sinkInputs: [SinkInput] { sinkInputsByIndex.values.sorted { $0.index < $1.index } }
    package var defaultSink: SinkInfo? { defaultSinkName.flatMap { sink(named: $0) } }

    package func sink(named name: String) -> SinkInfo? { sinksByIndex.values.first { $0.name == name } }

    /// Uncorked streams of every process except `pid`. Our own process may hold several streams (SDL's, and
    /// short-lived probe streams), so everything of `pid` is left out. Streams that do not name a process count.
    package func otherAppsPlaying(excludingPID pid: pid_t) -> [SinkInput] {
        sinkInputs.filter { $0.isPlaying && $0.processID != pid }
    }

    /// Whether `input` is a cork listener's silent stream: this monitor's, or another monitor's in the same process
    /// (a second engine), which the index alone does not tell.
    package func isCorkListener(_ input: SinkInput) -> Bool {
        input.index == corkListenerIndex || input.mediaName == Self.corkStreamName
    }

    /// The sink that process `pid` plays on: its newest uncorked stream's, else its newest stream's.
    package func sinkOfStream(pid: pid_t) -> SinkInfo? {
        let own = sinkInputs.filter { $0.processID == pid && !isCorkListener($0) }
        guard let stream = own.last(where: \.isPlaying) ?? own.last else { return nil }
        return sinksByIndex[stream.sinkIndex]
    }

    /// Where process `pid`'s audio plays once a sink has gone: the default sink, else the sink its stream is on,
    /// else any sink left. The server names its new default only after it reports the removal, so for a moment the
    /// default can be the sink that just went while others are still there.
    package func sinkAfterRemoval(pid: pid_t) -> SinkInfo? {
        defaultSink ?? sinkOfStream(pid: pid) ?? sinks.first
    }

    /// The streams `isWanted` picks that play on no sink: the server names none (PipeWire keeps a stream whose sink
    /// went, with no other left, on sink index `PA_INVALID_INDEX`), or one it no longer has.
    package func streamsOnNoSink(_ isWanted: (SinkInput) -> Bool) -> [SinkInput] {
        sinkInputs.filter { isWanted($0) && sinksByIndex[$0.sinkIndex] == nil }
    }

    package mutating func update(_ sink: SinkInfo) -> PulseEvent? {
        let old = sinksByIndex.updateValue(sink, forKey: sink.index)
        guard let old else { return .sinkAdded(sink) }
        return old == sink ? nil : .sinkChanged(from: old, to: sink)
    }

    package mutating func removeSink(index: UInt32) -> PulseEvent? {
        guard let sink = sinksByIndex.removeValue(forKey: index) else { return nil }
        return .sinkRemoved(sink, streams: sinkInputs.filter { $0.sinkIndex == index })
    }

    package mutating func update(_ input: SinkInput) -> PulseEvent? {
        let old = sinkInputsByIndex.updateValue(input, forKey: input.index)
        guard let old else { return .sinkInputAdded(input) }
        return old == input ? nil : .sinkInputChanged(from: old, to: input)
    }

    package mutating func removeSinkInput(index: UInt32) -> PulseEvent? {
        sinkInputsByIndex.removeValue(forKey: index).map { .sinkInputRemoved($0) }
    }

    /// The sinks of card `index` (after a profile switch: the ones that replaced the old).
    package func sinks(ofCard index: UInt32) -> [SinkInfo] { sinks.filter { $0.cardIndex == index } }

    package mutating func update(_ card: CardInfo) -> PulseEvent? {
        let old = cardsByIndex.updateValue(card, forKey: card.index)
        guard let old else { return .cardAdded(card) }
        return old == card ? nil : .cardChanged(from: old, to: card)
    }

    package mutating func removeCard(index: UInt32) -> PulseEvent? {
        cardsByIndex.removeValue(forKey: index).map { .cardRemoved($0) }
    }

    /// What PipeWire's PulseAudio server gives as the default sink's name while it has none: after the default
    /// sink went and before its session manager has chosen another, or with no sink at all. PulseAudio gives none.
    package static let noDefaultSinkName = "@DEFAULT_SINK@"

    package mutating func setDefaultSinkName(_ reported: String?) -> PulseEvent? {
        let name = reported == Self.noDefaultSinkName ? nil : reported
        guard name != defaultSinkName else { return nil }
        defer { defaultSinkName = name }
        return .defaultSinkChanged(from: defaultSinkName, to: name)
    }
}
