import Ambience
import Glibc

/// A reproducible crowd of 3D voices, for the stress test (`ambience stress`, `Demos/MixerStress`) and the side-by-side
/// benchmark, which plays the very same sounds, positions and pitches through raw OpenAL Soft and SDL_mixer.
///
/// Everything comes from one seed: the sounds (short mono tones and noise bursts made in memory, 0.2–2 s), and for
/// each voice its sound, a position within `radius` metres of the listener, a pitch from 0.9 to 1.1 (or exactly 1 in
/// the unit-pitch variant, the only pitch SDL_mixer can play) and whether it loops. One-shot voices are started again
/// whenever they finish, so the crowd stays the same size.
public struct StressScene: Sendable {
    /// One voice of the crowd.
    public struct VoiceSpec: Sendable, Equatable {
        /// Index into `sounds`.
        public var sound: Int
        public var x: Float
        public var y: Float
        public var z: Float
        public var pitch: Float
        public var loop: Bool
    }

    public let sampleRate: Int
    /// Mono sounds at `sampleRate`: the ones the voices play, then any loaded-only ballast.
    public let sounds: [PCMBuffer]
    public let voices: [VoiceSpec]
    /// Whether every voice plays at pitch 1 (no resampling), instead of 0.9–1.1.
    public let unitPitch: Bool

    public static let defaultSeed: UInt64 = 0xA5B1_E7CE_5EED_0001

    /// Makes a crowd of `voices` voices. The same seed gives the same scene, and a smaller crowd is a prefix of a larger one.
    /// With `unitPitch` the crowd is the same (sounds, positions, loops) but every voice plays at pitch 1.
    /// `voices` and `sampleRate` are clamped to `EngineConfiguration`'s limits, `radius` to `MixerLimits.distance` (a
    /// non-finite one is 50) and `loopingFraction` to 0...1 (a NaN one is 0.7). `loadedSeconds` (0…3,600) adds that
    /// many one-second sounds of noise that no voice plays: memory that is loaded and held, for `bench --memory`.
    public init(
        voices: Int, seed: UInt64 = StressScene.defaultSeed, sampleRate: Int = 48_000, loopingFraction: Double = 0.7,
        radius requestedRadius: Float = 50, unitPitch: Bool = false, loadedSeconds: Int = 0
    ) {
        let sampleRate = min(
            max(sampleRate, EngineConfiguration.sampleRates.lowerBound), EngineConfiguration.sampleRates.upperBound)
        let radius = (try? requestedRadius.clamped(to: MixerLimits.distance, "radius")) ?? 50
        let loopingFraction = (try? loopingFraction.clamped(to: 0...1, "loopingFraction")) ?? 0.7
        let voices = min(max(voices, 0), EngineConfiguration.maxVoiceCounts.upperBound)
        self.sampleRate = sampleRate
        self.unitPitch = unitPitch
        let playable = StressScene.makeSounds(sampleRate: sampleRate, seed: seed)
        sounds =
            playable
            + StressScene.makeBallast(seconds: min(max(loadedSeconds, 0), 3600), sampleRate: sampleRate, seed: seed)
        var rng = SplitMix64(seed: seed ^ 0x5CE7_E000)
        var specs: [VoiceSpec] = []
        specs.reserveCapacity(voices)
        for _ in 0..<voices {
            let sound = Int.random(in: 0..<playable.count, using: &rng)
            let x = Float.random(in: -radius...radius, using: &rng)
            let y = Float.random(in: -radius / 10...radius / 10, using: &rng)
            let z = Float.random(in: -radius...radius, using: &rng)
            // Drawn either way, so that both variants place the same crowd.
            let pitch = Float.random(in: 0.9...1.1, using: &rng)
            let loop = Double.random(in: 0..<1, using: &rng) < loopingFraction
            specs.append(VoiceSpec(sound: sound, x: x, y: y, z: z, pitch: unitPitch ? 1 : pitch, loop: loop))
        }
        self.voices = specs
    }

    private init(sampleRate: Int, sounds: [PCMBuffer], voices: [VoiceSpec], unitPitch: Bool) {
        self.sampleRate = sampleRate
        self.sounds = sounds
        self.voices = voices
        self.unitPitch = unitPitch
    }

