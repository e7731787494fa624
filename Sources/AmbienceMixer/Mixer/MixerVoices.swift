import AmbiencePlatform

/// The mixer's controls of voices: play, stop, pause, settings, fades and queries. Each takes the mixer's lock and
/// works through its parts (Mixer.swift).
extension Mixer {
    /// Starts a voice of `sound` with `options`, and returns its handle: `Voice.none` (whose calls do nothing) when
    /// the options hold a NaN or infinite number, the sound is unloaded or was made by another mixer (its buffer lives
    /// in that mixer's OpenAL device, and its counts under that mixer's lock). When every voice slot is taken, the least
    /// important voice is stolen for it, or it is refused if it is the least important itself.
    ///
    /// A real voice starts at the first sample of the next block the mixer renders: its source is set up now, and
    /// the start is applied with the others just before that block is mixed (`PendingStarts`). The handle is
    /// `isPlaying` and `isReal` at once, and its `elapsed` is 0 until that block.
    public func play(_ sound: Sound, _ options: PlayOptions = PlayOptions()) -> Voice {
        // Options within the limits are used as they are: no checked copy is made (with its bus retained).
        if options.isWithinLimits { return start(sound, options) }
        guard let checked = try? options.validatedInFull() else { return .none }
        return start(sound, checked)
    }

    /// `play` with options already checked.
    private func start(_ sound: Sound, _ options: PlayOptions) -> Voice {
        // Most starts call OpenAL for nothing now: the context is made current only around the calls a start does
        // make (a window raised, a voice stolen or demoted, a source set up: `attach`).
        withLock(enteringContext: false) {
            guard sound.isLoaded, sound.belongs(to: retiredBuffers) else { return .none }
            let bus =
                options.bus.map { $0.owner === owner ? $0.index : BuiltinBus.sfx.rawValue } ?? BuiltinBus.sfx.rawValue
            let slot: Int32, importance: Float
            if !buses.hasHDR && !voices.isFull {
                // The common start: its slot written in place, its importance read there.
                guard let taken = voices.occupy(sound, options, bus: bus, outputRate: configuration.sampleRate) else {
                    return .none
                }
                slot = taken
                importance = voices.slots.withUnsafeBufferPointer { pool in
                    plainImportance(of: pool.baseAddress! + Int(taken))
                }
            } else {
                guard let (taken, score) = occupyCompeting(sound, options, bus: bus) else { return .none }
                (slot, importance) = (taken, score)
            }
            sound.playingVoices += 1
            useCounter &+= 1
            sound.lastUsed = useCounter
            counters.started += 1
            place(slot, importance: importance, priority: options.priority)
            return Voice(owner: owner, slot: slot, generation: voices.slots[Int(slot)].generation)
        }
    }

    /// A slot's importance with no HDR window: its bus's gain and its attenuation at the listener.
    @inline(__always)
    private func plainImportance(of slot: UnsafePointer<VoiceSlot>) -> Float {
        VoicePool.importance(
            of: slot, busGain: buses.effective[slot.pointee.bus], attenuation: VoicePool.attenuation(of: slot, listener)
        )
    }

    /// A start under an HDR window or into a full pool: the new slot is built first, as the window is raised for it
    /// and a victim chosen by its importance before it takes a slot. Nil when it is refused.
    private func occupyCompeting(_ sound: Sound, _ options: PlayOptions, bus: Int) -> (Int32, Float)? {
        var fresh = VoiceSlot()
        fresh.start(sound, options, bus: bus, outputRate: configuration.sampleRate)
        // The slot goes to the window inout, through a method: captured by a closure it cost every start about
        // 50 instructions more (callgrind, docs/bench/profile.md).
        let hdrBefore = buses.hasHDR ? withHDRWindows(&fresh) : nil
        let importance = withUnsafePointer(to: &fresh) { slot in
            buses.hasHDR ? VoicePool.importance(of: slot, audibility) : plainImportance(of: slot)
        }
        if voices.isFull {
            // Equals give way to the newcomer, except culled ones: every culled voice scores the same, and a
            // silent newcomer must not end a culled voice that would have come back when the window fell.
            guard let victim = voices.leastImportantVoice(audibility),
                victim.importance < importance
                    || (victim.importance == importance && importance != VoicePool.culled)
            else {
                device.withCurrentContext(if: hdrBefore != nil) { undoHDR(hdrBefore) }
                counters.stolen += 1
                return nil
            }
            device.withCurrentContext { release(victim.slot, event: .stolen) }
        }
        guard let slot = voices.occupy(fresh) else {
            device.withCurrentContext(if: hdrBefore != nil) { undoHDR(hdrBefore) }
            return nil
        }
        return (slot, importance)
    }

