import Ambience
import CSDLMixerABI

// Panning on a device of two channels or more. SDL_mixer pans by scaling each side (Mix_SetPanning's left and right
// volumes, 0...255; Mix_SetPosition's angle turned into such volumes), and the engine places only mono sounds: a
// stereo voice plays its channels as they are. So a channel with a side's volume below full plays its chunk as an
// engine stream voice (`AudioEngine.playStream`) whose render reads the chunk's bytes (as SDL_mixer's mixer does),
// converts them with SDL and scales each side. It loops itself (no gap between finite loops), pauses, fades and
// stops like any voice; its gain is the channel's volume, its sides are the placement's.

/// The side volumes a stream applies: left and right (0...1) and whether the sides are swapped first.
struct SideGains: Equatable {
    var left: Float = 1
    var right: Float = 1
    var swap = false
}

/// Where a panned stream is: the next frame of the chunk to read, and how many more times it starts over (-1:
/// forever).
private struct StreamPosition {
    var frame: Int
    var loopsLeft: Int
    var sides: SideGains
    let converter: AudioConverter
    var scratch: [Float]
}

/// A channel's panned stream: what the channel changes while it plays (the sides) and the stream's voice.
final class PannedStream: Sendable {
    private let position: Lock<StreamPosition>
    private let bytes: ChunkBytes
    private let frameBytes: Int

    private init(bytes: ChunkBytes, frameBytes: Int, position: consuming sending StreamPosition) {
        self.bytes = bytes
        self.frameBytes = frameBytes
        self.position = Lock(position)
    }

    /// Starts `bytes` (in `spec`) at `frame`, played `loops` more times after this pass (-1: forever), on the
    /// engine's `sfx` bus. nil (with the reason) when the engine has no stream voice left.
    static func start(
        _ bytes: ChunkBytes, spec: OutputSpec, engine: AudioEngine, frame: Int, loops: Int, sides: SideGains,
        options: PlayOptions
    ) -> Result<(PannedStream, Voice), ChunkProblem> {
        let layout = AudioLayout(format: spec.format.rawValue, channels: spec.channels)
        guard let converter = AudioConverter(from: layout, to: .floats(2), rate: spec.frequency) else {
            return .failure(.engine("SDL cannot convert the chunk's format"))
        }
        let stream = PannedStream(
            bytes: bytes, frameBytes: layout.frameBytes,
            position: StreamPosition(
                frame: frame, loopsLeft: loops, sides: sides, converter: converter, scratch: []))
        do {
            let voice = try engine.playStream(sampleRate: spec.frequency, channels: 2, options) { buffer in
                stream.render(buffer)
            }
            guard voice != .none else { return .failure(.engine("the engine could not start a voice")) }
            return .success((stream, voice))
        } catch {
            return .failure(.engine(error.description))
        }
    }

    /// New side volumes, heard from the next block.
    func setSides(_ sides: SideGains) { position.withLock { $0.sides = sides } }

    /// Stops starting over: the play ends at the end of this pass (a fade-out's halt, Mix_ExpireChannel).
    func endLoops() { position.withLock { $0.loopsLeft = 0 } }

    /// Fills `buffer` (stereo floats) from the chunk; fewer frames than asked when the play ends.
    private func render(_ buffer: UnsafeMutableBufferPointer<Float>) -> Int {
        let total = bytes.length / frameBytes
        return position.withLock { at in
            var written = 0
            let wanted = buffer.count / 2
            while written < wanted {
                if at.frame >= total {
                    guard at.loopsLeft != 0 else { break }
                    if at.loopsLeft > 0 { at.loopsLeft -= 1 }
                    at.frame = 0
                }
                let count = min(wanted - written, total - at.frame)
                let source = UnsafeRawBufferPointer(
                    start: bytes.abuf + at.frame * frameBytes, count: count * frameBytes)
                var filled = written * 2
                _ = at.converter.convert(source) { piece in
                    let floats = piece.assumingMemoryBound(to: Float.self)
                    let room = min(floats.count, buffer.count - filled)
                    if room > 0 {
                        UnsafeMutableRawPointer(buffer.baseAddress! + filled).copyMemory(
                            from: piece.baseAddress!, byteCount: room * 4)
                    }
                    filled += room
                }
                written += count
                at.frame += count
            }
            apply(at.sides, to: UnsafeMutableBufferPointer(rebasing: buffer[0..<written * 2]))
            return written
        }
    }