    /// The same scene with only the voices at `indices` (the same sounds, positions, pitches and loops); indices
    /// outside the crowd are skipped.
    public func subset(_ indices: [Int]) -> StressScene {
        StressScene(
            sampleRate: sampleRate, sounds: sounds, voices: indices.filter(voices.indices.contains).map { voices[$0] },
            unitPitch: unitPitch)
    }

    /// The bundled theme (`Assets/Music/gravity-wave-theme.ogg`), looked for in the current directory and above the
    /// running program; nil when it is not there.
    public static var defaultMusicPath: String? {
        let relative = "Assets/Music/gravity-wave-theme.ogg"
        var candidates = [relative]
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if length > 0 {
            var directory = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            for _ in 0..<5 {
                guard let slash = directory.lastIndex(of: "/"), slash != directory.startIndex else { break }
                directory = String(directory[..<slash])
                candidates.append(directory + "/" + relative)
            }
        }
        return candidates.first { access($0, R_OK) == 0 }
    }

    /// The bytes of one loaded second: mono float at 48 kHz, the scene's rate.
    public static let loadedSecondBytes = 48_000 * MemoryLayout<Float>.size

    /// One-second sounds of white noise at 0.1, each different, so that no storage can share them.
    static func makeBallast(seconds: Int, sampleRate: Int, seed: UInt64) -> [PCMBuffer] {
        var rng = SplitMix64(seed: seed ^ 0xBA11_A570)
        return (0..<seconds).map { _ in
            PCMBuffer(
                sampleRate: sampleRate, channels: 1,
                samples: (0..<sampleRate).map { _ in Float.random(in: -0.1...0.1, using: &rng) })
        }
    }

    /// Three tones and two noise bursts, 0.2–2 s, peaking at 0.3.
    static func makeSounds(sampleRate: Int, seed: UInt64) -> [PCMBuffer] {
        var rng = SplitMix64(seed: seed)
        let rate = Double(sampleRate)
        func make(_ seconds: Double, _ sample: (Double, inout SplitMix64) -> Double) -> PCMBuffer {
            let frames = Int(seconds * rate)
            var samples = [Float](repeating: 0, count: frames)
            for i in 0..<frames { samples[i] = Float(0.3 * sample(Double(i) / rate, &rng)) }
            return PCMBuffer(sampleRate: sampleRate, channels: 1, samples: samples)
        }
        var lowpassed = 0.0
        return [
            // A 2 s hum: whole cycles of 110 and 220 Hz, so it loops without a click.
            make(2.0) { t, _ in 0.7 * sin(2 * .pi * 110 * t) + 0.3 * sin(2 * .pi * 220 * t) },
            // A 1.2 s whine with vibrato.
            make(1.2) { t, _ in sin(2 * .pi * 880 * t + 3 * sin(2 * .pi * 5 * t)) },
            // 0.8 s of softened hiss.
            make(0.8) { _, rng in
                lowpassed += 0.2 * (Double.random(in: -1...1, using: &rng) - lowpassed)
                return 2.5 * lowpassed
            },
            // A 0.2 s blip that dies away.
            make(0.2) { t, _ in sin(2 * .pi * 1320 * t) * exp(-t * 20) },
            // A 0.5 s crack: a noise burst with a fast decay.
            make(0.5) { t, rng in Double.random(in: -1...1, using: &rng) * exp(-t * 9) }
        ]
    }
}

/// How to run a `StressScene`.
public struct StressOptions: Sendable {
    /// Seconds of audio to render (offline) or to run for (real time).
    public var seconds: Double
    /// Voices mixed for real; the rest are virtual.
    public var realVoices: Int
    /// Frames per render block (offline) and per device callback (real time).
    public var blockFrames: Int
    /// Music streamed beside the crowd (repeating), or nil for none.
    public var music: String?
    /// Real time only: every ~0.3 s the music player seeks or skips (through `music` and the other bundled track),
    /// and every game frame extra voices start, fade and stop, so the game, streaming and audio threads all race.
    public var chaos: Bool

