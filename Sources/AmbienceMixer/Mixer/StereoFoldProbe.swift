import AmbienceCore
import Synchronization

/// What OpenAL Soft does to a stereo buffer whose sides are equal, against the same samples as mono, found by
/// rendering on a loopback device of its own (the mixer's equal-sided fold, Sound.swift).
enum StereoFoldProbe {
    /// The gain that makes a mono source at the listener's own point sound as a stereo source of equal sides.
    /// OpenAL Soft 1.19 plays a stereo source's sides as two speakers at ±30° (`AL_STEREO_ANGLES`) wherever it stands,
    /// and a mono source at the listener's point straight ahead: one gain apart without HRTF. nil when the device
    /// cannot be made, or when the two sides would want different gains.
    static func gainAtListener(sampleRate: Int) -> Float? {
        // One loopback device per rate and process, not per mixer: the answer is OpenAL Soft's and the rate's alone.
        measured.withLock { known in
            if let gain = known[sampleRate] { return gain }
            let gain = measure(sampleRate: sampleRate)
            known[sampleRate] = .some(gain)
            return gain
        }
    }

    private static let measured = Mutex<[Int: Float?]>([:])

    private static func measure(sampleRate: Int) -> Float? {
        guard let device = try? LoopbackDevice(sampleRate: sampleRate, sources: 2) else { return nil }
        defer { device.close() }
        return device.withCurrentContext { () -> Float? in
            // A constant level, looped: after the first block's gain ramp every frame is the level times the gains.
            let frames = 1024
            guard let source = ALSource.make(count: 1).first else { return nil }
            defer { source.delete() }
            source.setRelative(true)  // at (0, 0, 0): the listener's own point
            source.setLooping(true)
            var out = [Float](repeating: 0, count: frames * 2)
            func heard(channels: Int) -> (left: Float, right: Float)? {
                let buffer = [Float](repeating: 0.25, count: 64 * channels).withUnsafeBufferPointer {
                    ALBuffer.make(samples: $0, channels: channels, sampleRate: sampleRate)
                }
                guard let buffer else { return nil }
                defer {
                    source.stop()
                    source.setBuffer(nil)
                    buffer.delete()
                }
                source.setBuffer(buffer)
                source.play()
                out.withUnsafeMutableBytes { bytes in
                    if let base = bytes.baseAddress { device.render(into: base, frames: frames) }
                }
                return (out[frames * 2 - 2], out[frames * 2 - 1])
            }
            guard let asStereo = heard(channels: 2), let asMono = heard(channels: 1) else { return nil }
            let left = asStereo.left / asMono.left, right = asStereo.right / asMono.right
            guard left.isFinite, left > 0, abs(left - right) <= left * 1e-5 else { return nil }
            return (left + right) / 2
        }
    }
}
