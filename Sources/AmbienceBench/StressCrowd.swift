import Ambience
import AmbiencePlatform
import Glibc

/// The scene's sounds and voices in one engine: starts the crowd, and starts each one-shot again when it finishes.
final class StressCrowd {
    let scene: StressScene
    let engine: AudioEngine
    let sounds: [Sound]
    /// Which scene voice each live one-shot plays, by the voice's slot in the pool (with its generation, so that a
    /// slot used again is not mistaken for the old voice): what a game would keep, an array, not a hash of handles.
    ///
    /// The state a restart touches is unchecked for exclusivity, as a game's loop would keep it in locals (raw OpenAL
    /// Soft's run does): the runtime's checks were six a restart, ~660 instructions, the bench's and not a game's.
    /// One thread drives the scene and nothing here is reached re-entrantly.
    @exclusivity(unchecked) private var oneShots: [(generation: UInt32, scene: Int)]
    /// The latest handle of each scene voice.
    @exclusivity(unchecked) private var handles: [Voice]
    @exclusivity(unchecked) private var finished: [Int] = []
    /// The cost of the first `timedCalls` play calls (a bounded sample, so that an hour-long soak does not grow it).
    @exclusivity(unchecked) private var playNanos: [Int] = []
    private static let timedCalls = 65_536
    @exclusivity(unchecked) private var playCalls = 0
    @exclusivity(unchecked) private(set) var retriggers = 0

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
        // Once the sample is full the clock is not read: its two reads per restart are the bench's, not a game's. One
        // call site: with one in each branch the options were copied and destroyed around them.
        let timed = playNanos.count < Self.timedCalls
        let start = timed ? monotonicNanoseconds() : 0
        let voice = engine.play(sound, options)
        if timed { playNanos.append(monotonicNanoseconds() - start) }
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
        report.sourceMoves = stats.madeReal + stats.madeVirtual
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
final class StressChaos {
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
