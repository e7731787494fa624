import Ambience
import AmbienceHost
import AmbiencePlatform

/// What a run did: the sounds it played, the voices, the music, the session, and how long `engine.update()` took.
public struct RunSummary: Sendable {
    public var mode: String
    public var seconds: Double
    public var frames: Int
    public var seed: UInt64
    /// Sounds started, by kind (the thrust loop counts once per start).
    public var sfx: [SoundKind: Int]
    /// One-shots in order, with the frame whose audio block they start in.
    public var sfxLog: [SoundStart]
    public var peakVoices: Int
    public var ambientVoices: Int
    public var nowPlaying: String
    public var playbackState: PlaybackState
    public var sessionEvents: [SessionNotification]
    public var category: SessionCategory
    public var update: FrameTiming
    public var render: FrameTiming
    public var score: Int
    public var deaths: Int
    public var recorded: String?
    public var recordedFrames: Int64
    public var screenshot: String?
    public var audioDriver: String
    public var videoDriver: String?
    /// The HUD's buttons at the end, as drawn (in the user's language), "(off)" after a disabled one.
    public var buttons: [String] = []
    /// The screenshots a `--at` script took.
    public var screenshots: [String] = []

    public struct SoundStart: Sendable, Equatable {
        public var frame: Int
        /// Seconds of game time when its frame began: where it starts in a headless recording.
        public var time: Double
        public var kind: SoundKind
    }

    /// One-shot effects (everything but the engine loop).
    public var oneShots: Int { sfx.filter { $0.key != .thrust }.values.reduce(0, +) }

    /// The issue's target: at most 0.2 ms on average inside `engine.update()` per frame.
    public static let updateTargetMilliseconds = 0.2

    /// The first line of `text`. Like every line of it, it shows the text from outside (the music's tags, file
    /// names, the buttons' translations) through `TerminalText`, so none of it acts on the terminal or starts a line.
    public var summaryLine: String {
        let kinds = sfx.keys.sorted().filter { $0 != .thrust }.map { "\($0.rawValue) \(sfx[$0]!)" }.joined(
            separator: ", ")
        let events = sessionEvents.isEmpty ? "none" : sessionEvents.map(Self.describe).joined(separator: ", ")
        return
            "gravity-wave: \(Self.fixed(seconds, 1)) s \(mode) (\(frames) frames, seed \(seed)): \(oneShots) SFX (\(kinds.isEmpty ? "none" : kinds))"
            + "\(sfx[.thrust].map { " + thrust loop ×\($0)" } ?? ""), peak voices \(peakVoices), \(shown(nowPlaying)), "
            + "session events: \(events), engine.update() \(Self.fixed(update.averageMilliseconds, 4)) ms avg / "
            + "\(Self.fixed(update.maxMilliseconds, 3)) ms max per frame"
    }

    public var text: String {
        var lines = [summaryLine]
        let kinds = sfx.keys.sorted().map { "\($0.rawValue) \(sfx[$0]!)" }.joined(separator: ", ")
        lines.append("  sfx        \(kinds.isEmpty ? "none" : kinds)")
        if !sfxLog.isEmpty {
            let shown = sfxLog.prefix(40).map { "\(Self.fixed($0.time, 2)) \($0.kind.rawValue)" }.joined(
                separator: ", ")
            lines.append("  timeline   \(shown)\(sfxLog.count > 40 ? ", …" : "") (seconds: when each one-shot starts)")
        }
        lines.append(
            "  voices     peak \(peakVoices)"
                + (ambientVoices > 0 ? " (with \(ambientVoices) ambient voices kept going)" : ""))
        lines.append("  music      \(shown(nowPlaying)) (\(playbackState.rawValue))")
        lines.append("  buttons    " + buttons.map { "[\(shown($0))]" }.joined(separator: " "))
        lines.append(
            "  session    \(category.rawValue); \(sessionEvents.count) event\(sessionEvents.count == 1 ? "" : "s")"
                + (sessionEvents.isEmpty ? "" : ": " + sessionEvents.map(Self.describe).joined(separator: ", ")))
        let verdict = update.averageMilliseconds <= Self.updateTargetMilliseconds ? "within" : "over"
        lines.append(
            "  pacing     engine.update() avg \(Self.fixed(update.averageMilliseconds, 4)) ms, max \(Self.fixed(update.maxMilliseconds, 3)) ms "
                + "over \(update.count) frames (\(verdict) the \(Self.updateTargetMilliseconds) ms target)"
                + (render.count > 0
                    ? "; offline render avg \(Self.fixed(render.averageMilliseconds, 3)) ms per frame" : ""))
        lines.append("  game       score \(score), crashes \(deaths)")
        lines.append("  output     audio \(audioDriver)" + (videoDriver.map { ", video \($0)" } ?? ""))
        if let recorded {
            lines.append(
                "  recorded   \(shown(recorded)) (\(Self.fixed(Double(recordedFrames) / 48_000, 2)) s, 48000 Hz stereo 16-bit)"
            )
        }
        if let screenshot { lines.append("  screenshot \(shown(screenshot))") }
        for shot in screenshots { lines.append("  screenshot \(shown(shot))") }
        return lines.joined(separator: "\n")
    }

    private func shown(_ text: String) -> String { TerminalText.shown(text) }

    static func describe(_ note: SessionNotification) -> String {
        switch note {
        case .routeChange(let change): "routeChange(\(change.reason.rawValue))"
        case .interruption(.began): "interruption(began)"
        case .interruption(.ended(let resume)): "interruption(ended\(resume ? ", shouldResume" : ""))"
        case .silenceSecondaryAudioHint(let on): "silenceSecondaryAudioHint(\(on))"
        case .categoryChanged(let category): "categoryChanged(\(category.rawValue))"
        case .mediaServicesWereLost(let service): "mediaServicesWereLost(\(service.rawValue))"
        case .mediaServicesWereReset(let service): "mediaServicesWereReset(\(service.rawValue))"
        }
    }

    static func fixed(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int((value * scale).rounded())
        let whole = scaled / Int(scale), fraction = String(scaled % Int(scale))
        return digits == 0
            ? "\(whole)" : "\(whole).\(String(repeating: "0", count: digits - fraction.count))\(fraction)"
    }
}
