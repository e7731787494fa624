import Synchronization
import Glibc

/// How the mixer is sized.
public struct MixerConfiguration: Sendable {
    /// Output rate of the mix, in Hz.
    public var sampleRate = 48_000
    /// OpenAL sources mixed for real (up to 4096). Voices beyond this are virtual.
    public var realVoices = 256
    /// Voices tracked in all, real and virtual. When full, the least important voice is stolen.
    public var maxVoices = 16_384
    /// Head-related transfer function for 3D voices (headphone listening).
    public var hrtf = false

    public init(sampleRate: Int = 48_000, realVoices: Int = 256, maxVoices: Int = 16_384, hrtf: Bool = false) {
        self.sampleRate = sampleRate
        self.realVoices = realVoices
        self.maxVoices = maxVoices
        self.hrtf = hrtf
    }
}

/// Counters the game can show or log. Read with `AudioEngine.stats`.
public struct MixerStats: Sendable, Equatable {
    public var realVoices = 0
    public var virtualVoices = 0
    public var started = 0
    public var stolen = 0
    public var finished = 0
    public var renderedBlocks = 0
    public var averageRenderMicroseconds = 0.0
    public var maxRenderMicroseconds = 0.0
    public var underruns = 0
}

/// What the mixer reports to the game, delivered by `AudioEngine.update()`.
public enum MixerEvent: Sendable, Equatable {
    /// A voice played to its end (one-shots only; a stopped voice is not reported).
    case voiceFinished(Voice)
    /// A voice lost its place to a more important one.
    case voiceStolen(Voice)
}

/// The engine's mixer: OpenAL Soft's loopback device, a pool of real and virtual voices, and the bus tree.
///
/// Thread-safety: all mutable state is guarded by `lock`; the audio thread touches only `render` and atomics.
public final class Mixer: @unchecked Sendable {
    let device: LoopbackDevice
    let configuration: MixerConfiguration
    private let lock = Lock<Void>(())

    // The voice pool. `active` lists the live slots so ticks never walk the whole table.
    // Every access to these arrays happens under `lock`, and none is held across a call that touches them again, so
    // the runtime's per-access exclusivity checks (a third of the tick with 10k voices) are switched off for them.
    @exclusivity(unchecked) private var slots: [VoiceSlot]
    @exclusivity(unchecked) private var freeSlots: [Int32]
    @exclusivity(unchecked) private var active: [Int32] = []
    @exclusivity(unchecked) private var sources: [ALSource]
    @exclusivity(unchecked) private var freeSources: [Int32]
    @exclusivity(unchecked) private var sourceOwner: [Int32]
    /// What each source was last told, so that starting a voice sends OpenAL only what differs (each AL call costs).
    @exclusivity(unchecked) private var sourceSettings: [SourceSettings]
    /// From when, on `voiceClock`, a tick asks each source whether its one-shot has played out (see `predictEnd`).
    @exclusivity(unchecked) private var pollFrom: [Int]
    /// Whether this tick has deferred OpenAL's property updates (see `deferUpdates`).
    private var deferring = false
    /// Frames of the latest tick: the block the mixer is rendered in.
    private var tickFrames = 1024
    private var needsRebalance = false
    private var framesSinceRebalance = 0
    /// The session paused every voice (an interruption, a lost device); user pauses are kept apart.
    private var suspended = false
    /// The real voice that the last rebalance ranked lowest, and its importance: a new, more important voice takes its source at once.
    private var weakestReal: (slot: Int32, importance: Float) = (-1, .infinity)
    @exclusivity(unchecked) private var scores: [Float] = []
    @exclusivity(unchecked) private var scratch: [Float] = []
    /// Output frames mixed while not suspended: the clock virtual voices keep time by. A virtual voice's playhead is
    /// computed from it when needed rather than advanced every tick, so ten thousand virtual voices cost nothing
    /// per block.
    private var voiceClock = 0
    /// When each virtual one-shot ends, on `voiceClock`: a min-heap. An entry whose `timing` no longer matches its
    /// slot's is stale (the voice was paused, re-pitched, made real or freed since) and is dropped when it surfaces.
    @exclusivity(unchecked) private var endings: [VoiceEnding] = []
    /// Slots with a fade in progress, the only voices a tick visits besides the real ones.
    @exclusivity(unchecked) private var fading: [Int32] = []
    /// Live, unpaused voices per bus: lets ducking skip a scan when its trigger bus has none.
    @exclusivity(unchecked) private var unpausedVoicesOnBus: [Int] = []
    /// Shared by every `Voice` handle of this mixer.
    let owner = VoiceOwner()

    @exclusivity(unchecked) private var buses: [BusState]
    /// Effects exist only where ALC_EXT_EFX does; everything else works without them.
    let effectsAvailable: Bool
    /// Buffers of sounds freed while loaded, deleted at the next tick.
    let retiredBuffers = RetiredBuffers()
    /// OpenAL Soft 1.19 shapes its reverb and low-pass filters around a fixed 5 kHz reference, which needs a Nyquist
    /// frequency above it: at 9 kHz and below its reverb fills the mix with NaN (the C API fuzzer found it at 8 kHz).
    /// Below this rate, the lowest common one above 10 kHz, effects are off (`capabilities.effects` is false).
    static let lowestEffectsSampleRate = 11_025
    private var busReverbs: [Int: ALEffectSlot] = [:]
    private var zones: [(zone: ReverbZone, slot: ALEffectSlot)] = []
    /// One low-pass filter per real source, made the first time that source carries an occluded voice.
    private var filters: [ALFilter?]
    /// Ducking rules by bus index: holding `Bus` handles here would keep the mixer alive forever.
    private var duckingRules: [(trigger: Int, target: Int, depth: Float, attack: Double, release: Double)] = []
    private var streams: [StreamChannel] = []
    private var events: [MixerEvent] = []
    private var counters = MixerStats()
    private var useCounter: UInt64 = 0

    // Written by whoever renders (audio thread or offline render), read by the game thread.
    let framesRendered = Atomic<Int>(0)
    private let renderBlocks = Atomic<Int>(0)
    private let renderNanosTotal = Atomic<Int>(0)
    private let renderNanosMax = Atomic<Int>(0)
    let underruns = Atomic<Int>(0)

    /// Index of the built-in buses.
    enum BuiltinBus: Int, CaseIterable { case master, music, sfx, ui, voice }
    static let maxPendingEvents = 8192

