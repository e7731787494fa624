/// A decoded sound asset held in the mixer's memory: the record, not the playhead.
///
/// Play it any number of times at once with `AudioEngine.play(_:_:)`; each playing copy is a `Voice`.
/// A `Sound` stays valid until it is unloaded; playing an unloaded sound returns a stale voice. The cache evicts only
/// sounds nobody holds, so one the game keeps always plays.
public final class Sound: @unchecked Sendable {
    /// The path it was loaded from, or the name it was given.
    public let name: String
    public let sampleRate: Int
    /// 1 or 2: wider files are mixed down to stereo when loaded.
    public let channels: Int
    public let frames: Int
    /// Bytes of mixer memory the sound holds.
    public let memoryCost: Int

    public var duration: Double { Double(frames) / Double(sampleRate) }

    // Mutable state is guarded by the owning mixer's lock.
    let buffer: ALBuffer
    var isLoaded = true
    var playingVoices = 0
    var lastUsed: UInt64 = 0

    init(name: String, buffer: ALBuffer, sampleRate: Int, channels: Int, frames: Int) {
        self.name = name
        self.buffer = buffer
        self.sampleRate = sampleRate
        self.channels = channels
        self.frames = frames
        memoryCost = frames * channels * MemoryLayout<Float>.size
    }
}

extension PCMBuffer {
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
