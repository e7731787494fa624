import Ambience
import CSDLMixerABI
import Glibc
import Synchronization

// A channel's play through an engine stream voice rather than a sound's voice: when effects are registered on the
// channel (Mix_RegisterEffect: the program's functions see and change the samples before they are mixed), and when
// a chunk is played a finite number of times (loops > 0: the stream goes from the last frame back to the first with
// no gap, where replaying a sound from the update thread left up to 10 ms of silence).
//
// Latency: the stream starts being heard from the next engine block, as a sound's voice does (the engine's stream
// thread fills its three buffers at once). What an effect does to the samples is heard two engine blocks after the
// effect was called (the stream's queue), which is when those samples play: an effect that changes its behaviour
// (a new echo length, say) is heard changed at most two blocks later.

/// Interleaved frames from `from` channels to `to`: kept as they are, mono spread to every channel, a wider frame
/// averaged to mono, or (between other counts) the first channels kept and any new ones silent. Allocates nothing.
func mapFrames(
    _ source: UnsafePointer<Float>, _ from: Int, into target: UnsafeMutablePointer<Float>, _ to: Int, frames: Int
) {
    for f in 0..<frames {
        let s = source + f * from, t = target + f * to
        if from == to {
            t.update(from: s, count: to)
        } else if from == 1 {
            for c in 0..<to { t[c] = s[0] }
        } else if to == 1 {
            var sum: Float = 0
            for c in 0..<from { sum += s[c] }
            t[0] = sum / Float(from)
        } else {
            for c in 0..<to { t[c] = c < from ? s[c] : 0 }
        }
    }
}

/// The stream behind one channel's play: reads the chunk's samples (a copy made when the play started, in the opened
/// format), runs the channel's effects on each block in that format, and hands floats to the engine.
///
/// `render` is called on the engine's stream thread, never twice at once; its state (`position`, `loopsLeft`, the
/// two blocks) is touched by it alone. `halt` may come from any thread.
final class ChannelStream: @unchecked Sendable {
    let channel: Int32
    let effects: EffectChain
    let streamChannels: Int
    private let samples: [UInt8]
    private let format: SampleFormat
    private let channels: Int
    private let frameBytes: Int
    private let reversed: Bool
    private let capacity: Int
    private let bytes: UnsafeMutableRawPointer
    private let floats: UnsafeMutablePointer<Float>
    private let halted = Atomic<Bool>(false)
    private var position: Int
    /// Plays from the start still to come after this one; -1: forever.
    private var loopsLeft: Int

    /// A stream over `samples` (whole frames in `spec`) from frame `start`, played `loops` more times after this one
    /// (-1: forever), in blocks of up to `capacity` frames.
    init(
        channel: Int32, samples: [UInt8], spec: OutputSpec, reversed: Bool, effects: EffectChain, start: Int,
        loops: Int, capacity: Int
    ) {
        self.channel = channel
        self.samples = samples
        self.effects = effects
        format = spec.format
        channels = spec.channels
        streamChannels = min(spec.channels, 2)
        frameBytes = spec.format.width * spec.channels
        self.reversed = reversed && streamChannels == 2
        self.capacity = max(capacity, 16)
        bytes = .allocate(byteCount: self.capacity * frameBytes, alignment: 16)
        floats = .allocate(capacity: self.capacity * spec.channels)
        let frames = samples.count / frameBytes
        position = min(max(start, 0), frames) * frameBytes
        loopsLeft = loops
    }

    deinit {
        bytes.deallocate()
        floats.deallocate()
    }

    /// Stops the stream: the next `render` writes nothing, which ends the voice.
    func halt() { halted.store(true, ordering: .sequentiallyConsistent) }

    /// Fills `out` (frames × `streamChannels`) and returns the frames written; fewer once the last play is over, the
    /// stream halted or its effects closed (the play ended).
    func render(_ out: UnsafeMutableBufferPointer<Float>) -> Int {
        guard !halted.load(ordering: .sequentiallyConsistent), let base = out.baseAddress else { return 0 }
        let frames = out.count / streamChannels
        var done = 0
        while done < frames {
            let piece = min(frames - done, capacity)
            let made = fill(piece)
            guard made > 0, effects.run(channel: channel, bytes, length: made * frameBytes) else { break }
            format.decode(
                UnsafeRawBufferPointer(start: bytes, count: made * frameBytes), into: floats, count: made * channels)
            let target = base + done * streamChannels
            mapFrames(floats, channels, into: target, streamChannels, frames: made)
            if reversed {
                for f in 0..<made { swap(&target[2 * f], &target[2 * f + 1]) }
            }
            done += made
            if made < piece { break }
        }
        return done
    }

    /// Copies up to `frames` frames of the chunk into the byte block, going back to the start for each loop left.
    private func fill(_ frames: Int) -> Int {
        var made = 0
        while made < frames {
            if position >= samples.count {
                guard loopsLeft != 0, !samples.isEmpty else { break }
                if loopsLeft > 0 { loopsLeft -= 1 }
                position = 0
            }
            let count = min(frames - made, (samples.count - position) / frameBytes)
            guard count > 0 else { break }
            samples.withUnsafeBytes { source in
                (bytes + made * frameBytes).copyMemory(
                    from: source.baseAddress! + position, byteCount: count * frameBytes)
            }
            position += count * frameBytes
            made += count
        }
        return made
    }
}

extension ChannelTable {
    /// Starts channel `i`'s play as a stream voice over `samples` from frame `start`, `loops` more plays after it
    /// (-1: forever): the channel's effects run on it. Under the stand-in's lock (the stream's callback never takes
    /// it). The reason when the engine has no stream voice left (64 play at once).
    mutating func startStream(
        _ i: Int, device: OpenDevice, samples: [UInt8], reversed: Bool, start: Int, loops: Int, fadeIn: Double
    ) -> Result<Voice, ChunkProblem> {
        let stream = ChannelStream(
            channel: Int32(i), samples: samples, spec: device.spec, reversed: reversed, effects: chain(i),
            start: start, loops: loops, capacity: device.engine.configuration.blockFrames)
        let options = PlayOptions(gain: slots[i].gain, placement: slots[i].placement.placement, fadeIn: fadeIn)
        do {
            let voice = try device.engine.playStream(
                sampleRate: device.spec.frequency, channels: stream.streamChannels, options
            ) { stream.render($0) }
            guard voice != .none else { return .failure(.engine("the engine is shut down")) }
            slots[i].stream = stream
            return .success(voice)
        } catch {
            return .failure(.engine("no stream voice for channel \(i): \(error.description)"))
        }
    }

    /// Moves channel `i`'s play from a sound's voice to a stream voice where it is now, so effects registered during
    /// the play run on the rest of it. The sound's playhead is read from the engine (`Voice.elapsed`); the stream
    /// takes over within a block. A paused play stays paused.
    mutating func moveToStream(_ i: Int, device: OpenDevice) {
        guard let voice = slots[i].voice, slots[i].stream == nil, voice.isAlive, !slots[i].samples.isEmpty else {
            return
        }
        let start = Int((voice.elapsed ?? 0) * Double(device.spec.frequency))
        let loops = slots[i].forever ? -1 : slots[i].loopsLeft
        guard
            case .success(let stream) = startStream(
                i, device: device, samples: slots[i].samples, reversed: slots[i].reversedSamples, start: start,
                loops: loops, fadeIn: 0)
        else { return }
        voice.stop()
        if slots[i].paused { stream.pause() }
        slots[i].voice = stream
        slots[i].loopsLeft = 0
    }
}
