import Glibc

/// A bus's HDR window, as the game sets it (`Bus.hdr`): how wide the audible range is and how fast it follows the
/// loudest voice under the bus. docs/HDR.md has the whole design.
///
/// Levels are in the game's loudness scale (`Sound.loudness`, `PlayOptions.loudness`): decibels with a reference
/// of the game's choosing (dB SPL works: footsteps 50, an explosion 120). The window's top follows the loudest
/// voice under the bus, never below `threshold`; a voice plays at (its level − the top) dB, and one below the
/// bottom (top − `width`) is culled: it goes virtual and keeps its time until the window falls again.
public struct HDRSettings: Sendable, Equatable {
    /// The audible range under the top, in dB (clamped to `MixerLimits.hdrWidth`): voices quieter than the top by
    /// more than this are culled. 0 keeps only the loudest.
    public var width: Float
    /// The lowest the top goes, in the loudness scale (clamped to `MixerLimits.loudness`). With the default (0, the
    /// default loudness), voices nobody gave a loudness and whose gain is at most 1 never move the window.
    public var threshold: Float
    /// Seconds the top takes to rise to a louder voice (clamped to `MixerLimits.seconds`; 0 is at once). The loud
    /// voice itself never plays above full scale meanwhile: the attack only sets how fast the others go down.
    public var attack: Double
    /// Seconds the top takes to fall back once the loudest voice is quieter or gone (clamped to
    /// `MixerLimits.seconds`).
    public var release: Double

    /// A window 40 dB wide (a living room's usable range) whose top rises in 20 ms and falls in 1 s, never below 0.
    public init(width: Float = 40, threshold: Float = 0, attack: Double = 0.02, release: Double = 1) {
        self.width = width
        self.threshold = threshold
        self.attack = attack
        self.release = release
    }

    /// The settings with every number checked: NaN and infinities refused, finite values clamped into
    /// `MixerLimits` (a width of 1e30 is 200 dB, an attack of -1 is at once).
    public func validated() throws(InvalidNumber) -> HDRSettings {
        HDRSettings(
            width: try width.clamped(to: MixerLimits.hdrWidth, "HDR width"),
            threshold: try threshold.clamped(to: MixerLimits.loudness, "HDR threshold"),
            attack: try attack.clamped(to: MixerLimits.seconds, "HDR attack"),
            release: try release.clamped(to: MixerLimits.seconds, "HDR release"))
    }
}

/// One bus's HDR window as a value, stepped per block: where its top stands, where it is heading and how fast.
/// Pure: no OpenAL, no clock but the seconds it is advanced by; no allocation.
///
/// The top follows the peak (the loudest voice), not a sum of the voices' powers: a crowd of footsteps then does
/// not push itself down as it grows (that would be a compressor), the loudest voice always plays at full scale,
/// and the peak is a max over the voices with no logarithm per voice. Its moves are linear in decibels, as the
/// ducking's are: a new target starts a ramp from where the top stands that reaches it `attack` seconds later
/// when it is higher, `release` seconds later when it is lower.
struct HDRWindow: Equatable {
    /// The levels a window works in, in dB. Anything else is clamped into it (a NaN level counts as no voice), so
    /// that the linear factors below stay normal `Float`s: 10^(±440/20) fits.
    static let levels: ClosedRange<Float> = -240...240

    /// The most a target may move (dB) and keep its ramp's end time (`follow(loudest:)`).
    static let retargetTolerance: Float = 1

    private(set) var settings: HDRSettings
    /// Where the top stands now, in dB.
    private(set) var top: Float
    /// Where the top is heading: the loudest level, or the threshold when that is higher.
    private(set) var target: Float
    private var rampFrom: Float
    private var rampElapsed = 0.0
    private var rampDuration = 0.0

    /// A window at rest on its threshold. The settings are taken as given but for NaN (a NaN width is 0, a NaN time
    /// is 0): the public API has refused those already.
    init(_ settings: HDRSettings) {
        var s = settings
        s.width = HDRWindow.clamp(s.width, to: MixerLimits.hdrWidth, nan: 0)
        s.threshold = HDRWindow.clamp(s.threshold, to: MixerLimits.loudness, nan: 0)
        s.attack = s.attack.isNaN ? 0 : min(max(s.attack, 0), MixerLimits.seconds.upperBound)
        s.release = s.release.isNaN ? 0 : min(max(s.release, 0), MixerLimits.seconds.upperBound)
        self.settings = s
        top = s.threshold
        target = s.threshold
        rampFrom = s.threshold
    }

