import Ambience
import AmbienceBench
import AmbiencePlatform

extension BenchCommand {
    static let openALOptionsUsage = """

        bench --openal-options [--json] [--seconds S] [--runs R] [--quality-seconds Q]
                                            OpenAL Soft's speed options on the 1024-voice scene: cost beside quality
          --seconds          seconds of audio per cost run (default 2)
          --runs             cost runs per configuration, 1 to 9 (default 3); each figure is the median
          --quality-seconds  seconds rendered once per configuration for the comparison (default 2)
        The stress scene (1024 voices, varied pitch) through an OpenAL Soft loopback device with no engine, with one
        thing changed at a time from the engine's configuration: each resampler AL_SOFT_source_resampler lists, the
        sounds as stereo buffers (OpenAL does not spatialise those), the output limiter on and off, and mixing at
        22050, 32000 and 44100 Hz. Cost is CPU seconds per second of audio and its ratio to the default's (runs
        side by side). Quality is the SNR against a reference (the best resampler at 48 kHz, limiter off), after the
        best alignment within 64 frames (the limiter delays by its look-ahead), over all but the first and last 1024
        frames; and again on magnitude spectra (1024-point, Hann, hop 512). At another mixing rate OpenAL Soft's
        fixed-point stepping makes each voice drift by a few frames a second against the 48 kHz render, which both
        figures count; "same rate" compares with the reference's configuration at that rate instead, which shows
        the resampler's share apart from the rate's. The scene is rendered without one-shot restarts, so every
        render is the same from the same start; renders at another rate are brought back to 48 kHz with sox's
        `rate -v` (sox must be installed). "identical" means bit for bit the same.
        """

    static func runOpenALOptions(_ arguments: inout Arguments) throws {
        let json = arguments.flag("--json")
        let seconds = try arguments.duration("--seconds") ?? 2
        let runs = try arguments.integer("--runs") ?? 3
        let qualitySeconds = try arguments.duration("--quality-seconds") ?? 2
        guard (1...9).contains(runs) else { throw UsageError("--runs must be from 1 to 9") }
        guard seconds > 0, seconds <= 600 else { throw UsageError("--seconds must be above 0 and at most 600") }
        guard qualitySeconds >= 0.1, qualitySeconds <= 600 else {
            throw UsageError("--quality-seconds must be from 0.1 to 600")
        }
        guard try arguments.finish().isEmpty else {
            throw UsageError("bench --openal-options takes no positional arguments")
        }
        let report = try OpenALOptionsBench.run(
            OpenALOptionsBenchOptions(seconds: seconds, runs: runs, qualitySeconds: qualitySeconds),
            isCancelled: { Interrupt.requested })
        try Interrupt.check()
        if json {
            Output.print(describe(report).text)
        } else {
            printOpenALOptions(report)
        }
    }

    /// An SNR as JSON: a number, or the string "identical" for a bit-exact match (JSON has no infinity).
    static func snrJSON(_ value: Double?) -> JSON {
        guard let value else { return .null }
        return value == .infinity ? .string("identical") : .double(value)
    }

    static func describe(_ report: OpenALOptionsReport) -> JSON {
        .object([
            ("machine", .string(Machine.cpu)), ("date", .string(Machine.date)), ("commit", .optional(Machine.commit)),
            ("voices", .int(report.voices)), ("seconds", .double(report.seconds)),
            ("qualitySeconds", .double(report.qualitySeconds)), ("runs", .int(report.runs)),
            ("resamplers", .array(report.resamplers.map(JSON.string))),
            ("defaultResampler", .optional(report.defaultResampler)),
            ("limiterByDefault", report.limiterByDefault.map(JSON.bool) ?? .null),
            ("reference", .string(report.reference)), ("referenceSelfSNR", snrJSON(report.referenceSelfSNR)),
            ("referencePeak", number(report.referencePeak)), ("soxRoundTripSNR", snrJSON(report.soxRoundTripSNR)),
            (
                "options",
                .array(
                    report.rows.map { row in
                        var pairs: [(String, JSON)] = [
                            ("name", .string(row.name)), ("group", .string(row.group)),
                            ("sameAsDefault", .bool(row.sameAsDefault))
                        ]
                        if let error = row.error {
                            pairs.append(("error", .string(error)))
                        } else {
                            pairs += [
                                ("rtf", .double(row.rtf)), ("runs", .array(row.runs.map(JSON.double))),
                                ("costRatio", number(row.costRatio)), ("snrDB", snrJSON(row.snrDB)),
                                ("spectralSNRDB", snrJSON(row.spectralSNRDB)),
                                ("sameRateSNRDB", snrJSON(row.sameRateSNRDB)),
                                ("lagFrames", row.lagFrames.map(JSON.int) ?? .null), ("peak", number(row.peak))
                            ]
                        }
                        return .object(pairs)
                    })
            ),
            ("cancelled", .bool(report.cancelled))
        ])
    }

    static func printOpenALOptions(_ report: OpenALOptionsReport) {
        func pad(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(width - text.count, 1))
        }
        func snr(_ value: Double?) -> String {
            guard let value else { return "-" }
            return value == .infinity ? "identical" : fixed(value, 1)
        }
        Output.print(
            "OpenAL Soft options on the \(report.voices)-voice scene (varied pitch): rtf is the median of \(report.runs) "
                + "runs of \(fixed(report.seconds, 1)) s; SNR against \(report.reference), over \(fixed(report.qualitySeconds, 1)) s"
        )
        Output.print(Machine.caption + "\n")
        Output.print(
            pad("option", 38) + pad("rtf", 10) + pad("× default", 11) + pad("SNR dB", 11) + pad("spectral", 11)
                + pad("same rate", 11) + "lag")
        for row in report.rows {
            let name = row.sameAsDefault ? row.name + " (= default)" : row.name
            if let error = row.error {
                Output.line(pad(name, 38) + "failed: \(error)")
                continue
            }
            Output.print(
                pad(name, 38) + pad(fixed(row.rtf, 4), 10) + pad(row.costRatio.map { fixed($0, 2) } ?? "-", 11)
                    + pad(snr(row.snrDB), 11) + pad(snr(row.spectralSNRDB), 11) + pad(snr(row.sameRateSNRDB), 11)
                    + (row.lagFrames.map(String.init) ?? "-"))
        }
        Output.print("")
        Output.print("reference against a second render of itself: \(snr(report.referenceSelfSNR)) dB")
        Output.print("reference peak: \(report.referencePeak.map { fixed($0, 3) } ?? "-")")
        Output.print(
            "the comparison's own sox resampling, 48 kHz to 44.1 kHz and back: \(snr(report.soxRoundTripSNR)) dB")
        Output.line(
            "resamplers: \(report.resamplers.joined(separator: ", ")); default \(report.defaultResampler ?? "-"); "
                + "limiter by default: \(report.limiterByDefault.map { $0 ? "on" : "off" } ?? "unknown")")
    }
}
