import AmbiencePlatform

/// Every voice the mixer tracks, real and virtual, as values: slots and generations, the free and active lists,
/// the voice clock and virtual playheads, the heap of virtual endings, the fading list, and ranking by priority ×
/// audibility (VoicePoolRank.swift). A score's inputs on a live slot (gain, fade, placement, paused, source)
/// change only through the pool's methods, which mark the slot for the next rank. Pure: no OpenAL, no locks. A
/// slot's `source` is only a number here; `SourcePool` owns what it names.
///
/// Virtual time: a voice without a source keeps time on `clock` (output frames mixed while the session has not
/// suspended the mixer). Its playhead is `elapsedFrames + (clock − anchor) × step`, folded into `elapsedFrames`
/// (`settle`) whenever its speed or paused state changes, so ten thousand virtual voices cost nothing per block.
struct VoicePool {
    /// The slots, indexed by `Voice.slot`. The mixer writes a live slot's settings (gain, pitch, placement…)
    /// directly; the lists and indices that tie slots together change only through the pool's methods.
    var slots: [VoiceSlot]
    private var freeSlots: [Int32]
    /// The live slots, so a tick never walks the whole table. `VoiceSlot.activeIndex` points back here.
    private(set) var active: [Int32] = []
    /// Output frames mixed while not suspended.
    private(set) var clock = 0
    /// When each virtual one-shot ends, on `clock`: a min-heap. An entry whose `timing` no longer matches its
    /// slot's is stale (the voice was paused, re-pitched, made real or freed since) and is dropped when it surfaces.
    private var endings: VirtualEndings
    /// Slots with a fade in progress, the only voices a tick visits besides the real ones.
    private(set) var fading: [Int32] = []
    /// Live, unpaused voices per bus: lets ducking skip a scan when its trigger bus has none.
    private(set) var unpausedOnBus: [Int]
    /// The last rank's scores, threshold and members, and the voices changed since (RankCache.swift). Internal for
    /// VoicePoolRank.swift; only the pool's methods change it.
    var rankCache: RankCache
    /// What `kthLargest` reorders: a copy of scores.
    var scratch: [Float]
    /// The real voice the last rank put lowest, and its score: a new voice that beats it takes its source at once.
    var weakestReal: (slot: Int32, importance: Float) = (-1, .infinity)
    /// A rank is owed (a voice started, paused or lost its source) and how long since the last one.
    var needsRank = false
    private(set) var framesSinceRank = 0
    /// What a real voice's audibility is multiplied by in a rank (`rankMargin` dB, linear): a virtual voice must be
    /// that much louder than the weakest real one to take its source, so near-equals do not swap at every rank.
    private(set) var realMargin: Float
    /// The listener the slots' cached attenuations are for: a slot's is valid when its `attenuationEpoch` is
    /// `listenerEpoch` (never 0), and `attenuationsComputed` counts the misses.
    private var attenuatedFor: ListenerState? = nil
    private(set) var listenerEpoch: UInt16 = 1
    /// Internal for VoicePoolRank.swift, which counts.
    var attenuationsComputed = 0

    /// `rankMargin` in dB is clamped to 0…40; NaN and infinities take the default.
    init(capacity: Int, buses: Int, rankMargin: Float = MixerConfiguration.defaultRankMargin) {
        let decibels = rankMargin.isFinite ? min(max(rankMargin, 0), 40) : MixerConfiguration.defaultRankMargin
        realMargin = HDRWindow.linear(decibels)
        slots = Array(repeating: VoiceSlot(), count: capacity)
        freeSlots = (0..<Int32(capacity)).reversed()
        active.reserveCapacity(capacity)
        rankCache = RankCache(capacity: capacity)
        scratch = Array(repeating: 0, count: capacity)
        endings = VirtualEndings(capacity: capacity * 2)
        fading.reserveCapacity(capacity)
        unpausedOnBus = Array(repeating: 0, count: buses)
    }

    var capacity: Int { slots.count }
    var freeCount: Int { freeSlots.count }
    var isFull: Bool { freeSlots.isEmpty }
    var hasUnpausedVoices: Bool { unpausedOnBus.contains { $0 > 0 } }

