import Glibc

/// An output device of the sound server: a PulseAudio sink.
struct SinkInfo: Sendable, Hashable {
    enum State: String, Sendable, Hashable {
        case running, idle, suspended, unknown
    }

    /// The server's number for the sink, unique while the server runs.
    var index: UInt32
    /// The stable name (`speakers`, `alsa_output.pci-0000_00_1f.3.analog-stereo`).
    var name: String
    /// What a person reads ("Speakers").
    var description: String
    var state: State
    var isMuted: Bool
    /// Its outputs (`pa_sink_info.ports`): the jacks and speakers of a sound card. Null sinks and most Bluetooth
    /// and USB sinks have none.
    var ports: [SinkPort] = []
    /// The name of the port in use (`pa_sink_info.active_port`), nil when the sink has no ports.
    var activePortName: String?
    /// The sound card the sink belongs to (`pa_sink_info.card`), nil for sinks of no card (null sinks, most virtual
    /// ones). A card's profile switch replaces its sinks: the new one has the same card.
    var cardIndex: UInt32? = nil

    var activePort: SinkPort? { activePortName.flatMap(port(named:)) }
    func port(named name: String) -> SinkPort? { ports.first { $0.name == name } }

    /// What a person calls this output: the active port and its sink ("Headphones (Built-in Audio)"), else the sink.
    var routeName: String { activePort.map { "\($0.description) (\(description))" } ?? description }
}

/// One output of a sink, as libpulse's `pa_sink_port_info` describes it.
struct SinkPort: Sendable, Hashable {
    /// `pa_port_available`: whether something is plugged in, when the card can tell.
    enum Availability: String, Sendable, Hashable {
        case unknown, no, yes
    }

    /// The stable name (`analog-output-headphones`).
    var name: String
    /// What a person reads ("Headphones").
    var description: String
    /// Higher is a better default.
    var priority: UInt32
    var availability: Availability
}

/// A sound card, as libpulse's `pa_card_info` describes it: its profiles and the one in use. Switching the profile
/// (Bluetooth A2DP to headset, analog to HDMI) removes the card's sinks and makes new ones.
struct CardInfo: Sendable, Hashable {
    var index: UInt32
    /// The stable name (`alsa_card.pci-0000_00_1f.3`, `bluez_card.00_11_22_33_44_55`).
    var name: String
    /// What a person reads (`device.description`: "Built-in Audio").
    var description: String
    var profiles: [CardProfile]
    /// The profile in use (`pa_card_info.active_profile2`).
    var activeProfileName: String?

    var activeProfile: CardProfile? { profiles.first { $0.name == activeProfileName } }
}

/// One way a card can be used (`pa_card_profile_info2`): `output:analog-stereo`, `a2dp-sink`, `off`.
struct CardProfile: Sendable, Hashable {
    var name: String
    var description: String
    /// How many sinks the card has in this profile (0: none, as for `off` or an input-only profile).
    var sinks: UInt32
    var priority: UInt32
    var isAvailable: Bool
}

/// One playing stream on the server (a PulseAudio sink input): ours, or another application's.
struct SinkInput: Sendable, Hashable {
    var index: UInt32
    /// The sink the stream plays on.
    var sinkIndex: UInt32
    /// A corked stream is paused by its application.
    var isCorked: Bool
    var isMuted: Bool
    /// `application.name`.
    var applicationName: String?
    /// `application.process.id`.
    var processID: pid_t?
    /// `media.role` (`music`, `game`, `video`, ...).
    var mediaRole: String?
    /// The stream's own name (`media.name`).
    var mediaName: String?

    var isPlaying: Bool { !isCorked }
}

/// A change on the sound server, in the order the server reported it.
enum PulseEvent: Sendable, Hashable {
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
struct PulseSnapshot: Sendable, Equatable {
    var sinksByIndex: [UInt32: SinkInfo] = [:]
    var defaultSinkName: String?
    var sinkInputsByIndex: [UInt32: SinkInput] = [:]
    var cardsByIndex: [UInt32: CardInfo] = [:]
    var isConnected = false
    /// The cork listener's own stream (PulseCorkListener.swift), once the server has it: corked, silent, never a
    /// stream the game plays on.
    var corkListenerIndex: UInt32?

    /// The name the cork listener's stream shows in `pactl list sink-inputs` and mixers (PulseCorkListener.swift
    /// names its stream so): how a snapshot tells another monitor's listener from a stream the game plays on.
    static let corkStreamName = "Interruptions (silent)"

