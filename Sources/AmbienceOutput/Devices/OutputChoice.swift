import AmbiencePlatform

/// An open real-time output: an SDL audio device (SDLAudioDevice.swift) or the engine's own libpulse stream
/// (PulseOutputStream.swift). `DeviceOutput` holds one at a time.
protocol OutputDevice: AnyObject, Sendable {
    /// The sound system the audio goes to (`pulseaudio`, `pipewire`, `alsa`, `dummy`).
    var driver: String { get }
    /// The device as the user knows it (a sink's description).
    var deviceName: String { get }
    /// Whether it still plays: false once its server or the device went.
    var isAlive: Bool { get }
    /// Which code carries the mix to it.
    var backend: OutputBackend { get }
    /// Runs `body` while no block is being rendered.
    func withCallbackLocked(_ body: () -> Bool) -> Bool
    /// Stops rendering and lets the device go; bounded, safe to call twice.
    func close()
    /// The thread that renders blocks, and the priority asked for it.
    var audioThread: AudioThreadRaise { get }
}

extension SDLAudioDevice: OutputDevice {
    var backend: OutputBackend { .sdl }
}

extension PulseOutputStream: OutputDevice {
    /// The stream is on a PulseAudio server (pipewire-pulse says so too): routes name it as SDL's driver does.
    var driver: String { "pulseaudio" }
    var backend: OutputBackend { .libpulse }
}

extension OutputBackend {
    /// The backends to try, in order, for `configured`. `.automatic` is libpulse, then SDL when no PulseAudio server
    /// answers or libpulse is missing; but SDL alone when `SDL_AUDIODRIVER` names a driver (the user chose one of
    /// SDL's). `AMBIENCE_OUTPUT` decides before that: `sdl` is SDL alone, `libpulse` is libpulse then SDL even with
    /// `SDL_AUDIODRIVER` set (how the test suites run on the libpulse output).
    static func candidates(
        for configured: Self, environment: (String) -> String? = ProcessEnvironment.value
    ) -> [Self] {
        switch configured {
        case .sdl: return [.sdl]
        case .libpulse: return [.libpulse]
        case .automatic:
            switch environment("AMBIENCE_OUTPUT").flatMap(Self.init(rawValue:)) {
            case .sdl: return [.sdl]
            case .libpulse: return [.libpulse, .sdl]
            case .automatic, nil: break
            }
            if let driver = environment("SDL_AUDIODRIVER"), !driver.isEmpty { return [.sdl] }
            return [.libpulse, .sdl]
        }
    }
}

/// How deep the libpulse output's server buffer is, in mix blocks (periods). Chosen by measurement (README,
/// "Small periods"); `AMBIENCE_PULSE_BUFFER` (`tlength=3,minreq=1,prebuf=1,adjust=0`) overrides it, for the bench.
package struct PulseBuffering: Sendable, Equatable, CustomStringConvertible {
    /// `tlength`: what the server keeps queued for us.
    package var targetBlocks: Int
    /// `minreq`: the least the server asks for at a time; 0 lets the server choose.
    package var requestBlocks: Int
    /// `prebuf`: what must be queued before playback starts, and again after the stream ran dry (0: never stop).
    package var prebufferBlocks: Int
    /// `PA_STREAM_ADJUST_LATENCY`: the server sets the sink's latency from `tlength` instead of queueing on top of it.
    package var adjustLatency: Bool

    package init(targetBlocks: Int, requestBlocks: Int, prebufferBlocks: Int, adjustLatency: Bool) {
        self.targetBlocks = targetBlocks
        self.requestBlocks = requestBlocks
        self.prebufferBlocks = prebufferBlocks
        self.adjustLatency = adjustLatency
    }

    /// The measured choice.
    package static let chosen = PulseBuffering(
        targetBlocks: 2, requestBlocks: 1, prebufferBlocks: 1, adjustLatency: true)

    /// `AMBIENCE_PULSE_BUFFER` over `chosen`; a malformed value is logged and ignored.
    package static var configured: PulseBuffering {
        guard let text = ProcessEnvironment.value("AMBIENCE_PULSE_BUFFER"), !text.isEmpty else { return chosen }
        guard let parsed = PulseBuffering(parsing: text) else {
            Log.warning("output: AMBIENCE_PULSE_BUFFER '\(text)' is not tlength=N,minreq=N,prebuf=N,adjust=0|1")
            return chosen
        }
        return parsed
    }

    /// Reads `tlength=N,minreq=N,prebuf=N,adjust=0|1` (blocks; any subset, the rest from `chosen`); nil when a key
    /// or number is wrong. Blocks are 1–64 (`minreq` and `prebuf` 0–64).
    package init?(parsing text: String) {
        self = Self.chosen
        for field in text.split(separator: ",") {
            let parts = field.split(separator: "=", maxSplits: 1).map { String($0.filter { $0 != " " }) }
            guard parts.count == 2, let number = Int(parts[1]), (0...64).contains(number) else { return nil }
            switch parts[0] {
            case "tlength" where number >= 1: targetBlocks = number
            case "minreq": requestBlocks = number
            case "prebuf": prebufferBlocks = number
            case "adjust" where number <= 1: adjustLatency = number == 1
            default: return nil
            }
        }
    }

    package var description: String {
        "tlength=\(targetBlocks),minreq=\(requestBlocks),prebuf=\(prebufferBlocks),adjust=\(adjustLatency ? 1 : 0)"
    }
}
