import Ambience
import AmbiencePlatform
import Foundation
import Synchronization

/// The systems `bench --latency` times from the call to the click at the sink's monitor.
public enum LatencySystem: String, CaseIterable, Sendable {
    /// A libpulse stream holding one period, written directly: what the server and the recorder add (the floor).
    case pulse
    /// `AudioEngine.play` through the engine's device output on its own libpulse stream.
    case ambience
    /// `AudioEngine.play` through the engine's SDL output (SDL2 on its pulseaudio driver), the only output before the
    /// libpulse one.
    case ambienceSDL
    /// `alSourcePlay` on OpenAL Soft's own PulseAudio backend, its period set in `ALSOFT_CONF`.
    case openal
    /// `Mix_PlayChannel` on SDL_mixer 2.6, SDL's pulseaudio driver, chunks of one period.
    case sdlMixer

    public var title: String {
        switch self {
        case .pulse: "libpulse direct"
        case .ambience: "Ambience (libpulse)"
        case .ambienceSDL: "Ambience (SDL)"
        case .openal: "raw OpenAL Soft"
        case .sdlMixer: "SDL_mixer"
        }
    }
}

/// What one client run did: when it made each call (monotonic nanoseconds), and its callbacks.
public struct LatencyClientResult: Sendable {
    public var triggers: [Int] = []
    /// Callbacks (or writes) the client saw, and those that came late; nil where the system cannot tell.
    public var callbacks = 0
    public var lateCallbacks: Int? = 0
    public var driver = ""

    /// Lines the child prints for the parent: `driver …`, `callbacks N`, `late N|none`, then `trigger NS` per click.
    public var lines: [String] {
        ["driver \(driver)", "callbacks \(callbacks)", "late \(lateCallbacks.map(String.init) ?? "none")"]
            + triggers.map { "trigger \($0)" }
    }

    /// Reads `lines` back; nil if they are not that shape.
    public init?(lines text: String) {
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return nil }
            switch parts[0] {
            case "driver": driver = parts[1]
            case "callbacks": guard let n = Int(parts[1]) else { return nil }; callbacks = n
            case "late":
                if parts[1] == "none" {
                    lateCallbacks = nil
                } else {
                    guard let n = Int(parts[1]) else { return nil }; lateCallbacks = n
                }
            case "trigger": guard let t = Int(parts[1]) else { return nil }; triggers.append(t)
            default: return nil
            }
        }
    }

    public init(driver: String) { self.driver = driver }
}

/// One system at one period.
public struct LatencyRow: Sendable {
    public var system: LatencySystem
    public var periodFrames: Int
    public var driver = ""
    public var clicks = 0
    /// Clicks heard at the monitor, and those not (no onset within a second of the call).
    public var found = 0
    public var missed = 0
    /// Trigger-to-sound delay, in milliseconds.
    public var delay: Percentiles? = nil
    public var delaysMilliseconds: [Double] = []
    public var callbacks = 0
    public var lateCallbacks: Int? = nil
    /// Underflows of the stream as the server logged them; nil where its log was not given or not readable.
    public var serverUnderflows: Int? = nil
    public var error: String? = nil
}

public struct LatencyOptions: Sendable {
    public var periods: [Int]
    public var systems: [LatencySystem]
    public var clicks: Int
    /// Gaps between clicks are drawn uniformly from this range, so calls land at every phase of the period.
    public var minimumGapMilliseconds: Double
    public var maximumGapMilliseconds: Double
    public var sampleRate: Int
    /// The sound server's log (PulseAudio at `--log-level=debug`), whose underrun lines are counted per run.
    public var serverLog: String?
    /// The `ambience` executable that runs each client (default: this one).
    public var executable: String

    public init(
        periods: [Int] = [128, 256, 512, 1024], systems: [LatencySystem] = LatencySystem.allCases, clicks: Int = 200,
        minimumGapMilliseconds: Double = 100, maximumGapMilliseconds: Double = 150, sampleRate: Int = 48_000,
        serverLog: String? = nil, executable: String = "/proc/self/exe"
    ) {
        self.periods = periods
        self.systems = systems
        self.clicks = clicks
        self.minimumGapMilliseconds = minimumGapMilliseconds
        self.maximumGapMilliseconds = maximumGapMilliseconds
        self.sampleRate = sampleRate
        self.serverLog = serverLog
        self.executable = executable
    }
}

public struct LatencyReport: Sendable {
    public var rows: [LatencyRow] = []
    public var server = ""
    public var cancelled = false

    public func row(_ system: LatencySystem, period: Int) -> LatencyRow? {
        rows.first { $0.system == system && $0.periodFrames == period }
    }

