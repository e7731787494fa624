import Ambience
import AmbiencePlatform
import Foundation

/// The systems `bench --sdl-mixer-stand-in` compares: the two SDL_mixers, and the floor beneath the stand-in.
public enum MixerLibrary: String, CaseIterable, Sendable {
    /// The system's SDL_mixer (Debian's), as the loader finds it.
    case sdlMixer
    /// Ambience's stand-in, first on the child's `LD_LIBRARY_PATH` under SDL_mixer's soname.
    case standIn
    /// The same scene on raw OpenAL Soft and libvorbisfile, no engine (`MixerFloor`): the least a stand-in that mixes
    /// through OpenAL Soft can cost. CPU runs only.
    case floor

    public var title: String {
        switch self {
        case .sdlMixer: "SDL_mixer"
        case .standIn: "stand-in"
        case .floor: "OpenAL floor"
        }
    }
}

public struct StandInBenchOptions: Sendable {
    /// Seconds of the scene per CPU run.
    public var seconds = 10.0
    public var runs = 3
    /// Chunk size asked of `Mix_OpenAudio`. 441 frames at 44.1 kHz is 10 ms exactly, so the disk driver's pace (one
    /// period in whole milliseconds between writes) is real time.
    public var periodFrames = 441
    /// Clicks per latency run, 100 to 150 ms apart.
    public var clicks = 100
    /// The folder holding `libSDL2_mixer-2.0.so.0` (a link to the stand-in), and the library it leads to.
    public var standInFolder: String
    public var standInLibrary: String
    /// The floor's effects as stereo buffers, as a stand-in receives them (`MixerFloor.run`); mono by default.
    public var floorStereoChunks = false
    /// The `ambience` executable that runs each child (default: this one).
    public var executable = "/proc/self/exe"

    public init(standInFolder: String, standInLibrary: String) {
        self.standInFolder = standInFolder
        self.standInLibrary = standInLibrary
    }
}

/// One library's runs and their medians.
public struct StandInBenchSystem: Sendable {
    public var library: MixerLibrary
    /// The library file each child really had mapped, and its `Mix_Linked_Version`.
    public var mappedLibrary = ""
    public var version = ""
    /// CPU seconds per audio second, one per run (the disk driver's runs), nil for a run that failed: kept by run so
    /// that the paired ratios pair the same round's runs (`StandInBenchReport.pairedCPURatio`).
    public var cpuPerAudioSecond: [Double?] = []
    /// Trigger-to-sound p50 and p99 in milliseconds, one per run (the pulseaudio driver's runs).
    public var p50: [Double] = []
    public var p99: [Double] = []
    public var clicks = 0
    public var found = 0
    public var retriggersPerSecond: [Double] = []
    public var errors: [String] = []

    public var medianCPU: Double? { StandInBench.median(cpuPerAudioSecond.compactMap { $0 }) }
    public var medianP50: Double? { StandInBench.median(p50) }
    public var medianP99: Double? { StandInBench.median(p99) }
    public var medianRetriggersPerSecond: Double? { StandInBench.median(retriggersPerSecond) }
}

public struct StandInBenchReport: Sendable {
    public var systems: [StandInBenchSystem] = MixerLibrary.allCases.map { StandInBenchSystem(library: $0) }
    public var options: StandInBenchOptions
    public var server = ""
    /// /proc/loadavg's 1-minute figure before and after.
    public var loadBefore = 0.0
    public var loadAfter = 0.0

    public func system(_ library: MixerLibrary) -> StandInBenchSystem {
        systems.first { $0.library == library }!
    }

    /// Stand-in over SDL_mixer, CPU per audio second (goal: at most 1.0).
    public var cpuRatio: Double? { medianCPURatio(.standIn, over: .sdlMixer) }

    /// The floor over SDL_mixer, CPU per audio second: the best ratio an OpenAL Soft stand-in can reach.
    public var floorRatio: Double? { medianCPURatio(.floor, over: .sdlMixer) }

    /// Stand-in over the floor, CPU per audio second: what the engine and the stand-in add to OpenAL Soft.
    public var standInOverFloor: Double? { medianCPURatio(.standIn, over: .floor) }

