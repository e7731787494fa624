import Ambience
import AmbiencePlatform
import CSDLMixerABI
import Glibc
import Synchronization

// A channel's play through an engine stream voice rather than a sound's voice, when a sound's voice cannot do what
// SDL_mixer does: effects registered on the channel (Mix_RegisterEffect: the program's functions see and change the
// samples before they are mixed); a finite loop count (loops > 0: the stream goes from the last frame back to the
// first with no gap, where replaying a sound from the update thread left up to 10 ms of silence); and, on a device
// of two channels or more, positional effects that set the sides apart (SDL_mixer pans by scaling each side, and
// the engine places only mono voices: a stereo voice plays its channels as they are). One stream does all three:
// it reads the chunk's bytes, runs the effects on each block in the opened format, converts it to floats and then
// scales (and swaps) the sides, as SDL_mixer's positional effects do after the program's own.
//
// Latency: the stream starts being heard from the next engine block, as a sound's voice does (the engine's stream
// thread fills its three buffers at once). What an effect does to the samples is heard two engine blocks after the
// effect was called (the stream's queue), which is when those samples play: an effect that changes its behaviour
// (a new echo length, say) is heard changed at most two blocks later; so is a change of the sides.

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

/// The side volumes a stereo stream applies: left and right (0...1), after swapping the sides when `swap`.
struct SideGains: Equatable {
    var left: Float = 1
    var right: Float = 1
    var swap = false
}

extension ChannelPlacement {
    /// The sides SDL_mixer's panning gives on a device of two channels or more: Mix_SetPanning's volumes, or
    /// Mix_SetPosition's angle (measured against Debian's SDL_mixer 2.6: from ahead, the far side falls to nothing
    /// at 90° and is back at 180°; past 180° the sides swap), times the distance; and Mix_SetReverseStereo's swap,
    /// before or after them as it was registered (`reversesAfterSides`).
    var sides: SideGains {
        var left = Int(self.left), right = Int(self.right)
        var swap = false
        switch angle {
        case 0: break
        case 1..<90: left = 255 - Int(255 * Float(angle) / 89)
        case 90...180: left = Int(255 * Float(angle - 90) / 89)
        case 181..<270:
            swap = true
            right = 255 - Int(255 * Float(angle - 180) / 89)
        default:
            swap = true
            right = Int(255 * Float(angle - 270) / 89)
        }
        let near = Float(255 - Int(distance)) / 255
        let gains = (
            left: Float(min(max(left, 0), 255)) / 255 * near, right: Float(min(max(right, 0), 255)) / 255 * near
        )
        // Swapping what was scaled is scaling the other side's gain after the swap.
        let exchanged = reversed && reversesAfterSides
        return SideGains(
            left: exchanged ? gains.right : gains.left, right: exchanged ? gains.left : gains.right,
            swap: swap != reversed)
    }

    /// Whether SDL_mixer's positional effect is registered on the channel: a side, the angle or the distance away
    /// from its default (set back to all of them, SDL_mixer unregisters it).
    var positional: Bool { left != 255 || right != 255 || angle != 0 || distance != 0 }

    /// Notes the order SDL_mixer's two effects now run in (a channel's effects run in registration order), after a
    /// change from `before`: a swap switched on while the positional effect is registered swaps what it made; a
    /// positional effect registered while the swap is on scales what was swapped.
    mutating func noteEffectOrder(from before: ChannelPlacement) {
        if reversed && !before.reversed {
            reversesAfterSides = positional
        } else if positional && !before.positional {
            reversesAfterSides = false
        }
    }

    /// Whether a stereo play needs its sides set apart (a stream): a side below full, or swapped. Distance alone is
    /// a gain.
    var needsSides: Bool { left != 255 || right != 255 || angle != 0 || reversed }
}

