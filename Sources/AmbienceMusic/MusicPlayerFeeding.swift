import AmbienceCore
import AmbienceMixer
import Synchronization

extension MusicPlayer {
    // MARK: The stream (feeder side): short locked calls, no I/O

    /// Unqueues played buffers, follows the playhead and notices the end of the queue; then says what to feed.
    /// Nil when there is nothing to do.
    func beginFeederStep(generation feederGeneration: UInt64, hasFeed: Bool) -> FeederOrders? {
        lock.withLock { _ in
            // Held, the queue stands still: nothing is decoded until let go (a seek made while held is taken up
            // then), nor after a release that waits for `play()`.
            guard !held && !waitsForPlay else { return nil }
            let isNew = feederGeneration != stream.generation
            guard isNew || hasFeed || !stream.isEmpty else { return nil }
            var quiet: Double?
            if !stream.isEmpty {
                let (stopped, heard, quietSeconds) = stream.reclaimPlayed()
                quiet = quietSeconds
                // The playhead entered another item: a natural change of item, announced.
                if let heard, let o = orderIndex(ofEntry: heard.entryID) { setPosition(o, force: true) }
                if state == .playing && stopped && stream.isEmpty && stream.ended {
                    endOfQueue()
                    return nil
                }
            }
            return FeederOrders(
                generation: stream.generation, start: isNew ? stream.startOrder : nil,
                freeBuffers: stream.freeBufferCount, crossfade: _crossfadeDuration, repeatsOne: _repeatMode == .one,
                quietSeconds: quiet)
        }
    }

    /// The item that follows the entry `entryID` (`natural`: it ended by itself, so repeat-one replays it), and
    /// whether it is to play its own loop (repeat-one); nil at the end of the queue or when `feederGeneration` is no
    /// longer the stream's.
    func entry(after entryID: UInt64, natural: Bool, generation feederGeneration: UInt64)
        -> (UInt64, MediaItem, loops: Bool)?
    {
        lock.withLock { _ in
            feederChoseAt = queueEdits
            guard feederGeneration == stream.generation, let o = orderIndex(ofEntry: entryID),
                let next = nextOrderIndex(after: o, natural: natural)
            else { return nil }
            let entry = queue[order[next]]
            return (entry.id, entry.item, _repeatMode == .one)
        }
    }

    func isCurrent(_ feederGeneration: UInt64) -> Bool { lock.withLock { _ in feederGeneration == stream.generation } }

    var queueCount: Int { lock.withLock { _ in order.count } }

    /// The item a generation began with could not be opened: reports it and moves on to the next playable one, or
    /// stops at the end of the queue. Returns what to open instead.
    func startFailed(generation feederGeneration: UInt64, entryID: UInt64, error: DecodingError, tried: Int)
        -> StartOrder?
    {
        let (restart, reported) = lock.withLock { _ -> (StartOrder?, Bool) in
            guard feederGeneration == stream.generation, let o = orderIndex(ofEntry: entryID) else {
                return (nil, false)
            }
            post(.playbackError(queue[order[o]].item, error))
            guard tried < order.count, let next = nextOrderIndex(after: o, natural: false) else {
                endOfQueue()
                return (nil, true)
            }
            requestStart(at: next, time: 0)
            return (stream.startOrder, true)
        }
        if reported { Self.logSkipped(error) }
        return restart
    }

    /// Queues a block the feeder decoded for `feederGeneration`, with the errors it met on the way; false when the
    /// stream has moved on and the block was dropped. Plays the stream if the player is playing and it is not.
    func publish(
        _ block: StereoBlock, generation feederGeneration: UInt64, rate: Int,
        fed feeding: (entryID: UInt64, playID: UInt64)?, ended: Bool,
        errors: [(MediaItem, DecodingError)]
    ) -> Bool {
        let published = lock.withLock { _ in
            guard feederGeneration == stream.generation else { return false }
            for (item, error) in errors { post(.playbackError(item, error)) }
            let underran = stream.queue(
                block, rate: rate, fed: feeding, ended: ended, playing: state == .playing && !held)
            if underran { mixer.underruns.add(1, ordering: .relaxed) }
            // The queue was edited while the block was decoded: what it holds ahead must still be next. (Checked
            // only then: the feeder skips unplayable items, which the queue alone cannot tell.)
            if feederChoseAt != queueEdits && stream.reachesAhead(block) {
                restartIfUpcomingChanged()
            }
            return true
        }
        // Only a current feeder's errors are news: a stale one's files are met again by the feeder that replaced it.
        if published { for (_, error) in errors { Self.logSkipped(error) } }
        return published
    }
}