    public init(_ configuration: MixerConfiguration = MixerConfiguration()) throws(MixerSetupError) {
        var configuration = configuration
        configuration.realVoices = min(max(configuration.realVoices, 1), 4096)
        configuration.maxVoices = max(configuration.maxVoices, configuration.realVoices)
        self.configuration = configuration
        // Leave room for music streams beside the voice pool.
        device = try LoopbackDevice(sampleRate: configuration.sampleRate, sources: configuration.realVoices + 8, hrtf: configuration.hrtf)
        sources = device.withCurrentContext { ALSource.make(count: configuration.realVoices) }
        freeSources = (0..<Int32(sources.count)).reversed()
        sourceOwner = Array(repeating: -1, count: sources.count)
        sourceSettings = Array(repeating: SourceSettings(), count: sources.count)
        pollFrom = Array(repeating: 0, count: sources.count)
        effectsAvailable = device.hasDeviceExtension("ALC_EXT_EFX") && configuration.sampleRate >= Mixer.lowestEffectsSampleRate
        filters = Array(repeating: nil, count: sources.count)
        slots = Array(repeating: VoiceSlot(), count: configuration.maxVoices)
        freeSlots = (0..<Int32(configuration.maxVoices)).reversed()
        active.reserveCapacity(configuration.maxVoices)
        scores = Array(repeating: 0, count: configuration.maxVoices)
        scratch = Array(repeating: 0, count: configuration.maxVoices)
        endings.reserveCapacity(configuration.maxVoices * 2)
        fading.reserveCapacity(configuration.maxVoices)
        buses = [BusState(name: "master", parent: nil)]
        for bus in BuiltinBus.allCases.dropFirst() { buses.append(BusState(name: "\(bus)", parent: 0)) }
        unpausedVoicesOnBus = Array(repeating: 0, count: buses.count)
        events.reserveCapacity(256)
        device.withCurrentContext { ALListener.useInverseDistanceClamped() }
        duckingRules = [(BuiltinBus.voice.rawValue, BuiltinBus.music.rawValue, 9, 0.08, 0.5)]
        owner.bind(self)
    }

    deinit {
        device.withCurrentContext {
            for source in sources { source.stop(); source.setBuffer(nil); source.delete() }
            for filter in filters { filter?.delete() }
            for slot in busReverbs.values { slot.delete() }
            for zone in zones { zone.slot.delete() }
        }
    }

    func bus(_ builtin: BuiltinBus) -> Bus { Bus(mixer: self, index: builtin.rawValue) }

    /// Frees every OpenAL object and closes the device. Later calls do nothing audible. Called by
    /// `AudioEngine.shutdown()` once nothing renders any more.
    func close() {
        withLock {
            for source in sources { source.stop(); source.setBuffer(nil) }
            for i in sourceSettings.indices { sourceSettings[i].buffer = nil }
        }
        lock.withLock { _ in device.close() }
    }

    private func withLock<R>(_ body: () -> R) -> R {
        lock.withLock { _ in
            let token = device.enter()
            defer { device.leave(token) }
            return body()
        }
    }

    // MARK: Sounds

    /// Uploads decoded audio as a `Sound`.
    func makeSound(_ pcm: PCMBuffer, name: String) -> Sound? {
        let folded = pcm.foldedToStereo()
        return withLock {
            folded.samples.withUnsafeBufferPointer { samples in
                deleteRetiredBuffers()
                return ALBuffer.make(samples: samples, channels: folded.channels, sampleRate: folded.sampleRate).map {
                    Sound(name: name, buffer: $0, retired: retiredBuffers, sampleRate: folded.sampleRate,
                          channels: folded.channels, frames: folded.frames)
                }
            }
        }
    }

    /// Stops every voice of `sound` and frees its memory. Later plays of it return stale voices.
    func unload(_ sound: Sound) {
        withLock {
            guard sound.isLoaded else { return }
            for i in active.indices.reversed() where i < active.count {
                let slot = active[i]
                if slots[Int(slot)].sound === sound { release(slot, event: nil) }
            }
            sound.markUnloaded()
            detachFromIdleSources(sound.buffer)
            sound.buffer.delete()
        }
    }

    /// Idle sources keep their last buffer (a replay of the same sound then skips re-attaching it); OpenAL refuses to
    /// delete a buffer a source holds.
    private func detachFromIdleSources(_ buffer: ALBuffer) {
        for i in sourceSettings.indices where sourceSettings[i].buffer == buffer {
            sources[i].setBuffer(nil)
            sourceSettings[i].buffer = nil
        }
    }

    func isLoaded(_ sound: Sound) -> Bool { sound.isLoaded }
    func exists(_ buffer: ALBuffer) -> Bool { withLock { buffer.exists } }

    /// Deletes the buffers of sounds freed while loaded (see `RetiredBuffers`). Under the lock.
    private func deleteRetiredBuffers() {
        for buffer in retiredBuffers.take() {
            detachFromIdleSources(buffer)
            buffer.delete()
        }
    }
    func lastUsed(_ sound: Sound) -> UInt64 { withLock { sound.lastUsed } }

    func touch(_ sound: Sound) {
        withLock {
            useCounter &+= 1
            sound.lastUsed = useCounter
        }
    }

    /// Unloads the sound only if no voice plays it.
    func unloadIfIdle(_ sound: Sound) -> Bool {
        withLock {
            guard sound.isLoaded, sound.playingVoices == 0 else { return false }
            sound.markUnloaded()
            detachFromIdleSources(sound.buffer)
            sound.buffer.delete()
            return true
        }
    }

    // MARK: Voices

    func play(_ sound: Sound, _ options: PlayOptions) -> Voice {
        guard let options = try? options.validated() else { return .none }
        return withLock {
            guard sound.isLoaded else { return .none }
            let busIndex = options.bus.map { $0.mixer === self ? $0.index : BuiltinBus.sfx.rawValue } ?? BuiltinBus.sfx.rawValue
            var fresh = VoiceSlot()
            fresh.sound = sound
            fresh.bus = busIndex
            fresh.gain = options.gain
            fresh.pitch = options.pitch
            fresh.loop = options.loop
            fresh.priority = options.priority
            fresh.placement = options.placement
            fresh.soundFrames = Double(sound.frames)
            fresh.step = Double(fresh.pitch) * Double(sound.sampleRate) / Double(configuration.sampleRate)
            fresh.anchor = voiceClock
            if options.fadeIn > 0 {
                fresh.fadeGain = 0
                fresh.fade = Ramp(from: 0, to: 1, duration: options.fadeIn)
            }
            let importance = self.importance(of: fresh)

            let slotIndex: Int32
            if let free = freeSlots.popLast() {
                slotIndex = free
            } else {
                guard let victim = leastImportantVoice(), self.importance(ofSlot: victim) <= importance else {
                    counters.stolen += 1
                    return .none
                }
                release(victim, event: .stolen)
                slotIndex = freeSlots.removeLast()
            }
            fresh.generation = slots[Int(slotIndex)].generation
            fresh.timing = slots[Int(slotIndex)].timing &+ 1
            fresh.activeIndex = Int32(active.count)
            slots[Int(slotIndex)] = fresh
            active.append(slotIndex)
            unpausedVoicesOnBus[busIndex] += 1
            if fresh.fade != nil { startFading(slotIndex) }
            sound.playingVoices += 1
            useCounter &+= 1
            sound.lastUsed = useCounter
            counters.started += 1

            if let source = freeSources.popLast() {
                attach(slotIndex, to: source)
            } else if weakestReal.slot >= 0, importance > weakestReal.importance, slots[Int(weakestReal.slot)].source >= 0 {
                let source = demote(weakestReal.slot)
                weakestReal = (-1, .infinity)
                attach(slotIndex, to: source)
                needsRebalance = true
            } else {
                scheduleEnding(slotIndex)
                needsRebalance = true
            }
            return Voice(owner: owner, slot: slotIndex, generation: fresh.generation)
        }
    }

