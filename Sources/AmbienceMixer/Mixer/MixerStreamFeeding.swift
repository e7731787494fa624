import AmbiencePlatform

/// Refilling the stream voices' queues (the stream thread, or an offline render), and what the mixer's tick and the
/// session do to stream voices.
extension Mixer {
    /// One round: takes back the buffers each stream has played, ends the streams that have played out, and calls
    /// each live stream's callback once per free buffer. Called with no lock held; each callback runs with none of
    /// the mixer's locks held.
    package func feedStreamVoices() {
        let due: [(slot: Int32, feed: StreamFeed, count: Int)] = withLock {
            guard streamVoices.live > 0 else { return [] }
            var due: [(slot: Int32, feed: StreamFeed, count: Int)] = []
            for index in streamVoices.slots.indices {
                guard let feed = streamVoices.slots[index].feed else { continue }
                reclaimPlayed(feed)
                if feed.ended && feed.queued.isEmpty {
                    releaseStream(Int32(index), finished: true)
                } else if !feed.ended && !feed.free.isEmpty {
                    due.append((Int32(index), feed, feed.free.count))
                }
            }
            return due
        }
        for (slot, feed, count) in due {
            for _ in 0..<count {
                let asked = feed.produce(
                    isOpen: { withLock { !feed.closed } },
                    deliver: { samples, frames in withLock { queueStreamBlock(slot, feed, samples, frames) } })
                if !asked { break }
            }
        }
    }

    /// Takes the buffers the source has played off its queue. Under the lock.
    private func reclaimPlayed(_ feed: StreamFeed) {
        while let buffer = feed.source.unqueueProcessed() {
            if let i = feed.queued.firstIndex(where: { $0.buffer == buffer }) {
                feed.playedFrames += feed.queued[i].frames
                feed.queued.remove(at: i)
            }
            feed.free.append(buffer)
        }
    }

    /// Queues a block the callback wrote; false when the stream takes no more (closed, ended, or OpenAL refused it).
    private func queueStreamBlock(
        _ slot: Int32, _ feed: StreamFeed, _ samples: UnsafeBufferPointer<Float>, _ frames: Int
    ) -> Bool {
        guard !feed.closed else { return false }
        if frames < feed.framesPerBuffer { feed.ended = true }
        if frames > 0, let buffer = feed.free.popLast() {
            if buffer.fill(samples: samples, channels: feed.channels, sampleRate: feed.sampleRate) {
                feed.source.queue(buffer)
                feed.queued.append((buffer, frames))
            } else {
                feed.free.append(buffer)
                feed.ended = true
            }
        }
        if !streamVoices.slots[Int(slot)].paused && !suspended { playStreamSource(feed) }
        return !feed.ended
    }

    /// Starts the stream thread, which feeds the stream voices from then on (device output). It wakes every half
    /// block, at once when a stream voice starts, and once a second while there is none. It runs at the audio
    /// thread's priority: a stream voice holds only two blocks ahead of it.
    package func startStreamFeeding(blockFrames: Int) {
        let period = max(Double(blockFrames) / Double(configuration.sampleRate) / 2, 0.002)
        streamFeeding.withLock { worker in
            guard worker == nil else { return }
            worker = WorkerThread(name: "ambience-voices", scheduling: .audio) { [weak self] control in
                while !control.isStopRequested {
                    guard let mixer = self else { return }
                    mixer.feedStreamVoices()
                    let idle = mixer.withLock { mixer.streamVoices.live == 0 }
                    control.wait(seconds: idle ? 1 : period)
                }
            }
        }
    }

    /// Whether the stream thread feeds the stream voices (else `render` does).
    var feedsStreamsOnItsOwn: Bool { streamFeeding.withLock { $0 != nil } }

    /// Stops the stream thread and ends every stream voice (the engine's shutdown).
    func closeStreamVoices() {
        let worker = streamFeeding.withLock { worker in
            defer { worker = nil }
            return worker
        }
        worker?.stop()
        let feeds: [StreamFeed] = withLock {
            var feeds: [StreamFeed] = []
            for index in streamVoices.slots.indices {
                guard let feed = streamVoices.slots[index].feed else { continue }
                releaseStream(Int32(index), finished: false)
                feeds.append(feed)
            }
            return feeds
        }
        for feed in feeds { feed.waitOutCallback() }
    }

    // MARK: Under the lock: the tick and the session

    /// Moves fades on, ends the streams faded out to a stop, and applies new bus gains.
    func advanceStreamVoices(_ seconds: Double, busesChanged: Bool) {
        guard streamVoices.live > 0 else { return }
        for index in streamVoices.slots.indices where streamVoices.slots[index].feed != nil {
            let slot = Int32(index)
            guard var ramp = streamVoices.slots[index].fade else {
                if busesChanged { applyStreamVoiceGain(slot) }
                continue
            }
            ramp.advance(seconds)
            streamVoices.slots[index].fadeGain = ramp.value
            streamVoices.slots[index].fade = ramp.isDone ? nil : ramp
            if ramp.isDone && streamVoices.slots[index].stopAfterFade {
                releaseStream(slot, finished: false)
            } else {
                applyStreamVoiceGain(slot)
            }
        }
    }

    /// The session's pause of every voice (`setSuspended`), for stream voices the game has not paused itself.
    func suspendStreamVoices(_ on: Bool) {
        for slot in streamVoices.slots where !slot.paused {
            guard let feed = slot.feed else { continue }
            if on { feed.source.pause() } else { playStreamSource(feed) }
        }
    }

    /// The session's stop after a route change (`rewindAndHoldUnpausedVoices`): a stream cannot be rewound, so each
    /// unpaused stream voice is held paused where it is (`Voice.resume()` plays it on); one fading out to its stop
    /// is released, as the fade would.
    func holdUnpausedStreamVoices() {
        for index in streamVoices.slots.indices where !streamVoices.slots[index].paused {
            guard let feed = streamVoices.slots[index].feed else { continue }
            if streamVoices.slots[index].stopAfterFade && streamVoices.slots[index].fade != nil {
                releaseStream(Int32(index), finished: false)
                continue
            }
            streamVoices.slots[index].paused = true
            feed.source.pause()
        }
    }

    /// Places the world stream voices again after the listener's distances changed.
    func replaceStreamVoices() {
        for index in streamVoices.slots.indices where streamVoices.slots[index].feed != nil {
            placeStream(Int32(index))
        }
    }
}