    /// Gives a voice just started a source, or schedules its virtual end.
    private func place(_ slot: Int32, importance: Float, priority: UInt8) {
        let weakest = voices.weakestReal
        if importance == VoicePool.culled {
            // Under its window's bottom: it keeps time virtually until the window falls.
            voices.scheduleEnding(slot)
        } else if voices.active.count <= sources.count
            || voices.wouldStayReal(importance, priority: priority),
            let source = takeSource(for: slot)
        {
            // In a crowd a free source goes only to a voice the next rank would keep real: a weaker one would
            // be set up on it, then moved off at that rank, and the source is the rank's to give.
            attach(slot, to: source)
        } else if weakest.slot >= 0, importance > weakest.importance, voices.slots[Int(weakest.slot)].source >= 0 {
            // The new voice beats the weakest real one: it takes that source now, not at the next rank.
            voices.weakestReal = (-1, .infinity)
            device.withCurrentContext { demote(weakest.slot) }
            if let source = takeSource(for: slot) {
                attach(slot, to: source)
                counters.madeReal += 1
            }
            voices.needsRank = true
        } else {
            voices.scheduleEnding(slot)
            voices.needsRank = true
        }
    }

    /// Raises the window of a new voice's bus, with the context current (`prepareHDR`).
    private func withHDRWindows(_ fresh: inout VoiceSlot) -> (bus: Int, window: HDRWindow)? {
        device.withCurrentContext { prepareHDR(&fresh) }
    }

    /// Runs `body` on the voice's slot if the handle is current.
    private func withLiveSlot(_ voice: Voice, _ body: (Int32) -> Void) -> VoiceResult {
        withLock {
            guard isCurrent(voice) else { return .stale }
            body(voice.slot)
            return .ok
        }
    }

    private func isCurrent(_ voice: Voice) -> Bool { isCurrent(slot: voice.slot, generation: voice.generation) }

    /// Whether a handle's slot and generation name a live voice, read field by field in place. The pool's own method
    /// (removed) had the whole pool copied for it when called on the mixer's stored pool (a retain and a release of
    /// each of its arrays), about 1,100 instructions for each voice asked (callgrind; `areAlive` asks of 33 at each
    /// wake of the SDL_mixer stand-in's update thread).
    func isCurrent(slot: Int32, generation: UInt32) -> Bool {
        Self.isCurrent(in: voices.slots, slot: slot, generation: generation)
    }

    /// `isCurrent(slot:generation:)`'s rule over a slot table its caller took once (`areAlive`).
    @inline(__always)
    static func isCurrent(in slots: [VoiceSlot], slot: Int32, generation: UInt32) -> Bool {
        guard slot >= 0, Int(slot) < slots.count, slots[Int(slot)].generation == generation else { return false }
        guard case .some = slots[Int(slot)].sound else { return false }
        return true
    }

    // A stream voice's calls go to MixerStreamVoices.swift.

    func isAlive(_ voice: Voice) -> Bool {
        if voice.isStream { return isStreamAlive(voice) }
        return withLock { isCurrent(voice) }
    }
    /// `isAlive` of each voice, under one hold of the lock; false for another mixer's voices and `Voice.none`.
    package func areAlive(_ handles: [Voice]) -> [Bool] {
        withLock {
            // The slot table taken once (one retain): the instance `isCurrent`, called from this closure, had the
            // compiler copy the whole pool for each handle (callgrind: about 1,400 instructions a handle, 33 at each
            // wake of the SDL_mixer stand-in's update thread). The handle's owner is compared, not its weak
            // reference to the mixer, which each load would take and let go.
            let slots = voices.slots
            return handles.map { voice in
                guard voice.owner === owner else { return false }
                if voice.isStream { return streamVoices.isCurrent(slot: voice.slot, generation: voice.generation) }
                return Self.isCurrent(in: slots, slot: voice.slot, generation: voice.generation)
            }
        }
    }
    func isPlaying(_ voice: Voice) -> Bool {
        if voice.isStream { return isStreamPlaying(voice) }
        return withLock { isCurrent(voice) && !voices.slots[Int(voice.slot)].paused }
    }
    /// A stream voice always has its own source.
    func isReal(_ voice: Voice) -> Bool {
        if voice.isStream { return isStreamAlive(voice) }
        return withLock { isCurrent(voice) && voices.slots[Int(voice.slot)].source >= 0 }
    }

    func stop(_ voice: Voice, fade fadeSeconds: Double) -> VoiceResult {
        if voice.isStream { return stopStream(voice, fade: fadeSeconds) }
        let fade: Double
        do { fade = try fadeSeconds.clamped(to: MixerLimits.seconds, "fade") } catch { return .invalid(error) }
        if fade > 0 { return self.fade(voice, to: 0, over: fade, thenStop: true) }
        return withLiveSlot(voice) { release($0, event: nil) }
    }