    public init(
        seconds: Double = 10, realVoices: Int = 256, blockFrames: Int = 1024,
        music: String? = StressScene.defaultMusicPath,
        chaos: Bool = false
    ) {
        self.seconds = seconds
        self.realVoices = realVoices
        self.blockFrames = blockFrames
        self.music = music
        self.chaos = chaos
    }

    /// How long a run may be: up to a day.
    public static let secondsRange: ClosedRange<Double> = 0...86_400

    /// The options with `seconds` clamped to `secondsRange`; NaN and infinities are refused. The voice counts and
    /// block size are checked by the engine's configuration.
    public func validated() throws(EngineError) -> StressOptions {
        var checked = self
        do { checked.seconds = try seconds.clamped(to: Self.secondsRange, "seconds") } catch {
            throw .invalidNumber(error)
        }
        return checked
    }
}

/// What a stress run measured.
public struct StressReport: Sendable {
    public var voices = 0
    /// Voices mixed by real sources at the end of the run.
    public var realVoices = 0
    /// Voices kept in time virtually at the end of the run.
    public var virtualVoices = 0
    /// Seconds of audio rendered (offline) or of wall time run (real time).
    public var seconds = 0.0
    /// Process CPU time over the render loop.
    public var cpuSeconds = 0.0
    /// CPU seconds per second of audio: 1 is one core at full load.
    public var rtf = 0.0
    /// Median cost of one `AudioEngine.play` call, in nanoseconds.
    public var playCallNs = 0.0
    public var peakRSSBytes = 0
    public var underruns = 0
    // Beyond the contract's keys:
    public var playCalls = 0
    /// One-shot voices started again after they finished.
    public var retriggers = 0
    /// Voices lost to stealing (none while the pool holds the whole crowd).
    public var stolen = 0
    /// RMS of the rendered mix over both channels (offline only).
    public var outputRMS: Double? = nil
    /// The music file streamed, if any.
    public var music: String? = nil
    /// "offline", or the SDL driver that played the audio.
    public var driver = "offline"
    public var wallSeconds = 0.0
    /// Seconds of audio the mixer rendered.
    public var renderedSeconds = 0.0
    public var renderedBlocks = 0
    public var averageRenderMicroseconds = 0.0
    public var maxRenderMicroseconds = 0.0
    /// Real time only: the audio callback's mixing time, p50 and p99 (from the mixer's histogram: each the upper
    /// edge of its bucket), and the period it had, in microseconds.
    public var callbackP50Microseconds: Double? = nil
    public var callbackP99Microseconds: Double? = nil
    public var periodMicroseconds: Double? = nil
    /// Real time only: seconds from the loop's start to the output's first block, and seconds of wall time after it
    /// that the output did not render (the server played silence instead: underflows the callback never saw).
    public var startupSeconds: Double? = nil
    public var missingSeconds: Double? = nil
    /// Whether the run stopped early because `isCancelled` said so.
    public var cancelled = false
    /// What `--chaos` did, when it ran.
    public var chaos: ChaosCounts? = nil
    /// What `--soak` measured, when it ran.
    public var soak: SoakReport? = nil

    public init() {}
}

/// What the chaos of a real-time run did to the engine.
public struct ChaosCounts: Sendable {
    public var seeks = 0
    public var skips = 0
    public var voicesStarted = 0
    public var voicesStopped = 0
    public var voicesFaded = 0
}

/// A soak run: an hour of game audio rendered offline, watched for leaks.
public struct SoakReport: Sendable {
    public var oneShots = 0
    public var musicSkips = 0
    public var interruptions = 0
    public var backgroundings = 0
    public var routeChanges = 0
    /// Seconds of audio after which the baseline below was taken.
    public var warmupSeconds = 0.0
    /// OpenAL sources and buffers alive in the process (made and not deleted): at the baseline, at the end, and the
    /// most at any block after the baseline.
    public var alSourcesAfterWarmup = 0
    public var alSourcesAtEnd = 0
    public var alSourcesMax = 0
    public var alBuffersAfterWarmup = 0
    public var alBuffersAtEnd = 0
    public var alBuffersMax = 0
    /// Voices alive (real + virtual) at the end.
    public var voicesAtEnd = 0
    /// Resident memory (`/proc/self/statm`, after `malloc_trim` so that memory glibc keeps free for later does
    /// not count), at the baseline and at the end.
    public var rssAfterWarmupBytes = 0
    public var rssAtEndBytes = 0
    public var rssGrowthBytes: Int { rssAtEndBytes - rssAfterWarmupBytes }
    /// Wall time of each `AudioEngine.render` block (mixing, music streaming and the mixer tick), in microseconds.
    public var averageBlockMicroseconds = 0.0
    public var maxBlockMicroseconds = 0.0
    /// Events the game saw, by kind: route changes, interruptions, playback errors.
    public var routeChangeEvents = 0
    public var interruptionEvents = 0
    public var playbackErrors = 0
}