    /// Runs `body` on the voice's slot if the handle is current.
    private func withLiveSlot(_ voice: Voice, _ body: (Int32) -> Void) -> VoiceResult {
        withLock {
            guard isCurrent(voice) else { return .stale }
            body(voice.slot)
            return .ok
        }
    }

    private func isCurrent(_ voice: Voice) -> Bool {
        voice.slot >= 0 && Int(voice.slot) < slots.count && slots[Int(voice.slot)].generation == voice.generation
            && slots[Int(voice.slot)].sound != nil
    }

    func isAlive(_ voice: Voice) -> Bool { withLock { isCurrent(voice) } }
    func isPlaying(_ voice: Voice) -> Bool { withLock { isCurrent(voice) && !slots[Int(voice.slot)].paused } }
    func isReal(_ voice: Voice) -> Bool { withLock { isCurrent(voice) && slots[Int(voice.slot)].source >= 0 } }

    func stop(_ voice: Voice, fade fadeSeconds: Double) -> VoiceResult {
        let fade: Double
        do { fade = try fadeSeconds.clamped(to: MixerLimits.seconds, "fade") } catch { return .invalid(error) }
        if fade > 0 { return self.fade(voice, to: 0, over: fade, thenStop: true) }
        return withLiveSlot(voice) { release($0, event: nil) }
    }

    func setPaused(_ voice: Voice, _ paused: Bool) -> VoiceResult {
        withLiveSlot(voice) { slot in
            guard slots[Int(slot)].paused != paused else { return }
            settle(slot)
            slots[Int(slot)].paused = paused
            unpausedVoicesOnBus[slots[Int(slot)].bus] += paused ? -1 : 1
            let source = slots[Int(slot)].source
            if source >= 0 && !suspended { paused ? sources[Int(source)].pause() : resumeSource(of: slot) }
            if source < 0 { scheduleEnding(slot) }
            needsRebalance = true
        }
    }

    func setGain(_ voice: Voice, _ requested: Float) -> VoiceResult {
        let gain: Float
        do { gain = try requested.clamped(to: MixerLimits.gain, "gain") } catch { return .invalid(error) }
        return withLiveSlot(voice) { slot in
            slots[Int(slot)].gain = gain
            applyGain(slot)
        }
    }

    func setPitch(_ voice: Voice, _ requested: Float) -> VoiceResult {
        let pitch: Float
        do { pitch = try requested.clamped(to: MixerLimits.pitch, "pitch") } catch { return .invalid(error) }
        return withLiveSlot(voice) { slot in
            settle(slot)
            slots[Int(slot)].pitch = pitch
            let rate = slots[Int(slot)].sound.map { Double($0.sampleRate) } ?? Double(configuration.sampleRate)
            slots[Int(slot)].step = Double(slots[Int(slot)].pitch) * rate / Double(configuration.sampleRate)
            let source = slots[Int(slot)].source
            if source >= 0 {
                var wanted = sourceSettings[Int(source)]
                wanted.pitch = slots[Int(slot)].pitch
                configure(Int(source), wanted)
                pollFrom[Int(source)] = 0  // a higher pitch ends it sooner than predicted
            } else {
                scheduleEnding(slot)
            }
        }
    }

    func setPlacement(_ voice: Voice, _ requested: Placement) -> VoiceResult {
        let placement: Placement
        do { placement = try requested.validated() } catch { return .invalid(error) }
        return withLiveSlot(voice) { slot in
            slots[Int(slot)].placement = placement
            let source = slots[Int(slot)].source
            if source >= 0 {
                applyPlacement(placement, to: Int(source))
                if effectsAvailable { applyEffects(slot) }
                if dopplerApplies(to: placement) { pollFrom[Int(source)] = 0 }
            }
        }
    }

    func setOcclusion(_ voice: Voice, _ requested: Float) -> VoiceResult {
        let amount: Float
        do { amount = try requested.clamped(to: MixerLimits.occlusion, "occlusion") } catch { return .invalid(error) }
        return withLiveSlot(voice) { slot in
            slots[Int(slot)].occlusion = amount
            if slots[Int(slot)].source >= 0 && effectsAvailable { applyEffects(slot) }
        }
    }

    func fade(_ voice: Voice, to requestedGain: Float, over requestedSeconds: Double, thenStop: Bool) -> VoiceResult {
        let gain: Float, seconds: Double
        do {
            gain = try requestedGain.clamped(to: MixerLimits.gain, "gain")
            seconds = try requestedSeconds.clamped(to: MixerLimits.seconds, "seconds")
        } catch {
            return .invalid(error)
        }
        return withLiveSlot(voice) { slot in
            // Fades ramp the voice's own gain, so a later setGain overrides them.
            let start = slots[Int(slot)].gain * slots[Int(slot)].fadeGain
            slots[Int(slot)].gain = 1
            slots[Int(slot)].fadeGain = start
            slots[Int(slot)].fade = Ramp(from: start, to: gain, duration: seconds)
            slots[Int(slot)].stopAfterFade = thenStop
            startFading(slot)
        }
    }

    func elapsed(_ voice: Voice) -> Double? {
        withLock {
            guard isCurrent(voice), let sound = slots[Int(voice.slot)].sound else { return nil }
            return playhead(voice.slot) / Double(sound.sampleRate)
        }
    }

    /// The voice's position in its sound, in the sound's frames.
    private func playhead(_ slot: Int32) -> Double {
        let source = slots[Int(slot)].source
        guard source >= 0 else { return virtualPlayhead(slot) }
        return Double(sources[Int(source)].sampleOffset)
    }

    /// Where a virtual voice is in its sound now, from where it was at `anchor` and its speed.
    private func virtualPlayhead(_ slot: Int32) -> Double {
        slots.withUnsafeBufferPointer { pool in
            let s = pool.baseAddress! + Int(slot)
            guard !s.pointee.paused else { return s.pointee.elapsedFrames }
            let position = s.pointee.elapsedFrames + Double(voiceClock - s.pointee.anchor) * s.pointee.step
            guard position >= s.pointee.soundFrames else { return position }
            guard s.pointee.loop, s.pointee.soundFrames > 0 else { return s.pointee.soundFrames }
            return position.truncatingRemainder(dividingBy: s.pointee.soundFrames)
        }
    }

    /// Folds a virtual voice's progress into `elapsedFrames` before its speed or paused state changes, and makes
    /// its scheduled ending stale.
    private func settle(_ slot: Int32) {
        let index = Int(slot)
        if slots[index].source < 0 { slots[index].elapsedFrames = virtualPlayhead(slot) }
        slots[index].anchor = voiceClock
        slots[index].timing &+= 1
    }

