import AmbienceCore
import AmbiencePlatform

/// The mixer's controls that are not voices: sounds, effects, the listener, buses, music streams and counters. Each takes the
/// mixer's lock and works through its parts (Mixer.swift).
extension Mixer {
    /// Silences the whole mix (voices and streams) from the next block, without stopping anything.
    package func setOutputSilenced(_ on: Bool) {
        withLock { ALListener.setGain(on ? 0 : 1) }
    }

    // MARK: Sounds

    /// Uploads decoded audio as a `Sound` (more than two channels are folded to stereo); nil when OpenAL has no
    /// room for it. `name` is what logs and stale voices call it.
    ///
    /// A stereo sound whose two sides are equal sample for sample is stored and mixed as mono (`Sound.storedChannels`
    /// is 1): half the memory, and OpenAL Soft resamples and mixes one channel instead of two. It sounds as the
    /// stereo one does. OpenAL Soft 1.19 places, attenuates and Doppler-shifts mono sources only: a stereo source
    /// plays its sides as two speakers at ±30° before the listener at its gain, whatever its pan or world point. So a
    /// folded sound's voice plays its mono source at the listener's own point (straight ahead, unattenuated) at the
    /// gain that makes it sound as those two speakers, measured once per mixer by rendering both on a loopback device
    /// of the mixer's rate (`StereoFoldProbe`; 1.679 with OpenAL Soft 1.19.1's stereo panning). With HRTF the two
    /// speakers are two HRIRs, which no mono source reproduces: a sound made while HRTF is on stays stereo (one folded
    /// before HRTF was turned on plays through the front HRIR, at the same gain). A reverb hears the folded voice as
    /// one source ahead rather than two at ±30°. The rules that rank and window voices (gains, loudness, distance)
    /// never read the samples, so they see a folded sound as before.
    public func makeSound(_ pcm: PCMBuffer, name: String) -> Sound? {
        makeSound(pcm, name: name, foldingEqualSides: true)
    }

    /// `makeSound(_:name:)`, or without the fold of equal sides (a test's stereo reference, a benchmark's before).
    package func makeSound(_ pcm: PCMBuffer, name: String, foldingEqualSides: Bool) -> Sound? {
        let stereo = pcm.foldedToStereo()
        let mono = foldingEqualSides ? stereo.equalSidesAsMono() : nil
        let gain = mono == nil ? nil : foldGainAtListener()
        return withLock {
            deleteRetiredBuffers()
            var stored = stereo
            if let mono, let gain, !device.hrtfEnabled {
                stored = mono
                foldGainAtListenerPoint = gain
            }
            return stored.samples.withUnsafeBufferPointer { samples in
                ALBuffer.make(samples: samples, channels: stored.channels, sampleRate: stored.sampleRate).map {
                    Sound(
                        name: name, buffer: $0, retired: retiredBuffers, sampleRate: stored.sampleRate,
                        channels: stereo.channels, frames: stored.frames, storedChannels: stored.channels)
                }
            }
        }
    }

    /// The gain a folded sound's voice at the listener's own point is given (`StereoFoldProbe`), measured at the
    /// first fold and kept; nil when it cannot be, and then nothing is folded.
    func foldGainAtListener() -> Float? {
        foldGain.withLock { (known: inout Float??) -> Float? in
            if let measured = known { return measured }
            let measured = StereoFoldProbe.gainAtListener(sampleRate: configuration.sampleRate)
            known = .some(measured)
            return measured
        }
    }

    /// Stops every voice of `sound` and frees its memory. Later plays of it return stale voices.
    package func unload(_ sound: Sound) {
        withLock {
            guard sound.isLoaded else { return }
            for i in voices.active.indices.reversed() where i < voices.active.count {
                let slot = voices.active[i]
                if voices.slots[Int(slot)].sound === sound { release(slot, event: nil) }
            }
            deleteBuffer(of: sound)
        }
    }

    /// Unloads the sound only if no voice plays it.
    package func unloadIfIdle(_ sound: Sound) -> Bool {
        withLock {
            guard sound.isLoaded, sound.playingVoices == 0 else { return false }
            deleteBuffer(of: sound)
            return true
        }
    }

    func deleteBuffer(of sound: Sound) {
        sound.markUnloaded()
        sources.detach(sound.buffer)
        sound.buffer.delete()
    }

