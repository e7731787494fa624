import Ambience
import AmbienceBench
import AmbiencePlatform

struct StressCommand: Command {
    static let name = "stress"
    static let usage = """
        stress --voices N --seconds S [--real R] [--json] [--hdr | --realtime [--period F] [--chaos]]
        stress --soak [--seconds S] [--voices N] [--json]
                                            the headless voice stress test: N 3D voices, R of them real
          --voices    voices in the crowd (70% looping; one-shots start again when they finish)
          --seconds   seconds of audio to render (offline), or to run for (--realtime)
          --real      voices mixed for real by OpenAL sources, 1 to 4096 (default 256); the rest are virtual
          --json      one JSON object with keys voices, realVoices, virtualVoices, seconds, cpuSeconds, rtf,
                      playCallNs, peakRSSBytes, underruns (then extra keys)
          --hdr       the crowd under an HDR window (40 dB wide) on sfx, and every 2 s a loud event 24 dB above
                      it that lifts the window and culls the crowd under its bottom (docs/HDR.md); reports the
                      voices culled (mean and max of ten counts a second). JSON key "hdr"
          --realtime  play through the output device (SDL's dummy driver when there is none) with a 60 Hz
                      game loop, and report the audio callback's timing (p50, p99, max) and underruns
          --period    with --realtime: frames per audio callback, 16 to 16384 (default 1024)
          --chaos     with --realtime: every 0.3 s the music seeks or skips, and every frame voices start,
                      fade and stop (for ThreadSanitizer: game, streaming and audio threads all busy)
          --soak      an offline hour (or S seconds) of game audio: the crowd (N voices, default 64), about
                      280 one-shots a second, music skipping every 30 s, and every 2 minutes an interruption,
                      a spell in the background and a lost device. JSON key "soak": OpenAL sources and buffers
                      alive, RSS growth after warm-up, render time per block
        The bundled theme streams beside the crowd when Assets/Music/gravity-wave-theme.ogg is found.
        """

    static func run(_ arguments: inout Arguments) throws {
        let json = arguments.flag("--json")
        let realtime = arguments.flag("--realtime")
        let chaos = arguments.flag("--chaos")
        let soak = arguments.flag("--soak")
        let hdr = arguments.flag("--hdr")
        guard let voices = try arguments.integer("--voices") ?? (soak ? 64 : nil) else {
            throw UsageError("stress needs --voices N")
        }
        guard let seconds = try arguments.duration("--seconds") ?? (soak ? 3_600 : nil) else {
            throw UsageError("stress needs --seconds S")
        }
        let real = try arguments.integer("--real") ?? 256
        let period = try arguments.integer("--period")
        guard try arguments.finish().isEmpty else { throw UsageError("stress takes no positional arguments") }
        guard !chaos || realtime else { throw UsageError("--chaos needs --realtime") }
        guard !hdr || !(realtime || soak) else { throw UsageError("--hdr renders offline, without --soak") }
        guard !(soak && realtime) else { throw UsageError("--soak renders offline; it does not take --realtime") }
        guard (1...1_000_000).contains(voices) else { throw UsageError("--voices must be from 1 to 1000000") }
        guard seconds > 0, seconds <= 3_600 else { throw UsageError("--seconds must be above 0 and at most 3600") }
        guard (1...4096).contains(real) else { throw UsageError("--real must be from 1 to 4096") }
        guard period == nil || realtime else { throw UsageError("--period needs --realtime") }
        guard EngineConfiguration.blockFrameCounts.contains(period ?? 1024) else {
            throw UsageError("--period must be from 16 to 16384")
        }

        let scene = StressScene(voices: voices)
        let options = StressOptions(
            seconds: seconds, realVoices: real, blockFrames: period ?? 1024, chaos: chaos, hdr: hdr)
        let report =
            realtime
            ? try scene.runRealtime(options, isCancelled: { Interrupt.requested })
            : soak
                ? try scene.runSoak(options, isCancelled: { Interrupt.requested })
                : try scene.run(options, isCancelled: { Interrupt.requested })
        try Interrupt.check()
        if json {
            Output.print(describe(report, realtime: realtime).text)
        } else {
            printSummary(report, realtime: realtime)
        }
    }

