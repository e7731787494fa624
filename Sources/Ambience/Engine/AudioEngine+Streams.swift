import AmbiencePlatform

// MARK: Sound made by the game's code: stream voices and the post-mix observer

extension AudioEngine {
    /// `Voice.isAlive` of each voice, asked of the mixer at once (one hold of its lock instead of one per voice): for
    /// a caller that looks at many voices every few milliseconds, as the SDL_mixer stand-in's update thread does.
    package func areAlive(_ voices: [Voice]) -> [Bool] { mixer.areAlive(voices) }

    /// The stream formats `playStream` takes: its rates (as the engine's own) and 1 or 2 channels.
    public static let streamChannelCounts = 1...2

    /// Plays a stream whose samples come from `render`, as a `Voice`: on a bus, with gain, pitch, placement, pauses,
    /// fades and stops like a sound's voice.
    ///
    /// `render` fills the buffer it is given (its frames × `channels` floats, interleaved, zeroed beforehand; one
    /// engine block at `sampleRate`, `configuration.blockFrames × sampleRate / configuration.sampleRate` frames)
    /// and returns how many frames it wrote. Returning fewer ends the stream: the frames it wrote play, then the voice
    /// finishes (`AudioEvent.voiceFinished`) and `render` is not called again.
    ///
    /// Where `render` runs: on device output, on the engine's stream thread `ambience-voices`, never on the audio
    /// thread; offline, inside `render(frames:)` on the calling thread, before each block is mixed, so what it
    /// writes lands in the render at the same frames every time. Either way the calls for one voice never overlap,
    /// and none of the engine's locks is held, so `render` may call the engine (a voice may stop itself). It must
    /// not block for long: every stream voice is fed by the same thread.
    ///
    /// Latency: the stream is a queue of `StreamFeed.bufferCount` (3) OpenAL buffers of one engine block each (OpenAL
    /// Soft 1.19 cannot call back from its mixer), refilled as each one plays out. A frame `render` writes is heard
    /// two engine blocks after the block during which it was asked for: 1,024 frames (21.3 ms) with the default
    /// 512-frame blocks at 48 kHz, measured in StreamVoiceTests. On a device, add up to half a block for the stream
    /// thread's wake-up. A new stream voice is heard from the next block (offline, from the very next frame).
    ///
    /// Stopping: `Voice.stop()` (no fade) returns only once `render` is not running, and it is never called again:
    /// the game may free what `render` uses. From inside `render` itself, `stop()` returns at once and that call is
    /// the last. A stream that ends by a fade-out, by returning short, or by `shutdown()` is not called again either,
    /// but a call already under way may finish after the voice has gone.
    ///
    /// What differs from a sound's voice: a stream voice is never virtual (it keeps an OpenAL source of its own; at
    /// most 64 play at once), never stolen and not ranked (`PlayOptions.priority` is ignored), is not sent to reverbs,
    /// and does not trigger ducking. As with sounds, placement applies to mono streams; a stereo stream plays its
    /// channels as they are. `PlayOptions.loop` is ignored (the stream ends when `render` says). Pitch above about 2
    /// can outrun the queue.
    ///
    /// Throws `EngineError.invalidNumber` for a rate outside `EngineConfiguration.sampleRates`, a channel count
    /// outside `streamChannelCounts`, or options with a NaN or infinite number; `.outOfMixerMemory` when 64 stream
    /// voices already play or OpenAL has no source or buffer left. A shut-down engine plays nothing: `Voice.none`.
    public func playStream(
        sampleRate: Int, channels: Int, _ options: PlayOptions = PlayOptions(),
        render: @escaping @Sendable (UnsafeMutableBufferPointer<Float>) -> Int
    ) throws(EngineError) -> Voice {
        let checkedOptions: PlayOptions
        do {
            _ = try sampleRate.checked(Int.self, in: EngineConfiguration.sampleRates, "stream sampleRate")
            _ = try channels.checked(Int.self, in: Self.streamChannelCounts, "stream channels")
            checkedOptions = try options.validated()
        } catch {
            throw .invalidNumber(error)
        }
        guard !state.withLock({ $0.isShutDown }) else { return .none }
        if !isOffline { mixer.startStreamFeeding(blockFrames: configuration.blockFrames) }
        return try mixer.playStream(
            sampleRate: sampleRate, channels: channels, blockFrames: configuration.blockFrames,
            options: checkedOptions, render: render
        ).mapError { EngineError.outOfMixerMemory($0.what) }.get()
    }

    /// Sets the post-mix observer (nil removes it): a callback that sees, and may change, every mixed block after
    /// the engine renders it and before it goes to the device (or, offline, into `render`'s result).
    ///
    /// It receives the block, stereo interleaved floats (`frames × 2` of them), and its frame count. It runs on the
    /// audio thread (SDL's callback, or the null output's thread when no device is left; offline, the thread calling
    /// `render`), with no lock of the engine's held, so it never waits for the game. It must not block, lock,
    /// allocate or do I/O, and it must not call `setPostMix` for another engine that renders on the same thread.
    ///
    /// Replacing or removing it is safe while audio runs: the audio thread takes no lock to read it (an atomic swap),
    /// and when `setPostMix` returns, the observer it replaced is not running and will never be called again, so the
    /// game may free what it uses. (It waits for the block being rendered, if any.) Called from inside the observer,
    /// it cannot wait for itself: the new one takes over from the next block. It adds no latency.
    public func setPostMix(_ observer: (@Sendable (UnsafeMutableBufferPointer<Float>, Int) -> Void)?) {
        mixer.postMix.set(observer)
    }
}
