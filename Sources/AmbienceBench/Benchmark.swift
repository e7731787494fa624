import Ambience
import AmbiencePlatform

/// Why one system's run failed. A failed system is reported in its cell; the other systems still run.
public enum BenchError: Error, CustomStringConvertible, Sendable {
    case engine(EngineError)
    case openAL(String)
    case sdlMixer(String)
    case pulse(String)
    case latency(String)
    case memory(String)

    public var description: String {
        switch self {
        case .engine(let error): "Ambience: \(error)"
        case .openAL(let message): "raw OpenAL Soft: \(message)"
        case .sdlMixer(let message): "SDL_mixer: \(message)"
        case .pulse(let message): "libpulse: \(message)"
        case .latency(let message): "latency: \(message)"
        case .memory(let message): "memory: \(message)"
        }
    }
}

/// The systems compared.
public enum BenchSystem: String, CaseIterable, Sendable {
    /// The stress scene through the engine, without music.
    case ambience
    /// The same, with the bundled theme streaming (only when the file is found).
    case ambienceMusic
    /// The scene on an OpenAL Soft loopback device with no engine.
    case openal
    /// The scene through SDL_mixer 2.6 on SDL's disk driver.
    case sdlMixer
    /// Scenes where Ambience keeps only some voices real: those voices alone, every one real, through the engine.
    /// Ambience's full scene over this is what its virtual voices cost.
    case ambienceRealSet
    /// Scenes where Ambience keeps only some voices real: raw OpenAL Soft playing exactly those voices (the same
    /// sounds, positions, pitches and restarts), the like-for-like peer of Ambience's full scene.
    case openalRealSet
    /// The scene through the engine under an HDR window, lifted every 2 s by a loud event (`stress --hdr`): beside
    /// `ambience`, what the window saves or costs.
    case ambienceHDR

    public var title: String {
        switch self {
        case .ambience: "Ambience"
        case .ambienceMusic: "Ambience + music"
        case .openal: "raw OpenAL Soft"
        case .sdlMixer: "SDL_mixer"
        case .ambienceRealSet: "Ambience, real set alone"
        case .openalRealSet: "raw OpenAL, real set"
        case .ambienceHDR: "Ambience, HDR"
        }
    }

    /// Whether the system plays a crowd scene's real set rather than the scene (run only where there is one).
    public var playsRealSet: Bool { self == .ambienceRealSet || self == .openalRealSet }
}

/// One system on one scene: the run with the median rtf, and every run's rtf.
public struct SystemMeasurement: Sendable {
    /// CPU seconds per second of audio.
    public var rtf = 0.0
    public var cpuSeconds = 0.0
    /// Seconds of audio mixed.
    public var seconds = 0.0
    public var wallSeconds = 0.0
    public var frames = 0
    /// Voices mixed for real: Ambience's real voices, OpenAL sources, SDL_mixer channels.
    public var voicesMixed = 0
    /// RMS of the mix, where the system hands it to us (not SDL_mixer, whose output goes to /dev/null).
    public var outputRMS: Double? = nil
    /// One-shots started again after finishing.
    public var restarts = 0
    /// Ambience only: voices moved between real and virtual by its ranking (`StressReport.sourceMoves`).
    public var sourceMoves = 0
    /// Average wall time of one 1024-frame mix block inside the mixer (Ambience and raw OpenAL: `alcRenderSamplesSOFT`).
    public var renderMicroseconds: Double? = nil
    /// Median cost of starting a voice: Ambience's `play`, raw OpenAL's `alSourcePlay` of a finished one-shot.
    public var playCallNs: Double? = nil
    /// Under an HDR window (`ambienceHDR`): the voices it culled, on average and at most, in the median run.
    public var culledMean: Double? = nil
    public var culledMax: Int? = nil
    /// The rtf of every run, in the order run.
    public var runs: [Double] = []
    /// Set when the system could not run; the numbers are then zero.
    public var error: String? = nil

    public init() {}
}