extension StressScene {
    /// Renders the scene offline, as fast as the CPU allows, in blocks of `options.blockFrames`, calling `update()` after each.
    public func run(_ requested: StressOptions, isCancelled: () -> Bool = { false }) throws(EngineError) -> StressReport
    {
        let options = try requested.validated()
        let engine = try AudioEngine(
            EngineConfiguration(
                output: .offline, sampleRate: sampleRate, realVoices: options.realVoices,
                maxVoices: max(voices.count, options.realVoices, 1), blockFrames: options.blockFrames))
        defer { engine.shutdown() }
        let crowd = try StressCrowd(scene: self, engine: engine)
        var report = StressReport()
        report.music = try startMusic(options.music, on: engine)
        crowd.start()

        let totalFrames = Int((options.seconds * Double(sampleRate)).rounded())
        var done = 0
        var sumOfSquares = 0.0
        let wallStart = monotonicNanoseconds()
        var block = [Float](repeating: 0, count: options.blockFrames * 2)
        let cpuStart = ProcessUsage.cpuSeconds
        while done < totalFrames {
            if isCancelled() { report.cancelled = true; break }
            let frames = min(options.blockFrames, totalFrames - done)
            try block.withUnsafeMutableBufferPointer { (samples) throws(EngineError) in
                let mixed = UnsafeMutableBufferPointer(rebasing: samples[0..<(frames * 2)])
                try engine.render(into: mixed)
                var sum: Float = 0
                for v in mixed { sum += v * v }
                sumOfSquares += Double(sum)
            }
            done += frames
            crowd.handle(engine.update())
        }
        report.cpuSeconds = ProcessUsage.cpuSeconds - cpuStart
        report.wallSeconds = Double(monotonicNanoseconds() - wallStart) / 1e9
        report.seconds = Double(done) / Double(sampleRate)
        report.renderedSeconds = report.seconds
        report.outputRMS = done > 0 ? (sumOfSquares / Double(done * 2)).squareRoot() : 0
        crowd.fill(&report, stats: engine.stats)
        return report
    }

    /// The voices (indices into `voices`) that an engine with `realVoices` sources keeps real once it has ranked
    /// the whole crowd: the scene started as `run` starts it, then `blocks` blocks of `blockFrames` rendered (the
    /// mixer ranks a crowded pool every 40 ms, so the default covers two ranks at 48 kHz).
    public func realSet(realVoices: Int, blockFrames: Int = 1024, blocks: Int = 4) throws(EngineError) -> [Int] {
        let engine = try AudioEngine(
            EngineConfiguration(
                output: .offline, sampleRate: sampleRate, realVoices: realVoices,
                maxVoices: max(voices.count, realVoices, 1), blockFrames: blockFrames))
        defer { engine.shutdown() }
        let crowd = try StressCrowd(scene: self, engine: engine)
        crowd.start()
        for _ in 0..<max(blocks, 1) {
            _ = try engine.render(frames: blockFrames)
            crowd.handle(engine.update())
        }
        return crowd.realVoices()
    }