    /// The lowest level still heard: quieter voices are culled.
    var bottom: Float { top - settings.width }

    /// Takes new settings and keeps the top where it stands (within the new threshold's reach: a higher threshold
    /// lifts the target, and the top follows at the attack's pace).
    mutating func change(to settings: HDRSettings) {
        let (top, target) = (self.top, self.target)
        self = HDRWindow(settings)
        self.top = top
        self.rampFrom = top
        self.target = top
        follow(loudest: target)
    }

    /// Aims the top at the loudest level now playing under the bus (dB; −∞ or NaN when nothing plays). The top
    /// never aims below the threshold; a changed target starts a new ramp from where the top stands, unless it moved
    /// by at most `retargetTolerance` the same way: then the ramp keeps its end time.
    mutating func follow(loudest level: Float) {
        let wanted = max(HDRWindow.clamp(level, to: HDRWindow.levels, nan: -.infinity), settings.threshold)
        guard wanted != target else { return }
        // A target that moved by at most `retargetTolerance` the same way keeps its ramp's end time, re-aimed from
        // where the top stands (no jump). Restarting would make a loudest level that wobbles a little at every
        // measure (a voice moving, a gain ramp) an exponential approach that takes several times the release.
        if top != target, rampElapsed < rampDuration, abs(wanted - target) <= HDRWindow.retargetTolerance,
            (wanted > top) == (target > top)
        {
            target = wanted
            rampFrom = top
            rampDuration -= rampElapsed
            rampElapsed = 0
            return
        }
        target = wanted
        rampFrom = top
        rampElapsed = 0
        rampDuration = wanted > top ? settings.attack : settings.release
        if rampDuration <= 0 { top = wanted }
    }

    /// Moves the top on by `seconds` (NaN and negative times move nothing); returns whether it moved.
    mutating func advance(_ seconds: Double) -> Bool {
        guard top != target else { return false }
        if seconds > 0 { rampElapsed += min(seconds, MixerLimits.seconds.upperBound) }
        if rampElapsed >= rampDuration {
            top = target
        } else {
            let moved = rampFrom + (target - rampFrom) * Float(rampElapsed / rampDuration)
            guard moved != top else { return false }
            top = moved
        }
        return true
    }

    /// What the window multiplies a voice's own gain by, for a voice of `loudness` dB whose gain × distance
    /// attenuation is `heard` (linear): (loudness − top) dB, but never so much that the voice plays above full
    /// scale (while the top is still rising to it, the loud voice itself plays at 0 dB).
    func gain(loudness: Float, heard: Float) -> Float {
        gain(loudnessGain: HDRWindow.linear(HDRWindow.clamp(loudness, to: MixerLimits.loudness, nan: 0)), heard: heard)
    }

    /// `gain(loudness:heard:)` of a loudness given as 10^(loudness/20), as voices keep it.
    func gain(loudnessGain: Float, heard: Float) -> Float {
        let gain = loudnessGain * topScale
        return heard > 0 ? min(gain, 1 / heard) : gain
    }

    /// Whether a voice at `level` dB (its loudness with its gain and distance applied) is below the bottom.
    func culls(level: Float) -> Bool { level < bottom }

    /// 10^(−top/20): a voice's linear loudness times this is its gain under the window.
    var topScale: Float { HDRWindow.linear(-top) }
    /// 10^(bottom/20): a voice whose linear level is below this is culled.
    var bottomLevel: Float { HDRWindow.linear(bottom) }

    /// 10^(dB/20), with dB clamped to `levels` twice over (so a bottom 200 dB under the lowest top still fits).
    static func linear(_ decibels: Float) -> Float {
        // 0 dB, every start of a sound without a loudness, is 1 exactly without a `pow`.
        decibels == 0 ? 1 : Float(pow(10, Double(min(max(decibels, -480), 480)) / 20))
    }

    /// 20·log10 of a linear level; 0 and below (no voice) are −∞.
    static func decibels(_ linear: Float) -> Float {
        linear > 0 ? Float(20 * log10(Double(linear))) : -.infinity
    }

    static func clamp(_ value: Float, to range: ClosedRange<Float>, nan: Float) -> Float {
        value.isNaN ? nan : min(max(value, range.lowerBound), range.upperBound)
    }
}
