import Ambience
import AmbiencePlatform
import Foundation

/// How `bench --openal-options` runs.
public struct OpenALOptionsBenchOptions: Sendable {
    /// Seconds of audio per cost run.
    public var seconds: Double
    /// Cost runs per configuration; the median is reported.
    public var runs: Int
    /// Seconds of audio rendered once per configuration for the quality comparison.
    public var qualitySeconds: Double
    /// Voices in the stress scene (varied pitch).
    public var voices: Int

    public init(seconds: Double = 2, runs: Int = 3, qualitySeconds: Double = 2, voices: Int = 1024) {
        self.seconds = seconds
        self.runs = max(runs, 1)
        self.qualitySeconds = qualitySeconds
        self.voices = voices
    }

    /// The options when they are ones the bench can run: seconds above 0 and at most 600 (quality: at least 0.1,
    /// so that frames are left between the compared edges), runs 1…9, voices 1…4096.
    public func validated() throws(InvalidNumber) -> OpenALOptionsBenchOptions {
        guard try seconds.finite("seconds") > 0, seconds <= 600 else {
            throw InvalidNumber("seconds", value: "\(seconds)", expected: "above 0 and at most 600")
        }
        guard try qualitySeconds.finite("qualitySeconds") >= 0.1, qualitySeconds <= 600 else {
            throw InvalidNumber("qualitySeconds", value: "\(qualitySeconds)", expected: "from 0.1 to 600")
        }
        _ = try runs.checked(Int.self, in: 1...9, "runs")
        _ = try voices.checked(Int.self, in: 1...4096, "voices")
        return self
    }
}

/// What `bench --openal-options` measured: OpenAL Soft 1.19's speed options, each varied alone from the engine's
/// configuration, on the stress scene with no engine in between; cost beside quality.
public struct OpenALOptionsReport: Sendable {
    public struct Row: Sendable {
        /// "default", "resampler Cubic", "stereo buffers", "limiter on", "44100 Hz".
        public var name: String
        /// "default", "resampler", "buffers", "limiter" or "frequency".
        public var group: String
        /// Median CPU seconds per second of audio.
        public var rtf = 0.0
        /// Every run's rtf, in the order run.
        public var runs: [Double] = []
        /// rtf over the default configuration's: the median of the ratios of runs made side by side.
        public var costRatio: Double? = nil
        /// SNR against the reference, in dB (+infinity: identical); nil when the render failed.
        public var snrDB: Double? = nil
        /// The same on short-time magnitude spectra (`SignalComparison.spectralSNRDB`): blind to the slow drift of
        /// OpenAL Soft's fixed-point stepping at another mixing rate.
        public var spectralSNRDB: Double? = nil
        /// Rows at another mixing rate: the SNR against the reference's configuration rendered at that same rate
        /// (no sox, the same fixed-point steps): the resampler's share of the loss, apart from the rate's.
        public var sameRateSNRDB: Double? = nil
        /// The best alignment's lag, in 48 kHz frames.
        public var lagFrames: Int? = nil
        /// Peak absolute sample of the quality render.
        public var peak: Double? = nil
        public var error: String? = nil
        /// Whether this row sets nothing the default does not already have (the same work, measured again).
        public var sameAsDefault = false
    }

    public var rows: [Row] = []
    /// `AL_SOFT_source_resampler`'s list, in its order, and its default.
    public var resamplers: [String] = []
    public var defaultResampler: String? = nil
    /// Whether a float loopback context has the output limiter on when nothing is asked for.
    public var limiterByDefault: Bool? = nil
    /// The reference: the best resampler at 48 kHz, the limiter off, mono buffers.
    public var reference = ""
    /// The reference against a second render of itself (+infinity: bit for bit the same, the scene is deterministic).
    public var referenceSelfSNR: Double? = nil
    /// The reference taken to 44.1 kHz and back through sox, against itself: what losing the band above 22.05 kHz
    /// and the comparison's own resampling cost, the best the 44.1 kHz row could score.
    public var soxRoundTripSNR: Double? = nil
    /// Peak of the reference render: above 1.0 the limiter has work to do.
    public var referencePeak: Double? = nil
    public var voices = 0
    public var seconds = 0.0
    public var qualitySeconds = 0.0
    public var runs = 0
    public var cancelled = false

    public func row(_ name: String) -> Row? { rows.first { $0.name == name } }
}