    /// Schedules the end of a virtual, unpaused one-shot (from its current `elapsedFrames` at `anchor`).
    private func scheduleEnding(_ slot: Int32) {
        let s = slots[Int(slot)]
        guard s.source < 0, !s.paused, !s.loop || s.soundFrames <= 0 else { return }
        let end = s.anchor &+ outputFramesToEnd(s, from: s.elapsedFrames).saturated(Int.self, rounding: .up)
        if endings.count >= endings.capacity { compactEndings() }
        endings.append(VoiceEnding(clock: end, slot: slot, timing: s.timing))
        siftUp(endings.count - 1)
    }

    /// Drops stale entries without letting the heap reallocate (the real-time tick must not allocate).
    private func compactEndings() {
        endings.removeAll { slots[Int($0.slot)].timing != $0.timing }
        for i in stride(from: endings.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
    }

    private func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard endings[child].clock < endings[parent].clock else { return }
            endings.swapAt(child, parent)
            child = parent
        }
    }

    private func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < endings.count && endings[left].clock < endings[smallest].clock { smallest = left }
            if right < endings.count && endings[right].clock < endings[smallest].clock { smallest = right }
            guard smallest != parent else { return }
            endings.swapAt(parent, smallest)
            parent = smallest
        }
    }

    /// Releases the virtual one-shots whose end `voiceClock` has reached.
    private func releaseEndedVirtualVoices() {
        while let first = endings.first, first.clock <= voiceClock {
            let last = endings.removeLast()
            if !endings.isEmpty {
                endings[0] = last
                siftDown(0)
            }
            let s = slots[Int(first.slot)]
            if s.timing == first.timing && s.source < 0 && !s.paused && s.sound != nil { release(first.slot, event: .finished) }
        }
    }

    private func startFading(_ slot: Int32) {
        guard slots[Int(slot)].fadeIndex < 0 else { return }
        slots[Int(slot)].fadeIndex = Int32(fading.count)
        fading.append(slot)
    }

    private func stopFading(_ slot: Int32) {
        let position = Int(slots[Int(slot)].fadeIndex)
        guard position >= 0 else { return }
        let moved = fading.removeLast()
        if moved != slot {
            fading[position] = moved
            slots[Int(moved)].fadeIndex = Int32(position)
        }
        slots[Int(slot)].fadeIndex = -1
    }

    // MARK: Session control

    /// Pauses (or resumes) every voice at its position, leaving each voice's own paused state alone.
    func setSuspended(_ on: Bool) {
        withLock {
            guard suspended != on else { return }
            suspended = on
            for slot in active where slots[Int(slot)].source >= 0 && !slots[Int(slot)].paused {
                on ? sources[Int(slots[Int(slot)].source)].pause() : resumeSource(of: slot)
            }
        }
    }

    var isSuspended: Bool { withLock { suspended } }

    /// Silences the whole mix (voices and streams) from the next block, without stopping anything.
    func setOutputSilenced(_ on: Bool) {
        withLock { ALListener.setGain(on ? 0 : 1) }
    }

    /// Whether any voice is audible-in-principle: alive, not paused, not suspended.
    var hasPlayingVoices: Bool {
        withLock { !suspended && unpausedVoicesOnBus.contains { $0 > 0 } }
    }

    // MARK: Time

    /// Advances fades, ducking, virtual voices and finished one-shots by `frames` output frames.
    ///
    /// Visits only the real voices, the fading ones and the virtual one-shots that end now: a crowd of virtual
    /// voices costs nothing here, apart from the periodic re-ranking.
    func tick(frames: Int) {
        withLock {
            deleteRetiredBuffers()
            let seconds = Double(frames) / Double(configuration.sampleRate)
            tickFrames = frames
            let busesChanged = updateBuses(seconds)
            if !suspended { voiceClock += frames }
            if busesChanged || !fading.isEmpty { deferUpdates() }
            advanceFades(seconds, busesChanged: busesChanged)
            releaseEndedVirtualVoices()
            checkRealVoices(gainsChanged: busesChanged)
            // With no competition a rebalance only hands out free sources: do it at once. With virtual voices about,
            // ranking the whole crowd costs in proportion to it, so re-rank every 40 ms; a new voice that matters
            // more than the weakest real one has already taken its source in play().
            framesSinceRebalance += frames
            let competing = active.count > sources.count
            let waiting = active.count > sources.count - freeSources.count  // some voice is virtual
            if (needsRebalance || waiting) && !competing || competing && framesSinceRebalance * 25 >= configuration.sampleRate {
                deferUpdates()
                rebalance()
            }
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
        var i = fading.count - 1
        while i >= 0 {
            let slot = fading[i]
            i -= 1
            let index = Int(slot)
            guard var ramp = slots[index].fade else { stopFading(slot); continue }
            ramp.advance(seconds)
            slots[index].fadeGain = ramp.value
            slots[index].fade = ramp.isDone ? nil : ramp
            if ramp.isDone {
                stopFading(slot)
                if slots[index].stopAfterFade {
                    release(slot, event: nil)
                    continue
                }
            }
            // Real voices whose buses changed get their gain in checkRealVoices.
            if !busesChanged { applyGain(slot) }
        }
    }

    /// Releases real one-shots that OpenAL has played to the end, and re-applies gains after a bus change.
    private func checkRealVoices(gainsChanged: Bool) {
        for source in sourceOwner.indices {
            let slot = sourceOwner[source]
            guard slot >= 0 else { continue }
            if pollFrom[source] <= voiceClock && hasPlayedOut(slot) {
                release(slot, event: .finished)
            } else if gainsChanged {
                applyGain(slot)
            }
        }
    }

    // MARK: Real and virtual voices

    /// How much a voice matters: priority first, then how loud it would be at the listener.
    private func importance(of slot: VoiceSlot) -> Float {
        withUnsafePointer(to: slot) { importance(at: $0) }
    }

    /// The importance of a slot in the pool, read in place: copying a slot would retain its sound, for every voice on every tick.
    private func importance(ofSlot slot: Int32) -> Float {
        slots.withUnsafeBufferPointer { importance(at: $0.baseAddress! + Int(slot)) }
    }

    private func importance(at slot: UnsafePointer<VoiceSlot>) -> Float {
        if slot.pointee.paused { return -1 }
        var audible = slot.pointee.gain * slot.pointee.fadeGain * buses[slot.pointee.bus].effective
        if case .world(let x, let y, let z, _) = slot.pointee.placement {
            audible *= distanceAttenuation(x, y, z)
        }
        return Float(slot.pointee.priority) * 16 + min(audible, 15)
    }

    private func leastImportantVoice() -> Int32? {
        var best: Int32? = nil
        var bestScore = Float.infinity
        for slot in active {
            let score = importance(ofSlot: slot)
            if score < bestScore { bestScore = score; best = slot }
        }
        return best
    }

    /// Gives the real sources to the most important voices; the rest keep time virtually.
    private func rebalance() {
        needsRebalance = false
        framesSinceRebalance = 0
        let count = active.count
        let capacity = sources.count
        if count <= capacity {
            for slot in active where slots[Int(slot)].source < 0 && !slots[Int(slot)].paused {
                guard let source = freeSources.popLast() else { break }
                attach(slot, to: source)
            }
            weakestReal = (-1, .infinity)
            return
        }
        slots.withUnsafeBufferPointer { pool in
            active.withUnsafeBufferPointer { live in
                scores.withUnsafeMutableBufferPointer { scores in
                    scratch.withUnsafeMutableBufferPointer { scratch in
                        func score(_ slot: UnsafePointer<VoiceSlot>) {
                            var score = importance(at: slot)
                            if slot.pointee.source >= 0 { score += 0.25 } // hysteresis: do not swap near-equals every tick
                            let i = Int(slot.pointee.activeIndex)
                            scores[i] = score
                            scratch[i] = score
                        }
                        // A crowded pool is read in memory order, which the prefetcher follows; the live list
                        // visits the same voices in no order, a cache miss each.
                        if count * 4 >= pool.count {
                            for s in 0..<pool.count where pool[s].activeIndex >= 0 { score(pool.baseAddress! + s) }
                        } else {
                            for i in 0..<count { score(pool.baseAddress! + Int(live[i])) }
                        }
                    }
                }
            }
        }
        let threshold = scratch.withUnsafeMutableBufferPointer { kthLargest($0, count: count, k: capacity) }
        // Only real voices can lose their source: visit the sources, not the crowd.
        for source in sourceOwner.indices {
            let slot = sourceOwner[source]
            if slot >= 0 && scores[Int(slots[Int(slot)].activeIndex)] < threshold { freeSources.append(demote(slot)) }
        }
        var weakest: (Int32, Float) = (-1, .infinity)
        for (i, slot) in active.enumerated() where scores[i] >= threshold && scores[i] >= 0 {
            if slots[Int(slot)].source < 0 {
                guard let source = freeSources.popLast() else { continue }
                attach(slot, to: source)
            }
            if scores[i] < weakest.1 { weakest = (slot, scores[i]) }
        }
        weakestReal = weakest
    }

    /// Starts a voice on a real source, at its elapsed position.
    private func attach(_ slot: Int32, to source: Int32) {
        let position = min(virtualPlayhead(slot), slots[Int(slot)].soundFrames - 1)
        slots[Int(slot)].timing &+= 1  // a real voice's end is OpenAL's to find
        let s = slots[Int(slot)]
        guard let sound = s.sound else { return }
        let al = sources[Int(source)]
        sourceOwner[Int(source)] = slot
        slots[Int(slot)].source = source
        var wanted = sourceSettings[Int(source)]
        wanted.buffer = sound.buffer
        wanted.loop = s.loop
        wanted.pitch = s.pitch
        configure(Int(source), wanted)
        applyPlacement(s.placement, to: Int(source))
        applyGain(slot)
        if effectsAvailable { applyEffects(slot) }
        if position >= 1 { al.sampleOffset = position.saturated(Int.self, rounding: .down) }
        al.play()
        if s.paused || suspended { al.pause() }
        predictEnd(slot, from: position)
    }

    /// Sets when a tick starts asking the real one-shot's source whether it has played out: its end as predicted
    /// from `position` (in the sound's frames) and its speed, less a lead that covers OpenAL's fixed-point pitch
    /// and the block in flight. Asking costs an AL call per source (a cache miss or two inside OpenAL Soft): every
    /// block for every real one-shot, that was 2 % of all the work with 4096 real voices. Whatever may make a voice
    /// end sooner than predicted (a pitch change, doppler from a velocity on either end, a device reset) sets its
    /// source to be asked every block from then on, as every source used to be. A pause only makes the end later:
    /// asking early costs a call and misses nothing.
    private func predictEnd(_ slot: Int32, from position: Double) {
        let s = slots[Int(slot)]
        guard s.source >= 0, !s.loop else { return }
        if dopplerApplies(to: s.placement) {
            pollFrom[Int(s.source)] = 0
            return
        }
        let remaining = outputFramesToEnd(s, from: position)
        let lead = Double(max(Mixer.endPollLeadFrames, 2 * tickFrames)) + remaining / 1000
        pollFrom[Int(s.source)] = voiceClock + Int(max(remaining - lead, 0))
    }

    /// Output frames a voice needs to play its sound from `position` (in the sound's frames) to the end.
    private func outputFramesToEnd(_ s: VoiceSlot, from position: Double) -> Double {
        max(s.soundFrames - position, 0) / s.step
    }

    /// Whether a real voice is a one-shot that OpenAL has played to the end. Paused and suspended sources report
    /// `.paused`: `.stopped` always means played out, even if it was paused after its last sample.
    private func hasPlayedOut(_ slot: Int32) -> Bool {
        !slots[Int(slot)].loop && sources[Int(slots[Int(slot)].source)].state == .stopped
    }

    /// Plays a paused real voice on, unless it is a one-shot that had played out before it was paused: playing a
    /// stopped source would start it again from the top. The next tick reports it finished.
    private func resumeSource(of slot: Int32) {
        let source = Int(slots[Int(slot)].source)
        if hasPlayedOut(slot) {
            pollFrom[source] = 0
        } else {
            sources[source].play()
        }
    }

    /// Whether doppler can change how fast a voice placed so plays.
    private func dopplerApplies(to placement: Placement) -> Bool {
        guard listener.dopplerFactor > 0 else { return false }
        if case .world(_, _, _, let velocity) = placement, velocity != (0, 0, 0) { return true }
        return listener.velocity != (0, 0, 0)
    }

    /// Output frames before a real one-shot's predicted end when its source starts being asked: two 2048-frame
    /// blocks, or two of the blocks the mixer is ticked with when they are larger.
    static let endPollLeadFrames = 4096

    /// Takes a voice off its source and makes it virtual where it was; returns the freed source.
    private func demote(_ slot: Int32) -> Int32 {
        let source = detach(slot)
        scheduleEnding(slot)
        return source
    }

    /// Takes a voice off its source, remembering where it was; returns the freed source.
    private func detach(_ slot: Int32) -> Int32 {
        let index = Int(slot)
        let source = slots[index].source
        let al = sources[Int(source)]
        // A stopped source has played its one-shot to the end.
        slots[index].elapsedFrames = al.state == .stopped ? slots[index].soundFrames : Double(al.sampleOffset)
        slots[index].anchor = voiceClock
        slots[index].timing &+= 1
        if al.state != .stopped { al.stop() }
        slots[Int(slot)].source = -1
        sourceOwner[Int(source)] = -1
        return source
    }

    private enum ReleaseEvent { case finished, stolen }

    private func release(_ slot: Int32, event: ReleaseEvent?) {
        let index = Int(slot)
        if slots[index].source >= 0 { freeSources.append(detach(slot)) }
        let voice = Voice(owner: owner, slot: slot, generation: slots[index].generation)
        slots[index].sound?.playingVoices -= 1
        slots[index].sound = nil
        stopFading(slot)
        slots[index].fade = nil
        if !slots[index].paused { unpausedVoicesOnBus[slots[index].bus] -= 1 }
        slots[index].generation &+= 1
        slots[index].timing &+= 1
        let position = Int(slots[index].activeIndex)
        let moved = active.removeLast()
        if moved != slot {
            active[position] = moved
            slots[Int(moved)].activeIndex = Int32(position)
        }
        slots[index].activeIndex = -1
        freeSlots.append(slot)
        if weakestReal.slot == slot { weakestReal = (-1, .infinity) }
        switch event {
        case .finished?:
            counters.finished += 1
            post(.voiceFinished(voice))
        case .stolen?:
            counters.stolen += 1
            post(.voiceStolen(voice))
        case nil:
            break
        }
    }

    private func post(_ event: MixerEvent) {
        // A game that never calls update() must not grow without bound; the counters still count.
        if events.count < Mixer.maxPendingEvents { events.append(event) }
    }

    func drainEvents() -> [MixerEvent] {
        withLock {
            let drained = events
            events.removeAll(keepingCapacity: true)
            return drained
        }
    }

    // MARK: Gains and placement

    private func applyGain(_ slot: Int32) {
        let s = slots[Int(slot)]
        guard s.source >= 0 else { return }
        sources[Int(s.source)].setGain(s.gain * s.fadeGain * buses[s.bus].effective)
    }

    private func applyPlacement(_ placement: Placement, to source: Int) {
        var wanted = sourceSettings[source]
        switch placement {
        case .pan(let pan):
            let angle = Double(min(max(pan, -1), 1)) * Double.pi / 2
            wanted.relative = true
            wanted.rolloff = 0
            wanted.velocity = (0, 0, 0)
            configure(source, wanted)
            sources[source].setPosition(Float(sin(angle)), 0, Float(-cos(angle)))
        case .world(let x, let y, let z, let velocity):
            wanted.relative = false
            wanted.rolloff = listener.rolloff
            wanted.referenceDistance = listener.referenceDistance
            wanted.maxDistance = listener.maxDistance
            wanted.velocity = velocity
            configure(source, wanted)
            sources[source].setPosition(x, y, z)
        }
    }

    /// Sends the source only the settings that differ from what it has.
    private func configure(_ index: Int, _ wanted: SourceSettings) {
        let had = sourceSettings[index]
        let source = sources[index]
        if had.buffer != wanted.buffer { source.setBuffer(wanted.buffer) }
        if had.loop != wanted.loop { source.setLooping(wanted.loop) }
        if had.pitch != wanted.pitch { source.setPitch(wanted.pitch) }
        if had.relative != wanted.relative { source.setRelative(wanted.relative) }
        if had.rolloff != wanted.rolloff { source.setRolloff(wanted.rolloff) }
        if had.referenceDistance != wanted.referenceDistance { source.setReferenceDistance(wanted.referenceDistance) }
        if had.maxDistance != wanted.maxDistance { source.setMaxDistance(wanted.maxDistance) }
        if had.velocity != wanted.velocity { source.setVelocity(wanted.velocity.x, wanted.velocity.y, wanted.velocity.z) }
        if had.reverb != wanted.reverb { source.setReverbSend(wanted.reverb) }
        sourceSettings[index] = wanted
    }

    // MARK: Effects

    /// Sends a real voice to its reverb (its zone's, else its bus chain's) and filters it for occlusion.
    private func applyEffects(_ slot: Int32) {
        let s = slots[Int(slot)]
        let sourceIndex = Int(s.source)
        let source = sources[sourceIndex]
        var reverb: ALEffectSlot? = nil
        if case .world(let x, let y, let z, _) = s.placement { reverb = zones.first { $0.zone.contains(x, y, z) }?.slot }
        var bus: Int? = s.bus
        while reverb == nil, let b = bus {
            reverb = busReverbs[b]
            bus = buses[b].parent
        }
        var wanted = sourceSettings[sourceIndex]
        wanted.reverb = reverb
        configure(sourceIndex, wanted)
        if s.occlusion > 0 {
            if filters[sourceIndex] == nil { filters[sourceIndex] = ALFilter.makeLowPass() }
            // Walls take the highs first: at full occlusion, -6 dB overall and -26 dB above the reference.
            filters[sourceIndex]?.setLowPass(gain: 1 - 0.5 * s.occlusion, gainHF: 1 - 0.95 * s.occlusion)
            // OpenAL copies a filter's parameters when it is set, so an occluded voice sets it every time.
            source.setDirectFilter(filters[sourceIndex])
            sourceSettings[sourceIndex].filtered = true
        } else if sourceSettings[sourceIndex].filtered {
            source.setDirectFilter(nil)
            sourceSettings[sourceIndex].filtered = false
        }
    }

    /// Idle sources keep their last send too, and OpenAL refuses to delete a slot a source still sends to.
    private func detachFromEverySource(_ reverb: ALEffectSlot) {
        for source in sourceSettings.indices where sourceSettings[source].reverb == reverb {
            var wanted = sourceSettings[source]
            wanted.reverb = nil
            configure(source, wanted)
        }
    }

    private func refreshEffects() {
        for slot in active where slots[Int(slot)].source >= 0 { applyEffects(slot) }
    }

    /// Puts a reverb on a bus (nil removes it). Returns false when effects are unavailable.
    func setReverb(_ parameters: ReverbParameters?, bus: Int) -> Bool {
        if let parameters, (try? parameters.validated()) == nil { return false }
        return withLock {
            guard effectsAvailable else { return false }
            if let parameters {
                if let existing = busReverbs[bus] { existing.set(parameters) } else {
                    guard let made = ALEffectSlot.makeReverb(parameters) else { return false }
                    busReverbs[bus] = made
                }
            } else if let existing = busReverbs.removeValue(forKey: bus) {
                detachFromEverySource(existing)
                existing.delete()
            }
            refreshEffects()
            return true
        }
    }

    func setReverbZones(_ requested: [ReverbZone]) -> Bool {
        guard let newZones = try? requested.map({ zone throws(InvalidNumber) in try zone.validated() }) else { return false }
        return withLock {
            guard effectsAvailable else { return false }
            for zone in zones {
                detachFromEverySource(zone.slot)
                zone.slot.delete()
            }
            zones = newZones.compactMap { zone in ALEffectSlot.makeReverb(zone.reverb).map { (zone, $0) } }
            refreshEffects()
            return zones.count == newZones.count
        }
    }

    func setHRTF(_ on: Bool) -> Bool {
        withLock {
            let done = device.setHRTF(on) && device.hrtfEnabled == on
            // Resetting the device can stop sources (OpenAL Soft stops them when the reset fails): ask them all.
            for i in pollFrom.indices { pollFrom[i] = 0 }
            return done
        }
    }

    var capabilities: AudioCapabilities {
        withLock {
            let hrtf = device.hasDeviceExtension("ALC_SOFT_HRTF")
            var missing: [String] = []
            if !effectsAvailable { missing.append("reverb and occlusion filters (ALC_EXT_EFX)") }
            if !hrtf { missing.append("HRTF (ALC_SOFT_HRTF)") }
            if !device.hasExtension("AL_SOFT_direct_channels") { missing.append("unspatialised stereo music (AL_SOFT_direct_channels)") }
            return AudioCapabilities(renderer: device.rendererName, effects: effectsAvailable, hrtf: hrtf, hrtfEnabled: device.hrtfEnabled,
                                     realVoices: sources.count, extensions: device.extensions, missing: missing)
        }
    }

    // MARK: Listener

    private var listener = ListenerState()

    func setListener(_ requested: ListenerState) throws(InvalidNumber) {
        let checked = try requested.validated()
        withLock {
            let before = listener
            listener = checked
            ALListener.setPosition(listener.position.x, listener.position.y, listener.position.z)
            ALListener.setVelocity(listener.velocity.x, listener.velocity.y, listener.velocity.z)
            ALListener.setOrientation(at: listener.forward, up: listener.up)
            ALListener.setDopplerFactor(listener.dopplerFactor)
            if before.rolloff != listener.rolloff || before.referenceDistance != listener.referenceDistance
                || before.maxDistance != listener.maxDistance {
                for slot in active where slots[Int(slot)].source >= 0 {
                    applyPlacement(slots[Int(slot)].placement, to: Int(slots[Int(slot)].source))
                }
            }
            // A new velocity or doppler factor can speed the real one-shots up: ask them every block.
            if before.velocity != listener.velocity || before.dopplerFactor != listener.dopplerFactor {
                for (source, slot) in sourceOwner.enumerated() where slot >= 0 && dopplerApplies(to: slots[Int(slot)].placement) {
                    pollFrom[source] = 0
                }
            }
        }
    }

    func listenerState() -> ListenerState { withLock { listener } }

    /// Inverse-distance-clamped attenuation, as OpenAL computes it, for ranking voices.
    private func distanceAttenuation(_ x: Float, _ y: Float, _ z: Float) -> Float {
        let dx = x - listener.position.x, dy = y - listener.position.y, dz = z - listener.position.z
        let reference = listener.referenceDistance
        let distance = min(max((dx * dx + dy * dy + dz * dz).squareRoot(), reference), listener.maxDistance)
        let denominator = reference + listener.rolloff * (distance - reference)
        return denominator > 0 ? reference / denominator : 1
    }

    // MARK: Buses

    func busName(_ index: Int) -> String { withLock { buses[index].name } }
    func busGain(_ index: Int) -> Float { withLock { buses[index].gain } }
    func busMuted(_ index: Int) -> Bool { withLock { buses[index].muted } }
    func busEffectiveGain(_ index: Int) -> Float { withLock { buses[index].effective } }

    func setBusGain(_ index: Int, _ requestedGain: Float, over requestedSeconds: Double) throws(InvalidNumber) {
        let gain = try requestedGain.clamped(to: MixerLimits.gain, "bus gain")
        let seconds = try requestedSeconds.clamped(to: MixerLimits.seconds, "seconds")
        withLock {
            if seconds > 0 {
                buses[index].gainRamp = Ramp(from: buses[index].gain, to: gain, duration: seconds)
            } else {
                buses[index].gainRamp = nil
                buses[index].gain = gain
                refreshGains()
            }
        }
    }

    func setBusMuted(_ index: Int, _ muted: Bool) {
        withLock {
            buses[index].muted = muted
            refreshGains()
        }
    }

    func makeBus(named name: String, parent: Bus?) -> Bus {
        withLock {
            buses.append(BusState(name: name, parent: parent?.index ?? 0))
            unpausedVoicesOnBus.append(0)
            recomputeEffectiveGains()
            return Bus(mixer: self, index: buses.count - 1)
        }
    }

    func setDuckingRules(_ requested: [DuckingRule]) throws(InvalidNumber) {
        var rules: [DuckingRule] = []
        for rule in requested { rules.append(try rule.validated()) }
        withLock {
            duckingRules = rules.filter { $0.trigger.mixer === self && $0.target.mixer === self }
                .map { ($0.trigger.index, $0.target.index, $0.depth, $0.attack, $0.release) }
            if duckingRules.isEmpty { for i in buses.indices { buses[i].duck = 1 } }
            refreshGains()
        }
    }

    func currentDuckingRules() -> [DuckingRule] {
        withLock {
            duckingRules.map {
                DuckingRule(trigger: Bus(mixer: self, index: $0.trigger), target: Bus(mixer: self, index: $0.target),
                            depth: $0.depth, attack: $0.attack, release: $0.release)
            }
        }
    }

    private func refreshGains() {
        recomputeEffectiveGains()
        for slot in active { applyGain(slot) }
        for stream in streams { applyStreamGain(stream) }
    }

    /// Advances bus fades and ducking; returns whether any effective gain changed.
    private func updateBuses(_ seconds: Double) -> Bool {
        var changed = false
        for i in buses.indices {
            if var ramp = buses[i].gainRamp {
                ramp.advance(seconds)
                buses[i].gain = ramp.value
                buses[i].gainRamp = ramp.isDone ? nil : ramp
                changed = true
            }
        }
        for rule in duckingRules {
            let triggered = busHasAudibleVoices(rule.trigger)
            let floor = Float(pow(10, Double(-rule.depth) / 20))
            var duck = buses[rule.target].duck
            // Move in decibels so attack and release sound linear to the ear.
            let currentDB = 20 * log10(Double(max(duck, 1e-6)))
            if triggered && duck > floor {
                let step = rule.attack > 0 ? Double(rule.depth) * seconds / rule.attack : Double(rule.depth)
                duck = max(Float(pow(10, (currentDB - step) / 20)), floor)
                changed = true
            } else if !triggered && duck < 1 {
                let step = rule.release > 0 ? Double(rule.depth) * seconds / rule.release : Double(rule.depth)
                duck = min(Float(pow(10, (currentDB + step) / 20)), 1)
                changed = true
            }
            buses[rule.target].duck = duck
        }
        if changed { recomputeEffectiveGains() }
        return changed
    }

    private func busHasAudibleVoices(_ bus: Int) -> Bool {
        guard buses.indices.contains(where: { unpausedVoicesOnBus[$0] > 0 && isBus($0, under: bus) }) else { return false }
        return slots.withUnsafeBufferPointer { pool in
            active.contains { slot in
                let s = pool.baseAddress! + Int(slot)
                return !s.pointee.paused && s.pointee.gain * s.pointee.fadeGain > 0.001 && isBus(s.pointee.bus, under: bus)
            }
        }
    }

    private func isBus(_ bus: Int, under ancestor: Int) -> Bool {
        var current: Int? = bus
        while let c = current {
            if c == ancestor { return true }
            current = buses[c].parent
        }
        return false
    }

    private func recomputeEffectiveGains() {
        // Parents always precede children in `buses`, so one pass suffices.
        for i in buses.indices {
            let own = buses[i].muted ? 0 : buses[i].gain * buses[i].duck
            buses[i].effective = own * (buses[i].parent.map { buses[$0].effective } ?? 1)
        }
    }

    // MARK: Streams (music)

    /// Registers an OpenAL source that plays a stream on `bus`, so bus gains and ducking reach it.
    func makeStreamChannel(bus: Bus) -> StreamChannel? {
        withLock {
            guard let source = ALSource.make(count: 1).first else { return nil }
            source.setRelative(true)
            source.setRolloff(0)
            source.setPosition(0, 0, 0)
            source.setDirectChannels(true)
            let channel = StreamChannel(source: source, bus: bus.index)
            streams.append(channel)
            applyStreamGain(channel)
            return channel
        }
    }

    func removeStreamChannel(_ channel: StreamChannel) {
        withLock {
            streams.removeAll { $0 === channel }
            channel.source.stop()
            channel.source.setBuffer(nil)
            channel.source.delete()
        }
    }

    func setStreamGain(_ channel: StreamChannel, _ gain: Float) {
        withLock {
            channel.gain = gain
            applyStreamGain(channel)
        }
    }

    /// Runs stream work (queueing buffers) under the mixer's lock with the context current.
    func withStream<R>(_ body: () -> R) -> R { withLock(body) }

    private func applyStreamGain(_ channel: StreamChannel) {
        channel.source.setGain(channel.gain * buses[channel.bus].effective)
    }

    // MARK: Rendering

    /// Mixes one block. Called by the audio thread or by an offline render; never blocks on the game thread.
    func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        let start = monotonicNanoseconds()
        device.render(into: buffer, frames: frames)
        let spent = monotonicNanoseconds() - start
        framesRendered.add(frames, ordering: .relaxed)
        renderBlocks.add(1, ordering: .relaxed)
        renderNanosTotal.add(spent, ordering: .relaxed)
        var seen = renderNanosMax.load(ordering: .relaxed)
        while spent > seen {
            let (exchanged, original) = renderNanosMax.compareExchange(expected: seen, desired: spent, ordering: .relaxed)
            if exchanged { break }
            seen = original
        }
    }

    var stats: MixerStats {
        withLock {
            var s = counters
            s.realVoices = sources.count - freeSources.count
            s.virtualVoices = active.count - s.realVoices
            let blocks = renderBlocks.load(ordering: .relaxed)
            s.renderedBlocks = blocks
            s.averageRenderMicroseconds = blocks > 0 ? Double(renderNanosTotal.load(ordering: .relaxed)) / Double(blocks) / 1000 : 0
            s.maxRenderMicroseconds = Double(renderNanosMax.load(ordering: .relaxed)) / 1000
            s.underruns = underruns.load(ordering: .relaxed)
            return s
        }
    }

    var freeSourceCount: Int { withLock { freeSources.count } }
    var freeSlotCount: Int { withLock { freeSlots.count } }
    var pendingEventCount: Int { withLock { events.count } }

    /// How many voices are alive (real and virtual).
    var liveVoices: Int { withLock { active.count } }
}