/// The stream behind one channel's play: reads the chunk's samples (the copy its sound was made from, in the opened
/// format, which the play keeps alive however the program frees the chunk), runs the channel's effects on each
/// block in that format, hands floats to the engine, and scales the sides when it is stereo.
///
/// `render` is called on the engine's stream thread, never twice at once; its state (`position`, `loopsLeft`, the
/// two blocks) is touched by it alone. `halt` and `setSides` may come from any thread.
final class ChannelStream: @unchecked Sendable {
    let channel: Int32
    let effects: EffectChain
    let streamChannels: Int
    private let made: MadeSound
    private let format: SampleFormat
    private let channels: Int
    private let frameBytes: Int
    private let capacity: Int
    private let bytes: UnsafeMutableRawPointer
    private let floats: UnsafeMutablePointer<Float>
    private let halted = Atomic<Bool>(false)
    private let sides: Lock<SideGains>
    private var position: Int
    /// Plays from the start still to come after this one; -1: forever.
    private var loopsLeft: Int

    /// Whether the stream scales the sides (it is stereo): the voice's gain then leaves the placement out.
    var scalesSides: Bool { streamChannels == 2 }

    /// A stream over `made`'s bytes (whole frames in `spec`) from frame `start`, played `loops` more times after
    /// this one (-1: forever), in blocks of up to `capacity` frames.
    init(
        channel: Int32, made: MadeSound, spec: OutputSpec, effects: EffectChain, sides: SideGains, start: Int,
        loops: Int, capacity: Int
    ) {
        self.channel = channel
        self.made = made
        self.effects = effects
        self.sides = Lock(sides)
        format = spec.format
        channels = spec.channels
        streamChannels = min(spec.channels, 2)
        frameBytes = spec.format.width * spec.channels
        self.capacity = max(capacity, 16)
        bytes = .allocate(byteCount: self.capacity * frameBytes, alignment: 16)
        floats = .allocate(capacity: self.capacity * spec.channels)
        position = min(max(start, 0), made.bytes.count / frameBytes) * frameBytes
        loopsLeft = loops
    }

    deinit {
        bytes.deallocate()
        floats.deallocate()
    }

    /// Stops the stream: the next `render` writes nothing, which ends the voice.
    func halt() { halted.store(true, ordering: .sequentiallyConsistent) }

    /// New side volumes, heard from the next block rendered.
    func setSides(_ new: SideGains) { sides.withLock { $0 = new } }

    /// Fills `out` (frames × `streamChannels`) and returns the frames written; fewer once the last play is over, the
    /// stream halted or its effects closed (the play ended).
    func render(_ out: UnsafeMutableBufferPointer<Float>) -> Int {
        guard !halted.load(ordering: .sequentiallyConsistent), let base = out.baseAddress else { return 0 }
        let frames = out.count / streamChannels
        let sides = scalesSides ? self.sides.withLock { $0 } : SideGains()
        var done = 0
        while done < frames {
            let piece = min(frames - done, capacity)
            let made = fill(piece)
            guard made > 0, effects.run(channel: channel, bytes, length: made * frameBytes) else { break }
            format.decode(
                UnsafeRawBufferPointer(start: bytes, count: made * frameBytes), into: floats, count: made * channels)
            let target = base + done * streamChannels
            mapFrames(floats, channels, into: target, streamChannels, frames: made)
            if sides != SideGains() {
                for f in 0..<made {
                    let left = target[2 * f], right = target[2 * f + 1]
                    target[2 * f] = (sides.swap ? right : left) * sides.left
                    target[2 * f + 1] = (sides.swap ? left : right) * sides.right
                }
            }
            done += made
            if made < piece { break }
        }
        return done
    }

