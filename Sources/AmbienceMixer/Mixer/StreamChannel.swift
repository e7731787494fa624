import AmbiencePlatform

/// One buffer of a music stream: an OpenAL buffer that only the mixer touches. The player keeps track of what each
/// holds and hands it back to `StreamChannel.Locked.queue(_:stereo:rate:)` to fill.
package struct StreamBuffer: Hashable, Sendable {
    let buffer: ALBuffer
}

/// A stream played through a bus (the music): an OpenAL source and the buffers queued on it, both owned by the mixer,
/// which applies the bus's gain and ducking to it. The player drives it through `locked(_:)`, and its gain
/// through `Mixer.setStreamGain`.
@usableFromInline package final class StreamChannel: @unchecked Sendable {
    /// Where the stream is, as OpenAL's source state says.
    package enum State: Sendable, Equatable { case initial, playing, paused, stopped }

    // Unchecked Sendable: `gain` and `isRemoved` are read and written only under the mixer's lock; the rest is
    // constant.
    let source: ALSource
    let bus: Int
    var gain: Float = 1
    /// Set when the mixer deleted the source and buffers: OpenAL may since have given their names to another.
    var isRemoved = false
    /// The buffers made with the channel and deleted with it (`Mixer.removeStreamChannel`).
    package let buffers: [StreamBuffer]
    /// Unowned: the mixer holds the channel (`streams`), and a strong reference back would keep a mixer whose player
    /// was never closed (an engine whose init failed late) alive for good. Whoever drives the channel holds the mixer
    /// (the music player does), so it outlives every call.
    private unowned let mixer: Mixer

    fileprivate init(mixer: Mixer, source: ALSource, bus: Int, buffers: [StreamBuffer]) {
        self.mixer = mixer
        self.source = source
        self.bus = bus
        self.buffers = buffers
    }

    /// Runs `body` under the mixer's lock with its OpenAL context current, so that several calls (take back the
    /// played buffers, read the state and the playhead) see one moment of the stream.
    ///
    /// Inlinable, over a call that is not generic: the player calls it from another module on every round, where an
    /// unspecialized generic call looked up `Optional<R>`'s metadata each time (issue #30's music stream cost). The
    /// type is `@usableFromInline` for it: Swift 6.3 silently calls the `@inlinable` members of a package type.
    @inlinable package func locked<R>(_ body: (borrowing Locked) -> R) -> R {
        var result: R?
        withLocked { result = body($0) }
        // `withLocked` runs its body, or never returns once the process's exit has sealed the engines.
        guard let result else { ProcessExit.stopForever() }
        return result
    }

    /// `locked(_:)`'s lock, not generic, so that it is specialized here once and not looked up per call.
    @usableFromInline func withLocked(_ body: (borrowing Locked) -> Void) {
        mixer.withLock { body(Locked(source: isRemoved ? nil : source)) }
    }

    /// The stream's calls, which exist only inside `locked(_:)`: a view that cannot be kept. Once the channel is
    /// removed they touch nothing (a stopped stream with nothing queued): a player closed twice, or pumped while
    /// closing, must not drive names OpenAL may have handed out again.
    @usableFromInline package struct Locked: ~Copyable {
        fileprivate let source: ALSource?

        package var state: State {
            switch source?.state ?? .stopped {
            case .initial: .initial
            case .playing: .playing
            case .paused: .paused
            case .stopped: .stopped
            }
        }

        /// The playhead, in frames from the start of the first buffer still queued.
        package var sampleOffset: Int { source?.sampleOffset ?? 0 }

        package func play() { source?.play() }
        package func pause() { source?.pause() }

        /// Stops the stream, takes every buffer off it and rewinds it (OpenAL's initial state), so that what is
        /// queued next waits to be played: OpenAL counts every buffer queued on a stopped source as processed, played
        /// or not, and none on an initial one.
        package func stop() {
            source?.stop()
            source?.setBuffer(nil)
            source?.rewind()
        }

        /// Readies a stream that stopped by itself (it ran dry, or reached the end) for more buffers: takes back the
        /// buffers it played, every one it holds, oldest first, and rewinds it, so that the buffers queued next are
        /// not counted as played before it plays them (see `stop()`). Nothing to do on a stream that is not stopped.
        package func rewindIfStopped() -> [StreamBuffer] {
            guard let source, source.state == .stopped else { return [] }
            let played = reclaimPlayed()
            source.rewind()
            return played
        }

        /// The buffers the stream has played to their end, taken off its queue, oldest first.
        package func reclaimPlayed() -> [StreamBuffer] {
            guard let source else { return [] }
            var played: [StreamBuffer] = []
            while let buffer = source.unqueueProcessed() { played.append(StreamBuffer(buffer: buffer)) }
            return played
        }

        /// Fills `buffer` with interleaved stereo frames at `rate` and queues it after the others. False when OpenAL
        /// refuses them (then nothing is queued) or the channel is removed; every buffer of a queue must have the
        /// same rate.
        package func queue(_ buffer: StreamBuffer, stereo samples: UnsafeBufferPointer<Float>, rate: Int) -> Bool {
            guard let source, buffer.buffer.fill(samples: samples, channels: 2, sampleRate: rate) else { return false }
            source.queue(buffer.buffer)
            return true
        }
    }
}

extension Mixer {
    /// A stream on `bus` with `bufferCount` empty buffers (fewer if OpenAL runs out), registered so that bus gains
    /// and ducking reach it; nil when no OpenAL source is left.
    package func makeStreamChannel(bus: Bus, bufferCount: Int) -> StreamChannel? {
        withLock {
            guard let source = ALSource.make(count: 1).first else { return nil }
            source.setRelative(true)
            source.setRolloff(0)
            source.setPosition(0, 0, 0)
            source.setDirectChannels(true)
            let buffers = ALBuffer.makeEmpty(count: bufferCount).map(StreamBuffer.init(buffer:))
            let channel = StreamChannel(mixer: self, source: source, bus: bus.index, buffers: buffers)
            streams.append(channel)
            applyStreamGain(channel)
            return channel
        }
    }

    /// Stops the stream and deletes its source and buffers. A channel already removed is left alone (an engine shut
    /// down twice closes its player twice).
    package func removeStreamChannel(_ channel: StreamChannel) {
        withLock {
            guard let index = streams.firstIndex(where: { $0 === channel }) else { return }
            streams.remove(at: index)
            channel.isRemoved = true
            channel.source.stop()
            channel.source.setBuffer(nil)
            channel.source.delete()
            for buffer in channel.buffers { buffer.buffer.delete() }
        }
    }

    package func setStreamGain(_ channel: StreamChannel, _ gain: Float) {
        withLock {
            channel.gain = gain
            if !channel.isRemoved { applyStreamGain(channel) }
        }
    }

    func applyStreamGain(_ channel: StreamChannel) {
        channel.source.setGain(channel.gain * buses.effective[channel.bus])
    }
}