/// A voice slot in the pool. `generation` changes whenever the slot is freed, which makes old handles stale.
struct VoiceSlot {
    // What a re-rank reads comes first, in the slot's first 64 bytes (one or two cache lines where it was three): a
    // re-rank visits every live voice.
    var placement: Placement = .pan(0)
    var gain: Float = 1
    var fadeGain: Float = 1
    var bus = 0
    /// Index into the mixer's sources, or -1 while virtual.
    var source: Int32 = -1
    var priority: UInt8 = 128
    var paused = false
    /// Where the slot is in the mixer's `active` list, or -1 when the slot is free.
    var activeIndex: Int32 = -1

    var generation: UInt32 = 1
    var sound: Sound? = nil
    var fade: Ramp? = nil
    var stopAfterFade = false
    var pitch: Float = 1
    var loop = false
    /// 0 (clear) to 1 (behind a wall): a low-pass on the dry sound.
    var occlusion: Float = 0
    /// While virtual: the playhead in the sound's frames at `anchor` on the mixer's voice clock (exact while paused).
    var elapsedFrames: Double = 0
    var anchor = 0
    /// Sound frames per output frame: pitch times the rate ratio.
    var step: Double = 1
    var soundFrames: Double = 0
    /// Changes whenever the voice's ending moves, making scheduled endings stale.
    var timing: UInt32 = 0
    /// Index into the mixer's `fading` list, or -1.
    var fadeIndex: Int32 = -1
}