    /// Plays the scene through the real-time output (the default device, else SDL's dummy driver) for `options.seconds`,
    /// with a game loop calling `update()` at 60 Hz.
    public func runRealtime(
        _ requested: StressOptions, deviceName: String? = nil,
        isCancelled: () -> Bool = { false }
    ) throws(EngineError) -> StressReport {
        let options = try requested.validated()
        let engine = try AudioEngine(
            EngineConfiguration(
                output: .device(name: deviceName), sampleRate: sampleRate, realVoices: options.realVoices,
                maxVoices: max(voices.count, options.realVoices, 1), blockFrames: options.blockFrames))
        defer { engine.shutdown() }
        let crowd = try StressCrowd(scene: self, engine: engine)
        var report = StressReport()
        report.driver = engine.outputDriver
        report.music = try startMusic(options.music, on: engine, playlist: options.chaos)
        crowd.start()
        let chaos = options.chaos ? StressChaos(engine: engine, sounds: crowd.sounds) : nil

        let framesStart = engine.mixer.framesRendered.load(ordering: .relaxed)
        let wallStart = monotonicNanoseconds()
        let cpuStart = ProcessUsage.cpuSeconds
        let frameNanos = 1_000_000_000 / 60
        let endNanos = wallStart + Int(options.seconds * 1e9)
        var next = wallStart
        var flowingSince: (Int, Int)? = nil
        while true {
            if isCancelled() { report.cancelled = true; break }
            next += frameNanos
            if next > endNanos { break }
            var deadline = timespec(tv_sec: next / 1_000_000_000, tv_nsec: next % 1_000_000_000)
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
            chaos?.step()
            crowd.handle(engine.update())
            // The output's pace counts from its first block on: how long the stream takes to start is not an underrun.
            if flowingSince == nil, case let frames = engine.mixer.framesRendered.load(ordering: .relaxed),
                frames > framesStart
            {
                flowingSince = (monotonicNanoseconds(), frames)
            }
        }
        if let (at, frames) = flowingSince {
            report.startupSeconds = Double(at - wallStart) / 1e9
            let flowing = Double(monotonicNanoseconds() - at) / 1e9
            let rendered = Double(engine.mixer.framesRendered.load(ordering: .relaxed) - frames) / Double(sampleRate)
            report.missingSeconds = max(flowing - rendered, 0)
        }
        report.chaos = chaos?.counts
        report.cpuSeconds = ProcessUsage.cpuSeconds - cpuStart
        report.wallSeconds = Double(monotonicNanoseconds() - wallStart) / 1e9
        report.seconds = report.wallSeconds
        report.renderedSeconds =
            Double(engine.mixer.framesRendered.load(ordering: .relaxed) - framesStart) / Double(sampleRate)
        crowd.fill(&report, stats: engine.stats)
        let times = engine.mixer.renderTimes.snapshot()
        report.callbackP50Microseconds = RenderTimes.quantile(0.5, of: times)
        report.callbackP99Microseconds = RenderTimes.quantile(0.99, of: times)
        report.periodMicroseconds = Double(options.blockFrames) * 1e6 / Double(sampleRate)
        return report
    }

    /// Plays `path` on repeat; with `playlist`, followed by the other bundled track (when it is beside it), so
    /// that skipping changes the decoder.
    private func startMusic(_ path: String?, on engine: AudioEngine, playlist: Bool = false) throws(EngineError)
        -> String?
    {
        guard let path else { return nil }
        var paths = [path]
        if playlist, let slash = path.lastIndex(of: "/") {
            let other = String(path[...slash]) + "orbit-lullaby.mp3"
            if other != path && access(other, R_OK) == 0 { paths.append(other) }
        } else if playlist, path != "orbit-lullaby.mp3", access("orbit-lullaby.mp3", R_OK) == 0 {
            paths.append("orbit-lullaby.mp3")
        }
        try engine.musicPlayer.setQueue(paths: paths)
        engine.musicPlayer.repeatMode = .all
        engine.musicPlayer.play()
        return path
    }
}

/// The scene's sounds and voices in one engine: starts the crowd, and starts each one-shot again when it finishes.
private final class StressCrowd {
    let scene: StressScene
    let engine: AudioEngine
    let sounds: [Sound]
    /// Which scene voice each live one-shot plays, by the voice's slot in the pool (with its generation, so that a
    /// slot used again is not mistaken for the old voice): what a game would keep, an array, not a hash of handles.
    private var oneShots: [(generation: UInt32, scene: Int)]
    /// The latest handle of each scene voice.
    private var handles: [Voice]
    private var finished: [Int] = []
    /// The cost of the first `timedCalls` play calls (a bounded sample, so that an hour-long soak does not grow it).
    private var playNanos: [Int] = []
    private static let timedCalls = 65_536
    private var playCalls = 0
    private(set) var retriggers = 0