    static func describe(_ r: StressReport, realtime: Bool) -> JSON {
        var pairs: [(String, JSON)] = [
            ("voices", .int(r.voices)), ("realVoices", .int(r.realVoices)), ("virtualVoices", .int(r.virtualVoices)),
            ("seconds", .double(r.seconds)), ("cpuSeconds", .double(r.cpuSeconds)), ("rtf", .double(r.rtf)),
            ("playCallNs", .double(r.playCallNs)), ("peakRSSBytes", .int(r.peakRSSBytes)),
            ("underruns", .int(r.underruns)),
            ("mode", .string(realtime ? "realtime" : "offline")), ("driver", .string(r.driver)),
            ("backend", .optional(r.backend)), ("streamUnderflows", .optional(r.streamUnderflows)),
            ("audioThreadPriority", .optional(r.audioThreadPriority)),
            ("playCalls", .int(r.playCalls)), ("retriggers", .int(r.retriggers)), ("stolen", .int(r.stolen)),
            ("sourceMoves", .int(r.sourceMoves)),
            ("music", .optional(r.music)), ("wallSeconds", .double(r.wallSeconds)),
            ("renderedSeconds", .double(r.renderedSeconds)),
            ("renderedBlocks", .int(r.renderedBlocks)),
            ("averageRenderMicroseconds", .double(r.averageRenderMicroseconds)),
            ("maxRenderMicroseconds", .double(r.maxRenderMicroseconds))
        ]
        if let rms = r.outputRMS { pairs.append(("outputRMS", .double(rms))) }
        if let h = r.hdr {
            pairs.append(
                (
                    "hdr",
                    .object([
                        ("loudEvents", .int(h.loudEvents)), ("culledMean", .double(h.culledMean)),
                        ("culledMax", .int(h.culledMax)), ("counts", .int(h.samples))
                    ])
                ))
        }
        if let p50 = r.callbackP50Microseconds, let p99 = r.callbackP99Microseconds, let period = r.periodMicroseconds {
            pairs.append(
                (
                    "callback",
                    .object([
                        ("periodMicroseconds", .double(period)), ("p50Microseconds", .double(p50)),
                        ("p99Microseconds", .double(p99)),
                        ("maxMicroseconds", .double(r.maxRenderMicroseconds)), ("p99OverPeriod", .double(p99 / period)),
                        ("startupSeconds", r.startupSeconds.map(JSON.double) ?? .null),
                        ("missingSeconds", r.missingSeconds.map(JSON.double) ?? .null)
                    ])
                ))
        }
        if let c = r.chaos {
            pairs.append(
                (
                    "chaos",
                    .object([
                        ("seeks", .int(c.seeks)), ("skips", .int(c.skips)), ("voicesStarted", .int(c.voicesStarted)),
                        ("voicesStopped", .int(c.voicesStopped)), ("voicesFaded", .int(c.voicesFaded))
                    ])
                ))
        }
        if let s = r.soak {
            pairs.append(
                (
                    "soak",
                    .object([
                        ("oneShots", .int(s.oneShots)), ("musicSkips", .int(s.musicSkips)),
                        ("interruptions", .int(s.interruptions)),
                        ("backgroundings", .int(s.backgroundings)), ("routeChanges", .int(s.routeChanges)),
                        ("warmupSeconds", .double(s.warmupSeconds)),
                        ("alSourcesAfterWarmup", .int(s.alSourcesAfterWarmup)),
                        ("alSourcesAtEnd", .int(s.alSourcesAtEnd)),
                        ("alSourcesMax", .int(s.alSourcesMax)), ("alBuffersAfterWarmup", .int(s.alBuffersAfterWarmup)),
                        ("alBuffersAtEnd", .int(s.alBuffersAtEnd)), ("alBuffersMax", .int(s.alBuffersMax)),
                        ("voicesAtEnd", .int(s.voicesAtEnd)),
                        ("rssAfterWarmupBytes", .int(s.rssAfterWarmupBytes)), ("rssAtEndBytes", .int(s.rssAtEndBytes)),
                        ("rssGrowthBytes", .int(s.rssGrowthBytes)),
                        ("averageBlockMicroseconds", .double(s.averageBlockMicroseconds)),
                        ("maxBlockMicroseconds", .double(s.maxBlockMicroseconds)),
                        ("routeChangeEvents", .int(s.routeChangeEvents)),
                        ("interruptionEvents", .int(s.interruptionEvents)),
                        ("playbackErrors", .int(s.playbackErrors))
                    ])
                ))
        }
        return .object(pairs)
    }

