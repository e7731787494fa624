import AmbiencePlatform

/// A stream voice's settings and state, under the mixer's lock: what `VoiceSlot` is to a sound's voice.
struct StreamVoiceSlot {
    var feed: StreamFeed?
    var generation: UInt32 = 0
    var bus = 0
    var gain: Float = 1
    var fadeGain: Float = 1
    var fade: Ramp?
    var stopAfterFade = false
    var paused = false
    var placement = Placement.pan(0)
    var occlusion: Float = 0
}

/// Every stream voice of a mixer. Stream voices are never virtual: each holds a source of its own from start to end,
/// outside the voice pool's ranking and stealing, so there is a cap on how many play at once.
struct StreamVoiceTable {
    /// Stream voices at once; the OpenAL device is made with this many sources beyond the pool's.
    static let capacity = 64
    var slots: [StreamVoiceSlot] = []
    private(set) var live = 0

    func isCurrent(slot: Int32, generation: UInt32) -> Bool {
        slot >= 0 && Int(slot) < slots.count && slots[Int(slot)].generation == generation
            && slots[Int(slot)].feed != nil
    }

    var hasRoom: Bool { live < Self.capacity }

    /// Puts a new stream voice in a free slot; its generation is kept, so the handle made from it is new.
    mutating func occupy(_ fresh: StreamVoiceSlot) -> Int32 {
        var voice = fresh
        live += 1
        if let index = slots.firstIndex(where: { $0.feed == nil }) {
            voice.generation = slots[index].generation
            slots[index] = voice
            return Int32(index)
        }
        slots.append(voice)
        return Int32(slots.count - 1)
    }

    /// Empties a slot; returns the generation its handles had (they go stale).
    mutating func free(_ slot: Int32) -> UInt32 {
        let generation = slots[Int(slot)].generation
        slots[Int(slot)] = StreamVoiceSlot(generation: generation &+ 1)
        live -= 1
        return generation
    }
}

/// The mixer could not start a stream voice: `what` it lacked room for. The engine throws it as
/// `EngineError.outOfMixerMemory` (the mixer stands below the engine's errors).
package struct MixerNoRoom: Error, Equatable {
    package let what: String
}

/// The mixer's stream voices: a sound fed by a game's callback, played through a queue of OpenAL buffers that the
/// stream thread (`ambience-voices`) or an offline render refills (`StreamFeed`).
extension Mixer {
    /// Starts a stream voice. `options` are already validated; `blockFrames` is the engine's block, the size of
    /// each buffer at the stream's rate.
    package func playStream(
        sampleRate: Int, channels: Int, blockFrames: Int, options: PlayOptions, render: @escaping StreamRender
    ) -> Result<Voice, MixerNoRoom> {
        let framesPerBuffer = max(blockFrames * sampleRate / configuration.sampleRate, 16)
        let result: Result<Voice, MixerNoRoom> = withLock {
            guard streamVoices.hasRoom else {
                return .failure(MixerNoRoom(what: "stream voice (at most \(StreamVoiceTable.capacity) at once)"))
            }
            guard let source = ALSource.make(count: 1).first else {
                return .failure(MixerNoRoom(what: "stream voice (no OpenAL source left)"))
            }
            let buffers = ALBuffer.makeEmpty(count: StreamFeed.bufferCount)
            guard buffers.count == StreamFeed.bufferCount else {
                for buffer in buffers { buffer.delete() }
                source.delete()
                return .failure(MixerNoRoom(what: "stream voice (no OpenAL buffers left)"))
            }
            device.applyResampler(to: [source])
            // Stereo plays to the output's channels as it is, like the music stream; mono is placed like a sound.
            if channels == 2 { source.setDirectChannels(true) }
            source.setPitch(options.pitch)
            var fresh = StreamVoiceSlot()
            fresh.feed = StreamFeed(
                source: source, buffers: buffers, sampleRate: sampleRate, channels: channels,
                framesPerBuffer: framesPerBuffer, render: render)
            fresh.bus =
                options.bus.map { $0.owner === owner ? $0.index : BuiltinBus.sfx.rawValue } ?? BuiltinBus.sfx.rawValue
            fresh.gain = options.gain
            fresh.placement = options.placement
            if options.fadeIn > 0 {
                fresh.fadeGain = 0
                fresh.fade = Ramp(from: 0, to: 1, duration: options.fadeIn)
            }
            let slot = streamVoices.occupy(fresh)
            placeStream(slot)
            applyStreamVoiceGain(slot)
            counters.started += 1
            return .success(
                Voice(owner: owner, slot: slot, generation: streamVoices.slots[Int(slot)].generation, isStream: true))
        }
        streamFeeding.withLock { $0?.wake() }
        return result
    }