    /// Copies up to `frames` frames of the chunk into the byte block, going back to the start for each loop left.
    private func fill(_ frames: Int) -> Int {
        let samples = made.bytes
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
    /// Starts channel `i`'s play of `made` with the slot's gain and placement: `loops` -1 loops forever, N plays N
    /// more times. Through a stream voice when the channel has effects, the loop count is finite, or (on a device of
    /// two channels or more) the placement sets the sides apart; else through the sound's voice. With no stream
    /// voice left, a play without effects falls back to the sound's voice (finite loops replayed by the update
    /// thread, a placement as the engine places it).
    mutating func startVoice(_ i: Int, device: OpenDevice, made: MadeSound, loops: Int) -> Result<
        Voice, ChunkProblem
    > {
        slots[i].made = made
        let sidesApart = device.spec.channels >= 2 && slots[i].placement.needsSides
        if slots[i].effectCount > 0 || loops > 0 || sidesApart {
            switch startStream(i, device: device, start: 0, loops: loops) {
            case .success(let voice):
                slots[i].loopsLeft = 0
                return .success(voice)
            case .failure(let problem) where slots[i].effectCount > 0:
                slots[i].made = nil
                return .failure(problem)
            case .failure: break
            }
        }
        let voice = device.engine.play(
            made.sound, PlayOptions(gain: slots[i].gain, loop: loops < 0, placement: slots[i].placement.placement))
        guard voice != .none else {
            slots[i].made = nil
            return .failure(.engine("the engine could not start a voice"))
        }
        slots[i].loopsLeft = loops
        return .success(voice)
    }

    /// Starts channel `i`'s play as a stream voice over its chunk's bytes from frame `start`, `loops` more plays
    /// after it (-1: forever): the channel's effects run on it, then its sides are scaled. Under the stand-in's lock
    /// (the stream's callback never takes it). The reason when the engine has no stream voice left (64 play at once).
    private mutating func startStream(_ i: Int, device: OpenDevice, start: Int, loops: Int) -> Result<
        Voice, ChunkProblem
    > {
        guard let made = slots[i].made else { return .failure(.engine("no sound for channel \(i)")) }
        let stream = ChannelStream(
            channel: Int32(clamping: i), made: made, spec: device.spec, effects: chain(i),
            sides: slots[i].placement.sides,
            start: start, loops: loops, capacity: device.engine.configuration.blockFrames)
        slots[i].stream = stream
        let options = PlayOptions(gain: slots[i].gain, placement: slots[i].placement.placement)
        let started: Result<Voice, ChunkProblem>
        do {
            let voice = try device.engine.playStream(
                sampleRate: device.spec.frequency, channels: stream.streamChannels, options
            ) { stream.render($0) }
            started = voice != .none ? .success(voice) : .failure(.engine("the engine is shut down"))
        } catch {
            started = .failure(.engine("no stream voice for channel \(i): \(error.description)"))
        }
        if case .failure = started { slots[i].stream = nil }
        return started
    }

    /// Moves channel `i`'s play from a sound's voice to a stream voice where it is now (effects registered, or sides
    /// set apart, during the play). The sound's playhead is read from the engine (`Voice.elapsed`); the stream takes
    /// over within a block. A paused play stays paused. False when the play stays on its sound's voice.
    @discardableResult
    mutating func moveToStream(_ i: Int, device: OpenDevice) -> Bool {
        guard let voice = slots[i].voice, slots[i].stream == nil, voice.isAlive, let made = slots[i].made else {
            return false
        }
        let frames = made.bytes.count / (device.spec.format.width * device.spec.channels)
        let start = min(max(Int((voice.elapsed ?? 0) * Double(device.spec.frequency)), 0), frames)
        guard case .success(let stream) = startStream(i, device: device, start: start, loops: slots[i].loopsLeft)
        else { return false }
        voice.stop()
        if slots[i].paused { stream.pause() }
        slots[i].voice = stream
        slots[i].loopsLeft = 0
        return true
    }

    /// Moves channel `i`'s play to its placement as it is now: a stream's sides change; on a device of two channels
    /// or more, a sound's voice whose sides must be set apart moves to a stream; otherwise the engine places the
    /// voice. Its gain follows.
    mutating func applyPlacement(_ i: Int, device: OpenDevice) {
        defer { applyGain(i) }
        guard let voice = slots[i].voice, voice.isAlive else { return }
        let placement = slots[i].placement
        if let stream = slots[i].stream, stream.scalesSides {
            stream.setSides(placement.sides)
        } else if device.spec.channels < 2 || !placement.needsSides || !moveToStream(i, device: device) {
            voice.setPlacement(placement.placement)
        }
    }
}
