import Ambience

struct StressCommand: Command {
    static let name = "stress"
    static let usage = """
        stress --voices N --seconds S [--real R] [--json] [--realtime]
                                            the headless voice stress test: N 3D voices, R of them real
          --voices    voices in the crowd (70% looping; one-shots start again when they finish)
          --seconds   seconds of audio to render (offline), or to run for (--realtime)
          --real      voices mixed for real by OpenAL sources, 1 to 4096 (default 256); the rest are virtual
          --json      one JSON object with keys voices, realVoices, virtualVoices, seconds, cpuSeconds, rtf,
                      playCallNs, peakRSSBytes, underruns (then extra keys)
          --realtime  play through the output device (SDL's dummy driver when there is none) with a 60 Hz
                      game loop, and report the audio callback's timing
        The bundled theme streams beside the crowd when Assets/Music/gravity-wave-theme.ogg is found.
        """

    static func run(_ arguments: inout Arguments) throws {
        let json = arguments.flag("--json")
        let realtime = arguments.flag("--realtime")
        guard let voices = try arguments.integer("--voices") else { throw UsageError("stress needs --voices N") }
        guard let seconds = try arguments.number("--seconds") else { throw UsageError("stress needs --seconds S") }
        let real = try arguments.integer("--real") ?? 256
        guard try arguments.finish().isEmpty else { throw UsageError("stress takes no positional arguments") }
        guard (1...1_000_000).contains(voices) else { throw UsageError("--voices must be from 1 to 1000000") }
        guard seconds > 0, seconds <= 3_600 else { throw UsageError("--seconds must be above 0 and at most 3600") }
        guard (1...4096).contains(real) else { throw UsageError("--real must be from 1 to 4096") }

        let scene = StressScene(voices: voices)
        let options = StressOptions(seconds: seconds, realVoices: real)
        let report = realtime
            ? try scene.runRealtime(options, isCancelled: { Interrupt.requested })
            : try scene.run(options, isCancelled: { Interrupt.requested })
        try Interrupt.check()
        if json {
            print(describe(report, realtime: realtime).text)
        } else {
            printSummary(report, realtime: realtime)
        }
    }

    static func describe(_ r: StressReport, realtime: Bool) -> JSON {
        var pairs: [(String, JSON)] = [
            ("voices", .int(r.voices)), ("realVoices", .int(r.realVoices)), ("virtualVoices", .int(r.virtualVoices)),
            ("seconds", .double(r.seconds)), ("cpuSeconds", .double(r.cpuSeconds)), ("rtf", .double(r.rtf)),
            ("playCallNs", .double(r.playCallNs)), ("peakRSSBytes", .int(r.peakRSSBytes)), ("underruns", .int(r.underruns)),
            ("mode", .string(realtime ? "realtime" : "offline")), ("driver", .string(r.driver)),
            ("playCalls", .int(r.playCalls)), ("retriggers", .int(r.retriggers)), ("stolen", .int(r.stolen)),
            ("music", .optional(r.music)), ("wallSeconds", .double(r.wallSeconds)), ("renderedSeconds", .double(r.renderedSeconds)),
            ("renderedBlocks", .int(r.renderedBlocks)), ("averageRenderMicroseconds", .double(r.averageRenderMicroseconds)),
            ("maxRenderMicroseconds", .double(r.maxRenderMicroseconds)),
        ]
        if let rms = r.outputRMS { pairs.append(("outputRMS", .double(rms))) }
        return .object(pairs)
    }

    static func printSummary(_ r: StressReport, realtime: Bool) {
        var rows: [(String, String)] = [
            ("voices", "\(r.voices) (\(r.realVoices) real, \(r.virtualVoices) virtual at the end)"),
            ("output", realtime ? "real time through SDL's \(r.driver) driver" : "offline, as fast as the CPU allows"),
            ("music", r.music ?? "none"),
            ("audio", realtime ? "\(fixed(r.renderedSeconds, 2)) s rendered in \(fixed(r.wallSeconds, 2)) s" : "\(fixed(r.seconds, 2)) s"),
            ("CPU", "\(fixed(r.cpuSeconds, 3)) s, rtf \(fixed(r.rtf, 4)) (\(fixed(r.rtf * 100, 2))% of a core)"),
            ("play()", "median \(Int(r.playCallNs.rounded())) ns over \(r.playCalls) calls, \(r.retriggers) one-shots restarted"),
            ("mix block", "average \(fixed(r.averageRenderMicroseconds, 1)) µs, longest \(fixed(r.maxRenderMicroseconds, 1)) µs"),
            ("underruns", "\(r.underruns)"),
            ("peak memory", "\(r.peakRSSBytes >> 20) MiB"),
        ]
        if let rms = r.outputRMS { rows.append(("output RMS", fixed(rms, 4))) }
        for (label, value) in rows { print(label + String(repeating: " ", count: max(13 - label.count, 1)) + value) }
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
