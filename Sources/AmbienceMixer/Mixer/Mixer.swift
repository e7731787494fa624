import AmbiencePlatform
import Synchronization

/// The engine's mixer: OpenAL Soft's loopback device and the parts that decide what it plays. `VoicePool` (every
/// voice, real and virtual, and their ranking) and `BusGraph` (gains, fades, ducking) are pure values;
/// `SourcePool` (the real sources) and `EffectRack` (reverbs and filters) hold the OpenAL objects. The mixer
/// coordinates them under its lock and turns their decisions into OpenAL calls.
///
/// The engine's `AudioEngine` drives one; a game that only mixes makes its own (`init(sampleRate:realVoices:)`), plays
/// sounds on it and renders it offline (`render(frames:)`), with `import AmbienceMixer` alone.
///
/// Thread-safety: all mutable state is guarded by `lock`; the audio thread touches only `render` and atomics.
public final class Mixer: @unchecked Sendable {
    let device: LoopbackDevice
    package let configuration: MixerConfiguration
    private let lock = Lock<Void>(())

    // The parts. Every access happens under `lock`, no part is copied, and none is held across a call that touches
    // the same part again, so the runtime's per-access exclusivity checks (a third of the tick with 10k voices) are
    // switched off for them.
    @exclusivity(unchecked) var voices: VoicePool
    @exclusivity(unchecked) var sources: SourcePool
    @exclusivity(unchecked) var buses: BusGraph
    @exclusivity(unchecked) var effects: EffectRack
    /// The sources' recorded starts (`sources.starts`), for the thread that renders, which must not touch `sources`.
    let pendingStarts: PendingStarts
    var listener = ListenerState()
    /// The loudest level under each HDR window, by bus (MixerHDR.swift): reused every measure, never reallocated
    /// in a tick.
    var hdrPeaks: [Float] = []
    var framesSinceHDRMeasure = 0
    /// Whether this tick has deferred OpenAL's property updates (see `deferUpdates`).
    private var deferring = false
    /// Frames of the latest tick: the block the mixer is rendered in.
    private var tickFrames = 1024
    /// The session paused every voice (an interruption, a lost device); user pauses are kept apart.
    var suspended = false
    /// Shared by every `Voice` and `Bus` handle of this mixer.
    package let owner = HandleOwner()

    /// Effects exist only where ALC_EXT_EFX does; everything else works without them.
    let effectsAvailable: Bool
    /// Buffers of sounds freed while loaded, deleted at the next tick.
    let retiredBuffers = RetiredBuffers()
    /// A mixer made without an engine takes part in the process's exit itself (`ProcessExit`): its token.
    let standaloneExit = Lock<Int?>(nil)
    /// OpenAL Soft 1.19 shapes its reverb and low-pass filters around a fixed 5 kHz reference, which needs a Nyquist
    /// frequency above it: at 9 kHz and below its reverb fills the mix with NaN (the C API fuzzer found it at 8 kHz).
    /// Below this rate, the lowest common one above 10 kHz, effects are off (`capabilities.effects` is false).
    static let lowestEffectsSampleRate = 11_025
    var streams: [StreamChannel] = []
    /// Voices fed by a game's callback (MixerStreamVoices.swift), and the thread that feeds them on device output.
    var streamVoices = StreamVoiceTable()
    let streamFeeding = Lock<WorkerThread?>(nil)
    /// The game's post-mix observer, run by `render` on each mixed block.
    package let postMix = PostMix()
    /// Voice endings and steals for `update()`. A game that never calls it must not grow the mixer without bound;
    /// past the cap the newest are dropped (each is a fact of its own: the earliest keep their meaning) and counted.
    /// Both are touched only under `lock`, as the parts above are: unchecked, since a voice's end pushed an event
    /// through a runtime exclusivity check (~110 instructions, 5,500 ends a second in a crowd).
    @exclusivity(unchecked) var events = EventQueue<QueuedVoiceEvent>(
        capacity: Mixer.pendingEventCapacity, overflow: .dropNewest)
    @exclusivity(unchecked) var counters = MixerStats()
    /// `StereoFoldProbe`'s gain for this mixer's rate, once measured (nil inside: it could not be, nothing folds).
    let foldGain = Lock<Float??>(nil)
    /// The same gain, for `applyGain` under the lock: set by the first fold.
    var foldGainAtListenerPoint: Float = 1
    var useCounter: UInt64 = 0

    // Written by whoever renders (audio thread or offline render), read by the game thread.
    package let framesRendered = RenderedFrames()
    let renderBlocks = Atomic<Int>(0)
    let renderNanosTotal = Atomic<Int>(0)
    let renderNanosMax = Atomic<Int>(0)
    package let underruns = Atomic<Int>(0)
    package let renderTimes = RenderTimes()

