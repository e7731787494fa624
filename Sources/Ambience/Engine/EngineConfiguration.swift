import AmbienceCore
import AmbiencePlatform

/// How to build an engine.
public struct EngineConfiguration: Sendable {
    /// Where the mix goes.
    public enum Output: Sendable, Equatable {
        /// Real-time output through SDL: the named device, or the system default (which follows the user's choice).
        case device(name: String? = nil)
        /// No device: audio is produced only by `AudioEngine.render`, as fast as the CPU allows.
        case offline
    }

    /// Real-time output on a device (the default), or offline rendering.
    public var output: Output = .device()
    /// Which code a device output uses (`automatic`: libpulse where a server answers, else SDL).
    public var outputBackend = OutputBackend.automatic
    /// What the engine asks for the output's audio thread: a raised nice level by default, real time only when asked
    /// (`AudioThreadPolicy`); `AMBIENCE_REALTIME` (`0`: unchanged, `1`: real time) overrides it.
    public var audioThreadPriority = AudioThreadPolicy.raised
    /// The mix's rate, 8–192 kHz. Below 11,025 Hz effects (reverb, occlusion) are off: OpenAL Soft's do not work there.
    public var sampleRate = 48_000
    /// Voices mixed for real (OpenAL sources), up to 4096.
    public var realVoices = 256
    /// Voices tracked in all; beyond the real ones they are virtual.
    public var maxVoices = 16_384
    /// Render through head-related transfer functions, for headphones (when OpenAL Soft has them).
    public var hrtf = false
    /// The resampler every voice's source uses (`Resampler`); `linear` by default, the cheapest that sounds clean.
    public var resampler = Resampler.linear
    /// OpenAL Soft's output limiter (ALC_SOFT_output_limiter): a mix louder than full scale is turned down smoothly
    /// instead of clipped further on. Off by default: it costs a little mixing time and delays all output by its
    /// 1 ms look-ahead, and a game whose mix stays below full scale gains nothing from it.
    public var outputLimiter = false
    /// How much louder (dB) a virtual voice must be than the weakest real one to take its source at a rank: the
    /// bench's knob for choosing the default (`ambience bench --rank-margin`); clamped to 0…40 dB.
    package var rankMargin = MixerConfiguration.defaultRankMargin
    /// Frames per mix block: the device callback size and the offline render step.
    public var blockFrames = 512
    /// Shown to the sound server and on the session bus.
    public var appName = "ambience"
    /// Talk to the desktop: other players over MPRIS (session rules, the system music player) and expose the
    /// application music player as an MPRIS player. On by default for device output, off for offline engines:
    /// a render-to-memory engine should not pause the user's music or announce itself on the bus.
    public var desktopIntegration: Bool
    /// The session bus for desktop integration (`DesktopBus.sessionAddress` by default). When it goes away the
    /// engine reports `mediaServicesWereLost(.sessionBus)` and reconnects when it is back.
    public var sessionBusAddress: String? = DesktopBus.sessionAddress
    /// The system bus: where logind announces sleep and wake and the screen lock (with desktop integration), and
    /// where rtkit raises the output's audio thread (`audioThreadPriority`, always). nil turns those off: the
    /// kernel alone is asked for the thread's priority.
    public var systemBusAddress: String? = SleepMonitor.systemBusAddress
    /// Bytes of decoded sounds the cache keeps before it evicts sounds nobody holds (held sounds may go past it).
    public var soundMemoryBudget = 256 << 20
    /// With desktop integration: on SIGTERM, SIGINT or SIGHUP the engine carries out the exit rule (resumes the
    /// players the session paused, pauses the system music the game started) in the next `update()`, or on its own
    /// thread if `update()` is not called within half a second, then ends the process as the signal would have.
    /// A signal whose handler the program installed itself is left to it. False: the engine installs nothing.
    public var handlesTerminationSignals = true
    /// How tracker modules and MIDI files are rendered (interpolation, stereo separation, the SoundFont). Their rate
    /// is always the engine's `sampleRate`.
    public var decoding = DecoderOptions()

    /// A configuration; `validated()` checks its numbers, and `AudioEngine.init(_:)` does so before anything opens.
    /// `desktopIntegration` nil means on for device output and off for offline.
    public init(
        output: Output = .device(), sampleRate: Int = 48_000, realVoices: Int = 256, maxVoices: Int = 16_384,
        hrtf: Bool = false, blockFrames: Int = 512, appName: String = "ambience", soundMemoryBudget: Int = 256 << 20,
        desktopIntegration: Bool? = nil
    ) {
        self.output = output
        self.desktopIntegration = desktopIntegration ?? (output != .offline)
        self.sampleRate = sampleRate
        self.realVoices = realVoices
        self.maxVoices = maxVoices
        self.hrtf = hrtf
        self.blockFrames = blockFrames
        self.appName = appName
        self.soundMemoryBudget = soundMemoryBudget
    }

    /// The limits every entry point checks a configuration against, Swift and C alike (`validated()`).
    public static let sampleRates = MixerLimits.sampleRates
    /// The values `realVoices` may take.
    public static let realVoiceCounts = 1...4096
    /// `maxVoices` must also be at least `realVoices`. The mixer's own limit: one number, kept in one place.
    public static let maxVoiceCounts = MixerConfiguration.maxVoiceCounts
    /// The values `blockFrames` may take.
    public static let blockFrameCounts = 16...16_384

    /// The configuration when every number is within its limits, else a refusal that names the first one that is
    /// not. `AudioEngine.init` and `ambience_engine_create` both call this, so Swift and C accept the same values.
    public func validated() throws(EngineError) -> EngineConfiguration {
        do {
            _ = try sampleRate.checked(Int.self, in: Self.sampleRates, "sampleRate")
            _ = try realVoices.checked(Int.self, in: Self.realVoiceCounts, "realVoices")
            _ = try maxVoices.checked(Int.self, in: max(realVoices, 1)...Self.maxVoiceCounts.upperBound, "maxVoices")
            _ = try blockFrames.checked(Int.self, in: Self.blockFrameCounts, "blockFrames")
            _ = try soundMemoryBudget.checked(Int.self, in: 0...Int.max, "soundMemoryBudget")
            _ = try decoding.moduleStereoSeparation.checked(
                Int.self, in: DecoderOptions.stereoSeparations, "decoding.moduleStereoSeparation")
        } catch {
            throw .invalidNumber(error)
        }
        return self
    }

    /// `decoding` at the engine's rate.
    var decodingOptions: DecoderOptions {
        var options = decoding
        options.sampleRate = sampleRate
        return options
    }

    /// Offline rendering at `sampleRate`, with no desktop integration.
    public static func offline(sampleRate: Int = 48_000, realVoices: Int = 256) -> EngineConfiguration {
        EngineConfiguration(output: .offline, sampleRate: sampleRate, realVoices: realVoices)
    }
}
