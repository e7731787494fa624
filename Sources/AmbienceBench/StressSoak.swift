import Ambience
import AmbiencePlatform
import Glibc

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