    /// Index of the built-in buses.
    package enum BuiltinBus: Int, CaseIterable { case master, music, sfx, ui, dialogue }
    static let pendingEventCapacity = 8192

    package init(_ configuration: MixerConfiguration = MixerConfiguration()) throws(MixerSetupError) {
        var configuration = configuration
        configuration.realVoices = min(max(configuration.realVoices, 1), 4096)
        // The engine refuses counts past these; a mixer made directly is held to them too (slots are Int32).
        configuration.maxVoices = min(
            max(configuration.maxVoices, configuration.realVoices), MixerConfiguration.maxVoiceCounts.upperBound)
        self.configuration = configuration
        // Leave room for music streams and stream voices beside the voice pool.
        device = try LoopbackDevice(
            sampleRate: configuration.sampleRate, sources: configuration.realVoices + 8 + StreamVoiceTable.capacity,
            hrtf: configuration.hrtf,
            resampler: configuration.resampler, outputLimiter: configuration.outputLimiter)
        sources = device.withCurrentContext { SourcePool(count: configuration.realVoices) }
        device.withCurrentContext { [sources, device] in sources.primeVoices(on: device) }
        pendingStarts = sources.starts
        device.applyResampler(to: sources.sources)
        effectsAvailable =
            device.hasDeviceExtension("ALC_EXT_EFX") && configuration.sampleRate >= Mixer.lowestEffectsSampleRate
        effects = EffectRack(sources: sources.count)
        buses = BusGraph(root: "master", children: BuiltinBus.allCases.dropFirst().map { "\($0)" })
        buses.setDucking([
            BusGraph.Ducking(
                trigger: BuiltinBus.dialogue.rawValue, target: BuiltinBus.music.rawValue,
                depth: 9, attack: 0.08, release: 0.5)
        ])
        voices = VoicePool(capacity: configuration.maxVoices, buses: buses.count, rankMargin: configuration.rankMargin)
        hdrPeaks = Array(repeating: 0, count: buses.count)
        device.withCurrentContext { ALListener.useInverseDistanceClamped() }
        owner.bind(self)
    }

    deinit {
        if let token = standaloneExit.withLock({ $0 }) { ProcessExit.remove(token) }
        // Released on another thread after the exit's seal (a late close on the SDL lane): OpenAL is being torn down.
        if ProcessExit.mustStop { return }
        device.withCurrentContext {
            sources.deleteAll()
            effects.deleteAll()
        }
    }

    package func bus(_ builtin: BuiltinBus) -> Bus { Bus(owner: owner, index: builtin.rawValue) }

    /// Frees every OpenAL object and closes the device. Later calls do nothing audible. Called by
    /// `AudioEngine.shutdown()` once nothing renders any more.
    package func close() {
        closeStreamVoices()
        withLock { sources.stopAll() }
        withLock { device.close() }
    }

    /// Runs `body` under the lock with our context current (or not, for a caller that makes it current only around
    /// the OpenAL calls it does make: `play`). Once the process's exit has sealed the engines (`ProcessExit`), any
    /// thread but the exiting one stops here for good, outside the lock, rather than reach OpenAL Soft while its
    /// destructor runs.
    func withLock<R>(enteringContext: Bool = true, _ body: () -> R) -> R {
        if ProcessExit.mustStop { ProcessExit.stopForever() }
        let result: R? = lock.withLock { _ in
            if ProcessExit.mustStop { return nil }
            if !enteringContext { return body() }
            let token = device.enter()
            defer { device.leave(token) }
            return body()
        }
        guard let result else { ProcessExit.stopForever() }
        return result
    }

    /// Takes the lock and gives it back: whoever was inside has left (the exit's seal).
    package func waitOutCallers() { lock.withLock { _ in } }

    // MARK: Session control

    /// Pauses (or resumes) every voice at its position, leaving each voice's own paused state alone.
    package func setSuspended(_ on: Bool) {
        withLock {
            guard suspended != on else { return }
            suspended = on
            for slot in voices.active where voices.slots[Int(slot)].source >= 0 && !voices.slots[Int(slot)].paused {
                on ? sources.pause(voices.slots[Int(slot)].source) : resumeSource(of: slot)
            }
            suspendStreamVoices(on)
        }
    }

    package var isSuspended: Bool { withLock { suspended } }