/// `bench --openal-options`: cost runs interleaved as `Benchmark` does, then one deterministic render per
/// configuration (no one-shot restarts, the same start) compared with a high-quality reference. Renders at another
/// mixing rate are brought back to 48 kHz with sox's very-high-quality resampler (`rate -v`) first.
public enum OpenALOptionsBench {
    struct Configuration {
        var name: String
        var group: String
        var setup: RawOpenALSetup
        var sameAsDefault = false
    }

    public static func run(
        _ requested: OpenALOptionsBenchOptions, progress: (String) -> Void = { _ in },
        isCancelled: () -> Bool = { false }
    ) throws -> OpenALOptionsReport {
        let options = try requested.validated()
        let defaults = try RawOpenAL.defaults()
        var report = OpenALOptionsReport()
        report.resamplers = defaults.resamplers
        report.defaultResampler = defaults.defaultResampler.flatMap {
            defaults.resamplers.indices.contains($0) ? defaults.resamplers[$0] : nil
        }
        report.limiterByDefault = defaults.limiter
        report.voices = options.voices
        report.seconds = options.seconds
        report.qualitySeconds = options.qualitySeconds
        report.runs = options.runs

        var configurations = [Configuration(name: "default", group: "default", setup: RawOpenALSetup())]
        for (index, name) in defaults.resamplers.enumerated() {
            configurations.append(
                Configuration(
                    name: "resampler \(name)", group: "resampler", setup: RawOpenALSetup(resampler: index),
                    sameAsDefault: index == defaults.defaultResampler))
        }
        configurations.append(
            Configuration(name: "stereo buffers", group: "buffers", setup: RawOpenALSetup(stereoBuffers: true)))
        for on in [true, false] {
            configurations.append(
                Configuration(
                    name: on ? "limiter on" : "limiter off", group: "limiter",
                    setup: RawOpenALSetup(outputLimiter: on), sameAsDefault: on == defaults.limiter))
        }
        for rate in [22_050, 32_000, 44_100] {
            configurations.append(
                Configuration(name: "\(rate) Hz", group: "frequency", setup: RawOpenALSetup(mixingRate: rate)))
        }
        // 44.1 kHz with the reference's resampler: how much of that rate's loss is the rate, how much the resampler.
        if let best = bestResampler(defaults.resamplers) {
            configurations.append(
                Configuration(
                    name: "44100 Hz, resampler \(defaults.resamplers[best])", group: "frequency",
                    setup: RawOpenALSetup(mixingRate: 44_100, resampler: best)))
        }

        let scene = StressScene(voices: options.voices)
        // Cost: runs take turns, each starting one configuration further on, as Benchmark's systems do.
        var costs = [[SystemMeasurement?]](repeating: [], count: configurations.count)
        var errors = [String?](repeating: nil, count: configurations.count)
        for run in 1...options.runs {
            let shift = (run - 1) % configurations.count
            for index in Array(shift..<configurations.count) + Array(0..<shift) {
                if isCancelled() { report.cancelled = true; return report }
                progress("\(configurations[index].name): cost run \(run) of \(options.runs)")
                do {
                    costs[index].append(
                        try RawOpenAL.run(
                            scene, seconds: options.seconds, setup: configurations[index].setup,
                            isCancelled: isCancelled))
                } catch {
                    costs[index].append(nil)
                    errors[index] = error.description
                }
            }
        }

        // Quality: the reference, once more to show the render is deterministic, then every configuration.
        let bestIndex = bestResampler(defaults.resamplers)
        report.reference =
            (bestIndex.map { "resampler \(defaults.resamplers[$0])" } ?? "OpenAL's default resampler")
            + ", 48000 Hz, limiter off, mono buffers"
        progress("reference render")
        let referenceSetup = RawOpenALSetup(resampler: bestIndex, outputLimiter: defaults.limiter == nil ? nil : false)
        let reference = try qualityRender(scene, setup: referenceSetup, seconds: options.qualitySeconds)
        report.referencePeak = peak(reference)
        let again = try qualityRender(scene, setup: referenceSetup, seconds: options.qualitySeconds)
        report.referenceSelfSNR = SignalComparison.compare(reference: reference, signal: again)?.snrDB
        // The comparison's own resampler, there and back: it must be far above anything it is used to compare.
        if let down = try? resampleWithSox(reference, from: 48_000, to: 44_100),
            let back = try? resampleWithSox(down, from: 44_100, to: 48_000)
        {
            report.soxRoundTripSNR = SignalComparison.compare(reference: reference, signal: back)?.snrDB
        }

        let defaultRuns = costs[0].compactMap { $0?.rtf }
        for (index, configuration) in configurations.enumerated() {
            var row = OpenALOptionsReport.Row(name: configuration.name, group: configuration.group)
            row.sameAsDefault = configuration.sameAsDefault
            let runs = costs[index].compactMap { $0?.rtf }
            if let error = errors[index] {
                row.error = error
                report.rows.append(row)
                continue
            }
            row.runs = runs
            row.rtf = Benchmark.median(runs)
            if runs.count == defaultRuns.count, !runs.isEmpty, defaultRuns.allSatisfy({ $0 > 0 }) {
                row.costRatio = Benchmark.median(zip(runs, defaultRuns).map { $0 / $1 })
            }
            if isCancelled() { report.cancelled = true; break }
            progress("\(configuration.name): quality render")
            do {
                let output = try qualityRender(scene, setup: configuration.setup, seconds: options.qualitySeconds)
                row.peak = peak(output)
                let comparison = SignalComparison.compare(reference: reference, signal: output)
                row.snrDB = comparison?.snrDB
                row.spectralSNRDB = comparison?.spectralSNRDB
                if let rate = configuration.setup.mixingRate, rate != scene.sampleRate {
                    var sameRate = referenceSetup
                    sameRate.mixingRate = rate
                    let native = try qualityRender(
                        scene, setup: configuration.setup, seconds: options.qualitySeconds, at: rate)
                    let nativeReference = try qualityRender(
                        scene, setup: sameRate, seconds: options.qualitySeconds, at: rate)
                    row.sameRateSNRDB = SignalComparison.compare(reference: nativeReference, signal: native)?.snrDB
                }
                row.lagFrames = comparison?.lagFrames
            } catch {
                row.error = "\(error)"
            }
            report.rows.append(row)
        }
        report.cancelled = isCancelled()
        return report
    }

