import AmbienceCore
import Glibc

/// One stream buffer's worth of music, decoded and folded to stereo on the streaming side before it is queued:
/// the frames, and which run of which item each part holds. Owned by `MusicFeeder`; never touched under a lock.
///
/// A stereo item is decoded straight into the frames handed to OpenAL; other channel counts through `decoded`. Its
/// memory is made once: no block allocates.
struct StereoBlock {
    /// Frames of a block, so of a stream buffer: 186 ms at 44.1 kHz, one wake-up of the streaming thread each.
    static let capacity = 8192
    /// Frames of a generation's first block (a play, a seek, a skip): the first sound waits for its decoding alone,
    /// so it is the size every block had before blocks grew to `capacity` (session 48), and a start is heard as soon.
    static let startFrames = 4096

    private(set) var frames = 0
    private(set) var segments: [StreamQueue.Segment] = []
    /// The block's frames, at most `limit` of them.
    private var limit = StereoBlock.capacity
    private var stereo = [Float](repeating: 0, count: StereoBlock.capacity * 2)
    /// Another channel count's frames as decoded, before they are folded to stereo.
    private var decoded: [Float] = []
    /// A crossfade's outgoing frames, while the incoming ones are decoded in their place.
    private var outgoing = [Float](repeating: 0, count: StereoBlock.capacity * 2)

    var room: Int { limit - frames }

    /// Empties the block, to hold at most `limit` frames (at most `capacity`).
    mutating func reset(limit: Int = StereoBlock.capacity) {
        frames = 0
        self.limit = min(max(limit, 1), StereoBlock.capacity)
        segments.removeAll(keepingCapacity: true)
    }

    func withFrames<R>(_ body: (UnsafeBufferPointer<Float>) -> R) -> R {
        stereo.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[0..<(frames * 2)])) }
    }

    /// Decodes up to `count` frames of `decoder` onto the end of the block as stereo; returns how many it got.
    mutating func append(from decoder: any AudioDecoder, frames count: Int, entryID: UInt64, playID: UInt64)
        throws(DecodingError) -> Int
    {
        let start = decoder.position
        let got = try decode(from: decoder, into: frames, frames: min(count, room))
        guard got > 0 else { return 0 }
        segments.append(.init(entryID: entryID, playID: playID, startFrame: start, frames: got))
        frames += got
        return got
    }

    /// Crossfades the last `count` frames of the block with `count` frames of the incoming `decoder`: equal-power
    /// curves over `fadeLength` frames, of which `fadeDone` have passed. Frames the decoder lacks count as silence.
    mutating func mixIn(from decoder: any AudioDecoder, frames count: Int, fadeDone: Int, fadeLength: Int) {
        let at = frames - count
        for i in 0..<(count * 2) { outgoing[i] = stereo[at * 2 + i] }
        let got = (try? decode(from: decoder, into: at, frames: count)) ?? 0
        for f in got..<count { stereo[(at + f) * 2] = 0; stereo[(at + f) * 2 + 1] = 0 }
        for f in 0..<count {
            let x = Double(fadeDone + f) / Double(max(fadeLength, 1))
            let gainOut = Float(cos(min(x, 1) * Double.pi / 2)), gainIn = Float(sin(min(x, 1) * Double.pi / 2))
            for c in 0..<2 {
                stereo[(at + f) * 2 + c] = outgoing[f * 2 + c] * gainOut + stereo[(at + f) * 2 + c] * gainIn
            }
        }
    }

    /// Decodes up to `count` frames as stereo at frame `at` of the block.
    private mutating func decode(from decoder: any AudioDecoder, into at: Int, frames count: Int) throws(DecodingError)
        -> Int
    {
        let channels = decoder.info.channels
        let count = min(count, StereoBlock.capacity - at)
        if channels == 2 {
            // Straight into the block: nothing to fold.
            let got = try stereo.withUnsafeMutableBufferPointer { (p) throws(DecodingError) -> Int in
                try decoder.read(into: p.baseAddress! + at * 2, frames: count)
            }
            return min(max(got, 0), count)
        }
        if decoded.count < max(count * channels, 1) {
            decoded = Array(repeating: 0, count: StereoBlock.capacity * max(channels, 1))
        }
        let got = try decoded.withUnsafeMutableBufferPointer { (p) throws(DecodingError) -> Int in
            try decoder.read(into: p.baseAddress!, frames: count)
        }
        let scale = channels > 2 ? 1 / Float(channels).squareRoot() : 1
        for f in 0..<got {
            switch channels {
            case 1:
                stereo[(at + f) * 2] = decoded[f]
                stereo[(at + f) * 2 + 1] = decoded[f]
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
}