/// One scene size and every system's result on it.
public struct BenchScene: Sendable {
    public var voices: Int
    /// Every voice at pitch 1, as SDL_mixer plays them, so that all three systems do the same work.
    public var unitPitch = false
    /// Voices Ambience mixes for real in this scene; the rest are virtual.
    public var ambienceRealVoices: Int
    public var systems: [(system: BenchSystem, measurement: SystemMeasurement)] = []
    /// Where some voices are virtual: the scene's indices of the voices Ambience kept real after its first rank,
    /// which the real-set systems play. Empty where every voice is real.
    public var realSet: [Int] = []

    /// "1024 voices", "10000 (256 real)", "1024 voices, pitch 1".
    public var title: String {
        let size = ambienceRealVoices < voices ? "\(voices) (\(ambienceRealVoices) real)" : "\(voices) voices"
        return unitPitch ? size + ", pitch 1" : size
    }

    public func measurement(_ system: BenchSystem) -> SystemMeasurement? {
        systems.first { $0.system == system }?.measurement
    }

    /// Ambience's rtf over another system's, when both ran: the median of the ratios of runs made side by side (run k
    /// of one system over run k of the other), so that a slow spell of the machine, which slows both runs of a pair,
    /// cancels out; the ratio of the medians when the runs do not pair up.
    public func ratio(ambienceOver other: BenchSystem) -> Double? { ratio(.ambience, over: other) }

    /// One system's rtf over another's, paired run by run as `ratio(ambienceOver:)` does; nil unless both ran.
    public func ratio(_ system: BenchSystem, over other: BenchSystem) -> Double? {
        guard let a = measurement(system), a.error == nil, let b = measurement(other), b.error == nil, b.rtf > 0
        else { return nil }
        guard !a.runs.isEmpty, a.runs.count == b.runs.count, b.runs.allSatisfy({ $0 > 0 }) else { return a.rtf / b.rtf }
        return Benchmark.median(zip(a.runs, b.runs).map { $0 / $1 })
    }
}

public struct BenchOptions: Sendable {
    /// Seconds of audio per run.
    public var seconds: Double
    /// Runs per cell; the median is reported.
    public var runs: Int
    public var voiceCounts: [Int]
    /// Scene sizes run a second time with every voice at pitch 1: the like-for-like comparison with SDL_mixer, which
    /// cannot change pitch. Sizes not in `voiceCounts` are not run.
    public var unitPitchVoiceCounts: [Int]
    /// Ambience mixes every voice for real up to this many; larger crowds get `crowdRealVoices` real voices.
    public var allRealUpTo: Int
    public var crowdRealVoices: Int
    public var systems: [BenchSystem]
    /// The music for the "Ambience + music" row and the streaming cost, or nil to skip both.
    public var music: String?
    /// Seconds of audio for the streaming-cost measurement.
    public var musicSeconds: Double
    /// The mixer's rank margin in dB for the Ambience runs, or nil for the engine's default.
    package var rankMargin: Float? = nil

    public init(
        seconds: Double = 2, runs: Int = 3, voiceCounts: [Int] = [256, 1024, 4096, 10_000],
        unitPitchVoiceCounts: [Int] = [1024], allRealUpTo: Int = 4096, crowdRealVoices: Int = 256,
        systems: [BenchSystem] = BenchSystem.allCases,
        music: String? = StressScene.defaultMusicPath, musicSeconds: Double = 40
    ) {
        self.seconds = seconds
        self.runs = max(runs, 1)
        self.voiceCounts = voiceCounts
        self.unitPitchVoiceCounts = unitPitchVoiceCounts
        self.allRealUpTo = allRealUpTo
        self.crowdRealVoices = crowdRealVoices
        self.systems = systems
        self.music = music
        self.musicSeconds = musicSeconds
    }