    mutating func addBus() { unpausedOnBus.append(0) }

    // MARK: Slots

    /// Puts a new voice in a free slot, anchored at the clock; nil when every slot is taken. The slot's generation
    /// is kept, so the handle made from it is new.
    mutating func occupy(_ fresh: consuming VoiceSlot) -> Int32? {
        guard let slot = freeSlots.popLast() else { return nil }
        let index = Int(slot)
        fresh.generation = slots[index].generation
        fresh.timing = slots[index].timing &+ 1
        fresh.activeIndex = Int32(active.count)
        fresh.anchor = clock
        fresh.fadeIndex = -1
        // Moved in: a copy would retain the sound and copy the slot's 150 bytes once more.
        slots[index] = consume fresh
        enlist(slot)
        return slot
    }

    /// Starts a voice of `sound` with `options` (already checked) on `bus` in a free slot, written in place
    /// (`VoiceSlot.start`), anchored at the clock; nil when every slot is taken. What `occupy(_:)` does without a
    /// slot built, copied and moved in: those copies and their retains of the sound were a fifth of a virtual start.
    mutating func occupy(_ sound: Sound, _ options: PlayOptions, bus: Int, outputRate: Int) -> Int32? {
        guard let slot = freeSlots.popLast() else { return nil }
        let (activeIndex, anchor) = (Int32(active.count), clock)
        slots.withUnsafeMutableBufferPointer { pool in
            precondition(pool.indices.contains(Int(slot)), "a slot of this pool")  // the pointer below is unchecked
            let s = pool.baseAddress! + Int(slot)
            s.pointee.start(sound, options, bus: bus, outputRate: outputRate)
            s.pointee.timing &+= 1
            s.pointee.activeIndex = activeIndex
            s.pointee.anchor = anchor
            s.pointee.fadeIndex = -1
        }
        enlist(slot)
        return slot
    }

    /// Lists a slot just filled as live: active, unpaused on its bus, fading, and marked for the next rank.
    private mutating func enlist(_ slot: Int32) {
        let index = Int(slot)
        active.append(slot)
        if !slots[index].paused { unpausedOnBus[slots[index].bus] += 1 }
        if slots[index].fade != nil { startFading(slot) }
        rankCache.markDirty(slot)
    }

    /// Frees a slot whose source, if it had one, is already taken off (`source` < 0). Its generation moves on, so
    /// every handle to it goes stale; returns the generation those handles had.
    @discardableResult
    mutating func free(_ slot: Int32) -> UInt32 {
        let index = Int(slot)
        let generation = slots[index].generation
        slots[index].sound?.playingVoices -= 1
        slots[index].sound = nil
        stopFading(slot)
        slots[index].fade = nil
        if !slots[index].paused { unpausedOnBus[slots[index].bus] -= 1 }
        slots[index].generation &+= 1
        slots[index].timing &+= 1
        let position = Int(slots[index].activeIndex)
        let moved = active.removeLast()
        if moved != slot {
            active[position] = moved
            slots[Int(moved)].activeIndex = Int32(position)
        }
        slots[index].activeIndex = -1
        rankCache.remove(slot)
        freeSlots.append(slot)
        if weakestReal.slot == slot { weakestReal = (-1, .infinity) }
        return generation
    }

    /// Pauses or resumes a voice's own playhead (a virtual one's ending is rescheduled).
    mutating func setPaused(_ slot: Int32, _ paused: Bool) {
        guard slots[Int(slot)].paused != paused else { return }
        settle(slot)
        slots[Int(slot)].paused = paused
        unpausedOnBus[slots[Int(slot)].bus] += paused ? -1 : 1
        scheduleEnding(slot)
        rankCache.markDirty(slot)
        needsRank = true
    }

    /// Puts a virtual voice back at the start of its sound (a scheduled ending becomes stale; a paused voice has
    /// none until it is resumed).
    mutating func rewind(_ slot: Int32) {
        let index = Int(slot)
        slots[index].elapsedFrames = 0
        slots[index].anchor = clock
        slots[index].timing &+= 1
        scheduleEnding(slot)
    }

    // MARK: Virtual time

    /// Advances the voice clock: virtual voices move on.
    mutating func advanceClock(by frames: Int) { clock &+= frames }