    /// Stops, for good, every voice the game has not paused itself (the session's Stop after a route change): each is
    /// rewound to its start and left paused and virtual, so lifting the suspension plays none of them, while
    /// `Voice.resume()` plays one again from the top. A voice fading out to its stop is released, as the fade would.
    package func rewindAndHoldUnpausedVoices() {
        withLock {
            for slot in voices.active where !voices.slots[Int(slot)].paused {
                if voices.slots[Int(slot)].stopAfterFade && voices.slots[Int(slot)].fade != nil {
                    release(slot, event: nil)
                    continue
                }
                if voices.slots[Int(slot)].source >= 0 { takeOffSource(slot) }
                voices.setPaused(slot, true)
                voices.rewind(slot)
            }
            holdUnpausedStreamVoices()
        }
    }

    /// Whether any voice is audible-in-principle: alive, not paused, not suspended.
    package var hasPlayingVoices: Bool {
        withLock {
            !suspended && (voices.hasUnpausedVoices || streamVoices.slots.contains { $0.feed != nil && !$0.paused })
        }
    }

    // MARK: Time

    /// Advances fades, ducking, virtual voices and finished one-shots by `frames` output frames.
    ///
    /// Visits only the real voices, the fading ones and the virtual one-shots that end now: a crowd of virtual
    /// voices costs nothing here, apart from the periodic rank.
    package func tick(frames: Int) {
        withLock {
            deleteRetiredBuffers()
            let seconds = Double(frames) / Double(configuration.sampleRate)
            tickFrames = frames
            var busesChanged = buses.advance(seconds) { bus, graph in voices.hasAudibleVoices(under: bus, in: graph) }
            if buses.hasHDR && advanceHDR(seconds, frames: frames) {
                busesChanged = true
                voices.needsRank = true  // voices cross the window's bottom
            }
            if !suspended { voices.advanceClock(by: frames) }
            if busesChanged || !voices.fading.isEmpty { deferUpdates() }
            advanceFades(seconds, busesChanged: busesChanged)
            advanceStreamVoices(seconds, busesChanged: busesChanged)
            while let slot = voices.nextEndedVirtualVoice() { release(slot, event: .finished) }
            // The rank comes before this block's real endings: a source freed by a one-shot that ends now waits for
            // the game's answer to `voiceFinished` (most often the same sound again, which `play` puts back on it),
            // not for whichever virtual voice the rank would give it to and take back at the next rank.
            if voices.rankIsDue(
                afterFrames: frames, sources: sources.count, freeSources: sources.freeCount,
                sampleRate: configuration.sampleRate)
            {
                deferUpdates()
                rebalance()
            }
            checkRealVoices(gainsChanged: busesChanged)
            if busesChanged { for stream in streams { applyStreamGain(stream) } }
            if deferring {
                ALBatch.commit()
                deferring = false
            }
        }
    }

    /// Holds this tick's property changes back until its end, so that they reach the same mixed block (a bus fade
    /// on every voice at once; a demotion and the promotion that takes its source). Only a tick that changes
    /// something defers: OpenAL Soft's commit visits every voice it has, which a quiet tick need not pay for.
    private func deferUpdates() {
        guard !deferring else { return }
        ALBatch.begin()
        deferring = true
    }

    private func advanceFades(_ seconds: Double, busesChanged: Bool) {
        // From the back: a release moves the last fading voice into the place it frees, one already visited.
        var i = voices.fading.count - 1
        while i >= 0 {
            let slot = voices.fading[i]
            i -= 1
            switch voices.advanceFade(slot, by: seconds) {
            case .idle: continue
            case .endedThenStop: release(slot, event: nil)
            // Real voices whose buses changed get their gain in checkRealVoices.
            case .moving, .ended: if !busesChanged { applyGain(slot) }
            }
        }
    }

    /// Releases real one-shots that OpenAL has played to the end, and re-applies gains after a bus change.
    private func checkRealVoices(gainsChanged: Bool) {
        for source in 0..<sources.count {
            let slot = sources.owners[source]
            guard slot >= 0 else { continue }
            if sources.isPollDue(source, at: voices.clock)
                && sourceHasPlayedOut(Int32(source), looping: voices.slots[Int(slot)].loop)
            {
                release(slot, event: .finished)
            } else if gainsChanged {
                applyGain(slot)
            }
        }
    }

    // MARK: Real and virtual voices

    var audibility: Audibility {
        guard buses.hasHDR else { return Audibility(busGains: buses.effective, listener: listener) }
        return Audibility(
            busGains: buses.effective, listener: listener, hdrOwner: buses.hdrOwner, hdrScale: buses.hdrScale,
            hdrFloor: buses.hdrFloor)
    }

