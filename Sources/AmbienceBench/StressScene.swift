import Ambience
import AmbiencePlatform
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
        if var directory = ProcessIdentity.executablePath {
            for _ in 0..<5 {
                guard let slash = directory.lastIndex(of: "/"), slash != directory.startIndex else { break }
                directory = String(directory[..<slash])
                candidates.append(directory + "/" + relative)
            }
        }
        return candidates.first(where: FilePaths.isReadable)
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

    /// The index of the 0.5 s crack among the sounds (the HDR variant's loud event).
    static let crack = 4

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
    /// Offline only: the crowd under an HDR window on `sfx`, lifted every 2 s by a loud event (docs/HDR.md); the
    /// report's `hdr` says how many voices it culled.
    public var hdr: Bool
    /// The mixer's rank margin in dB (`EngineConfiguration.rankMargin`), or nil for the engine's default.
    package var rankMargin: Float? = nil

    public init(
        seconds: Double = 10, realVoices: Int = 256, blockFrames: Int = 1024,
        music: String? = StressScene.defaultMusicPath,
        chaos: Bool = false, hdr: Bool = false
    ) {
        self.seconds = seconds
        self.realVoices = realVoices
        self.blockFrames = blockFrames
        self.music = music
        self.chaos = chaos
        self.hdr = hdr
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

extension StressScene {
    /// Renders the scene offline, as fast as the CPU allows, in blocks of `options.blockFrames`, calling `update()` after each.
    public func run(_ requested: StressOptions, isCancelled: () -> Bool = { false }) throws(EngineError) -> StressReport
    {
        let options = try requested.validated()
        var configuration = EngineConfiguration(
            output: .offline, sampleRate: sampleRate, realVoices: options.realVoices,
            // A slot for the HDR variant's loud event beside the crowd: it must not steal a crowd voice.
            maxVoices: max(voices.count + (options.hdr ? 1 : 0), options.realVoices, 1),
            blockFrames: options.blockFrames)
        if let margin = options.rankMargin { configuration.rankMargin = margin }
        let engine = try AudioEngine(configuration)
        defer { engine.shutdown() }
        let crowd = try StressCrowd(scene: self, engine: engine)
        var report = StressReport()
        report.music = try startMusic(options.music, on: engine)
        crowd.start()
        // The crowd's first starts are setup, as raw OpenAL's alSourcePlayv of every source is: applied here, not
        // in the first measured block (the engine applies recorded starts just before the block they sound in).
        engine.mixer.applyPendingStarts()
        var loudEvents: StressLoudEvents? = nil
        if options.hdr, let crack = crowd.sounds.dropFirst(StressScene.crack).first {
            do { loudEvents = try StressLoudEvents(engine: engine, sound: crack) } catch { throw .invalidNumber(error) }
        }

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
            loudEvents?.step(at: Double(done) / Double(sampleRate))
        }
        report.cpuSeconds = ProcessUsage.cpuSeconds - cpuStart - (loudEvents?.countingCPUSeconds ?? 0)
        report.hdr = loudEvents?.counts
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
        try realSet(realVoices: realVoices, blockFrames: blockFrames, blocks: blocks, rankMargin: nil)
    }

    /// `realSet` with the mixer's rank margin in dB, or nil for the default.
    package func realSet(realVoices: Int, blockFrames: Int, blocks: Int, rankMargin: Float?) throws(EngineError)
        -> [Int]
    {
        var configuration = EngineConfiguration(
            output: .offline, sampleRate: sampleRate, realVoices: realVoices,
            maxVoices: max(voices.count, realVoices, 1), blockFrames: blockFrames)
        if let rankMargin { configuration.rankMargin = rankMargin }
        let engine = try AudioEngine(configuration)
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
        report.backend = engine.outputBackend?.rawValue
        report.music = try startMusic(options.music, on: engine, playlist: options.chaos)
        crowd.start()
        engine.mixer.applyPendingStarts()  // setup, as above: not in the audio thread's first measured block
        let chaos = options.chaos ? StressChaos(engine: engine, sounds: crowd.sounds) : nil

        let framesStart = engine.renderedFrames
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
            sleepUntil(monotonicNanoseconds: next)
            chaos?.step()
            crowd.handle(engine.update())
            // The output's pace counts from its first block on: how long the stream takes to start is not an underrun.
            if flowingSince == nil, case let frames = engine.renderedFrames,
                frames > framesStart
            {
                flowingSince = (monotonicNanoseconds(), frames)
            }
        }
        if let (at, frames) = flowingSince {
            report.startupSeconds = Double(at - wallStart) / 1e9
            let flowing = Double(monotonicNanoseconds() - at) / 1e9
            let rendered = Double(engine.renderedFrames - frames) / Double(sampleRate)
            report.missingSeconds = max(flowing - rendered, 0)
        }
        report.chaos = chaos?.counts
        report.streamUnderflows = engine.outputStreamUnderflows
        report.audioThreadPriority = engine.outputThreadPriority()?.description
        report.cpuSeconds = ProcessUsage.cpuSeconds - cpuStart
        report.wallSeconds = Double(monotonicNanoseconds() - wallStart) / 1e9
        report.seconds = report.wallSeconds
        report.renderedSeconds =
            Double(engine.renderedFrames - framesStart) / Double(sampleRate)
        crowd.fill(&report, stats: engine.stats)
        let times = engine.renderTimeCounts()
        report.callbackP50Microseconds = RenderTimes.quantile(0.5, of: times)
        report.callbackP99Microseconds = RenderTimes.quantile(0.99, of: times)
        report.periodMicroseconds = Double(options.blockFrames) * 1e6 / Double(sampleRate)
        return report
    }

    /// Plays `path` on repeat; with `playlist`, followed by the other bundled track (when it is beside it), so
    /// that skipping changes the decoder.
    func startMusic(_ path: String?, on engine: AudioEngine, playlist: Bool = false) throws(EngineError)
        -> String?
    {
        guard let path else { return nil }
        var paths = [path]
        if playlist, let slash = path.lastIndex(of: "/") {
            let other = String(path[...slash]) + "orbit-lullaby.mp3"
            if other != path && FilePaths.isReadable(other) { paths.append(other) }
        } else if playlist, path != "orbit-lullaby.mp3", FilePaths.isReadable("orbit-lullaby.mp3") {
            paths.append("orbit-lullaby.mp3")
        }
        try engine.musicPlayer.setQueue(paths: paths)
        engine.musicPlayer.repeatMode = .all
        engine.musicPlayer.play()
        return path
    }
}
