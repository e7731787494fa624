import Ambience
import AmbiencePlatform

/// The stress scene's HDR variant (`ambience stress --hdr`, the bench's `ambienceHDR`; docs/HDR.md): the crowd
/// plays on `sfx` under an HDR window, and every 2 s a loud event (the scene's crack, 24 dB louder than the crowd's
/// default loudness, at the listener) lifts the window for its half second and the release after it. The crowd
/// under the new bottom is culled: virtual, keeping its time, back when the window falls.
final class StressLoudEvents {
    /// The crowd's window: 40 dB wide, resting at 0 (the crowd's loudness), rising in 20 ms, falling in 1 s.
    static let window = HDRSettings(width: 40, threshold: 0, attack: 0.02, release: 1)
    /// How much louder than the crowd a loud event is, in dB.
    static let loudness: Float = 24
    /// Seconds between loud events; the first starts half a period in.
    static let period = 2.0
    /// Seconds of audio between two counts of the culled voices: the count visits every voice, so it is taken
    /// ten times a second, not every block, and its CPU time is taken off the run's (`countingCPUSeconds`): the run
    /// measures the mixer under a window, not the measuring.
    static let countEvery = 0.1

    let engine: AudioEngine
    let sound: Sound
    private var nextEvent = period / 2
    private var nextCount = 0.0
    private(set) var counts = HDRCounts()
    /// Process CPU seconds spent counting the culled voices.
    private(set) var countingCPUSeconds = 0.0
    private var culledSum = 0

    init(engine: AudioEngine, sound: Sound) throws(InvalidNumber) {
        self.engine = engine
        self.sound = sound
        try engine.sfx.setHDR(Self.window)
    }

    /// After each block: starts the loud events due by `time` (seconds of audio rendered) and counts the culled.
    func step(at time: Double) {
        while time >= nextEvent {
            nextEvent += Self.period
            let voice = engine.play(
                sound, PlayOptions(bus: engine.sfx, priority: 255, placement: .pan(0), loudness: Self.loudness))
            if voice != .none { counts.loudEvents += 1 }
        }
        guard time >= nextCount else { return }
        nextCount += Self.countEvery
        let start = ProcessUsage.cpuSeconds
        let culled = engine.sfx.hdrCulledVoices
        countingCPUSeconds += ProcessUsage.cpuSeconds - start
        culledSum += culled
        counts.samples += 1
        counts.culledMax = max(counts.culledMax, culled)
        counts.culledMean = Double(culledSum) / Double(counts.samples)
    }
}

/// What the HDR variant of a stress run saw.
public struct HDRCounts: Sendable, Equatable {
    /// Loud events started.
    public var loudEvents = 0
    /// Voices the window culled, on average over the counts (ten a second of audio).
    public var culledMean = 0.0
    /// The most voices the window culled at one count.
    public var culledMax = 0
    /// How many counts were taken.
    public var samples = 0
}
