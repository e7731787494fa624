import Ambience

/// What a stress run measured.
public struct StressReport: Sendable {
    public var voices = 0
    /// Voices mixed by real sources at the end of the run.
    public var realVoices = 0
    /// Voices kept in time virtually at the end of the run.
    public var virtualVoices = 0
    /// Seconds of audio rendered (offline) or of wall time run (real time).
    public var seconds = 0.0
    /// Process CPU time over the render loop.
    public var cpuSeconds = 0.0
    /// CPU seconds per second of audio: 1 is one core at full load.
    public var rtf = 0.0
    /// Median cost of one `AudioEngine.play` call, in nanoseconds.
    public var playCallNs = 0.0
    public var peakRSSBytes = 0
    public var underruns = 0
    // Beyond the contract's keys:
    public var playCalls = 0
    /// One-shot voices started again after they finished.
    public var retriggers = 0
    /// Voices lost to stealing (none while the pool holds the whole crowd).
    public var stolen = 0
    /// Voices moved between real and virtual by the mixer's ranking (`MixerStats.madeReal` + `madeVirtual`): how
    /// much the real set moves.
    public var sourceMoves = 0
    /// RMS of the rendered mix over both channels (offline only).
    public var outputRMS: Double? = nil
    /// The music file streamed, if any.
    public var music: String? = nil
    /// "offline", or the SDL driver that played the audio.
    public var driver = "offline"
    /// Real time only: the output's backend (`sdl`, `libpulse`).
    public var backend: String? = nil
    /// Real time only: the underflows the server reported on the libpulse stream (nil on SDL, which does not tell).
    public var streamUnderflows: Int? = nil
    /// What the output's audio thread had at the end of a real-time run ("realtime 4 via rtkit", "none: …").
    public var audioThreadPriority: String? = nil
    public var wallSeconds = 0.0
    /// Seconds of audio the mixer rendered.
    public var renderedSeconds = 0.0
    public var renderedBlocks = 0
    public var averageRenderMicroseconds = 0.0
    public var maxRenderMicroseconds = 0.0
    /// Real time only: the audio callback's mixing time, p50 and p99 (from the mixer's histogram: each the upper
    /// edge of its bucket), and the period it had, in microseconds.
    public var callbackP50Microseconds: Double? = nil
    public var callbackP99Microseconds: Double? = nil
    public var periodMicroseconds: Double? = nil
    /// Real time only: seconds from the loop's start to the output's first block, and seconds of wall time after it
    /// that the output did not render (the server played silence instead: underflows the callback never saw).
    public var startupSeconds: Double? = nil
    public var missingSeconds: Double? = nil
    /// Whether the run stopped early because `isCancelled` said so.
    public var cancelled = false
    /// What `--chaos` did, when it ran.
    public var chaos: ChaosCounts? = nil
    /// What `--soak` measured, when it ran.
    public var soak: SoakReport? = nil
    /// What the HDR window did, when the run had one (`--hdr`).
    public var hdr: HDRCounts? = nil

    public init() {}
}

/// What the chaos of a real-time run did to the engine.
public struct ChaosCounts: Sendable {
    public var seeks = 0
    public var skips = 0
    public var voicesStarted = 0
    public var voicesStopped = 0
    public var voicesFaded = 0
}

/// A soak run: an hour of game audio rendered offline, watched for leaks.
public struct SoakReport: Sendable {
    public var oneShots = 0
    public var musicSkips = 0
    public var interruptions = 0
    public var backgroundings = 0
    public var routeChanges = 0
    /// Seconds of audio after which the baseline below was taken.
    public var warmupSeconds = 0.0
    /// OpenAL sources and buffers alive in the process (made and not deleted): at the baseline, at the end, and the
    /// most at any block after the baseline.
    public var alSourcesAfterWarmup = 0
    public var alSourcesAtEnd = 0
    public var alSourcesMax = 0
    public var alBuffersAfterWarmup = 0
    public var alBuffersAtEnd = 0
    public var alBuffersMax = 0
    /// Voices alive (real + virtual) at the end.
    public var voicesAtEnd = 0
    /// Resident memory (`/proc/self/statm`, after `malloc_trim` so that memory glibc keeps free for later does
    /// not count), at the baseline and at the end.
    public var rssAfterWarmupBytes = 0
    public var rssAtEndBytes = 0
    public var rssGrowthBytes: Int { rssAtEndBytes - rssAfterWarmupBytes }
    /// Wall time of each `AudioEngine.render` block (mixing, music streaming and the mixer tick), in microseconds.
    public var averageBlockMicroseconds = 0.0
    public var maxBlockMicroseconds = 0.0
    /// Events the game saw, by kind: route changes, interruptions, playback errors.
    public var routeChangeEvents = 0
    public var interruptionEvents = 0
    public var playbackErrors = 0
}