    /// Runs `body` on the stream voice's slot if the handle is current.
    private func withLiveStream(_ voice: Voice, _ body: (Int32, StreamFeed) -> Void) -> VoiceResult {
        withLock {
            guard streamVoices.isCurrent(slot: voice.slot, generation: voice.generation),
                let feed = streamVoices.slots[Int(voice.slot)].feed
            else { return .stale }
            body(voice.slot, feed)
            return .ok
        }
    }

    func isStreamAlive(_ voice: Voice) -> Bool {
        withLock { streamVoices.isCurrent(slot: voice.slot, generation: voice.generation) }
    }

    func isStreamPlaying(_ voice: Voice) -> Bool {
        withLock {
            streamVoices.isCurrent(slot: voice.slot, generation: voice.generation)
                && !streamVoices.slots[Int(voice.slot)].paused
        }
    }

    /// Stops at once (and returns once the callback is not running, unless called from inside it), or fades out.
    func stopStream(_ voice: Voice, fade fadeSeconds: Double) -> VoiceResult {
        let fade: Double
        do { fade = try fadeSeconds.clamped(to: MixerLimits.seconds, "fade") } catch { return .invalid(error) }
        if fade > 0 { return self.fadeStream(voice, to: 0, over: fade, thenStop: true) }
        var stopped: StreamFeed?
        let result = withLiveStream(voice) { slot, feed in
            releaseStream(slot, finished: false)
            stopped = feed
        }
        stopped?.waitOutCallback()
        return result
    }

    func setStreamPaused(_ voice: Voice, _ paused: Bool) -> VoiceResult {
        withLiveStream(voice) { slot, feed in
            guard streamVoices.slots[Int(slot)].paused != paused else { return }
            streamVoices.slots[Int(slot)].paused = paused
            guard !suspended else { return }
            if paused { feed.source.pause() } else { playStreamSource(feed) }
        }
    }

    func setStreamGain(_ voice: Voice, _ requested: Float) -> VoiceResult {
        let gain: Float
        do { gain = try requested.clamped(to: MixerLimits.gain, "gain") } catch { return .invalid(error) }
        return withLiveStream(voice) { slot, _ in
            streamVoices.slots[Int(slot)].gain = gain
            applyStreamVoiceGain(slot)
        }
    }

    func setStreamPitch(_ voice: Voice, _ requested: Float) -> VoiceResult {
        let pitch: Float
        do { pitch = try requested.clamped(to: MixerLimits.pitch, "pitch") } catch { return .invalid(error) }
        return withLiveStream(voice) { _, feed in feed.source.setPitch(pitch) }
    }

    func setStreamPlacement(_ voice: Voice, _ requested: Placement) -> VoiceResult {
        let placement: Placement
        do { placement = try requested.validated() } catch { return .invalid(error) }
        return withLiveStream(voice) { slot, _ in
            streamVoices.slots[Int(slot)].placement = placement
            placeStream(slot)
        }
    }