    static func printSummary(_ r: StressReport, realtime: Bool) {
        var rows: [(String, String)] = [
            ("voices", "\(r.voices) (\(r.realVoices) real, \(r.virtualVoices) virtual at the end)"),
            (
                "output",
                realtime
                    ? "real time through \(r.backend ?? "nothing") on \(r.driver)"
                        + (r.streamUnderflows.map { ", \($0) stream underflows" } ?? "")
                    : "offline, as fast as the CPU allows"
            ),
            ("music", r.music ?? "none"),
            (
                "audio",
                realtime
                    ? "\(fixed(r.renderedSeconds, 2)) s rendered in \(fixed(r.wallSeconds, 2)) s"
                    : "\(fixed(r.seconds, 2)) s"
            ),
            ("CPU", "\(fixed(r.cpuSeconds, 3)) s, rtf \(fixed(r.rtf, 4)) (\(fixed(r.rtf * 100, 2))% of a core)"),
            (
                "play()",
                "median \(Int(r.playCallNs.rounded())) ns over \(r.playCalls) calls, \(r.retriggers) one-shots restarted"
            ),
            (
                "mix block",
                "average \(fixed(r.averageRenderMicroseconds, 1)) µs, longest \(fixed(r.maxRenderMicroseconds, 1)) µs"
            ),
            ("underruns", "\(r.underruns)"),
            ("peak memory", "\(r.peakRSSBytes >> 20) MiB")
        ]
        if let rms = r.outputRMS { rows.append(("output RMS", fixed(rms, 4))) }
        if let h = r.hdr {
            rows.append(
                (
                    "HDR culled",
                    "mean \(fixed(h.culledMean, 1)), max \(h.culledMax) of \(r.voices) voices (\(h.loudEvents) loud events, "
                        + "\(h.samples) counts)"
                ))
        }
        if let p50 = r.callbackP50Microseconds, let p99 = r.callbackP99Microseconds, let period = r.periodMicroseconds {
            rows.append(
                (
                    "callback",
                    "p50 \(fixed(p50, 0)) µs, p99 \(fixed(p99, 0)) µs (\(fixed(p99 / period * 100, 1))% of the "
                        + "\(fixed(period, 0)) µs period), max \(fixed(r.maxRenderMicroseconds, 0)) µs"
                ))
            if let start = r.startupSeconds, let missing = r.missingSeconds {
                rows.append(
                    (
                        "output pace",
                        "first block after \(fixed(start, 2)) s; then \(fixed(missing * 1000, 1)) ms of wall time not rendered"
                    ))
            }
        }
        if let c = r.chaos {
            rows.append(
                (
                    "chaos",
                    "\(c.seeks) seeks, \(c.skips) skips, \(c.voicesStarted) voices started, \(c.voicesStopped) stopped, \(c.voicesFaded) faded"
                ))
        }
        if let s = r.soak {
            rows.append(
                (
                    "soak",
                    "\(s.oneShots) one-shots, \(s.musicSkips) skips, \(s.interruptions) interruptions, \(s.backgroundings) backgroundings, \(s.routeChanges) lost devices"
                ))
            rows.append(
                (
                    "AL objects",
                    "sources \(s.alSourcesAfterWarmup) → \(s.alSourcesAtEnd) (max \(s.alSourcesMax)), buffers \(s.alBuffersAfterWarmup) → \(s.alBuffersAtEnd) (max \(s.alBuffersMax))"
                ))
            rows.append(
                ("RSS growth", "\(s.rssGrowthBytes / 1024) KiB after \(fixed(s.warmupSeconds, 0)) s of warm-up"))
            rows.append(
                (
                    "block",
                    "average \(fixed(s.averageBlockMicroseconds, 1)) µs, longest \(fixed(s.maxBlockMicroseconds, 1)) µs"
                ))
        }
        for (label, value) in rows {
            Output.line(label + String(repeating: " ", count: max(13 - label.count, 1)) + value)
        }
    }
}

/// `value` with `digits` decimals, for tables.
func fixed(_ value: Double, _ digits: Int) -> String {
    guard value.isFinite else { return "-" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = Int((abs(value) * scale).rounded())
    let whole = scaled / Int(scale), fraction = scaled % Int(scale)
    let sign = value < 0 && scaled != 0 ? "-" : ""
    guard digits > 0 else { return sign + "\(whole)" }
    let text = String(fraction)
    return sign + "\(whole)." + String(repeating: "0", count: digits - text.count) + text
}
