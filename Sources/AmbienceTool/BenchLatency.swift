import Ambience
import AmbienceBench
import AmbiencePlatform

extension BenchCommand {
    static let latencyUsage = """

        bench --latency [--json] [--periods N,N...] [--systems NAME,...] [--clicks N] [--server-log FILE] [--plot FILE.svg]
                                            trigger-to-sound latency on the running sound server, side by side
          --periods     periods in frames, comma-separated (default 128,256,512,1024)
          --systems     pulse (libpulse direct: the floor), ambience (its libpulse output), ambienceSDL (its SDL
                        output), openal, sdlMixer (default all)
          --clicks      clicks per system and period, 100 to 150 ms apart (default 200)
          --server-log  PulseAudio's log at --log-level=debug: its underrun lines count as server-side underflows
          --plot        also draw the latency distributions into FILE.svg
        One recorder, the same for all, records the default sink's monitor through libpulse; each system runs in a
        child process and plays a 2 ms click at known times (CLOCK_MONOTONIC). Prints the delay from the call to
        the click's first frame at the monitor as p50, p99 and max, the clicks found, the client's late callbacks
        and the server's underflows. Ambience's target: p99 at most the faster peer's plus 1 ms.
        """

    static func runLatency(_ arguments: inout Arguments) throws {
        let json = arguments.flag("--json")
        var options = LatencyOptions()
        if let text = try arguments.option("--periods") { options.periods = try sceneSizes(text, option: "--periods") }
        if let text = try arguments.option("--systems") {
            let systems = text.split(separator: ",").map { LatencySystem(rawValue: String($0)) }
            guard !systems.isEmpty, systems.allSatisfy({ $0 != nil }) else {
                throw UsageError(
                    "--systems takes pulse, ambience, ambienceSDL, openal, sdlMixer, comma-separated, not '\(text)'")
            }
            options.systems = systems.map { $0! }
        }
        if let clicks = try arguments.integer("--clicks") {
            guard (1...100_000).contains(clicks) else { throw UsageError("--clicks must be from 1 to 100000") }
            options.clicks = clicks
        }
        options.serverLog = try arguments.option("--server-log")
        let plot = try arguments.option("--plot")
        guard try arguments.finish().isEmpty else { throw UsageError("bench --latency takes no positional arguments") }
        let report = try LatencyBench.run(options, isCancelled: { Interrupt.requested })
        try Interrupt.check()
        if let plot { try writePlot(latency: report, to: plot) }
        if json {
            Output.print(describe(report).text)
        } else {
            printLatency(report)
        }
    }

    /// The child of `bench --latency`: one system's clicks; prints its call times for the parent.
    static func runLatencyClient(_ arguments: inout Arguments) throws {
        guard let name = try arguments.option("--latency-client"), let system = LatencySystem(rawValue: name) else {
            throw UsageError("--latency-client takes pulse, ambience, ambienceSDL, openal or sdlMixer")
        }
        guard let period = try arguments.integer("--period"), (16...16_384).contains(period) else {
            throw UsageError("--period must be from 16 to 16384")
        }
        guard let clicks = try arguments.integer("--clicks"), (1...100_000).contains(clicks) else {
            throw UsageError("--clicks must be from 1 to 100000")
        }
        let gapText = try arguments.option("--gap") ?? "100,150"
        let gaps = gapText.split(separator: ",").compactMap { Double($0) }
        guard gaps.count == 2, gaps.allSatisfy({ $0.isFinite && $0 >= 20 && $0 <= 10_000 }), gaps[0] <= gaps[1] else {
            throw UsageError("--gap needs MIN,MAX in milliseconds, 20 to 10000")
        }
        let rate = try arguments.integer("--rate") ?? 48_000
        guard EngineConfiguration.sampleRates.contains(rate) else {
            throw UsageError("--rate must be from 8000 to 192000")
        }
        let seed = UInt64(truncatingIfNeeded: try arguments.integer("--seed") ?? 1)
        guard try arguments.finish().isEmpty else {
            throw UsageError("bench --latency-client takes no positional arguments")
        }
        let result = try LatencyClient.run(
            system, periodFrames: period, sampleRate: rate, clicks: clicks,
            gaps: Int(gaps[0] * 1e6)...Int(gaps[1] * 1e6), seed: seed)
        Output.print(result.lines.joined(separator: "\n"))
    }

    static func describe(_ report: LatencyReport) -> JSON {
        func ms(_ p: Percentiles?) -> JSON {
            guard let p else { return .null }
            return .object([
                ("p50", .double(p.p50)), ("p99", .double(p.p99)), ("max", .double(p.max)), ("count", .int(p.count))
            ])
        }
        return .object([
            ("server", .string(report.server)),
            (
                "rows",
                .array(
                    report.rows.map { row in
                        .object([
                            ("system", .string(row.system.rawValue)), ("periodFrames", .int(row.periodFrames)),
                            ("driver", .string(row.driver)),
                            ("clicks", .int(row.clicks)), ("found", .int(row.found)), ("missed", .int(row.missed)),
                            ("delayMilliseconds", ms(row.delay)), ("callbacks", .int(row.callbacks)),
                            ("lateCallbacks", row.lateCallbacks.map(JSON.int) ?? .null),
                            ("serverUnderflows", row.serverUnderflows.map(JSON.int) ?? .null),
                            ("error", .optional(row.error))
                        ])
                    })
            ),
            (
                "ambienceP99OverFasterPeerMilliseconds",
                .object(
                    Set(report.rows.map(\.periodFrames)).sorted().map { period in
                        ("\(period)", number(report.ambienceP99OverFasterPeer(period: period)))
                    })
            )
        ])
    }

    static func printLatency(_ report: LatencyReport) {
        func pad(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(width - text.count, 1))
        }
        Output.line(
            "trigger-to-sound at the sink's monitor, in ms, on \(report.server.isEmpty ? "the sound server" : report.server)"
        )
        Output.print("")
        Output.print(
            pad("period", 8) + pad("system", 18) + pad("p50", 8) + pad("p99", 8) + pad("max", 8) + pad("found", 10)
                + pad("late cb", 9) + "server underflows")
        for row in report.rows {
            let start = pad("\(row.periodFrames)", 8) + pad(row.system.title, 18)
            if let error = row.error {
                Output.line(start + "failed: \(error)")
                continue
            }
            let d = row.delay
            Output.print(
                start + pad(d.map { fixed($0.p50, 2) } ?? "-", 8) + pad(d.map { fixed($0.p99, 2) } ?? "-", 8)
                    + pad(d.map { fixed($0.max, 2) } ?? "-", 8) + pad("\(row.found)/\(row.clicks)", 10)
                    + pad(row.lateCallbacks.map { "\($0)" } ?? "n/a", 9)
                    + (row.serverUnderflows.map { "\($0)" } ?? "n/a"))
        }
        Output.print("")
        for period in Set(report.rows.map(\.periodFrames)).sorted() {
            if let over = report.ambienceP99OverFasterPeer(period: period) {
                Output.print(
                    "\(period) frames: Ambience p99 - faster peer's p99 = \(fixed(over, 2)) ms (target at most 1 ms: \(over <= 1 ? "met" : "missed"))"
                )
            }
        }
    }
}