    /// The options when their times and sizes are ones the benchmark can run (seconds 0…600 per run, voice counts
    /// 1…1,048,576), else a refusal naming the first that is not. `Benchmark.run` checks this first.
    public func validated() throws(InvalidNumber) -> BenchOptions {
        for (value, what) in [(seconds, "seconds"), (musicSeconds, "musicSeconds")] {
            guard try value.finite(what) > 0, value <= 600 else {
                throw InvalidNumber(what, value: "\(value)", expected: "above 0 and at most 600")
            }
        }
        for count in voiceCounts + unitPitchVoiceCounts + [allRealUpTo, crowdRealVoices] {
            _ = try count.checked(Int.self, in: 1...(1 << 20), "voice count")
        }
        return self
    }
}

public struct BenchReport: Sendable {
    public var scenes: [BenchScene] = []
    /// Median over Ambience's runs of each run's median `play` cost, in nanoseconds.
    public var playCallNs = 0.0
    /// Percent of one core that streaming the music costs (music alone minus silence); nil without music or without
    /// the `ambienceMusic` system.
    public var musicStreamCpuPercent: Double? = nil
    public var music: String? = nil
    public var seconds = 0.0
    public var runs = 0
    public var cancelled = false
}

/// The side-by-side benchmark: the stress scene through Ambience, raw OpenAL Soft and SDL_mixer, in one process.
public enum Benchmark {
    public static func run(
        _ requested: BenchOptions, progress: (String) -> Void = { _ in },
        isCancelled: () -> Bool = { false }
    ) throws(InvalidNumber) -> BenchReport {
        let options = try requested.validated()
        var report = BenchReport()
        report.seconds = options.seconds
        report.runs = options.runs
        report.music = options.music
        let systems = options.systems.filter { $0 != .ambienceMusic || options.music != nil }
        var playCosts: [Double] = []
        let scenes = options.voiceCounts.flatMap { voices in
            options.unitPitchVoiceCounts.contains(voices) ? [(voices, false), (voices, true)] : [(voices, false)]
        }
        for (voices, unitPitch) in scenes {
            let scene = StressScene(voices: voices, unitPitch: unitPitch)
            let real = voices <= options.allRealUpTo ? voices : options.crowdRealVoices
            var result = BenchScene(voices: voices, unitPitch: unitPitch, ambienceRealVoices: real)
            // Where some voices are virtual, the ones Ambience keeps real, for the like-for-like runs.
            let sceneSystems = systems.filter { !$0.playsRealSet || real < voices }
            var realSet: Result<StressScene, EngineError>? = nil
            if sceneSystems.contains(where: \.playsRealSet) {
                progress("\(result.title): the voices Ambience keeps real")
                realSet = Result { () throws(EngineError) in
                    let indices = try scene.realSet(
                        realVoices: real, blockFrames: 1024, blocks: 4, rankMargin: options.rankMargin)
                    result.realSet = indices
                    return scene.subset(indices)
                }
            }
            guard !sceneSystems.isEmpty else {
                report.scenes.append(result)
                continue
            }
            var runs: [BenchSystem: [SystemMeasurement]] = [:]
            // Runs take turns, so a change in the machine's load reaches every system alike, and each run starts
            // with the next system, so that none always takes the same place in the order (after the heavy
            // SDL_mixer run, say).
            for run in 1...options.runs {
                let shift = (run - 1) % sceneSystems.count
                for system in sceneSystems[shift...] + sceneSystems[..<shift] {
                    if isCancelled() { report.cancelled = true; return report }
                    progress("\(result.title): \(system.title), run \(run) of \(options.runs)")
                    var m: SystemMeasurement
                    do throws(BenchError) {
                        if system.playsRealSet {
                            let subset: StressScene
                            switch realSet {
                            case .success(let found)?: subset = found
                            case .failure(let error)?: throw BenchError.engine(error)
                            case nil: subset = StressScene(voices: 0)
                            }
                            m = try measure(
                                system, scene: subset, realVoices: subset.voices.count, options: options,
                                isCancelled: isCancelled)
                        } else {
                            m = try measure(
                                system, scene: scene, realVoices: real, options: options, isCancelled: isCancelled)
                        }
                    } catch {
                        m = SystemMeasurement()
                        m.error = error.description
                    }
                    runs[system, default: []].append(m)
                }
            }
            for system in sceneSystems {
                let all = runs[system] ?? []
                if let failed = all.first(where: { $0.error != nil }) {
                    result.systems.append((system, failed))
                    continue
                }
                var chosen = all.sorted { $0.rtf < $1.rtf }[all.count / 2]
                chosen.runs = all.map(\.rtf)
                result.systems.append((system, chosen))
                if system == .ambience { playCosts += all.compactMap(\.playCallNs) }
            }
            report.scenes.append(result)
        }
        report.playCallNs = median(playCosts)
        if let music = options.music, systems.contains(.ambienceMusic), !isCancelled() {
            progress("music streaming cost")
            report.musicStreamCpuPercent = try? musicStreamCost(
                music, seconds: options.musicSeconds, runs: options.runs, isCancelled: isCancelled)
        }
        report.cancelled = isCancelled()
        return report
    }