    func setStreamOcclusion(_ voice: Voice, _ requested: Float) -> VoiceResult {
        let amount: Float
        do { amount = try requested.clamped(to: MixerLimits.occlusion, "occlusion") } catch { return .invalid(error) }
        return withLiveStream(voice) { slot, feed in
            streamVoices.slots[Int(slot)].occlusion = amount
            guard effectsAvailable else { return }
            if amount > 0 {
                if feed.filter == nil { feed.filter = ALFilter.makeLowPass() }
                // As for a sound's voice (EffectRack): walls take the highs first.
                feed.filter?.setLowPass(gain: 1 - 0.5 * amount, gainHF: 1 - 0.95 * amount)
                feed.source.setDirectFilter(feed.filter)
            } else {
                feed.source.setDirectFilter(nil)
            }
        }
    }

    func fadeStream(_ voice: Voice, to requestedGain: Float, over requestedSeconds: Double, thenStop: Bool)
        -> VoiceResult
    {
        let gain: Float, seconds: Double
        do { (gain, seconds) = try Mixer.fadeArguments(requestedGain, requestedSeconds) } catch {
            return .invalid(error)
        }
        return withLiveStream(voice) { slot, _ in
            let index = Int(slot)
            // As for a sound's voice: the fade ramps from the gain heard now, and a later setGain overrides it.
            let start = streamVoices.slots[index].gain * streamVoices.slots[index].fadeGain
            streamVoices.slots[index].gain = 1
            streamVoices.slots[index].fadeGain = start
            streamVoices.slots[index].fade = Ramp(from: start, to: gain, duration: seconds)
            streamVoices.slots[index].stopAfterFade = thenStop
        }
    }

    /// Seconds of the stream heard so far (at the stream's rate, whatever the pitch).
    func streamElapsed(_ voice: Voice) -> Double? {
        withLock {
            guard streamVoices.isCurrent(slot: voice.slot, generation: voice.generation),
                let feed = streamVoices.slots[Int(voice.slot)].feed
            else { return nil }
            let offset = feed.queued.isEmpty ? 0 : feed.source.sampleOffset
            return Double(feed.playedFrames + offset) / Double(feed.sampleRate)
        }
    }

    // MARK: Under the lock

    func applyStreamVoiceGain(_ slot: Int32) {
        let s = streamVoices.slots[Int(slot)]
        s.feed?.source.setGain(s.gain * s.fadeGain * buses.effective[s.bus])
    }

    /// Places the source as a sound's voice is placed (`SourcePool.place`). OpenAL places only mono streams.
    func placeStream(_ slot: Int32) {
        let s = streamVoices.slots[Int(slot)]
        guard let source = s.feed?.source else { return }
        switch s.placement {
        case .pan:
            source.setRelative(true)
            source.setRolloff(0)
            source.setVelocity(0, 0, 0)
        case .world(_, let velocity):
            source.setRelative(false)
            source.setRolloff(listener.rolloff)
            source.setReferenceDistance(listener.referenceDistance)
            source.setMaxDistance(listener.maxDistance)
            source.setVelocity(velocity.x, velocity.y, velocity.z)
        }
        let position = SourcePool.position(s.placement)
        source.setPosition(position.x, position.y, position.z)
    }

    /// Plays a stream's source if it has something queued and nothing holds it back.
    func playStreamSource(_ feed: StreamFeed) {
        guard !feed.queued.isEmpty, feed.source.state != .playing else { return }
        // A source that had started and stopped ran dry: the stream thread fell behind.
        if feed.started && feed.source.state == .stopped { underruns.add(1, ordering: .relaxed) }
        feed.source.play()
        feed.started = true
    }

    /// Ends a stream voice: its OpenAL objects go, its handles go stale, and its callback is not called again.
    func releaseStream(_ slot: Int32, finished: Bool) {
        guard let feed = streamVoices.slots[Int(slot)].feed else { return }
        feed.closed = true
        feed.source.stop()
        feed.source.setBuffer(nil)
        feed.source.setDirectFilter(nil)
        feed.source.delete()
        for buffer in feed.buffers { buffer.delete() }
        feed.filter?.delete()
        feed.queued.removeAll()
        let generation = streamVoices.free(slot)
        guard finished else { return }
        counters.finished += 1
        post(QueuedVoiceEvent(slot: slot, generation: generation, isStream: true, stolen: false))
    }
}