    var sinks: [SinkInfo] { sinksByIndex.values.sorted { $0.index < $1.index } }
    var sinkInputs: [SinkInput] { sinkInputsByIndex.values.sorted { $0.index < $1.index } }
    var defaultSink: SinkInfo? { defaultSinkName.flatMap { sink(named: $0) } }

    func sink(named name: String) -> SinkInfo? { sinksByIndex.values.first { $0.name == name } }

    /// Uncorked streams of every process except `pid`. Our own process may hold several streams (SDL's, and
    /// short-lived probe streams), so everything of `pid` is left out. Streams that do not name a process count.
    func otherAppsPlaying(excludingPID pid: pid_t) -> [SinkInput] {
        sinkInputs.filter { $0.isPlaying && $0.processID != pid }
    }

    /// Whether `input` is a cork listener's silent stream: this monitor's, or another monitor's in the same process
    /// (a second engine), which the index alone does not tell.
    func isCorkListener(_ input: SinkInput) -> Bool {
        input.index == corkListenerIndex || input.mediaName == Self.corkStreamName
    }

    /// The sink that process `pid` plays on: its newest uncorked stream's, else its newest stream's.
    func sinkOfStream(pid: pid_t) -> SinkInfo? {
        let own = sinkInputs.filter { $0.processID == pid && !isCorkListener($0) }
        guard let stream = own.last(where: \.isPlaying) ?? own.last else { return nil }
        return sinksByIndex[stream.sinkIndex]
    }

    /// Where process `pid`'s audio plays once a sink has gone: the default sink, else the sink its stream is on,
    /// else any sink left. The server names its new default only after it reports the removal, so for a moment the
    /// default can be the sink that just went while others are still there.
    func sinkAfterRemoval(pid: pid_t) -> SinkInfo? {
        defaultSink ?? sinkOfStream(pid: pid) ?? sinks.first
    }

    /// The streams `isWanted` picks that play on no sink: the server names none (PipeWire keeps a stream whose sink
    /// went, with no other left, on sink index `PA_INVALID_INDEX`), or one it no longer has.
    func streamsOnNoSink(_ isWanted: (SinkInput) -> Bool) -> [SinkInput] {
        sinkInputs.filter { isWanted($0) && sinksByIndex[$0.sinkIndex] == nil }
    }

    mutating func update(_ sink: SinkInfo) -> PulseEvent? {
        let old = sinksByIndex.updateValue(sink, forKey: sink.index)
        guard let old else { return .sinkAdded(sink) }
        return old == sink ? nil : .sinkChanged(from: old, to: sink)
    }

    mutating func removeSink(index: UInt32) -> PulseEvent? {
        guard let sink = sinksByIndex.removeValue(forKey: index) else { return nil }
        return .sinkRemoved(sink, streams: sinkInputs.filter { $0.sinkIndex == index })
    }

    mutating func update(_ input: SinkInput) -> PulseEvent? {
        let old = sinkInputsByIndex.updateValue(input, forKey: input.index)
        guard let old else { return .sinkInputAdded(input) }
        return old == input ? nil : .sinkInputChanged(from: old, to: input)
    }

    mutating func removeSinkInput(index: UInt32) -> PulseEvent? {
        sinkInputsByIndex.removeValue(forKey: index).map { .sinkInputRemoved($0) }
    }

    /// The sinks of card `index` (after a profile switch: the ones that replaced the old).
    func sinks(ofCard index: UInt32) -> [SinkInfo] { sinks.filter { $0.cardIndex == index } }

    mutating func update(_ card: CardInfo) -> PulseEvent? {
        let old = cardsByIndex.updateValue(card, forKey: card.index)
        guard let old else { return .cardAdded(card) }
        return old == card ? nil : .cardChanged(from: old, to: card)
    }

    mutating func removeCard(index: UInt32) -> PulseEvent? {
        cardsByIndex.removeValue(forKey: index).map { .cardRemoved($0) }
    }

    /// What PipeWire's PulseAudio server gives as the default sink's name while it has none: after the default
    /// sink went and before its session manager has chosen another, or with no sink at all. PulseAudio gives none.
    static let noDefaultSinkName = "@DEFAULT_SINK@"

    mutating func setDefaultSinkName(_ reported: String?) -> PulseEvent? {
        let name = reported == Self.noDefaultSinkName ? nil : reported
        guard name != defaultSinkName else { return nil }
        defer { defaultSinkName = name }
        return .defaultSinkChanged(from: defaultSinkName, to: name)
    }
}