    static func measure(
        _ system: BenchSystem, scene: StressScene, realVoices: Int, options: BenchOptions,
        isCancelled: () -> Bool
    ) throws(BenchError) -> SystemMeasurement {
        switch system {
        case .ambience, .ambienceMusic, .ambienceRealSet, .ambienceHDR:
            let music = system == .ambienceMusic ? options.music : nil
            let r: StressReport
            var stress = StressOptions(
                seconds: options.seconds, realVoices: realVoices, blockFrames: 1024, music: music,
                hdr: system == .ambienceHDR)
            stress.rankMargin = options.rankMargin
            do {
                r = try scene.run(stress, isCancelled: isCancelled)
            } catch {
                throw .engine(error)
            }
            var m = SystemMeasurement()
            m.rtf = r.rtf
            m.cpuSeconds = r.cpuSeconds
            m.seconds = r.seconds
            m.wallSeconds = r.wallSeconds
            m.frames = Int((r.seconds * Double(scene.sampleRate)).rounded())
            m.voicesMixed = r.realVoices
            m.outputRMS = r.outputRMS
            m.restarts = r.retriggers
            m.sourceMoves = r.sourceMoves
            m.playCallNs = r.playCallNs
            m.renderMicroseconds = r.averageRenderMicroseconds
            m.culledMean = r.hdr?.culledMean
            m.culledMax = r.hdr?.culledMax
            return m
        case .openal, .openalRealSet:
            return try RawOpenAL.run(scene, seconds: options.seconds, isCancelled: isCancelled)
        case .sdlMixer:
            return try SDLMixer.run(scene, seconds: options.seconds, isCancelled: isCancelled)
        }
    }

    /// Percent of a core spent streaming `path`: an engine rendering the music alone, minus one rendering silence.
    static func musicStreamCost(_ path: String, seconds: Double, runs: Int, isCancelled: () -> Bool) throws(EngineError)
        -> Double
    {
        func cpu(music: Bool) throws(EngineError) -> Double {
            let engine = try AudioEngine(EngineConfiguration(output: .offline, blockFrames: 1024))
            defer { engine.shutdown() }
            if music {
                try engine.musicPlayer.setQueue(paths: [path])
                engine.musicPlayer.repeatMode = .all
                engine.musicPlayer.play()
            }
            let total = Int(seconds * Double(engine.configuration.sampleRate))
            var done = 0
            let start = ProcessUsage.cpuSeconds
            while done < total, !isCancelled() {
                _ = try engine.render(frames: 1024)
                engine.update()
                done += 1024
            }
            return ProcessUsage.cpuSeconds - start
        }
        var costs: [Double] = []
        for _ in 0..<max(runs, 1) {
            let silence = try cpu(music: false)
            let music = try cpu(music: true)
            costs.append((music - silence) / seconds * 100)
        }
        return median(costs)
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }
}
