import Ambience
import AmbienceBench
import AmbiencePlatform

extension BenchCommand {
    static let memoryUsage = """

        bench --memory [--json] [--voices N,N...] [--loaded-seconds S]
                                            peak memory per 1,000 voices and per loaded second, beside raw OpenAL Soft
          --voices          crowd sizes, 2 to 16384, comma-separated (default 256,1024,4096,10000); Ambience mixes
                            every voice for real up to 4096, and 256 real voices in larger crowds; raw OpenAL gets a
                            source per voice
          --loaded-seconds  seconds of mono 48 kHz sound loaded for the per-second figure (default 60)
        Each cell is a child process that mixes `bench`'s scene for one second and reports its peak resident set.
        Per 1,000 voices is the crowd's peak less a one-voice run's, over the voices added; per loaded second is a
        one-voice run with the sound loaded, less the same without and less the caller's own copy of the samples; per
        virtual voice is a crowd with virtual voices less an all-real crowd of its real size (10000 against 256).
        """

    static func runMemory(_ arguments: inout Arguments) throws {
        let json = arguments.flag("--json")
        var options = MemoryOptions()
        if let text = try arguments.option("--voices") {
            options.voiceCounts = try sceneSizes(text, option: "--voices")
            guard options.voiceCounts.allSatisfy({ MemoryOptions.voiceCounts.contains($0) }) else {
                throw UsageError("--voices must be from 2 to 16384")
            }
        }
        if let seconds = try arguments.integer("--loaded-seconds") {
            guard (1...3600).contains(seconds) else { throw UsageError("--loaded-seconds must be from 1 to 3600") }
            options.loadedSeconds = seconds
        }
        guard try arguments.finish().isEmpty else { throw UsageError("bench --memory takes no positional arguments") }
        let report = try MemoryBench.run(options, isCancelled: { Interrupt.requested })
        try Interrupt.check()
        if json {
            Output.print(describe(report, options).text)
        } else {
            printMemory(report, options)
        }
    }

    /// The child of `bench --memory`: one system, one cell.
    static func runMemoryClient(_ arguments: inout Arguments) throws {
        guard let name = try arguments.option("--memory-client"), let system = MemorySystem(rawValue: name) else {
            throw UsageError("--memory-client takes ambience or openal")
        }
        guard let voices = try arguments.integer("--voices"), (1...(1 << 20)).contains(voices),
            let real = try arguments.integer("--real-voices"), (1...4096).contains(real) || system == .openal,
            let loaded = try arguments.integer("--loaded-seconds"), (0...3600).contains(loaded)
        else {
            throw UsageError("--memory-client needs --voices, --real-voices and --loaded-seconds in range")
        }
        guard try arguments.finish().isEmpty else {
            throw UsageError("bench --memory-client takes no positional arguments")
        }
        Output.print(try MemoryBench.client(system, voices: voices, realVoices: real, loadedSeconds: loaded))
    }

    static func describe(_ report: MemoryReport, _ options: MemoryOptions) -> JSON {
        .object([
            (
                "rows",
                .array(
                    report.rows.map { row in
                        .object([
                            ("system", .string(row.system.rawValue)), ("voices", .int(row.voices)),
                            ("realVoices", .int(row.realVoices)), ("loadedSeconds", .int(row.loadedSeconds)),
                            ("peakBytes", .int(row.peakBytes)), ("residentBytes", .int(row.residentBytes)),
                            ("error", .optional(row.error))
                        ])
                    })
            ),
            (
                "peakBytesPerThousandVoices",
                .object(
                    MemorySystem.allCases.map { system in
                        (
                            system.rawValue,
                            .object(
                                options.voiceCounts.map {
                                    ("\($0)", number(report.peakPerThousandVoices(system, voices: $0)))
                                })
                        )
                    })
            ),
            (
                "peakBytesPerVirtualVoice",
                .object(options.voiceCounts.map { ("\($0)", number(report.peakPerVirtualVoice(voices: $0))) })
            ),
            (
                "peakBytesPerLoadedSecond",
                .object(MemorySystem.allCases.map { ($0.rawValue, number(report.peakPerLoadedSecond($0))) })
            )
        ])
    }

    static func printMemory(_ report: MemoryReport, _ options: MemoryOptions) {
        func mb(_ bytes: Double?) -> String { bytes.map { fixed($0 / 1_048_576, 2) + " MB" } ?? "-" }
        func kb(_ bytes: Double?) -> String { bytes.map { fixed($0 / 1024, 0) + " kB" } ?? "-" }
        Output.print("peak resident set (each cell a process mixing the scene for 1 s)\n")
        for row in report.rows {
            let what =
                row.loadedSeconds > 0
                ? "\(row.voices) voice, \(row.loadedSeconds) s loaded" : "\(row.voices) voices (\(row.realVoices) real)"
            let figure = row.error.map { "failed: \($0)" } ?? mb(Double(row.peakBytes))
            Output.print("  \(row.system.title.padding(toLength: 18, withPad: " ", startingAt: 0))\(what): \(figure)")
        }
        Output.print("\nper 1,000 voices (peak over a one-voice run):")
        for voices in options.voiceCounts {
            let a = report.peakPerThousandVoices(.ambience, voices: voices)
            let o = report.peakPerThousandVoices(.openal, voices: voices)
            Output.print("  \(voices) voices: Ambience \(kb(a)), raw OpenAL Soft \(kb(o))")
        }
        for voices in options.voiceCounts {
            guard let each = report.peakPerVirtualVoice(voices: voices) else { continue }
            Output.print(
                "Ambience's virtual voices at \(voices): \(fixed(each, 0)) bytes each (over an all-real crowd of its real size)"
            )
        }
        let a = report.peakPerLoadedSecond(.ambience), o = report.peakPerLoadedSecond(.openal)
        Output.print("per loaded second (mono 48 kHz float): Ambience \(kb(a)), raw OpenAL Soft \(kb(o))")
    }
}