    /// Where a virtual voice is in its sound now, in the sound's frames.
    func virtualPlayhead(_ slot: Int32) -> Double {
        slots.withUnsafeBufferPointer { pool in
            let s = pool.baseAddress! + Int(slot)
            guard !s.pointee.paused else { return s.pointee.elapsedFrames }
            let position = s.pointee.elapsedFrames + Double(clock - s.pointee.anchor) * s.pointee.step
            guard position >= s.pointee.soundFrames else { return position }
            guard s.pointee.loop, s.pointee.soundFrames > 0 else { return s.pointee.soundFrames }
            return position.truncatingRemainder(dividingBy: s.pointee.soundFrames)
        }
    }

    /// Folds a virtual voice's progress into `elapsedFrames` before its speed or paused state changes, and makes
    /// its scheduled ending stale.
    mutating func settle(_ slot: Int32) {
        let index = Int(slot)
        if slots[index].source < 0 { slots[index].elapsedFrames = virtualPlayhead(slot) }
        slots[index].anchor = clock
        slots[index].timing &+= 1
    }

    /// Records where a voice taken off its source stood (`position`, in the sound's frames) and makes any
    /// scheduled ending stale; it is virtual from here.
    mutating func becameVirtual(_ slot: Int32, at position: Double) {
        let index = Int(slot)
        slots[index].elapsedFrames = position
        slots[index].anchor = clock
        slots[index].timing &+= 1
        slots[index].source = -1
        rankCache.markDirty(slot)
    }

    /// Records that a voice was given `source`: a real voice's score has the margin.
    mutating func becameReal(_ slot: Int32, on source: Int32) {
        slots[Int(slot)].timing &+= 1  // a real voice's end is OpenAL's to find
        slots[Int(slot)].source = source
        rankCache.markDirty(slot)
    }

    /// Sets a voice's own gain (its score follows at the next rank).
    mutating func setGain(_ slot: Int32, _ gain: Float) {
        slots[Int(slot)].gain = gain
        rankCache.markDirty(slot)
    }

    /// Places a voice (its attenuation is computed again at the next rank).
    mutating func setPlacement(_ slot: Int32, _ placement: Placement) {
        slots[Int(slot)].placement = placement
        rankCache.markDirty(slot)
    }

    /// Schedules the end of a virtual, unpaused one-shot (from its `elapsedFrames` at `anchor`).
    mutating func scheduleEnding(_ slot: Int32) {
        // Fields read in place: a copy of the slot would copy its 150 bytes and retain its sound, per virtual start.
        let ending: VoiceEnding? = slots.withUnsafeBufferPointer { pool in
            precondition(pool.indices.contains(Int(slot)), "a slot of this pool")  // the pointer below is unchecked
            let s = pool.baseAddress! + Int(slot)
            guard s.pointee.source < 0, !s.pointee.paused, !s.pointee.loop || s.pointee.soundFrames <= 0 else {
                return nil
            }
            let toEnd = max(s.pointee.soundFrames - s.pointee.elapsedFrames, 0) / s.pointee.step
            return VoiceEnding(
                clock: s.pointee.anchor &+ VoicePool.framesUp(toEnd), slot: slot, timing: s.pointee.timing)
        }
        guard let ending else { return }
        if endings.isFull {
            // Drops stale entries without letting the heap reallocate (the real-time tick must not allocate).
            slots.withUnsafeBufferPointer { pool in
                endings.removeAll { pool[Int($0.slot)].timing != $0.timing }
            }
        }
        endings.push(ending)
    }

    /// `frames` rounded up to whole output frames, saturating: NaN is 0, beyond `Int.max` is `Int.max`. The
    /// generic `saturated` costs a virtual start more than the rest of its scheduling.
    static func framesUp(_ frames: Double) -> Int {
        let rounded = frames.rounded(.up)
        // 2^63 is the first Double past Int.max; NaN fails both comparisons.
        if rounded < 9_223_372_036_854_775_808.0 && rounded > -9_223_372_036_854_775_808.0 { return Int(rounded) }
        return rounded.isNaN ? 0 : rounded < 0 ? Int.min : Int.max
    }

