import AmbienceCore
import AmbiencePlatform
import Synchronization

// MARK: Offline rendering

extension AudioEngine {
    /// Frames the mix has rendered since the engine started, on the device or offline: the bench's clock, read
    /// without reaching into the mixer.
    package var renderedFrames: Int { mixer.framesRendered.count }

    /// The counter behind `renderedFrames`, for a reader that keeps it past the engine's life (the SDL_mixer
    /// stand-in's lock-free Mix_Playing).
    package var renderedFrameCounter: RenderedFrames { mixer.framesRendered }

    /// How many mix blocks took each bucket of time (`RenderTimes`), for the bench.
    package func renderTimeCounts() -> [Int] { mixer.renderTimes.snapshot() }

    /// Renders the next `frames` frames of the mix (stereo, interleaved) and advances time by as much.
    public func render(frames requested: Int) throws(EngineError) -> PCMBuffer {
        guard isOffline else { throw .notOffline }
        // At most an hour per call (MixerLimits.renderSeconds): more frames than that is a refusal, not a trap.
        let most = Int(MixerLimits.renderSeconds.upperBound) * configuration.sampleRate
        let frames: Int
        do { frames = try max(requested, 0).checked(Int.self, in: 0...most, "render frames") } catch {
            throw .invalidNumber(error)
        }
        var samples = [Float](repeating: 0, count: frames * 2)
        samples.withUnsafeMutableBufferPointer { mix(into: $0) }
        return PCMBuffer(sampleRate: configuration.sampleRate, channels: 2, samples: samples)
    }

    /// Renders the next `buffer.count / 2` frames (stereo, interleaved) into `buffer`: `render(frames:)` without
    /// allocating, for loops that render block after block.
    public func render(into buffer: UnsafeMutableBufferPointer<Float>) throws(EngineError) {
        guard isOffline else { throw .notOffline }
        mix(into: buffer)
    }

    private func mix(into buffer: UnsafeMutableBufferPointer<Float>) {
        mixer.mixBlocks(into: buffer, blockFrames: configuration.blockFrames) { musicPlayer.pumpUnlessThreaded() }
    }

    /// Renders `seconds` of the mix (offline engines only), rounded to whole frames. Clamped to
    /// `MixerLimits.renderSeconds`; NaN and infinities are refused.
    public func render(seconds requested: Double) throws(EngineError) -> PCMBuffer {
        let seconds: Double
        do { seconds = try requested.clamped(to: MixerLimits.renderSeconds, "render seconds") } catch {
            throw .invalidNumber(error)
        }
        return try render(frames: (seconds * Double(configuration.sampleRate)).saturated(Int.self))
    }
}