    init(scene: StressScene, engine: AudioEngine) throws(EngineError) {
        self.scene = scene
        self.engine = engine
        var made: [Sound] = []
        for (i, pcm) in scene.sounds.enumerated() { made.append(try engine.makeSound(pcm, name: "stress-\(i)")) }
        sounds = made
        oneShots = Array(repeating: (0, -1), count: engine.configuration.maxVoices)
        handles = Array(repeating: .none, count: scene.voices.count)
        finished.reserveCapacity(scene.voices.count)
        playNanos.reserveCapacity(min(scene.voices.count * 4, Self.timedCalls))
    }

    func start() {
        for i in scene.voices.indices { play(i) }
    }

    func handle(_ events: [AudioEvent]) {
        // Every finished voice is looked up before any is started again: a new voice may take a slot whose old
        // voice's event comes later in the same batch.
        finished.removeAll(keepingCapacity: true)
        for event in events {
            guard case .voiceFinished(let voice) = event, oneShots.indices.contains(Int(voice.slot)) else { continue }
            let entry = oneShots[Int(voice.slot)]
            guard entry.scene >= 0, entry.generation == voice.generation else { continue }
            oneShots[Int(voice.slot)] = (0, -1)
            finished.append(entry.scene)
        }
        for index in finished { play(index) }
        retriggers += finished.count
    }

    private func play(_ index: Int) {
        let spec = scene.voices[index]
        let options = PlayOptions(
            pitch: spec.pitch, loop: spec.loop, placement: .world(x: spec.x, y: spec.y, z: spec.z))
        let sound = sounds[spec.sound]
        let start = monotonicNanoseconds()
        let voice = engine.play(sound, options)
        if playNanos.count < Self.timedCalls { playNanos.append(monotonicNanoseconds() - start) }
        playCalls += 1
        handles[index] = voice
        if !spec.loop && voice != .none { oneShots[Int(voice.slot)] = (voice.generation, index) }
    }

    /// The scene voices mixed by a real source now.
    func realVoices() -> [Int] { handles.indices.filter { handles[$0].isReal } }

    func fill(_ report: inout StressReport, stats: MixerStats) {
        report.voices = scene.voices.count
        report.realVoices = stats.realVoices
        report.virtualVoices = stats.virtualVoices
        report.rtf = report.seconds > 0 ? report.cpuSeconds / report.seconds : 0
        report.playCallNs = median(playNanos)
        report.playCalls = playCalls
        report.peakRSSBytes = ProcessUsage.peakRSSBytes
        report.underruns = stats.underruns
        report.retriggers = retriggers
        report.stolen = stats.stolen
        report.renderedBlocks = stats.renderedBlocks
        report.averageRenderMicroseconds = stats.averageRenderMicroseconds
        report.maxRenderMicroseconds = stats.maxRenderMicroseconds
    }

    private func median(_ values: [Int]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? Double(sorted[mid]) : Double(sorted[mid - 1] + sorted[mid]) / 2
    }
}

/// Real-time chaos, one `step()` per game frame: extra voices start (with a fade-in), fade, and stop (some at once,
/// some with a fade-out); every 18th frame (0.3 s at 60 Hz) the music player seeks to a random time or skips.
private final class StressChaos {
    let engine: AudioEngine
    let sounds: [Sound]
    private var rng = SplitMix64(seed: 0xC4A0_5EED)
    private var voices: [Voice] = []
    private var frame = 0
    private(set) var counts = ChaosCounts()

    init(engine: AudioEngine, sounds: [Sound]) {
        self.engine = engine
        self.sounds = sounds
        voices.reserveCapacity(64)
    }