    func setPaused(_ voice: Voice, _ paused: Bool) -> VoiceResult {
        if voice.isStream { return setStreamPaused(voice, paused) }
        return withLiveSlot(voice) { slot in
            guard voices.slots[Int(slot)].paused != paused else { return }
            voices.setPaused(slot, paused)
            let source = voices.slots[Int(slot)].source
            if source >= 0 && !suspended { paused ? sources.pause(source) : resumeSource(of: slot) }
        }
    }

    func setGain(_ voice: Voice, _ requested: Float) -> VoiceResult {
        if voice.isStream { return setStreamGain(voice, requested) }
        let gain: Float
        do { gain = try requested.clamped(to: MixerLimits.gain, "gain") } catch { return .invalid(error) }
        return withLiveSlot(voice) { slot in
            voices.setGain(slot, gain)
            applyGain(slot)
            // Under a window a quieter voice may now be under its bottom, or a louder one above it.
            if buses.hasHDR { voices.needsRank = true }
        }
    }

    func setPitch(_ voice: Voice, _ requested: Float) -> VoiceResult {
        if voice.isStream { return setStreamPitch(voice, requested) }
        let pitch: Float
        do { pitch = try requested.clamped(to: MixerLimits.pitch, "pitch") } catch { return .invalid(error) }
        return withLiveSlot(voice) { slot in
            let index = Int(slot)
            voices.settle(slot)
            voices.slots[index].pitch = pitch
            let rate = voices.slots[index].sound.map { Double($0.sampleRate) } ?? Double(configuration.sampleRate)
            voices.slots[index].step = Double(pitch) * rate / Double(configuration.sampleRate)
            let source = voices.slots[index].source
            if source >= 0 {
                var wanted = sources.settings[Int(source)]
                wanted.pitch = pitch
                sources.configure(Int(source), wanted)
                sources.pollEveryBlock(source)  // a higher pitch ends it sooner than predicted
            } else {
                voices.scheduleEnding(slot)
            }
        }
    }

    func setPlacement(_ voice: Voice, _ requested: Placement) -> VoiceResult {
        if voice.isStream { return setStreamPlacement(voice, requested) }
        let placement: Placement
        do { placement = try requested.validated() } catch { return .invalid(error) }
        return withLiveSlot(voice) { slot in
            voices.setPlacement(slot, placement)
            if buses.hasHDR { voices.needsRank = true }  // its distance moves its level under a window
            let source = voices.slots[Int(slot)].source
            guard source >= 0 else { return }
            let folded = voices.slots[Int(slot)].sound?.isFoldedStereo == true
            sources.place(Int(source), placement, listener: listener, folded: folded)
            if effectsAvailable { applyEffects(slot) }
            if listener.dopplerApplies(to: placement) { sources.pollEveryBlock(source) }
        }
    }

    func setOcclusion(_ voice: Voice, _ requested: Float) -> VoiceResult {
        if voice.isStream { return setStreamOcclusion(voice, requested) }
        let amount: Float
        do { amount = try requested.clamped(to: MixerLimits.occlusion, "occlusion") } catch { return .invalid(error) }
        return withLiveSlot(voice) { slot in
            voices.slots[Int(slot)].occlusion = amount
            if voices.slots[Int(slot)].source >= 0 && effectsAvailable { applyEffects(slot) }
        }
    }

    /// A fade's gain and time as the game gave them, clamped to `MixerLimits`; NaN and infinities refused.
    static func fadeArguments(_ gain: Float, _ seconds: Double) throws(InvalidNumber) -> (Float, Double) {
        (try gain.clamped(to: MixerLimits.gain, "gain"), try seconds.clamped(to: MixerLimits.seconds, "seconds"))
    }

    func fade(_ voice: Voice, to requestedGain: Float, over requestedSeconds: Double, thenStop: Bool) -> VoiceResult {
        if voice.isStream { return fadeStream(voice, to: requestedGain, over: requestedSeconds, thenStop: thenStop) }
        let gain: Float, seconds: Double
        do { (gain, seconds) = try Mixer.fadeArguments(requestedGain, requestedSeconds) } catch {
            return .invalid(error)
        }
        return withLiveSlot(voice) { voices.fade($0, to: gain, over: seconds, thenStop: thenStop) }
    }

    func elapsed(_ voice: Voice) -> Double? {
        if voice.isStream { return streamElapsed(voice) }
        return withLock {
            guard isCurrent(voice), let sound = voices.slots[Int(voice.slot)].sound else { return nil }
            let source = voices.slots[Int(voice.slot)].source
            if source >= 0 { sources.settle(source) }
            let frames = source >= 0 ? Double(sources[source].sampleOffset) : voices.virtualPlayhead(voice.slot)
            return frames / Double(sound.sampleRate)
        }
    }
}