    /// `library`'s median CPU over `other`'s, or nil without both.
    public func medianCPURatio(_ library: MixerLibrary, over other: MixerLibrary) -> Double? {
        guard let ours = system(library).medianCPU, let theirs = system(other).medianCPU, theirs > 0 else { return nil }
        return ours / theirs
    }

    /// The median of `library`'s CPU over `other`'s run by run (the runs of one round ran minutes apart at most, so
    /// the machine's load weighs on both alike), or nil without a pair. A round where either failed has no pair; the
    /// lists are indexed by run, so a failure shifts no later pair.
    public func pairedCPURatio(_ library: MixerLibrary, over other: MixerLibrary) -> Double? {
        let ratios = zip(system(library).cpuPerAudioSecond, system(other).cpuPerAudioSecond).compactMap { a, b in
            guard let a, let b, b > 0 else { return Double?.none }
            return a / b
        }
        return StandInBench.median(ratios)
    }

    /// Stand-in's p99 minus SDL_mixer's, in milliseconds (goal: at most 1).
    public var p99Difference: Double? {
        guard let ours = system(.standIn).medianP99, let theirs = system(.sdlMixer).medianP99 else { return nil }
        return ours - theirs
    }

    public var p50Ratio: Double? {
        guard let ours = system(.standIn).medianP50, let theirs = system(.sdlMixer).medianP50, theirs > 0 else {
            return nil
        }
        return ours / theirs
    }

    public var p99Ratio: Double? {
        guard let ours = system(.standIn).medianP99, let theirs = system(.sdlMixer).medianP99, theirs > 0 else {
            return nil
        }
        return ours / theirs
    }
}

/// `ambience bench --sdl-mixer-stand-in`: the same SDL_mixer program (`MixerScene`) run as child processes, once on
/// the system's SDL_mixer and once on the stand-in, alternately, each run twice: on SDL's disk driver for CPU per
/// audio second, and on the sound server with clicks for trigger-to-sound latency (the `bench --latency` method: one
/// recorder at the default sink's monitor, calls and onsets on CLOCK_MONOTONIC). In turn with them, the same scene on
/// raw OpenAL Soft (`MixerFloor`), CPU only.
public enum StandInBench {
    public static func run(
        _ options: StandInBenchOptions, progress: (String) -> Void = { _ in }, isCancelled: () -> Bool = { false }
    ) throws(BenchError) -> StandInBenchReport {
        guard (1...9).contains(options.runs) else { throw .latency("runs must be from 1 to 9") }
        guard options.seconds.isFinite, options.seconds > 0, options.seconds <= 600 else {
            throw .latency("seconds must be above 0 and at most 600")
        }
        guard (1...10_000).contains(options.clicks) else { throw .latency("clicks must be from 1 to 10000") }
        var report = StandInBenchReport(options: options)
        report.server = LatencyBench.serverName()
        report.loadBefore = loadAverage()
        for run in 0..<options.runs {
            // Each run starts with the other library, so that neither always goes first.
            let order = run % 2 == 0 ? MixerLibrary.allCases : MixerLibrary.allCases.reversed()
            for library in order {
                if isCancelled() { return report }
                let index = report.systems.firstIndex { $0.library == library }!
                progress("\(library.title), run \(run + 1): CPU")
                // One entry per run, failed or not, so that the runs pair by round.
                report.systems[index].cpuPerAudioSecond.append(nil)
                do {
                    let result = try child(library, driver: .disk, options: options, seed: 0)
                    try note(result, in: &report.systems[index], options: options)
                    report.systems[index].cpuPerAudioSecond[run] = result.cpuSeconds / max(result.wallSeconds, 1e-9)
                    report.systems[index].retriggersPerSecond.append(
                        Double(result.retriggers) / max(result.wallSeconds, 1e-9))
                } catch {
                    report.systems[index].errors.append("CPU run \(run + 1): \(error)")
                }
                if isCancelled() { return report }
                guard library != .floor else { continue }
                progress("\(library.title), run \(run + 1): latency")
                do {
                    let delays = try latency(library, options: options, seed: UInt64(run + 1), into: &report, index)
                    if let p = Percentiles(delays) {
                        report.systems[index].p50.append(p.p50)
                        report.systems[index].p99.append(p.p99)
                    }
                } catch {
                    report.systems[index].errors.append("latency run \(run + 1): \(error)")
                }
            }
        }
        report.loadAfter = loadAverage()
        return report
    }