    /// The next virtual one-shot whose end the clock has reached, taken off the heap; nil when none is due.
    mutating func nextEndedVirtualVoice() -> Int32? {
        while let first = endings.popDue(atOrBefore: clock) {
            let current = slots.withUnsafeBufferPointer { pool in
                let s = pool.baseAddress! + Int(first.slot)
                return s.pointee.timing == first.timing && s.pointee.source < 0 && !s.pointee.paused
                    && s.pointee.sound != nil
            }
            if current { return first.slot }
        }
        return nil
    }

    // MARK: Fades

    /// What one block did to a voice's fade.
    enum FadeStep: Equatable {
        /// It had no fade any more (taken off the list).
        case idle
        case moving
        case ended
        /// Ended on a `stop(fade:)`: the voice is to be released.
        case endedThenStop
    }

    /// Starts a fade of the voice's gain (a later fade replaces it).
    mutating func fade(_ slot: Int32, to gain: Float, over seconds: Double, thenStop: Bool) {
        // Fades ramp the voice's own gain, so a later setGain overrides them.
        let start = slots[Int(slot)].gain * slots[Int(slot)].fadeGain
        slots[Int(slot)].gain = 1
        slots[Int(slot)].fadeGain = start
        slots[Int(slot)].fade = Ramp(from: start, to: gain, duration: seconds)
        slots[Int(slot)].stopAfterFade = thenStop
        startFading(slot)
        rankCache.markDirty(slot)
    }

    /// Moves a fading voice's ramp on by `seconds`.
    mutating func advanceFade(_ slot: Int32, by seconds: Double) -> FadeStep {
        let index = Int(slot)
        guard var ramp = slots[index].fade else {
            stopFading(slot)
            return .idle
        }
        ramp.advance(seconds)
        slots[index].fadeGain = ramp.value
        rankCache.markDirty(slot)
        guard ramp.isDone else {
            slots[index].fade = ramp
            return .moving
        }
        slots[index].fade = nil
        stopFading(slot)
        return slots[index].stopAfterFade ? .endedThenStop : .ended
    }

    private mutating func startFading(_ slot: Int32) {
        guard slots[Int(slot)].fadeIndex < 0 else { return }
        slots[Int(slot)].fadeIndex = Int32(fading.count)
        fading.append(slot)
    }

    private mutating func stopFading(_ slot: Int32) {
        let position = Int(slots[Int(slot)].fadeIndex)
        guard position >= 0 else { return }
        let moved = fading.removeLast()
        if moved != slot {
            fading[position] = moved
            slots[Int(moved)].fadeIndex = Int32(position)
        }
        slots[Int(slot)].fadeIndex = -1
    }

    /// Whether a rank is due after `frames` more. With no competition a rank only hands out free sources: do it at
    /// once. With virtual voices about, a full rank costs in proportion to the crowd, so re-rank every 40 ms;
    /// a new voice that matters more than the weakest real one takes its source in `play` without waiting.
    mutating func rankIsDue(afterFrames frames: Int, sources: Int, freeSources: Int, sampleRate: Int) -> Bool {
        framesSinceRank += frames
        let competing = active.count > sources
        let waiting = active.count > sources - freeSources  // some voice is virtual
        return (needsRank || waiting) && !competing || competing && framesSinceRank * 25 >= sampleRate
    }

    /// Marks a rank done.
    mutating func ranked() {
        needsRank = false
        framesSinceRank = 0
    }

    /// The epoch of the slots' cached attenuations for `listener`: a new one when it attenuates unlike the last.
    mutating func attenuationEpoch(for listener: ListenerState) -> UInt16 {
        if let cached = attenuatedFor, cached.attenuatesAlike(listener) { return listenerEpoch }
        attenuatedFor = listener
        // A new epoch makes the next rank a full one, which stamps every live slot again: an epoch reused after the
        // wrap finds none still holding it.
        listenerEpoch = listenerEpoch == .max ? 1 : listenerEpoch + 1
        return listenerEpoch
    }