    /// Swaps and scales the sides of `frames` (stereo floats) in place.
    private func apply(_ sides: SideGains, to frames: UnsafeMutableBufferPointer<Float>) {
        guard sides != SideGains() else { return }
        var i = 0
        while i + 1 < frames.count {
            let left = frames[i], right = frames[i + 1]
            frames[i] = (sides.swap ? right : left) * sides.left
            frames[i + 1] = (sides.swap ? left : right) * sides.right
            i += 2
        }
    }
}

extension ChannelPlacement {
    /// The sides SDL_mixer's panning gives on a device of two channels or more: Mix_SetPanning's volumes, or
    /// Mix_SetPosition's angle (measured against Debian's SDL_mixer 2.6: from ahead, the far side falls to nothing
    /// at 90° and is back at 180°; past 180° the sides swap), times the distance, then Mix_SetReverseStereo's
    /// swap.
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
        return SideGains(
            left: Float(min(max(left, 0), 255)) / 255 * near, right: Float(min(max(right, 0), 255)) / 255 * near,
            swap: swap != reversed)
    }

    /// Whether a stereo play needs its sides set apart (a stream): a side below full, or swapped. Distance alone is
    /// a gain.
    var needsSides: Bool { left != 255 || right != 255 || angle != 0 || reversed }
}

extension ChannelTable {
    /// Starts channel `i`'s play of `made` with the slot's gain: `loops` -1 loops forever, N replays N times. On a
    /// device of two channels or more, a placement that sets the sides apart plays `bytes` as a panned stream.
    mutating func startVoice(_ i: Int, device: OpenDevice, made: MadeSound, bytes: ChunkBytes, loops: Int) -> Result<
        Voice, ChunkProblem
    > {
        let placement = slots[i].placement
        if device.spec.channels >= 2 && placement.needsSides {
            let started = PannedStream.start(
                bytes, spec: device.spec, engine: device.engine, frame: 0, loops: loops, sides: placement.sides,
                options: PlayOptions(gain: slots[i].gain(streaming: true)))
            if case .success(let (stream, voice)) = started {
                slots[i].stream = stream
                slots[i].sound = nil
                slots[i].loopsLeft = 0
                return .success(voice)
            }
        }
        let voice = device.engine.play(
            made.sound,
            PlayOptions(gain: slots[i].gain(streaming: false), loop: loops < 0, placement: placement.placement))
        guard voice != .none else { return .failure(.engine("the engine could not start a voice")) }
        slots[i].stream = nil
        slots[i].sound = made.sound
        slots[i].loopsLeft = loops < 0 ? -1 : loops
        return .success(voice)
    }

    /// Moves channel `i`'s play to its placement as it is now. On a device of two channels or more, a play whose
    /// sides must be set apart moves to a panned stream, from where its voice is.
    mutating func applyPlacement(_ i: Int, device: OpenDevice, chunks: inout ChunkRegistry) {
        defer { applyGain(i) }
        guard let voice = slots[i].voice, voice.isAlive else { return }
        let placement = slots[i].placement
        guard device.spec.channels >= 2 else {
            voice.setPlacement(placement.placement)
            return
        }
        if let stream = slots[i].stream {
            stream.setSides(placement.sides)
            return
        }
        guard placement.needsSides, let pointer = slots[i].chunk, case .success(let record) = chunks.record(pointer),
            case .success(let bytes) = record.bytes(device.spec)
        else { return }
        let frames = bytes.length / (device.spec.format.width * device.spec.channels)
        let frame = min(max(Int((voice.elapsed ?? 0) * Double(device.spec.frequency)), 0), frames)
        let started = PannedStream.start(
            bytes, spec: device.spec, engine: device.engine, frame: frame, loops: slots[i].loopsLeft,
            sides: placement.sides, options: PlayOptions(gain: slots[i].gain(streaming: true)))
        guard case .success(let (stream, replacement)) = started else { return }
        voice.stop()
        if slots[i].paused { replacement.pause() }
        slots[i].voice = replacement
        slots[i].stream = stream
        slots[i].sound = nil
        slots[i].loopsLeft = 0
    }
}