    package func isLoaded(_ sound: Sound) -> Bool { sound.isLoaded }
    func exists(_ buffer: ALBuffer) -> Bool { withLock { buffer.exists } }

    /// Deletes the buffers of sounds freed while loaded (see `RetiredBuffers`). Under the lock.
    func deleteRetiredBuffers() {
        for buffer in retiredBuffers.take() {
            sources.detach(buffer)
            buffer.delete()
        }
    }

    package func lastUsed(_ sound: Sound) -> UInt64 { withLock { sound.lastUsed } }

    package func touch(_ sound: Sound) {
        withLock {
            useCounter &+= 1
            sound.lastUsed = useCounter
        }
    }

    // MARK: Effects

    /// Sends a real voice to its reverb (its zone's, else its bus chain's) and filters it for occlusion.

    func applyEffects(_ slot: Int32) {
        let s = voices.slots[Int(slot)]
        effects.apply(
            to: Int(s.source), placement: s.placement, bus: s.bus, occlusion: s.occlusion, graph: buses,
            sources: &sources)
    }

    func refreshEffects() {
        for slot in voices.active where voices.slots[Int(slot)].source >= 0 { applyEffects(slot) }
    }

    /// Puts a reverb on a bus (nil removes it). Returns false when effects are unavailable.
    package func setReverb(_ parameters: ReverbParameters?, bus: Int) -> Bool {
        if let parameters, (try? parameters.validated()) == nil { return false }
        return withLock {
            guard effectsAvailable, effects.setReverb(parameters, bus: bus, sources: &sources) else { return false }
            refreshEffects()
            return true
        }
    }

    package func setReverbZones(_ requested: [ReverbZone]) -> Bool {
        guard let newZones = try? requested.map({ zone throws(InvalidNumber) in try zone.validated() }) else {
            return false
        }
        return withLock {
            guard effectsAvailable else { return false }
            let made = effects.setZones(newZones, sources: &sources)
            refreshEffects()
            return made
        }
    }

    package func setHRTF(_ on: Bool) -> Bool {
        withLock {
            let done = device.setHRTF(on) && device.hrtfEnabled == on
            // Resetting the device can stop sources (OpenAL Soft stops them when the reset fails): ask them all.
            sources.pollAllEveryBlock()
            return done
        }
    }

    package var capabilities: AudioCapabilities {
        withLock {
            let hrtf = device.hasDeviceExtension("ALC_SOFT_HRTF")
            var missing: [String] = []
            if !effectsAvailable { missing.append("reverb and occlusion filters (ALC_EXT_EFX)") }
            if !hrtf { missing.append("HRTF (ALC_SOFT_HRTF)") }
            if !device.hasExtension("AL_SOFT_direct_channels") {
                missing.append("unspatialised stereo music (AL_SOFT_direct_channels)")
            }
            return AudioCapabilities(
                renderer: device.rendererName, effects: effectsAvailable, hrtf: hrtf, hrtfEnabled: device.hrtfEnabled,
                realVoices: sources.count, extensions: device.extensions, missing: missing)
        }
    }

    // MARK: Listener

    package func setListener(_ requested: ListenerState) throws(InvalidNumber) {
        let checked = try requested.validated()
        withLock {
            let before = listener
            listener = checked
            if buses.hasHDR { voices.needsRank = true }  // distances move levels under a window
            ALListener.setPosition(listener.position.x, listener.position.y, listener.position.z)
            ALListener.setVelocity(listener.velocity.x, listener.velocity.y, listener.velocity.z)
            ALListener.setOrientation(at: listener.forward, up: listener.up)
            ALListener.setDopplerFactor(listener.dopplerFactor)
            if before.rolloff != listener.rolloff || before.referenceDistance != listener.referenceDistance
                || before.maxDistance != listener.maxDistance
            {
                for slot in voices.active where voices.slots[Int(slot)].source >= 0 {
                    let s = voices.slots[Int(slot)]
                    sources.place(
                        Int(s.source), s.placement, listener: listener, folded: s.sound?.isFoldedStereo == true)
                }
                replaceStreamVoices()
            }
            // A new velocity or doppler factor can speed the real one-shots up: ask them every block.
            if before.velocity != listener.velocity || before.dopplerFactor != listener.dopplerFactor {
                for source in 0..<sources.count {
                    let slot = sources.owners[source]
                    if slot >= 0 && listener.dopplerApplies(to: voices.slots[Int(slot)].placement) {
                        sources.pollEveryBlock(Int32(source))
                    }
                }
            }
        }
    }

