import AmbienceCore
import AmbiencePlatform

// A mixer without an engine, for a game that only mixes (Tests/ConsumerPackages/MixerOnly): no device, no session,
// no music, no decoder. An offline engine renders through the same `mixBlocks`, with its music player around it.
extension Mixer {
    /// The block an engineless mixer renders in: the engine's default `blockFrames`.
    static let offlineBlockFrames = 512

    /// A mixer of its own, rendered offline by `render(frames:)`. `realVoices` (clamped to 1...4096) are mixed for
    /// real; more voices keep time virtually. Throws `MixerSetupError.formatUnsupported` for a rate outside
    /// `MixerLimits.sampleRates`, and the other cases when OpenAL Soft cannot make the mixer.
    public convenience init(sampleRate: Int, realVoices: Int = 256) throws(MixerSetupError) {
        guard MixerLimits.sampleRates.contains(sampleRate) else { throw .formatUnsupported(sampleRate: sampleRate) }
        try self.init(MixerConfiguration(sampleRate: sampleRate, realVoices: realVoices))
        // exit() on any thread while another renders: the mixer is closed before OpenAL Soft's destructor runs, as
        // an engine's is (an engine's own mixer is closed by the engine).
        let token = ProcessExit.add(
            ProcessExit.Participant(
                shutDown: { [weak self] in self?.close() }, waitOutCallers: { [weak self] in self?.waitOutCallers() }))
        standaloneExit.withLock { $0 = token }
    }

    /// The rate the mix renders at, in Hz.
    public var sampleRate: Int { configuration.sampleRate }

    /// Renders the next `frames` frames of the mix (stereo, interleaved, at `sampleRate`) and advances the mixer's
    /// time by as much: fades, ducking and virtual voices move on and played-out voices end. A negative count
    /// renders nothing; more than `MixerLimits.renderSeconds` allows renders that much.
    public func render(frames requested: Int) -> PCMBuffer {
        let most = Int(MixerLimits.renderSeconds.upperBound) * configuration.sampleRate
        var samples = [Float](repeating: 0, count: min(max(requested, 0), most) * 2)
        samples.withUnsafeMutableBufferPointer { mixBlocks(into: $0, blockFrames: Mixer.offlineBlockFrames) {} }
        return PCMBuffer(sampleRate: configuration.sampleRate, channels: 2, samples: samples)
    }

    /// Renders `buffer` (stereo, interleaved) block by block: before each block `beforeEachBlock` (the engine's
    /// music pump), then the stream voices' feed (here, so that an offline render is the same every time), the tick
    /// and the mix.
    package func mixBlocks(
        into buffer: UnsafeMutableBufferPointer<Float>, blockFrames: Int, beforeEachBlock: () -> Void
    ) {
        guard let base = buffer.baseAddress else { return }
        let frames = buffer.count / 2
        var done = 0
        while done < frames {
            let block = min(max(blockFrames, 1), frames - done)
            beforeEachBlock()
            feedStreamVoices()
            tick(frames: block)
            render(into: base + done * 2, frames: block)
            done += block
        }
    }
}
