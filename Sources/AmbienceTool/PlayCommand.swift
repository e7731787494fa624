import Ambience
import AmbienceDecoding
import AmbiencePlatform
import Glibc

struct PlayCommand: Command {
    static let name = "play"
    static let usage = """
        play FILE... [--category ambient|solo-ambient|playback] [--loudness off|track|album|automatic] [--events-json] [--seconds S]
                                            real-time playback through the default device, with session rules
          --category     the session category (default solo-ambient)
          --loudness     loudness matching at -18 LUFS from ReplayGain/R128 tags (default off); files without tags
                         play as they are (a library's analysis covers those)
          --events-json  one JSON object per line on stdout for every event (route changes, interruptions, state)
          --seconds      stop after S seconds (default: when the queue ends)
        On a terminal: space pauses, n next, p previous, r resumes after a route change, q quits.
        Otherwise stdin takes one command per line: play, pause, next, previous, resume, interrupt, end-interruption,
        background, foreground, quit.
        """

    static func run(_ arguments: inout Arguments) throws {
        let json = arguments.flag("--events-json")
        let seconds = try arguments.duration("--seconds")
        let categoryName = try arguments.option("--category") ?? "solo-ambient"
        let categories: [String: SessionCategory] = [
            "ambient": .ambient, "solo-ambient": .soloAmbient, "playback": .playback
        ]
        guard let category = categories[categoryName] else {
            throw UsageError("--category must be ambient, solo-ambient or playback")
        }
        let loudnessName = try arguments.option("--loudness") ?? "off"
        guard let loudness = LoudnessMatching(rawValue: loudnessName) else {
            throw UsageError("--loudness must be off, track, album or automatic")
        }
        let files = try arguments.finish()
        guard !files.isEmpty else { throw UsageError("play needs at least one FILE") }
        for file in files { _ = try AudioFile.info(file) }

        let engine = try AudioEngine(EngineConfiguration(output: .device(), appName: "ambience"))
        defer { engine.shutdown() }
        engine.session.setCategory(category)
        engine.session.setActive(true)
        let player = engine.musicPlayer
        player.loudnessMatching = loudness
        player.beginGeneratingPlaybackNotifications()
        try player.setQueue(paths: files)
        player.play()
        let report = EventReporter(json: json)
        report.started(driver: engine.outputDriver, route: engine.session.currentRoute, category: category)

        let input = LineInput()
        let start = Double(monotonicNanoseconds()) / 1e9
        var ended = false
        // Output that can no longer be written ends the command too: Tool.run reports it.
        while !Interrupt.requested && !ended && !Output.failed {
            for event in engine.update() {
                report.event(event)
                if case .music(.nowPlayingItemDidChange(nil)) = event, player.playbackState == .stopped { ended = true }
            }
            if let seconds, Double(monotonicNanoseconds()) / 1e9 - start >= seconds { break }
            for command in input.poll() {
                switch command {
                case "play": player.play()
                case "pause": player.pause()
                case " ": player.playbackState == .playing ? player.pause() : player.play()
                case "next", "n": player.skipToNextItem()
                case "previous", "p": player.skipToPreviousItem()
                case "resume", "r": engine.session.resumeAfterRouteChange()
                case "interrupt": engine.session.beginInterruption()
                case "end-interruption": engine.session.endInterruption()
                case "background": engine.session.enterBackground()
                case "foreground": engine.session.enterForeground()
                case "quit", "q": ended = true
                default: report.note("unknown command '\(command)'")
                }
            }
            report.progress(player)
            sleepUntil(monotonicNanoseconds: monotonicNanoseconds() + 16_000_000)
        }
        engine.session.setActive(false, options: .notifyOthersOnDeactivation)
        let stats = engine.stats
        report.stopped(
            underruns: stats.underruns, voices: stats.realVoices + stats.virtualVoices,
            residentBytes: ProcessUsage.residentBytes)
    }
}

/// Prints what happens: JSON lines for scripts, or a status line for people.
final class EventReporter {
    let json: Bool
    let terminal = StandardStream.output.isTerminal
    private var lastLine = ""

    init(json: Bool) { self.json = json }

    func emit(_ object: JSON) {
        Output.print(object.text)
        StandardStream.flushBuffered()
    }

    func started(driver: String, route: AudioRoute, category: SessionCategory) {
        if json {
            emit(
                .object([
                    ("event", .string("started")), ("driver", .string(driver)), ("route", .string(route.description)),
                    ("category", .string(category.rawValue)), ("residentBytes", .int(ProcessUsage.residentBytes))
                ]))
        } else {
            Output.line("playing through \(route) (\(driver)), category \(category.rawValue)")
        }
    }

    func note(_ text: String) {
        json ? emit(.object([("event", .string("note")), ("text", .string(text))])) : Output.line(text)
    }

    func event(_ event: AudioEvent) {
        guard let object = EventReporter.describe(event) else { return }
        if json { emit(object) } else { clearStatus(); Output.line(EventReporter.sentence(event)) }
    }

    func progress(_ player: MusicPlayer) {
        guard !json, terminal, let item = player.nowPlayingItem else { return }
        let time = player.currentPlaybackTime, length = max(item.playbackDuration, 0.001)
        let width = 30,
            filled = min(max((Double(width) * time / length).saturated(Int.self, rounding: .down), 0), width)
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let line =
            "\(item.title ?? "?") by \(item.artist ?? "unknown") [\(bar)] \(DurationText.format(time)) / \(DurationText.format(length)) \(player.playbackState.rawValue)"
        if line != lastLine {
            Output.print("\r\u{1B}[K" + TerminalText.shown(line), terminator: "")
            StandardStream.flushBuffered()
            lastLine = line
        }
    }

