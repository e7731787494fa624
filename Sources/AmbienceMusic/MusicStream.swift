import AmbienceMixer

/// The stream half of the music player: the mixer's channel, what each of its buffers holds, and the generation a
/// block from the feeder must belong to. The queue half (`MusicPlayer`) tells it to start anew, play, pause and
/// queue what the feeder decoded; it tells the player which play-through the listener hears and where in it.
///
/// Guarded by the player's lock, like the rest of the player's state. It never opens or decodes a file, and it reaches
/// OpenAL only through its `StreamChannel`.
final class MusicStream {
    let channel: StreamChannel
    private var buffers: StreamQueue
    /// Bumped whenever the stream is emptied: a block decoded for an older generation is refused.
    private(set) var generation: UInt64 = 0
    /// What the feeder should open when it takes up `generation`.
    var startOrder: MusicPlayer.StartOrder?
    /// The play-through heard now (0 before the generation's first block).
    private(set) var currentPlayID: UInt64 = 0
    /// The item the feeder is decoding, which may be ahead of the one heard.
    private var fed: (entryID: UInt64, playID: UInt64)?
    /// The feeder has reached the end of the queue in this generation.
    private(set) var ended = false
    private var awaitingFirstBlock = true

    init(channel: StreamChannel) {
        self.channel = channel
        buffers = StreamQueue(buffers: channel.buffers)
    }

    /// Whether no buffer is queued: nothing has been published since the stream last started anew, or all played out.
    var isEmpty: Bool { buffers.queued.isEmpty }
    var freeBufferCount: Int { buffers.freeBufferCount }

    /// Silences the stream, takes every buffer back and starts a new generation; nothing sounds until the feeder
    /// fills it.
    func restart() {
        channel.locked { $0.stop() }
        buffers.reclaimAll()
        generation &+= 1
        startOrder = nil
        fed = nil
        ended = false
        awaitingFirstBlock = true
        currentPlayID = 0
    }

    /// Resumes a paused stream where it paused. One that ran dry before it was paused has played what it holds: that
    /// is taken back rather than played again (OpenAL plays a stopped source from the head of its queue).
    func resume() {
        channel.locked { locked in
            for buffer in locked.rewindIfStopped() { buffers.reclaim(buffer) }
            locked.play()
        }
    }
    func pause() { channel.locked { $0.pause() } }

    /// Takes back the buffers played out. Returns whether the channel has stopped, the segment under the playhead
    /// when it belongs to a play-through other than the one heard until now (which it then becomes), and the seconds
    /// of playing until the next buffer or segment ends (nil when nothing queued is left to play).
    func reclaimPlayed() -> (stopped: Bool, newlyHeard: StreamQueue.Segment?, quietSeconds: Double?) {
        let (stopped, offset) = channel.locked { locked in
            for buffer in locked.reclaimPlayed() { buffers.reclaim(buffer) }
            return (locked.state == .stopped || locked.state == .initial, locked.sampleOffset)
        }
        let quiet = buffers.framesToNextChange(from: offset).map { Double($0) / Double(max(buffers.sampleRate, 1)) }
        guard let segment = buffers.segment(at: offset)?.segment, segment.playID != currentPlayID else {
            return (stopped, nil, quiet)
        }
        currentPlayID = segment.playID
        return (stopped, segment, quiet)
    }

    /// Queues a block the feeder decoded at `rate` for this generation, with what it was decoding then and whether it
    /// has reached the end of the queue; plays the channel if `playing` and it is not. Returns whether that was an
    /// underrun: the stream had started and ran dry (the generation's first block is no underrun).
    func queue(
        _ block: StereoBlock, rate: Int, fed feeding: (entryID: UInt64, playID: UInt64)?, ended hasEnded: Bool,
        playing: Bool
    ) -> Bool {
        fed = feeding
        ended = hasEnded
        guard block.frames > 0 else { return false }
        let wasPlaying = channel.locked { locked in
            // A stopped source (restarted, run dry or ended) would count the block as played at once: it is rewound
            // first, whether the player plays it now or later.
            for buffer in locked.rewindIfStopped() { buffers.reclaim(buffer) }
            if buffers.queued.isEmpty { buffers.sampleRate = rate }
            buffers.queue(block, on: locked)
            let wasPlaying = locked.state == .playing
            if playing && !wasPlaying { locked.play() }
            return wasPlaying
        }
        if currentPlayID == 0, let first = block.segments.first { currentPlayID = first.playID }
        let underran = playing && !wasPlaying && !awaitingFirstBlock
        awaitingFirstBlock = false
        return underran
    }

    /// Whether `block` holds frames of a play-through after the one heard.
    func reachesAhead(_ block: StereoBlock) -> Bool { block.segments.contains { $0.playID > currentPlayID } }

    /// The entry the stream has decoded ahead into, past the one heard: queued, or being decoded; nil when there is
    /// none or nothing is heard yet.
    var entryAhead: UInt64? {
        guard currentPlayID != 0 else { return nil }
        return buffers.firstSegment(after: currentPlayID)?.entryID
            ?? fed.flatMap { $0.playID > currentPlayID ? $0.entryID : nil }
    }

    /// Seconds into the play-through heard now; nil while nothing is queued.
    func playheadTime() -> Double? {
        guard !buffers.queued.isEmpty else { return nil }
        let offset = channel.locked { $0.sampleOffset }
        guard let (segment, within) = buffers.segment(at: offset) else { return nil }
        return Double(segment.startFrame + Int64(within)) / Double(buffers.sampleRate)
    }
}