    package func listenerState() -> ListenerState { withLock { listener } }

    // MARK: Buses

    func busName(_ index: Int) -> String { withLock { buses.nodes[index].name } }
    func busGain(_ index: Int) -> Float { withLock { buses.nodes[index].gain } }
    func busMuted(_ index: Int) -> Bool { withLock { buses.nodes[index].muted } }
    func busEffectiveGain(_ index: Int) -> Float { withLock { buses.effective[index] } }

    func setBusGain(_ index: Int, _ requestedGain: Float, over requestedSeconds: Double) throws(InvalidNumber) {
        let gain = try requestedGain.clamped(to: MixerLimits.gain, "bus gain")
        let seconds = try requestedSeconds.clamped(to: MixerLimits.seconds, "seconds")
        withLock {
            if buses.setGain(index, to: gain, over: seconds) { refreshGains() }
        }
    }

    func setBusMuted(_ index: Int, _ muted: Bool) {
        withLock {
            buses.setMuted(index, muted)
            refreshGains()
        }
    }

    /// A new bus under `parent` (master when nil, or when `parent` belongs to another engine).
    package func makeBus(named name: String, parent: Bus?) -> Bus {
        withLock {
            let index = buses.add(named: name, parent: parent.flatMap { $0.owner === owner ? $0.index : nil })
            voices.addBus()
            hdrPeaks.append(0)
            return Bus(owner: owner, index: index)
        }
    }

    package func setDuckingRules(_ requested: [DuckingRule]) throws(InvalidNumber) {
        var rules: [DuckingRule] = []
        for rule in requested { rules.append(try rule.validated()) }
        withLock {
            buses.setDucking(
                rules.filter { $0.trigger.owner === owner && $0.target.owner === owner }.map {
                    BusGraph.Ducking(
                        trigger: $0.trigger.index, target: $0.target.index, depth: $0.depth,
                        attack: $0.attack, release: $0.release)
                })
            refreshGains()
        }
    }

    package func currentDuckingRules() -> [DuckingRule] {
        withLock {
            buses.ducking.map {
                DuckingRule(
                    trigger: Bus(owner: owner, index: $0.trigger), target: Bus(owner: owner, index: $0.target),
                    depth: $0.depth, attack: $0.attack, release: $0.release)
            }
        }
    }

    func refreshGains() {
        for slot in voices.active { applyGain(slot) }
        for stream in streams { applyStreamGain(stream) }
        for index in streamVoices.slots.indices { applyStreamVoiceGain(Int32(index)) }
    }

    // MARK: Counters

    package var stats: MixerStats {
        withLock {
            var s = counters
            s.realVoices = sources.inUse
            s.virtualVoices = voices.active.count - s.realVoices
            let blocks = renderBlocks.load(ordering: .relaxed)
            s.renderedBlocks = blocks
            s.averageRenderMicroseconds =
                blocks > 0 ? Double(renderNanosTotal.load(ordering: .relaxed)) / Double(blocks) / 1000 : 0
            s.maxRenderMicroseconds = Double(renderNanosMax.load(ordering: .relaxed)) / 1000
            s.underruns = underruns.load(ordering: .relaxed)
            s.droppedEvents = events.dropped
            return s
        }
    }

    var freeSourceCount: Int { withLock { sources.freeCount } }
    var freeSlotCount: Int { withLock { voices.freeCount } }
    var pendingEventCount: Int { withLock { events.count } }

    /// The events queued since the last call, oldest first, each with its handle.
    package func drainEvents() -> [MixerEvent] {
        let queued = withLock { events.drain() }
        // Mapped outside the lock: one pass over plain numbers (popping them one by one cost four times as much).
        return queued.map { event in
            let voice = Voice(owner: owner, slot: event.slot, generation: event.generation, isStream: event.isStream)
            return event.stolen ? .voiceStolen(voice) : .voiceFinished(voice)
        }
    }

    /// Voice events lost to a full queue.
    package var droppedEvents: Int { withLock { events.dropped } }

    /// How many voices are alive (real and virtual).
    var liveVoices: Int { withLock { voices.active.count } }
}
