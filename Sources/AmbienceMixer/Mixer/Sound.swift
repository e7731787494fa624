import AmbienceCore
import AmbiencePlatform
import Synchronization

/// A decoded sound asset held in the mixer's memory: the record, not the playhead.
///
/// Play it any number of times at once with `AudioEngine.play(_:_:)`; each playing copy is a `Voice`.
/// A `Sound` stays valid until it is unloaded; playing an unloaded sound returns a stale voice. The cache evicts only
/// sounds nobody holds, so one the game keeps always plays. A sound nobody holds any more gives its memory back.
public final class Sound: @unchecked Sendable {
    /// The path it was loaded from, or the name it was given.
    public let name: String
    /// Frames per second, as decoded.
    public let sampleRate: Int
    /// 1 or 2: wider files are mixed down to stereo when loaded. What the sound plays as, whatever it is stored as.
    public let channels: Int
    /// The channels the mixer holds and mixes: `channels`, or 1 for a stereo sound whose two sides are equal sample
    /// for sample, which the mixer stores and mixes as mono (half the memory and mixing) and which sounds exactly as
    /// the stereo one would (`Mixer.makeSound(_:name:)` says where).
    public let storedChannels: Int
    /// Frames in the sound.
    public let frames: Int
    /// Bytes of mixer memory the sound holds.
    public let memoryCost: Int

    /// Seconds: `frames` at `sampleRate`.
    public var duration: Double { Double(frames) / Double(sampleRate) }

    /// The loudness every play of the sound is given unless its `PlayOptions.loudness` says otherwise: how loud the
    /// sound is in the world, in the game's decibels (docs/HDR.md). 0 by default; heard only on a bus with an HDR
    /// window (`Bus.hdr`). A change applies to later plays. Clamped to `MixerLimits.loudness`; a NaN or infinite
    /// value is ignored (`setLoudness(_:)` says so instead).
    public var loudness: Float {
        get { Float(bitPattern: loudnessBits.load(ordering: .relaxed)) }
        set { try? setLoudness(newValue) }
    }

    /// Sets `loudness`, clamped to `MixerLimits.loudness`; NaN and infinities are refused and the sound keeps its
    /// loudness.
    public func setLoudness(_ decibels: Float) throws(InvalidNumber) {
        let checked = try decibels.clamped(to: MixerLimits.loudness, "loudness")
        loudnessBits.store(checked.bitPattern, ordering: .relaxed)
    }

    let buffer: ALBuffer
    /// Where the buffer goes when the sound is freed while still loaded: the mixer deletes it at its next tick.
    private let retired: RetiredBuffers
    /// Whether this sound's buffer lives in the mixer whose retired list is `list`: a mixer plays only its own.
    func belongs(to list: RetiredBuffers) -> Bool { retired === list }
    /// Atomic because the last reference may drop on any thread, and `deinit` reads it there.
    private let loaded = Atomic<Bool>(true)
    /// `loudness`'s bits: the game may set it on any thread while a play reads it.
    private let loudnessBits = Atomic<UInt32>(Float(0).bitPattern)
    var isLoaded: Bool { loaded.load(ordering: .acquiring) }
    // Guarded by the owning mixer's lock.
    var playingVoices = 0
    var lastUsed: UInt64 = 0

    /// Whether the mixer stores and mixes the sound as mono though it plays as stereo.
    var isFoldedStereo: Bool { storedChannels < channels }

    /// `storedChannels` is `channels` unless the buffer holds a stereo sound's equal sides as one.
    init(
        name: String, buffer: ALBuffer, retired: RetiredBuffers, sampleRate: Int, channels: Int, frames: Int,
        storedChannels: Int? = nil
    ) {
        self.name = name
        self.buffer = buffer
        self.retired = retired
        self.sampleRate = sampleRate
        self.channels = channels
        self.storedChannels = storedChannels ?? channels
        self.frames = frames
        memoryCost = frames * self.storedChannels * MemoryLayout<Float>.size
    }

    deinit {
        if isLoaded { retired.retire(buffer) }
    }

    /// Marks the sound unloaded (its buffer deleted by the mixer); later plays return stale voices.
    func markUnloaded() { loaded.store(false, ordering: .releasing) }
}

/// Buffers of sounds freed while still loaded. A `Sound` may be freed on any thread, even inside the mixer's lock
/// (a voice's release drops its reference), so it cannot delete its buffer itself: it leaves it here, under a lock of
/// its own, and the mixer deletes what is here under its lock, at the next tick or `makeSound`.
final class RetiredBuffers: Sendable {
    private let buffers = Lock<[ALBuffer]>([])
    private let pending = Atomic<Int>(0)

    func retire(_ buffer: ALBuffer) {
        buffers.withLock { $0.append(buffer) }
        pending.add(1, ordering: .releasing)
    }

    /// Everything retired so far; without retired buffers it returns at once, taking no lock and allocating nothing.
    func take() -> [ALBuffer] {
        guard pending.load(ordering: .acquiring) > 0 else { return [] }
        return buffers.withLock { list in
            pending.store(0, ordering: .relaxed)
            defer { list.removeAll() }
            return list
        }
    }
}

extension PCMBuffer {
    /// The left side alone, when the audio is stereo and its sides are equal sample for sample (bit for bit); else
    /// nil. A pass over the samples that stops at the first difference.
    func equalSidesAsMono() -> PCMBuffer? {
        guard channels == 2, samples.count >= 2 else { return nil }
        let frames = samples.count / 2
        let equal = samples.withUnsafeBufferPointer { all in
            (0..<frames).allSatisfy { all[$0 * 2].bitPattern == all[$0 * 2 + 1].bitPattern }
        }
        guard equal else { return nil }
        return PCMBuffer(sampleRate: sampleRate, channels: 1, samples: (0..<frames).map { samples[$0 * 2] })
    }

    /// The same audio with at most two channels: mono stays mono, wider layouts fold into left and right.
    func foldedToStereo() -> PCMBuffer {
        guard channels > 2 else { return self }
        var out = [Float](repeating: 0, count: frames * 2)
        let scale = 1 / Float(channels).squareRoot()
        for f in 0..<frames {
            for c in 0..<channels {
                let v = samples[f * channels + c] * scale
                // Even channels lean left, odd channels right; a centre channel (2 in 5.1) goes to both.
                if c == 2 { out[f * 2] += v; out[f * 2 + 1] += v } else { out[f * 2 + (c & 1)] += v }
            }
        }
        return PCMBuffer(sampleRate: sampleRate, channels: 2, samples: out)
    }
}