/// The settings of a source that a voice's start may leave as they are; the defaults are OpenAL's.
struct SourceSettings {
    var buffer: ALBuffer? = nil
    var loop = false
    var pitch: Float = 1
    var relative = false
    var rolloff: Float = 1
    var referenceDistance: Float = 1
    var maxDistance: Float = .greatestFiniteMagnitude
    var velocity: (x: Float, y: Float, z: Float) = (0, 0, 0)
    var reverb: ALEffectSlot? = nil
    var filtered = false
}

/// A virtual one-shot's scheduled end.
struct VoiceEnding {
    var clock: Int
    var slot: Int32
    var timing: UInt32
}

/// An OpenAL source that plays a stream through a bus.
final class StreamChannel: @unchecked Sendable {
    let source: ALSource
    let bus: Int
    var gain: Float = 1

    init(source: ALSource, bus: Int) {
        self.source = source
        self.bus = bus
    }
}

/// The listener and the world's distance settings.
public struct ListenerState: Sendable, Equatable {
    public var position: (x: Float, y: Float, z: Float) = (0, 0, 0)
    public var velocity: (x: Float, y: Float, z: Float) = (0, 0, 0)
    /// The direction the listener faces.
    public var forward: (Float, Float, Float) = (0, 0, -1)
    public var up: (Float, Float, Float) = (0, 1, 0)
    /// Distance at which a world voice plays at its own gain.
    public var referenceDistance: Float = 1
    /// Beyond this a world voice gets no quieter.
    public var maxDistance: Float = 1000
    /// How fast gain falls with distance (inverse-distance model).
    public var rolloff: Float = 1
    public var dopplerFactor: Float = 1

    public static func == (a: ListenerState, b: ListenerState) -> Bool {
        a.position == b.position && a.velocity == b.velocity && a.forward == b.forward && a.up == b.up
            && a.referenceDistance == b.referenceDistance && a.maxDistance == b.maxDistance
            && a.rolloff == b.rolloff && a.dopplerFactor == b.dopplerFactor
    }
}

/// The value that would sit at index `k - 1` if `values[0..<count]` were sorted in descending order (quickselect).
func kthLargest(_ values: UnsafeMutableBufferPointer<Float>, count: Int, k: Int) -> Float {
    precondition(k >= 1 && k <= count)
    var low = 0, high = count - 1
    let target = k - 1
    while low < high {
        let pivot = values[(low + high) / 2]
        var i = low, j = high
        while i <= j {
            while values[i] > pivot { i += 1 }
            while values[j] < pivot { j -= 1 }
            if i <= j { values.swapAt(i, j); i += 1; j -= 1 }
        }
        if target <= j { high = j } else if target >= i { low = i } else { break }
    }
    return values[target]
}

func monotonicNanoseconds() -> Int {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}