    func step() {
        frame += 1
        for _ in 0..<2 where voices.count < 48 {
            let options = PlayOptions(
                gain: Float.random(in: 0.2...1, using: &rng), pitch: Float.random(in: 0.8...1.25, using: &rng),
                loop: Bool.random(using: &rng), placement: .pan(Float.random(in: -1...1, using: &rng)),
                fadeIn: Double.random(in: 0...0.1, using: &rng))
            voices.append(engine.play(sounds[Int.random(in: 0..<sounds.count, using: &rng)], options))
            counts.voicesStarted += 1
        }
        if !voices.isEmpty {
            let i = Int.random(in: 0..<voices.count, using: &rng)
            voices[i].fade(to: Float.random(in: 0...1, using: &rng), over: Double.random(in: 0.01...0.3, using: &rng))
            counts.voicesFaded += 1
        }
        if voices.count > 8 {
            for _ in 0..<2 {
                voices.swapAt(Int.random(in: 0..<voices.count, using: &rng), voices.count - 1)
                let voice = voices.removeLast()
                voice.stop(fade: Bool.random(using: &rng) ? 0 : Double.random(in: 0.01...0.2, using: &rng))
                counts.voicesStopped += 1
            }
        }
        guard frame % 18 == 0 else { return }
        let player = engine.musicPlayer
        if (frame / 18) % 2 == 0 {
            player.skipToNextItem()
            counts.skips += 1
        } else {
            let duration = player.nowPlayingItem?.playbackDuration ?? 0
            player.currentPlaybackTime = Double.random(in: 0...max(duration - 0.5, 0), using: &rng)
            counts.seeks += 1
        }
        if player.playbackState != .playing { player.play() }
    }
}