    /// One latency run: the recorder at the monitor around a child with clicks; the delays in milliseconds.
    static func latency(
        _ library: MixerLibrary, options: StandInBenchOptions, seed: UInt64, into report: inout StandInBenchReport,
        _ index: Int
    ) throws(BenchError) -> [Double] {
        let expected =
            Double(LatencyClient.leadNanoseconds + LatencyClient.tailNanoseconds) / 1e9 + Double(options.clicks) * 0.15
        let recorder = try MonitorRecorder(sampleRate: MixerScene.sampleRate, seconds: expected + 5)
        recorder.start()
        guard recorder.waitForData(seconds: 10) else {
            throw .pulse("the default sink's monitor sent nothing for 10 s")
        }
        let result: MixerSceneResult
        do {
            defer { recorder.stop() }
            result = try child(library, driver: .pulseaudio, options: options, seed: seed)
        }
        try note(result, in: &report.systems[index], options: options)
        let recording = recorder.stop()
        let detector = ClickDetector(threshold: MixerScene.clickThreshold, refractoryFrames: MixerScene.sampleRate / 50)
        let clock = RecordingClock(reads: recording.reads, sampleRate: MixerScene.sampleRate)
        let onsets = detector.onsets(in: recording.samples).compactMap { clock.nanoseconds(atFrame: $0) }
        let matched = ClickMatcher.delays(triggers: result.triggers, onsets: onsets, windowNanoseconds: 1_000_000_000)
        report.systems[index].clicks += result.triggers.count
        report.systems[index].found += matched.delays.count
        return matched.delays.map { Double($0) / 1e6 }
    }

    /// Checks that the child had the library it was meant to have, and keeps its name.
    static func note(_ result: MixerSceneResult, in system: inout StandInBenchSystem, options: StandInBenchOptions)
        throws(BenchError)
    {
        let standIn = realPath(options.standInLibrary)
        let isStandIn = result.library == standIn
        let isFloor = result.library.split(separator: "/").last?.hasPrefix("libopenal") == true
        guard isStandIn == (system.library == .standIn), isFloor == (system.library == .floor) else {
            throw .sdlMixer("the \(system.library.title) child had \(result.library) mapped")
        }
        system.mappedLibrary = result.library
        system.version = result.version
    }

    /// Runs `ambience bench --mixer-scene-client DRIVER …` with `library` in front, and reads what it printed.
    static func child(_ library: MixerLibrary, driver: MixerSceneDriver, options: StandInBenchOptions, seed: UInt64)
        throws(BenchError) -> MixerSceneResult
    {
        var environment = ProcessInfo.processInfo.environment
        if library == .standIn {
            let rest = environment["LD_LIBRARY_PATH"].map { $0.isEmpty ? "" : ":" + $0 } ?? ""
            environment["LD_LIBRARY_PATH"] = options.standInFolder + rest
        }
        let clicks = driver == .pulseaudio ? options.clicks : 0
        let arguments =
            [
                "bench", "--mixer-scene-client", driver.rawValue, "--seconds", "\(options.seconds)", "--period",
                "\(options.periodFrames)", "--clicks", "\(clicks)", "--seed", "\(seed)"
            ] + (library == .floor ? ["--floor"] + (options.floorStereoChunks ? ["--stereo-chunks"] : []) : [])
        let timeout = options.seconds + Double(clicks) * 0.15 + 60
        let process: ChildProcess
        do {
            process = try ChildProcess.run(
                options.executable, arguments, environment: environment, timeoutSeconds: timeout)
        } catch {
            throw .sdlMixer(error.message)
        }
        if let failure = process.failure("the \(library.title) child", timeoutSeconds: timeout) {
            throw .sdlMixer(failure)
        }
        guard let result = MixerSceneResult(lines: process.output) else {
            throw .sdlMixer("the \(library.title) child printed something unexpected: \(process.output)")
        }
        return result
    }

    static func realPath(_ path: String) -> String {
        FilePaths.resolved(path) ?? path
    }

    static func loadAverage() -> Double {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").first.flatMap { Double($0) } ?? 0
    }

    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