    /// Gives the real sources to the most important voices; the rest keep time virtually.
    private func rebalance() {
        voices.ranked()
        let capacity = sources.count
        if voices.active.count <= capacity && buses.hasHDR {
            rebalanceUnderHDR()
            return
        }
        if voices.active.count <= capacity {
            for slot in voices.active where voices.slots[Int(slot)].source < 0 && !voices.slots[Int(slot)].paused {
                guard let source = takeSource(for: slot) else { break }
                attach(slot, to: source)
                counters.madeReal += 1
            }
            voices.forgetRank()
            return
        }
        let threshold = voices.rank(keep: capacity, audibility)
        // Only real voices can lose their source: visit the sources, not the crowd.
        for source in 0..<sources.count {
            let slot = sources.owners[source]
            if slot >= 0 && (voices.rankScore(of: slot) < threshold || voices.rankScore(of: slot) == VoicePool.culled) {
                demote(slot)
            }
        }
        // Only the voices at or above the threshold, and not culled or paused, can be real: visit them alone (the
        // rank's members), in the order of the live list, so that ties at the threshold go where a walk over the
        // crowd would give them.
        let candidates = voices.sortRankMembers()
        var weakest: (slot: Int32, importance: Float) = (-1, .infinity)
        for i in 0..<candidates {
            let slot = voices.rankMember(i)
            let score = voices.rankScore(of: slot)
            if voices.slots[Int(slot)].source < 0 {
                guard let source = takeSource(for: slot) else { continue }
                attach(slot, to: source)
                counters.madeReal += 1
            }
            if score < weakest.importance { weakest = (slot, score) }
        }
        voices.weakestReal = weakest
    }

    /// A free source for a voice, preferring one that already holds its sound where it stands.
    func takeSource(for slot: Int32) -> Int32? {
        sources.take(
            for: slot, buffer: voices.slots[Int(slot)].sound?.buffer, placement: voices.slots[Int(slot)].placement)
    }

    /// Starts a voice on a source it has just been given, at its elapsed position: sends OpenAL only the settings
    /// that differ (the context is made current for them alone: `play` calls this without it), and records the
    /// start for the next block (`PendingStarts`). A paused voice is played and paused at once, as it always was.
    func attach(_ slot: Int32, to source: Int32) {
        let index = Int(slot)
        guard let sound = voices.slots[index].sound else {
            device.withCurrentContext { sources.give(source) }
            return
        }
        let position = min(voices.virtualPlayhead(slot), voices.slots[index].soundFrames - 1)
        voices.becameReal(slot, on: source)
        let s = voices.slots[index]
        let had = sources.settings[Int(source)]
        var wanted = SourcePool.placed(had, s.placement, listener: listener, folded: sound.isFoldedStereo)
        wanted.buffer = sound.buffer
        wanted.loop = s.loop
        wanted.pitch = s.pitch
        wanted.gain = sourceGain(of: slot)
        wanted.maxGain = foldScale(slot)
        if effectsAvailable { wanted.reverb = effects.reverb(for: s.placement, bus: s.bus, in: buses) }
        let filters = effectsAvailable && (s.occlusion > 0 || had.filtered)
        let startsPaused = s.paused || suspended
        if had.differences(from: wanted) > 0 || filters || position >= 1 || startsPaused {
            device.withCurrentContext {
                sources.configure(Int(source), wanted)
                if filters { applyEffects(slot) }
                let al = sources[source]
                if position >= 1 { al.sampleOffset = position.saturated(Int.self, rounding: .down) }
                if startsPaused {
                    al.play()
                    al.pause()
                }
            }
        }
        if !startsPaused {
            if pendingStarts.record(source) {
                sources.noteStart(source, from: position >= 1 ? position.rounded(.down) : 0)
            } else {
                device.withCurrentContext { sources[source].play() }  // the record is full: at once, as before
            }
        }
        sources.predictEnd(
            of: s, from: position, clock: voices.clock, blockFrames: tickFrames,
            doppler: listener.dopplerApplies(to: s.placement))
    }

    /// Plays a paused real voice on, unless it is a one-shot that had played out before it was paused: playing a
    /// stopped source would start it again from the top. The next tick reports it finished.
    func resumeSource(of slot: Int32) {
        let source = voices.slots[Int(slot)].source
        sources.settle(source)
        if sourceHasPlayedOut(source, looping: voices.slots[Int(slot)].loop) {
            sources.pollEveryBlock(source)
        } else {
            sources[source].play()
        }
    }

    /// Takes a voice off its source and makes it virtual where it was; the source goes back to the pool.
    func demote(_ slot: Int32) {
        counters.madeVirtual += 1
        takeOffSource(slot)
        voices.scheduleEnding(slot)
    }

