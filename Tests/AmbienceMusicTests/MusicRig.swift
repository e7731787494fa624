import AmbienceCore
import AmbienceMixer

@testable import AmbienceMusic

/// A music player on a mixer of its own, rendered as an offline engine renders it (the engine's 512-frame blocks, the
/// player pumped before each) and its events drained as the engine's `update()` drains them: the music layer's suites
/// without the engine's session, desktop or output.
final class MusicRig {
    static let blockFrames = 512
    let mixer: Mixer
    let player: MusicPlayer
    private var isShutDown = false

    init(sampleRate: Int = 48_000) throws {
        mixer = try Mixer(sampleRate: sampleRate)
        var decoding = DecoderOptions()
        decoding.sampleRate = sampleRate
        player = try MusicPlayer(mixer: mixer, bus: mixer.bus(.music), decoding: decoding)
    }

    deinit { shutdown() }

    /// The music bus, as the engine's `music`.
    var music: Bus { mixer.bus(.music) }

    /// The mixer's counters (underruns among them).
    var stats: MixerStats { mixer.stats }

    /// The next `frames` frames of the mix, stereo; a count the engine would refuse is refused.
    func render(frames: Int) throws -> PCMBuffer {
        let most = Int(MixerLimits.renderSeconds.upperBound) * mixer.sampleRate
        guard (0...most).contains(frames) else { throw MusicRigError.frameCount(frames) }
        var samples = [Float](repeating: 0, count: frames * 2)
        samples.withUnsafeMutableBufferPointer { buffer in
            mixer.mixBlocks(into: buffer, blockFrames: Self.blockFrames) { player.pumpUnlessThreaded() }
        }
        return PCMBuffer(sampleRate: mixer.sampleRate, channels: 2, samples: samples)
    }

    func render(seconds: Double) throws -> PCMBuffer {
        try render(frames: Int((seconds * Double(mixer.sampleRate)).rounded()))
    }

    /// The player's events since the last call.
    func events() -> [MusicEvent] { player.drainEvents() }

    /// The player closed, then the mixer: as the engine shuts down. Once.
    func shutdown() {
        guard !isShutDown else { return }
        isShutDown = true
        player.close()
        mixer.close()
    }
}

enum MusicRigError: Error {
    case frameCount(Int)
}
