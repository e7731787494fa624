import AmbiencePlatform

/// A mixing bus: a gain stage that voices (and the music stream) play through.
///
/// Buses form a tree under `master`; a voice's effective gain is its own gain times every bus gain up the chain.
/// Handles are cheap to copy and safe to use from any thread.
///
/// A handle holds its engine's mixer the way a `Voice` does, weakly: it never keeps the engine alive, and one that
/// outlives its engine is harmless (`isStale`): every call does nothing, and it reads as an empty name, gain 0 and
/// not muted.
public struct Bus: Hashable, Sendable, CustomStringConvertible {
    package let owner: HandleOwner
    package let index: Int

    init(owner: HandleOwner, index: Int) {
        self.owner = owner
        self.index = index
    }

    private var mixer: Mixer? { owner.mixer }

    public static func == (a: Bus, b: Bus) -> Bool { a.index == b.index && a.owner === b.owner }
    public func hash(into hasher: inout Hasher) { hasher.combine(index) }
    public var description: String { isStale ? "Bus(stale)" : "Bus(\(name))" }

    /// Whether the engine this bus belongs to is gone: then every call does nothing.
    public var isStale: Bool { mixer == nil }

    /// The name the bus was made with ("master", "music", "sfx", "ui", "dialogue", or the game's own); empty once
    /// stale.
    public var name: String { mixer?.busName(index) ?? "" }
    /// The bus's own gain (linear), not counting its parents or ducking. Clamped to `MixerLimits.gain`; a NaN or
    /// infinite value is ignored (`setGain(_:)` says so instead).
    public var gain: Float {
        get { mixer?.busGain(index) ?? 0 }
        nonmutating set { try? mixer?.setBusGain(index, newValue, over: 0) }
    }

    /// Sets the bus's own gain at once, clamped to `MixerLimits.gain`; NaN and infinities are refused.
    public func setGain(_ gain: Float) throws(InvalidNumber) { try mixer?.setBusGain(index, gain, over: 0) }
    /// Whether the bus and everything under it is silent. Its gain is kept, and voices go on playing silently.
    public var isMuted: Bool {
        get { mixer?.busMuted(index) ?? false }
        nonmutating set { mixer?.setBusMuted(index, newValue) }
    }
    /// The gain that reaches the output: own gain × ducking × every parent's, 0 when any of them is muted.
    public var effectiveGain: Float { mixer?.busEffectiveGain(index) ?? 0 }

    /// The bus's HDR window (docs/HDR.md), nil when it has none (the default). Voices on the bus and under it (down
    /// to a bus with a window of its own) are heard by their loudness under the window: the loudest at full scale,
    /// the others (their level − the window's top) dB down, and those below its bottom culled (virtual, keeping
    /// their time). Setting it checks the numbers as `setHDR(_:)` does, and ignores settings it refuses.
    public var hdr: HDRSettings? {
        get { mixer?.busHDR(index) }
        nonmutating set { try? mixer?.setBusHDR(index, newValue) }
    }

    /// Puts an HDR window on the bus, or takes it off (nil). Its numbers are clamped to `MixerLimits`; NaN and
    /// infinities are refused and the bus keeps what it had. A window put on again keeps where its top stands.
    public func setHDR(_ settings: HDRSettings?) throws(InvalidNumber) { try mixer?.setBusHDR(index, settings) }

    /// Where the bus's HDR window's top stands now, in the loudness scale; nil without a window.
    public var hdrWindowTop: Float? { mixer?.busHDRTop(index) }

    /// How many playing voices the bus's HDR window culls now: under its bottom, so virtual (0 without a window).
    /// It looks at every live voice, so read it for a display or a measurement, not for every voice.
    public var hdrCulledVoices: Int { mixer?.busHDRCulled(index) ?? 0 }

    /// Ramps the bus gain to `gain` over `seconds`, both clamped to `MixerLimits`; NaN and infinities are refused
    /// and the bus keeps its gain.
    public func fade(to gain: Float, over seconds: Double) throws(InvalidNumber) {
        try mixer?.setBusGain(index, gain, over: seconds)
    }
}

/// "While `trigger` has audible voices, `target` goes down by `depth` decibels."
public struct DuckingRule: Sendable, Equatable {
    /// The bus whose audible voices cause the ducking.
    public var trigger: Bus
    /// The bus turned down.
    public var target: Bus
    /// How far to duck, in dB (positive: 9 means −9 dB).
    public var depth: Float
    /// Seconds to reach full depth once the trigger sounds.
    public var attack: Double
    /// Seconds to come back once the trigger is quiet.
    public var release: Double

    /// A rule, checked by `DuckingRule.validated()` when it is set; by default 9 dB down, in 80 ms, back in 0.5 s.
    public init(trigger: Bus, target: Bus, depth: Float = 9, attack: Double = 0.08, release: Double = 0.5) {
        self.trigger = trigger
        self.target = target
        self.depth = depth
        self.attack = attack
        self.release = release
    }
}