    /// Whether an unpaused voice that can be heard (gain above -60 dB before its buses) plays on `bus` or under
    /// it: what triggers a ducking rule.
    func hasAudibleVoices(under bus: Int, in graph: BusGraph) -> Bool {
        guard unpausedOnBus.indices.contains(where: { unpausedOnBus[$0] > 0 && graph.isBus($0, under: bus) }) else {
            return false
        }
        return slots.withUnsafeBufferPointer { pool in
            active.contains { slot in
                let s = pool.baseAddress! + Int(slot)
                return !s.pointee.paused && s.pointee.gain * s.pointee.fadeGain > 0.001
                    && graph.isBus(s.pointee.bus, under: bus)
            }
        }
    }
}

/// A voice slot in the pool. `generation` changes whenever the slot is freed, which makes old handles stale.
struct VoiceSlot {
    // What a rank reads comes first, in the slot's first 64 bytes (one or two cache lines where it was three): a
    // rank visits every live voice.
    private var storedPlacement: Placement = .pan(0)
    var gain: Float = 1
    var fadeGain: Float = 1
    /// 10^(loudness/20): the voice's loudness (docs/HDR.md) as a linear factor, so a rank needs no logarithm.
    var loudnessGain: Float = 1
    var bus = 0
    /// Index into the mixer's sources, or -1 while virtual.
    var source: Int32 = -1
    var priority: UInt8 = 128
    var paused = false
    /// The pool's `listenerEpoch` when `attenuation` was computed; 0 (never an epoch) when it is to be computed.
    var attenuationEpoch: UInt16 = 0
    /// Where the slot is in the pool's `active` list, or -1 when the slot is free.
    var activeIndex: Int32 = -1
    /// The listener's distance attenuation of `placement` (1 for a pan), cached by ranks: the slowest part of a
    /// score, and it changes only when the voice or the listener moves.
    var attenuation: Float = 1

    /// Where the voice sounds. Writing it (the same place included) makes the cached attenuation stale.
    var placement: Placement {
        get { storedPlacement }
        set {
            storedPlacement = newValue
            attenuationEpoch = 0
        }
    }

    var generation: UInt32 = 1
    var sound: Sound? = nil
    var fade: Ramp? = nil
    var stopAfterFade = false
    var pitch: Float = 1
    var loop = false
    /// 0 (clear) to 1 (behind a wall): a low-pass on the dry sound.
    var occlusion: Float = 0
    /// While virtual: the playhead in the sound's frames at `anchor` on the pool's clock (exact while paused).
    var elapsedFrames: Double = 0
    var anchor = 0
    /// Sound frames per output frame: pitch times the rate ratio.
    var step: Double = 1
    var soundFrames: Double = 0
    /// Changes whenever the voice's ending moves, making scheduled endings stale.
    var timing: UInt32 = 0
    /// Index into the pool's `fading` list, or -1.
    var fadeIndex: Int32 = -1

    /// Sets every field a start decides, for a voice of `sound` with `options` (already checked) on `bus`, mixed at
    /// `outputRate` Hz: all but the pool's own (`generation`, `timing`, `activeIndex`, `anchor`, `fadeIndex`), so
    /// that a free slot, whatever its last voice left in it, starts as a `VoiceSlot()` would
    /// (`VoicePoolTests.aSlotStartedInPlaceIsAFreshOne` compares every field). A new field is set here too.
    mutating func start(_ sound: Sound, _ options: PlayOptions, bus: Int, outputRate: Int) {
        let fades = options.fadeIn > 0
        placement = options.placement  // and the cached attenuation made stale
        gain = options.gain
        fadeGain = fades ? 0 : 1
        loudnessGain = HDRWindow.linear(options.loudness ?? sound.loudness)
        self.bus = bus
        source = -1
        priority = options.priority
        paused = false
        attenuation = 1
        self.sound = sound
        fade = fades ? Ramp(from: 0, to: 1, duration: options.fadeIn) : nil
        stopAfterFade = false
        pitch = options.pitch
        loop = options.loop
        occlusion = 0
        elapsedFrames = 0
        step = Double(options.pitch) * Double(sound.sampleRate) / Double(outputRate)
        soundFrames = Double(sound.frames)
    }

    /// Output frames the voice needs to play its sound from `position` (in the sound's frames) to the end.
    func outputFramesToEnd(from position: Double) -> Double {
        max(soundFrames - position, 0) / step
    }
}
