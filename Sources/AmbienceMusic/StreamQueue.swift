import AmbienceMixer

/// The buffers of the music stream (its `StreamChannel`'s) and what each holds, so the playhead can be mapped back to
/// an item and a time. Guarded by the player's lock; it never decodes (`StereoBlock`, on the streaming side, does).
struct StreamQueue {
    /// A run of one item's frames inside a buffer.
    struct Segment {
        let entryID: UInt64
        /// Distinguishes two play-throughs of the same entry (repeat one); grows along the stream.
        let playID: UInt64
        /// Where the run starts in the item, in its frames.
        let startFrame: Int64
        let frames: Int
    }

    struct Queued {
        let buffer: StreamBuffer
        let frames: Int
        let segments: [Segment]
    }

    let allBuffers: [StreamBuffer]
    private(set) var queued: [Queued] = []
    private var free: [StreamBuffer]
    /// The rate of every buffer in the queue (OpenAL needs one rate per queue).
    var sampleRate = 48_000

    init(buffers: [StreamBuffer]) {
        allBuffers = buffers
        free = buffers
    }

    var freeBufferCount: Int { free.count }

    mutating func reclaim(_ buffer: StreamBuffer) {
        if let i = queued.firstIndex(where: { $0.buffer == buffer }) { queued.remove(at: i) }
        free.append(buffer)
    }

    /// After the source has dropped every buffer.
    mutating func reclaimAll() {
        queued.removeAll()
        free = allBuffers
    }

    /// The segment under `offset` frames from the head of the queue, and how far into it.
    func segment(at offset: Int) -> (segment: Segment, within: Int)? {
        var remaining = offset
        for buffer in queued {
            for segment in buffer.segments {
                if remaining < segment.frames { return (segment, remaining) }
                remaining -= segment.frames
            }
        }
        // Past the end (the source has drained): report the very end of the last segment.
        return queued.last?.segments.last.map { ($0, $0.frames) }
    }

    /// Frames from `offset` (from the head of the queue) to the next point where a round has something to do: the end
    /// of a buffer (it can be refilled) or of a segment (another play-through is heard); nil past the queue's end.
    func framesToNextChange(from offset: Int) -> Int? {
        var end = 0
        for buffer in queued {
            for segment in buffer.segments {
                end += segment.frames
                if end > offset { return end - offset }
            }
        }
        return nil
    }

    /// The first queued segment of a play-through after `playID`: what the stream has decoded ahead of the heard item.
    func firstSegment(after playID: UInt64) -> Segment? {
        queued.lazy.flatMap(\.segments).first { $0.playID > playID }
    }

    /// Uploads a decoded block into a free buffer and queues it on the stream (inside `StreamChannel.locked`).
    mutating func queue(_ block: StereoBlock, on stream: borrowing StreamChannel.Locked) {
        guard let buffer = free.popLast() else { return }
        guard block.withFrames({ stream.queue(buffer, stereo: $0, rate: sampleRate) }) else {
            free.append(buffer)
            return
        }
        queued.append(Queued(buffer: buffer, frames: block.frames, segments: block.segments))
    }
}