    /// Takes a real voice off its source, remembering where it was.
    private func takeOffSource(_ slot: Int32) {
        let source = voices.slots[Int(slot)].source
        if pendingStarts.takeBack(source) {
            // Never played (no block since its start was recorded): virtual where the start would have begun, and
            // silent, where playing it first to read its place could let a block hear it.
            voices.becameVirtual(slot, at: sources.startFrames[Int(source)])
        } else {
            let al = sources[source]
            // A stopped source has played its one-shot to the end.
            let position = al.state == .stopped ? voices.slots[Int(slot)].soundFrames : Double(al.sampleOffset)
            voices.becameVirtual(slot, at: position)
        }
        sources.give(source)
    }

    enum ReleaseEvent { case finished, stolen }

    func release(_ slot: Int32, event: ReleaseEvent?) {
        if voices.slots[Int(slot)].source >= 0 { takeOffSource(slot) }
        let generation = voices.free(slot)
        switch event {
        case .finished?:
            counters.finished += 1
            post(QueuedVoiceEvent(slot: slot, generation: generation, isStream: false, stolen: false))
        case .stolen?:
            counters.stolen += 1
            post(QueuedVoiceEvent(slot: slot, generation: generation, isStream: false, stolen: true))
        case nil:
            break
        }
    }

    /// Queues `event` for `update()`; the counters count it even when the queue is full.
    func post(_ event: QueuedVoiceEvent) { events.push(event) }

    // MARK: Gains

    func applyGain(_ slot: Int32) {
        let source = voices.slots[Int(slot)].source
        guard source >= 0 else { return }
        sources.setGain(Int(source), sourceGain(of: slot), most: foldScale(slot))
    }

    /// The gain a voice's source plays at: its own, its fade's, its bus's and its HDR window's, times a folded
    /// sound's scale (`foldScale`).
    func sourceGain(of slot: Int32) -> Float {
        let index = Int(slot)
        let gain = voices.slots[index].gain * voices.slots[index].fadeGain * buses.effective[voices.slots[index].bus]
        return (buses.hasHDR ? gain * hdrGain(slot) : gain) * foldScale(slot)
    }

    /// 1, or for a voice of a folded stereo sound, the gain that has its mono source (at the listener's point) sound
    /// as the two speakers OpenAL Soft plays a stereo source's sides as (`Mixer.makeSound`). Its `AL_MAX_GAIN` is
    /// raised by as much, so that OpenAL clamps it where it clamped the stereo source.
    func foldScale(_ slot: Int32) -> Float {
        voices.slots[Int(slot)].sound?.isFoldedStereo == true ? foldGainAtListenerPoint : 1
    }

    // MARK: Rendering

    /// Mixes one block. Called by the audio thread or by an offline render; never blocks on the game thread.
    package func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        guard ProcessExit.beginRender() else {
            buffer.initialize(repeating: 0, count: frames * 2)  // the process is exiting: silence, no OpenAL
            return
        }
        defer { ProcessExit.endRender() }
        let start = monotonicNanoseconds()
        applyPendingStarts()
        device.render(into: buffer, frames: frames)
        if postMix.isSet { postMix.run(buffer, frames: frames) }
        let spent = monotonicNanoseconds() - start
        framesRendered.add(frames)
        renderBlocks.add(1, ordering: .relaxed)
        renderNanosTotal.add(spent, ordering: .relaxed)
        renderTimes.record(nanoseconds: spent)
        var seen = renderNanosMax.load(ordering: .relaxed)
        while spent > seen {
            let (exchanged, original) = renderNanosMax.compareExchange(
                expected: seen, desired: spent, ordering: .relaxed)
            if exchanged { break }
            seen = original
        }
    }

    /// Plays the starts `play()` recorded since the last block (`PendingStarts`), in one `alSourcePlayv`, just
    /// before the block is mixed: they sound from its first sample. On the audio thread this takes none of our locks.
    /// OpenAL Soft takes its own: the process-wide list lock to make the context current (its render takes that lock
    /// too, every block), and the context's source-list and device locks for the call (the device lock is the one its
    /// render holds), each held by another thread only for the length of one AL call. It allocates nothing: the pool
    /// was primed at start for all its sources starting in one block (`SourcePool.primeVoices`). `render` calls it;
    /// the bench calls it too, to keep a scene's setup out of its measured window.
    package func applyPendingStarts() {
        guard pendingStarts.hasRecorded, !device.isClosed else { return }
        _ = device.withCurrentContext { pendingStarts.apply(ALSource.playAll) }
    }
}