extension StressScene {
    /// The soak: `options.seconds` of game audio rendered offline (an hour by default in `ambience stress --soak`).
    /// The scene's crowd loops, `oneShotsPerSecond` short one-shots start at random (about a million an hour), the
    /// music skips every 30 s, and every two minutes the session goes through an interruption, a spell in the
    /// background and the loss of its device (then Resume). The report says whether anything grew: OpenAL sources
    /// and buffers, voices, resident memory after `warmupSeconds`, and how long each block took to render.
    /// The warm-up covers one whole two-minute cycle: each kind of event (a skip to the MP3, an interruption, a
    /// route change) makes its one-time allocations the first time it happens, about 9 MB in all.
    public func runSoak(
        _ requested: StressOptions, oneShotsPerSecond requestedRate: Double = 280,
        warmupSeconds requestedWarmup: Double = 150,
        isCancelled: () -> Bool = { false }
    ) throws(EngineError) -> StressReport {
        let options = try requested.validated()
        let oneShotsPerSecond: Double, warmupSeconds: Double
        do {
            oneShotsPerSecond = try requestedRate.clamped(to: 0...100_000, "oneShotsPerSecond")
            warmupSeconds = try requestedWarmup.clamped(to: StressOptions.secondsRange, "warmupSeconds")
        } catch {
            throw .invalidNumber(error)
        }
        let engine = try AudioEngine(
            EngineConfiguration(
                output: .offline, sampleRate: sampleRate, realVoices: options.realVoices,
                maxVoices: max(voices.count + 4096, options.realVoices, 1), blockFrames: options.blockFrames))
        defer { engine.shutdown() }
        engine.session.setActive(true)
        let crowd = try StressCrowd(scene: self, engine: engine)
        var report = StressReport()
        report.music = try startMusic(options.music, on: engine, playlist: true)
        engine.musicPlayer.beginGeneratingPlaybackNotifications()
        crowd.start()

        var soak = SoakReport()
        soak.warmupSeconds = min(warmupSeconds, options.seconds / 2)
        let rate = Double(sampleRate)
        let totalFrames = Int((options.seconds * rate).rounded())
        let warmupFrames = Int(soak.warmupSeconds * rate)
        var rng = SplitMix64(seed: 0x50A6_5EED)
        var oneShotDebt = 0.0
        var done = 0
        var blocks = 0
        var blockNanos = 0
        var maxBlockNanos = 0
        var warmedUp = false
        let wallStart = monotonicNanoseconds()
        let cpuStart = ProcessUsage.cpuSeconds
        // Short sounds only for the one-shots: the blip, the crack and the hiss.
        let oneShotSounds = [crowd.sounds[3], crowd.sounds[4], crowd.sounds[2]]
        var block = [Float](repeating: 0, count: options.blockFrames * 2)
        while done < totalFrames {
            if isCancelled() { report.cancelled = true; break }
            let frames = min(options.blockFrames, totalFrames - done)
            let start = monotonicNanoseconds()
            try block.withUnsafeMutableBufferPointer { (samples) throws(EngineError) in
                try engine.render(into: UnsafeMutableBufferPointer(rebasing: samples[0..<(frames * 2)]))
            }
            let took = monotonicNanoseconds() - start
            let before = done
            done += frames
            if warmedUp {
                blocks += 1
                blockNanos += took
                maxBlockNanos = max(maxBlockNanos, took)
                soak.alSourcesMax = max(soak.alSourcesMax, ALObjectCount.sources.load(ordering: .relaxed))
                soak.alBuffersMax = max(soak.alBuffersMax, ALObjectCount.buffers.load(ordering: .relaxed))
            } else if done >= warmupFrames {
                warmedUp = true
                soak.alSourcesAfterWarmup = ALObjectCount.sources.load(ordering: .relaxed)
                soak.alBuffersAfterWarmup = ALObjectCount.buffers.load(ordering: .relaxed)
                soak.rssAfterWarmupBytes = ProcessUsage.residentBytesAfterTrim
            }

            // One-shots, spread evenly over the blocks.
            oneShotDebt += oneShotsPerSecond * Double(frames) / rate
            while oneShotDebt >= 1 {
                oneShotDebt -= 1
                let options = PlayOptions(
                    gain: Float.random(in: 0.1...0.6, using: &rng), pitch: Float.random(in: 0.8...1.25, using: &rng),
                    placement: .world(
                        x: Float.random(in: -30...30, using: &rng), y: 0,
                        z: Float.random(in: -30...30, using: &rng)))
                engine.play(oneShotSounds[Int.random(in: 0..<oneShotSounds.count, using: &rng)], options)
                soak.oneShots += 1
            }

            // The schedule, in seconds of audio: crossing second `t` (mod the period) fires the event once.
            func crossed(_ t: Double, every period: Double) -> Bool {
                let a = Double(before) / rate, b = Double(done) / rate
                guard b >= t else { return false }
                return t + ((b - t) / period).rounded(.down) * period > a
            }
            let player = engine.musicPlayer
            if crossed(30, every: 30) { player.skipToNextItem(); soak.musicSkips += 1 }
            if crossed(40, every: 120) { engine.session.beginInterruption(); soak.interruptions += 1 }
            if crossed(43, every: 120) { engine.session.endInterruption() }
            if crossed(70, every: 120) { engine.session.enterBackground(); soak.backgroundings += 1 }
            if crossed(72, every: 120) { engine.session.enterForeground() }
            if crossed(100, every: 120) {
                engine.session.handle(
                    .currentDeviceRemoved(
                        previous: engine.session.currentRoute,
                        current: AudioRoute(name: "Headphones", driver: "offline")))
                soak.routeChanges += 1
            }
            if crossed(101, every: 120) { engine.session.resumeAfterRouteChange() }

            for event in engine.update() {
                switch event {
                case .session(.routeChange): soak.routeChangeEvents += 1
                case .session(.interruption(let interruption)):
                    soak.interruptionEvents += 1
                    // The game's part: resume its music when told it may.
                    if case .ended(shouldResume: true) = interruption, player.playbackState != .playing {
                        player.play()
                    }
                case .music(.playbackError): soak.playbackErrors += 1
                default: break
                }
                crowd.handle([event])
            }
        }
        report.cpuSeconds = ProcessUsage.cpuSeconds - cpuStart
        report.wallSeconds = Double(monotonicNanoseconds() - wallStart) / 1e9
        report.seconds = Double(done) / rate
        report.renderedSeconds = report.seconds
        crowd.fill(&report, stats: engine.stats)
        soak.alSourcesAtEnd = ALObjectCount.sources.load(ordering: .relaxed)
        soak.alBuffersAtEnd = ALObjectCount.buffers.load(ordering: .relaxed)
        soak.rssAtEndBytes = ProcessUsage.residentBytesAfterTrim
        soak.voicesAtEnd = report.realVoices + report.virtualVoices
        soak.averageBlockMicroseconds = blocks > 0 ? Double(blockNanos) / Double(blocks) / 1000 : 0
        soak.maxBlockMicroseconds = Double(maxBlockNanos) / 1000
        report.soak = soak
        return report
    }
}
