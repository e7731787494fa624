import Ambience
import AmbienceBench
import AmbiencePlatform

extension BenchCommand {
    static let standInUsage = """

        bench --sdl-mixer-stand-in [--json] [--seconds S] [--runs R] [--clicks N] [--period FRAMES]
                                   [--floor-stereo-chunks]
                                            one SDL_mixer scene through Debian's SDL_mixer and through the stand-in
          --seconds  seconds of the scene per CPU run (default 10)
          --runs     runs per library, 1 to 9 (default 3); each figure is the median
          --clicks   clicks per latency run, 100 to 150 ms apart (default 100)
          --period   Mix_OpenAudio's chunk size (default 441: 10 ms at 44.1 kHz, which the disk driver paces exactly)
          --floor-stereo-chunks  the floor's effects uploaded as stereo, as a stand-in receives them from
                     Mix_LoadWAV, rather than mono, as the files are
        The scene, as an SDL_mixer game plays it: 32 channels of Assets/SFX one-shots (Mix_LoadWAV, each started
        again by a 60 Hz loop when it ends) and Assets/Music/gravity-wave-theme.ogg looping (Mix_PlayMusic), 44.1 kHz
        16-bit stereo. The same code runs in child processes, once on the system's SDL_mixer and once with the
        stand-in first on LD_LIBRARY_PATH (each child names the library its /proc/self/maps holds), and in turn with
        them the floor: the scene on raw OpenAL Soft and libvorbisfile with no engine (CPU only). Per run: CPU
        seconds of the whole child per audio second, on SDL's disk driver into /dev/null at real time; then
        trigger-to-sound p50 and p99 of clicks on a 33rd channel, on the sound server, recorded at the default
        sink's monitor as `bench --latency` does. Goals: CPU at most 1.0x SDL_mixer's; p99 at most SDL_mixer's + 1 ms.
        """

    static func runStandIn(_ arguments: inout Arguments) throws {
        let json = arguments.flag("--json")
        let seconds = try arguments.duration("--seconds") ?? 10
        guard seconds > 0, seconds <= 600 else { throw UsageError("--seconds must be above 0 and at most 600") }
        let runs = try arguments.integer("--runs") ?? 3
        guard (1...9).contains(runs) else { throw UsageError("--runs must be from 1 to 9") }
        let clicks = try arguments.integer("--clicks") ?? 100
        guard (1...10_000).contains(clicks) else { throw UsageError("--clicks must be from 1 to 10000") }
        let period = try arguments.integer("--period") ?? 441
        guard (64...8_192).contains(period) else { throw UsageError("--period must be from 64 to 8192") }
        let floorStereo = arguments.flag("--floor-stereo-chunks")
        guard try arguments.finish().isEmpty else {
            throw UsageError("bench --sdl-mixer-stand-in takes no positional arguments")
        }
        let standIn = try StandInLibrary.find(
            executable: RunCommand.ownExecutable(), environment: ChildProgram.currentEnvironment)
        defer { standIn.remove() }
        var options = StandInBenchOptions(standInFolder: standIn.folder, standInLibrary: standIn.library)
        options.seconds = seconds
        options.runs = runs
        options.clicks = clicks
        options.periodFrames = period
        options.floorStereoChunks = floorStereo
        let report = try StandInBench.run(
            options, progress: { if !json { Output.line($0) } }, isCancelled: { Interrupt.requested })
        try Interrupt.check()
        if json {
            Output.print(describe(report).text)
        } else {
            printStandIn(report)
        }
    }

    /// The child: the scene on one driver, whatever SDL_mixer the loader gave it.
    static func runMixerSceneClient(_ arguments: inout Arguments) throws {
        guard let name = try arguments.option("--mixer-scene-client"), let driver = MixerSceneDriver(rawValue: name)
        else {
            throw UsageError("--mixer-scene-client takes disk or pulseaudio")
        }
        let seconds = try arguments.duration("--seconds") ?? 10
        guard seconds > 0, seconds <= 600 else { throw UsageError("--seconds must be above 0 and at most 600") }
        guard let period = try arguments.integer("--period"), (64...8_192).contains(period) else {
            throw UsageError("--period must be from 64 to 8192")
        }
        let clicks = try arguments.integer("--clicks") ?? 0
        guard (0...10_000).contains(clicks) else { throw UsageError("--clicks must be from 0 to 10000") }
        let seed = UInt64(truncatingIfNeeded: try arguments.integer("--seed") ?? 1)
        let floor = arguments.flag("--floor")
        let stereoChunks = arguments.flag("--stereo-chunks")
        guard try arguments.finish().isEmpty else {
            throw UsageError("bench --mixer-scene-client takes no positional arguments")
        }
        guard !floor || clicks == 0 else { throw UsageError("--floor plays no clicks") }
        guard floor || !stereoChunks else { throw UsageError("--stereo-chunks is the floor's (--floor)") }
        let result =
            floor
            ? try MixerFloor.run(driver: driver, seconds: seconds, periodFrames: period, stereoChunks: stereoChunks)
            : try MixerScene.run(
                driver: driver, seconds: seconds, periodFrames: period, clicks: clicks,
                gaps: 100_000_000...150_000_000, seed: seed)
        Output.print(result.lines.joined(separator: "\n"))
    }