    /// Ambience's p99 minus the faster peer's (raw OpenAL Soft, SDL_mixer) at `period`, in milliseconds: the issue's
    /// target is at most 1 ms.
    public func ambienceP99OverFasterPeer(period: Int) -> Double? {
        guard let ours = row(.ambience, period: period)?.delay?.p99 else { return nil }
        let peers = [LatencySystem.openal, .sdlMixer].compactMap { row($0, period: period)?.delay?.p99 }
        guard let fastest = peers.min() else { return nil }
        return ours - fastest
    }
}

/// The child side of `bench --latency`: one system plays the clicks on the schedule and says when it called.
public enum LatencyClient {
    /// How long a client keeps its stream open after the last click, so that the click reaches the monitor.
    static let tailNanoseconds = 600_000_000
    /// How long after the stream opens the first click comes, so that the stream has settled.
    static let leadNanoseconds = 1_000_000_000

    /// A 2 ms click at 48 kHz: a 3 kHz tone that starts at its peak (0.8) and dies away, so that its onset is its
    /// first frame.
    public static func click(sampleRate: Int) -> [Float] {
        let frames = max(sampleRate / 500, 1)
        return (0..<frames).map { i in
            let t = Double(i) / Double(sampleRate)
            return Float(0.8 * cos(2 * .pi * 3_000 * t) * exp(-t / 0.0005))
        }
    }

    /// Call times for `clicks` clicks from `start`, with seeded gaps in `gaps` (nanoseconds).
    public static func schedule(clicks: Int, start: Int, gaps: ClosedRange<Int>, seed: UInt64) -> [Int] {
        var rng = SplitMix64(seed: seed)
        var at = start
        return (0..<max(clicks, 0)).map { _ in
            at += Int.random(in: gaps, using: &rng)
            return at
        }
    }

    public static func run(
        _ system: LatencySystem, periodFrames: Int, sampleRate: Int, clicks: Int, gaps: ClosedRange<Int>,
        seed: UInt64
    ) throws(BenchError) -> LatencyClientResult {
        let click = click(sampleRate: sampleRate)
        func plan() -> [Int] {
            schedule(clicks: clicks, start: monotonicNanoseconds() + leadNanoseconds, gaps: gaps, seed: seed)
        }
        switch system {
        case .pulse:
            return try DirectPulseClient.run(
                periodFrames: periodFrames, sampleRate: sampleRate, click: click, plan: plan)
        case .openal:
            return try RawOpenAL.latencyClient(sampleRate: sampleRate, click: click, plan: plan)
        case .sdlMixer:
            return try SDLMixer.latencyClient(
                periodFrames: periodFrames, sampleRate: sampleRate, click: click, plan: plan)
        case .ambience:
            return try ambience(
                periodFrames: periodFrames, sampleRate: sampleRate, backend: .libpulse, click: click, plan: plan)
        case .ambienceSDL:
            return try ambience(
                periodFrames: periodFrames, sampleRate: sampleRate, backend: .sdl, click: click, plan: plan)
        }
    }

    /// The engine on its device output (`backend`: its libpulse stream, or SDL's pulseaudio driver), blocks of one
    /// period; the game thread calls `update()` at 60 Hz between clicks, as a game does.
    static func ambience(
        periodFrames: Int, sampleRate: Int, backend: EngineConfiguration.OutputBackend, click: [Float],
        plan: () -> [Int]
    ) throws(BenchError) -> LatencyClientResult {
        var configuration = EngineConfiguration(output: .device(), sampleRate: sampleRate, blockFrames: periodFrames)
        configuration.outputBackend = backend
        configuration.desktopIntegration = false
        configuration.handlesTerminationSignals = false
        let engine: AudioEngine
        let sound: Sound
        do {
            engine = try AudioEngine(configuration)
            sound = try engine.makeSound(PCMBuffer(sampleRate: sampleRate, channels: 1, samples: click), name: "click")
        } catch {
            throw .engine(error)
        }
        defer { engine.shutdown() }
        guard engine.outputDriver == "pulseaudio" else {
            throw .latency("the engine's output is on '\(engine.outputDriver)', not pulseaudio")
        }
        var result = LatencyClientResult(
            driver: "Ambience on \(engine.outputBackend?.rawValue ?? "nothing") \(engine.outputDriver)")
        let frame = 16_666_667
        for due in plan() {
            // The game loop's frames until the click is due, then the call on time.
            while monotonicNanoseconds() + frame < due {
                sleepUntil(monotonicNanoseconds: monotonicNanoseconds() + frame)
                _ = engine.update()
            }
            sleepUntil(monotonicNanoseconds: due)
            let now = monotonicNanoseconds()
            _ = engine.play(sound, PlayOptions(gain: 1))
            result.triggers.append(now)
        }
        sleepUntil(monotonicNanoseconds: monotonicNanoseconds() + tailNanoseconds)
        _ = engine.update()
        let stats = engine.stats
        result.callbacks = stats.renderedBlocks
        result.lateCallbacks = stats.underruns
        return result
    }
}
