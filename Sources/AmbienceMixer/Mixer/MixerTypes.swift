/// How the mixer is sized.
package struct MixerConfiguration: Sendable {
    /// Output rate of the mix, in Hz.
    package var sampleRate = 48_000
    /// OpenAL sources mixed for real (up to 4096). Voices beyond this are virtual.
    package var realVoices = 256
    /// Voices tracked in all, real and virtual. When full, the least important voice is stolen.
    package var maxVoices = 16_384
    /// Head-related transfer function for 3D voices (headphone listening).
    package var hrtf = false
    /// The resampler set on every voice's source.
    package var resampler = Resampler.linear
    /// OpenAL Soft's output limiter.
    package var outputLimiter = false
    /// How much louder, in dB, a virtual voice must be than the weakest real one to take its source at a rank.
    package var rankMargin = MixerConfiguration.defaultRankMargin
    /// The rank margin by default, in dB (docs/ARCHITECTURE.md, "The crowd").
    package static let defaultRankMargin: Float = 3

    /// The voice counts a mixer may be asked for; the engine's limits (`EngineConfiguration.maxVoiceCounts`) are
    /// these, and voice slots are `Int32`.
    package static let maxVoiceCounts = 1...(1 << 20)

    package init(
        sampleRate: Int = 48_000, realVoices: Int = 256, maxVoices: Int = 16_384, hrtf: Bool = false,
        resampler: Resampler = .linear, outputLimiter: Bool = false,
        rankMargin: Float = MixerConfiguration.defaultRankMargin
    ) {
        self.sampleRate = sampleRate
        self.realVoices = realVoices
        self.maxVoices = maxVoices
        self.hrtf = hrtf
        self.resampler = resampler
        self.outputLimiter = outputLimiter
        self.rankMargin = rankMargin
    }
}

/// Counters the game can show or log. Read with `AudioEngine.stats`.
public struct MixerStats: Sendable, Equatable {
    /// Voices playing on an OpenAL source now.
    public var realVoices = 0
    /// Voices playing now without a source: tracked and timed, inaudible until they rank high enough.
    public var virtualVoices = 0
    /// Voices started since the engine was made.
    public var started = 0
    /// Voices stolen by more important ones since the engine was made.
    public var stolen = 0
    /// Live voices taken off their source since the engine was made: by a more important voice, when paused in a
    /// crowd, or culled by an HDR window. With `madeReal`, how much the real set moves (each move sets an OpenAL
    /// source up again).
    public var madeVirtual = 0
    /// Voices given a source after they started, or in place of a real one, since the engine was made.
    public var madeReal = 0
    /// One-shot voices that played to their end since the engine was made.
    public var finished = 0
    /// Mix blocks rendered so far.
    public var renderedBlocks = 0
    /// Mean time to render a block, in microseconds.
    public var averageRenderMicroseconds = 0.0
    /// Longest time a block took to render, in microseconds.
    public var maxRenderMicroseconds = 0.0
    /// Blocks the audio thread took longer than real time to render (device output only).
    public var underruns = 0
    /// Events lost because a queue was full when they happened (a game that did not call `update()` for a long
    /// time), summed over every queue of the engine: voice endings, music and session notifications, sound-server
    /// and sleep observations. `update()` reports the first loss once, as `AudioEvent.eventsDropped`.
    public var droppedEvents = 0
}

/// What the mixer reports to the game, delivered by `AudioEngine.update()`.
package enum MixerEvent: Sendable, Equatable {
    /// A voice played to its end (one-shots only; a stopped voice is not reported).
    case voiceFinished(Voice)
    /// A voice lost its place to a more important one.
    case voiceStolen(Voice)
}

/// A `MixerEvent` as the mixer queues it under its lock: the voice's numbers without its owner, so that a voice's
/// end retains and releases nothing; `Mixer.drainEvents` makes the handle (a retain and a release of the owner per
/// end in a crowd, with the queue's copy of the event).
struct QueuedVoiceEvent {
    var slot: Int32
    var generation: UInt32
    var isStream: Bool
    /// `voiceStolen`, else `voiceFinished`.
    var stolen: Bool
}