    func stopped(underruns: Int, voices: Int, residentBytes: Int) {
        if json {
            emit(
                .object([
                    ("event", .string("stopped")), ("underruns", .int(underruns)), ("voices", .int(voices)),
                    ("residentBytes", .int(residentBytes))
                ]))
        } else if terminal {
            Output.print("")
        }
    }

    private func clearStatus() {
        if terminal && !lastLine.isEmpty { Output.print("\r\u{1B}[K", terminator: ""); lastLine = "" }
    }

    static func describe(_ event: AudioEvent) -> JSON? {
        switch event {
        case .session(.routeChange(let change)):
            return .object([
                ("event", .string("routeChange")), ("reason", .string(change.reason.rawValue)),
                ("previous", .string(change.previous.description)), ("current", .string(change.current.description))
            ])
        case .session(.interruption(.began)):
            return .object([("event", .string("interruption")), ("type", .string("began"))])
        case .session(.interruption(.ended(let resume))):
            return .object([
                ("event", .string("interruption")), ("type", .string("ended")), ("shouldResume", .bool(resume))
            ])
        case .session(.silenceSecondaryAudioHint(let on)):
            return .object([("event", .string("silenceSecondaryAudioHint")), ("begin", .bool(on))])
        case .session(.categoryChanged(let category)):
            return .object([("event", .string("categoryChanged")), ("category", .string(category.rawValue))])
        case .session(.mediaServicesWereLost(let service)):
            return .object([("event", .string("mediaServicesWereLost")), ("service", .string(service.rawValue))])
        case .session(.mediaServicesWereReset(let service)):
            return .object([("event", .string("mediaServicesWereReset")), ("service", .string(service.rawValue))])
        case .music(.playbackStateDidChange(let state)):
            return .object([("event", .string("playbackState")), ("state", .string(state.rawValue))])
        case .music(.nowPlayingItemDidChange(let item)):
            return .object([
                ("event", .string("nowPlaying")), ("title", .optional(item?.title)),
                ("artist", .optional(item?.artist)),
                ("path", .optional(item?.url))
            ])
        case .music(.playbackError(let item, let error)):
            return .object([
                ("event", .string("playbackError")), ("path", .string(item.url)), ("error", .string(error.description))
            ])
        case .music(.volumeDidChange(let volume)):
            return .object([("event", .string("volume")), ("volume", .double(Double(volume)))])
        case .eventsDropped(let queue, let count):
            return .object([("event", .string("eventsDropped")), ("queue", .string(queue)), ("count", .int(count))])
        case .systemMusic(.commandFailed(let player, let command, let reason)):
            return .object([
                ("event", .string("commandFailed")), ("player", .string(player)), ("command", .string(command)),
                ("reason", .string(reason.description))
            ])
        case .music(.queueDidChange), .music(.commandFailed), .voiceFinished, .voiceStolen, .systemMusic, .library:
            return nil
        }
    }

    static func sentence(_ event: AudioEvent) -> String {
        switch event {
        case .session(.routeChange(let c)): "route change: \(c.reason.rawValue), \(c.previous) -> \(c.current)"
        case .session(.interruption(.began)): "interruption began"
        case .session(.interruption(.ended(let r))): "interruption ended" + (r ? ", resuming" : "")
        case .session(.silenceSecondaryAudioHint(let on)):
            on ? "other music started: the soundtrack should stay quiet" : "other music stopped"
        case .session(.categoryChanged(let c)): "category: \(c.rawValue)"
        case .session(.mediaServicesWereLost(.soundServer)): "the sound server went away"
        case .session(.mediaServicesWereReset(.soundServer)): "the sound server is back"
        case .session(.mediaServicesWereLost(.sessionBus)): "the session bus went away"
        case .session(.mediaServicesWereReset(.sessionBus)): "the session bus is back"
        case .music(.playbackStateDidChange(let s)): "state: \(s.rawValue)"
        case .music(.nowPlayingItemDidChange(let item)):
            "now playing: " + (item.map { "\($0.title ?? "?") by \($0.artist ?? "unknown")" } ?? "nothing")
        case .music(.playbackError(let item, let error)): "skipped \(item.url): \(error)"
        case .eventsDropped(let queue, let count): "warning: the \(queue) queue was full and lost \(count) events"
        default: EventReporter.describe(event)?.text ?? ""
        }
    }
}

/// Commands typed at a terminal (single keys) or piped in (one per line), read without blocking.
final class LineInput {
    private let keys = KeyboardInput()
    private var pending: [UInt8] = []
    private var closed = false

    func poll() -> [String] {
        guard !closed else { return [] }
        guard let got = keys.read() else {
            closed = true
            return []
        }
        if keys.isTerminal { return got.map { String(UnicodeScalar($0)) } }
        pending += got
        var lines: [String] = []
        while let newline = pending.firstIndex(of: 10) {
            lines.append(String(decoding: pending[..<newline], as: UTF8.self).trimmingCharacters(in: " \r\t"))
            pending.removeSubrange(...newline)
        }
        return lines.filter { !$0.isEmpty }
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var scalars = Substring(self)
        while let first = scalars.first, set.contains(first) { scalars.removeFirst() }
        while let last = scalars.last, set.contains(last) { scalars.removeLast() }
        return String(scalars)
    }
}