    static func describe(_ report: StandInBenchReport) -> JSON {
        func values(_ list: [Double?]) -> JSON { .array(list.map(number)) }
        return .object([
            ("seconds", .double(report.options.seconds)), ("runs", .int(report.options.runs)),
            ("periodFrames", .int(report.options.periodFrames)), ("sampleRate", .int(MixerScene.sampleRate)),
            ("floorChunks", .string(report.options.floorStereoChunks ? "stereo" : "mono")),
            ("server", .string(report.server)),
            ("loadAverage", .object([("before", .double(report.loadBefore)), ("after", .double(report.loadAfter))])),
            (
                "systems",
                .object(
                    report.systems.map { s in
                        (
                            s.library.rawValue,
                            .object([
                                ("library", .string(s.mappedLibrary)), ("version", .string(s.version)),
                                ("cpuPerAudioSecond", number(s.medianCPU)), ("cpuRuns", values(s.cpuPerAudioSecond)),
                                ("p50Milliseconds", number(s.medianP50)), ("p99Milliseconds", number(s.medianP99)),
                                ("p50Runs", values(s.p50)), ("p99Runs", values(s.p99)),
                                ("clicks", .int(s.clicks)), ("found", .int(s.found)),
                                ("retriggersPerSecond", number(s.medianRetriggersPerSecond)),
                                ("errors", .array(s.errors.map(JSON.string)))
                            ])
                        )
                    })
            ),
            (
                "ratios",
                .object([
                    ("cpuStandInOverSDLMixer", number(report.cpuRatio)),
                    ("cpuFloorOverSDLMixer", number(report.floorRatio)),
                    ("cpuStandInOverFloor", number(report.standInOverFloor)),
                    ("cpuStandInOverSDLMixerPaired", number(report.pairedCPURatio(.standIn, over: .sdlMixer))),
                    ("cpuFloorOverSDLMixerPaired", number(report.pairedCPURatio(.floor, over: .sdlMixer))),
                    ("cpuStandInOverFloorPaired", number(report.pairedCPURatio(.standIn, over: .floor))),
                    ("p50StandInOverSDLMixer", number(report.p50Ratio)),
                    ("p99StandInOverSDLMixer", number(report.p99Ratio)),
                    ("p99StandInMinusSDLMixerMilliseconds", number(report.p99Difference))
                ])
            ),
            (
                "goals",
                .object([
                    ("cpu", report.cpuRatio.map { .bool($0 <= 1) } ?? .null),
                    ("latency", report.p99Difference.map { .bool($0 <= 1) } ?? .null)
                ])
            )
        ])
    }

    static func printStandIn(_ report: StandInBenchReport) {
        func pad(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(width - text.count, 1))
        }
        func cell(_ value: Double?, _ digits: Int) -> String { value.map { fixed($0, digits) } ?? "-" }
        let o = report.options
        Output.print(
            "one SDL_mixer scene, medians of \(o.runs) runs: CPU over \(fixed(o.seconds, 0)) s on SDL's disk driver; "
                + "latency of \(o.clicks) clicks on \(report.server.isEmpty ? "the sound server" : report.server); "
                + "\(o.periodFrames)-frame chunks at 44.1 kHz; load average \(fixed(report.loadBefore, 2)) before, "
                + "\(fixed(report.loadAfter, 2)) after")
        Output.print(pad("", 14) + pad("CPU s/audio s", 15) + pad("p50 ms", 9) + pad("p99 ms", 9) + "library")
        for s in report.systems {
            Output.print(
                pad(s.library.title, 14) + pad(cell(s.medianCPU, 4), 15) + pad(cell(s.medianP50, 2), 9)
                    + pad(cell(s.medianP99, 2), 9) + "\(s.mappedLibrary) (\(s.version))"
                    + (s.library == .floor ? "" : ", clicks \(s.found)/\(s.clicks)"))
            for error in s.errors { Output.line("\(s.library.title): \(error)") }
        }
        Output.print(
            pad("ratio", 14) + pad(cell(report.cpuRatio, 2), 15) + pad(cell(report.p50Ratio, 2), 9)
                + pad(cell(report.p99Ratio, 2), 9) + "stand-in / SDL_mixer")
        if let cpu = report.cpuRatio {
            Output.print("CPU: \(fixed(cpu, 2))x SDL_mixer's (goal at most 1.0x: \(cpu <= 1 ? "met" : "missed"))")
        }
        if let floor = report.floorRatio, let over = report.standInOverFloor {
            Output.print(
                "CPU floor through OpenAL Soft (\(report.options.floorStereoChunks ? "stereo" : "mono") effects): "
                    + "\(fixed(floor, 2))x SDL_mixer's; the stand-in \(fixed(over, 2))x the floor")
        }
        let paired = [(MixerLibrary.standIn, MixerLibrary.sdlMixer), (.floor, .sdlMixer), (.standIn, .floor)]
            .compactMap { pair in
                report.pairedCPURatio(pair.0, over: pair.1).map { "\(pair.0.title)/\(pair.1.title) \(fixed($0, 2))" }
            }
        if !paired.isEmpty { Output.print("CPU, medians of paired runs: " + paired.joined(separator: ", ")) }
        if let difference = report.p99Difference {
            Output.print(
                "p99: SDL_mixer's \(difference >= 0 ? "+" : "")\(fixed(difference, 2)) ms (goal at most +1 ms: "
                    + "\(difference <= 1 ? "met" : "missed"))")
        }
    }
}
