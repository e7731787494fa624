import Glibc

/// The buffers of a music stream and what each holds, so the playhead can be mapped back to an item and a time.
struct StreamQueue {
    /// A run of one item's frames inside a buffer.
    struct Segment {
        let entryID: UInt64
        /// Distinguishes two play-throughs of the same entry (repeat one).
        let playID: UInt64
        /// Where the run starts in the item, in its frames.
        let startFrame: Int64
        let frames: Int
    }

    struct Queued {
        let buffer: ALBuffer
        let frames: Int
        let segments: [Segment]
    }

    let allBuffers: [ALBuffer]
    private(set) var queued: [Queued] = []
    private var free: [ALBuffer]
    /// The rate of every buffer in the queue (OpenAL needs one rate per queue).
    var sampleRate = 48_000
    private var stereo: [Float]
    private var decoded: [Float] = []

    init(buffers: [ALBuffer]) {
        allBuffers = buffers
        free = buffers
        stereo = Array(repeating: 0, count: MusicPlayer.bufferFrames * 2)
    }

    var hasFreeBuffer: Bool { !free.isEmpty }

    mutating func reclaim(_ buffer: ALBuffer) {
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

    /// Decodes up to `frames` frames as stereo into the pending buffer at `at`.
    mutating func decode(from decoder: any AudioDecoder, into at: Int, frames: Int) throws(DecodingError) -> Int {
        let channels = decoder.info.channels
        if decoded.count < frames * channels { decoded = Array(repeating: 0, count: MusicPlayer.bufferFrames * max(channels, 2)) }
        let got = try decoded.withUnsafeMutableBufferPointer { (p) throws(DecodingError) -> Int in
            try decoder.read(into: p.baseAddress!, frames: frames)
        }
        let scale = channels > 2 ? 1 / Float(channels).squareRoot() : 1
        for f in 0..<got {
            switch channels {
            case 1:
                stereo[(at + f) * 2] = decoded[f]
                stereo[(at + f) * 2 + 1] = decoded[f]
            case 2:
                stereo[(at + f) * 2] = decoded[f * 2]
                stereo[(at + f) * 2 + 1] = decoded[f * 2 + 1]
            default:
                var left: Float = 0, right: Float = 0
                for c in 0..<channels {
                    let v = decoded[f * channels + c] * scale
                    if c == 2 { left += v; right += v } else if c & 1 == 0 { left += v } else { right += v }
                }
                stereo[(at + f) * 2] = left
                stereo[(at + f) * 2 + 1] = right
            }
        }
        return got
    }

    /// Decodes `frames` frames of the incoming item and crossfades them with what is already at `at`:
    /// equal-power curves over `fadeLength` frames, of which `fadeDone` have passed. Missing frames count as silence.
    mutating func mixIn(from decoder: any AudioDecoder, at: Int, frames: Int, fadeDone: Int, fadeLength: Int) {
        let saved = Array(stereo[(at * 2)..<((at + frames) * 2)])
        let got = (try? decode(from: decoder, into: at, frames: frames)) ?? 0
        for f in got..<frames { stereo[(at + f) * 2] = 0; stereo[(at + f) * 2 + 1] = 0 }
        for f in 0..<frames {
            let x = Double(fadeDone + f) / Double(max(fadeLength, 1))
            let gainOut = Float(cos(min(x, 1) * Double.pi / 2)), gainIn = Float(sin(min(x, 1) * Double.pi / 2))
            for c in 0..<2 { stereo[(at + f) * 2 + c] = saved[f * 2 + c] * gainOut + stereo[(at + f) * 2 + c] * gainIn }
        }
    }

    /// Uploads the pending frames into a free buffer and queues it on `source`. Call with the mixer's lock held.
    mutating func queueFilled(frames: Int, segments: [Segment], on source: ALSource) {
        guard let buffer = free.popLast() else { return }
        let ok = stereo.withUnsafeBufferPointer { all in
            buffer.fill(samples: UnsafeBufferPointer(rebasing: all[0..<(frames * 2)]), channels: 2, sampleRate: sampleRate)
        }
        guard ok else { free.append(buffer); return }
        source.queue(buffer)
        queued.append(Queued(buffer: buffer, frames: frames, segments: segments))
    }
}