    /// The highest-quality resampler in the list: OpenAL Soft 1.19's 24-point band-limited sinc ("23rd order
    /// Sinc"), else the last listed (the list goes from fastest to best), nil when there is none.
    static func bestResampler(_ names: [String]) -> Int? {
        names.firstIndex { $0.contains("23rd") || $0.lowercased().contains("bsinc24") }
            ?? (names.isEmpty ? nil : names.count - 1)
    }

    /// The scene with no one-shot restarted, `seconds` of it, as interleaved stereo at `outputRate` (48 kHz unless
    /// asked; a render at another mixing rate goes through sox).
    static func qualityRender(_ scene: StressScene, setup: RawOpenALSetup, seconds: Double, at outputRate: Int = 48_000)
        throws -> [Float]
    {
        var setup = setup
        setup.restartOneShots = false
        var output: [Float] = []
        let rate = setup.mixingRate ?? scene.sampleRate
        output.reserveCapacity(Int(seconds * Double(rate) * 2) + 4096)
        _ = try RawOpenAL.run(scene, seconds: seconds, setup: setup, capture: { output.append(contentsOf: $0) })
        return rate == outputRate ? output : try resampleWithSox(output, from: rate, to: outputRate)
    }

    /// Interleaved stereo from one rate to another through `sox … rate -v` (very high quality, linear phase). Sox
    /// works in 32-bit integers and would clip anything past ±1, so the samples go in scaled below that and come
    /// back scaled up again.
    static func resampleWithSox(_ samples: [Float], from: Int, to: Int) throws -> [Float] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ambience-openal-options-\(ProcessIdentity.current)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("in.f32"), output = folder.appendingPathComponent("out.f32")
        let scale = Float(max(peak(samples), 1) * 2)
        let scaled = samples.map { $0 / scale }
        try scaled.withUnsafeBytes { try Data($0).write(to: input) }
        try FormatFiles.shell(
            "sox -q -t f32 -r \(from) -c 2 \"$1\" -t f32 \"$2\" rate -v \(to)", input.path, output.path)
        let data = try Data(contentsOf: output)
        var back = [Float](repeating: 0, count: data.count / MemoryLayout<Float>.size)
        back.withUnsafeMutableBytes { _ = data.copyBytes(to: $0) }
        return back.map { $0 * scale }
    }

    static func peak(_ samples: [Float]) -> Double { Double(samples.reduce(0) { max($0, abs($1)) }) }
}
