import AmbiencePlatform

/// What the mixer accepts from a caller, in one place for Swift and C alike.
///
/// NaN and infinities are refused: the call does nothing and says so (`VoiceResult.invalid`, `EngineError.invalidNumber`,
/// `AMBIENCE_ERROR_INVALID_ARGUMENT`). Finite values outside these ranges are clamped into them: a gain of 100 plays
/// at 64, a pitch of 0 at 0.01, a pan of 2 hard right.
public enum MixerLimits {
    /// Linear gain of a voice or bus (64 is +36 dB).
    public static let gain: ClosedRange<Float> = 0...64
    /// Playback speed of a voice (1 is as recorded; 2 an octave up).
    public static let pitch: ClosedRange<Float> = 0.01...16
    /// Stereo position of a screen-space voice: -1 left, 0 centre, 1 right.
    public static let pan: ClosedRange<Float> = -1...1
    /// How much of a world voice's sound an obstacle blocks: 0 none, 1 all of it (a low-pass filter and a gain).
    public static let occlusion: ClosedRange<Float> = 0...1
    /// Fades, fade-ins, ramps, ducking attack and release, in seconds (up to a day).
    public static let seconds: ClosedRange<Double> = 0...86_400
    /// World coordinates and velocities, per axis. Squares of these still fit a `Float`.
    public static let coordinate: ClosedRange<Float> = -1e9...1e9
    /// Listener distances (reference and maximum) and reverb-zone radii.
    public static let distance: ClosedRange<Float> = 0...1e9
    /// The listener's rolloff and doppler factors.
    public static let factor: ClosedRange<Float> = 0...100
    /// How far a ducking rule lowers its target, in dB.
    public static let duckDepth: ClosedRange<Float> = 0...96
    /// The music player's own volume.
    public static let volume: ClosedRange<Float> = 0...1
    /// The music player's crossfade, in seconds.
    public static let crossfade: ClosedRange<Double> = 0...60
    /// A sound's or a voice's loudness, and an HDR window's threshold, in the game's decibels (docs/HDR.md): wide
    /// enough for any reference (dB SPL runs from about 0 to 194).
    public static let loudness: ClosedRange<Float> = -200...200
    /// An HDR window's width, in dB.
    public static let hdrWidth: ClosedRange<Float> = 0...200
    /// The rates a mix renders at, in Hz (`EngineConfiguration.sampleRates`, `Mixer.init(sampleRate:realVoices:)`).
    public static let sampleRates = 8_000...192_000
    /// How much a caller may render in one call, in seconds (an hour).
    public static let renderSeconds: ClosedRange<Double> = 0...3600
}

extension Placement {
    /// The placement with every number checked against `MixerLimits`.
    public func validated() throws(InvalidNumber) -> Placement {
        switch self {
        case .pan(let p):
            return .pan(try p.clamped(to: MixerLimits.pan, "pan"))
        case .world(let position, let velocity):
            return .world(position: try position.validated("position"), velocity: try velocity.validated("velocity"))
        }
    }
}

extension Vector3 {
    /// The vector with every axis finite and clamped to `MixerLimits.coordinate`; `what` names it in a refusal.
    func validated(_ what: String) throws(InvalidNumber) -> Vector3 {
        Vector3(
            x: try x.clamped(to: MixerLimits.coordinate, "\(what).x"),
            y: try y.clamped(to: MixerLimits.coordinate, "\(what).y"),
            z: try z.clamped(to: MixerLimits.coordinate, "\(what).z"))
    }
}

extension PlayOptions {
    /// The options with every number checked against `MixerLimits`: what `play` uses. `play` returns `Voice.none`
    /// for options this refuses; call it yourself to learn why.
    public func validated() throws(InvalidNumber) -> PlayOptions {
        // Most starts ask for what the limits allow already: checked without rebuilding the options, the same
        // answer for a third of the cost of a virtual start's whole validation (docs/bench/profile.md).
        if isWithinLimits { return self }
        return try validatedInFull()
    }

    /// Whether `validatedInFull` would return these options bit for bit: every number finite and in its range.
    var isWithinLimits: Bool {
        let placed: Bool
        switch placement {
        case .pan(let p): placed = p.keeps(MixerLimits.pan)
        case .world(let position, let velocity):
            placed = position.keeps(MixerLimits.coordinate) && velocity.keeps(MixerLimits.coordinate)
        }
        return placed && gain.keeps(MixerLimits.gain) && pitch.keeps(MixerLimits.pitch)
            && fadeIn.keeps(MixerLimits.seconds) && (loudness.map { $0.keeps(MixerLimits.loudness) } ?? true)
    }

    /// Every number checked and clamped, one by one.
    func validatedInFull() throws(InvalidNumber) -> PlayOptions {
        var checked = self
        checked.gain = try gain.clamped(to: MixerLimits.gain, "gain")
        checked.pitch = try pitch.clamped(to: MixerLimits.pitch, "pitch")
        checked.fadeIn = try fadeIn.clamped(to: MixerLimits.seconds, "fadeIn")
        checked.loudness = try loudness.map { value throws(InvalidNumber) in
            try value.clamped(to: MixerLimits.loudness, "loudness")
        }
        checked.placement = try placement.validated()
        return checked
    }
}

extension BinaryFloatingPoint {
    /// Whether `clamped(to: range)` returns this value bit for bit: in the range, and not a -0 that a lower bound of
    /// +0 would make +0. NaN and infinities are not kept.
    func keeps(_ range: ClosedRange<Self>) -> Bool {
        (self > range.lowerBound || self == range.lowerBound && sign == range.lowerBound.sign)
            && self <= range.upperBound
    }
}

extension Vector3 {
    func keeps(_ range: ClosedRange<Float>) -> Bool { x.keeps(range) && y.keeps(range) && z.keeps(range) }
}

extension ListenerState {
    /// The listener with every number checked against `MixerLimits`. A zero `forward` or `up` has no direction and
    /// is refused.
    public func validated() throws(InvalidNumber) -> ListenerState {
        var checked = self
        checked.position = try position.validated("listener position")
        checked.velocity = try velocity.validated("listener velocity")
        checked.forward = try forward.validated("listener forward")
        checked.up = try up.validated("listener up")
        guard checked.forward != .zero else {
            throw InvalidNumber("listener forward", value: "(0, 0, 0)", expected: "a direction")
        }
        guard checked.up != .zero else {
            throw InvalidNumber("listener up", value: "(0, 0, 0)", expected: "a direction")
        }
        // A zero reference distance would silence every world voice: the smallest is a micrometre.
        checked.referenceDistance = try referenceDistance.clamped(
            to: 1e-6...MixerLimits.distance.upperBound, "referenceDistance")
        checked.maxDistance = try maxDistance.clamped(to: MixerLimits.distance, "maxDistance")
        checked.rolloff = try rolloff.clamped(to: MixerLimits.factor, "rolloff")
        checked.dopplerFactor = try dopplerFactor.clamped(to: MixerLimits.factor, "dopplerFactor")
        return checked
    }
}

extension DuckingRule {
    /// The rule with its depth, attack and release checked against `MixerLimits`.
    public func validated() throws(InvalidNumber) -> DuckingRule {
        var checked = self
        checked.depth = try depth.clamped(to: MixerLimits.duckDepth, "ducking depth")
        checked.attack = try attack.clamped(to: MixerLimits.seconds, "ducking attack")
        checked.release = try release.clamped(to: MixerLimits.seconds, "ducking release")
        return checked
    }
}

extension ReverbZone {
    /// The zone with its centre and radius checked against `MixerLimits`, and its reverb's numbers finite.
    public func validated() throws(InvalidNumber) -> ReverbZone {
        var checked = ReverbZone(
            center: try center.validated("zone center"),
            radius: try radius.clamped(to: MixerLimits.distance, "zone radius"), reverb: reverb)
        checked.reverb = try reverb.validated()
        return checked
    }
}

extension ReverbParameters {
    /// The parameters when all are finite. OpenAL clamps finite EFX values to their own ranges.
    public func validated() throws(InvalidNumber) -> ReverbParameters {
        for (name, value) in [
            ("density", density), ("diffusion", diffusion), ("gain", gain), ("gainHF", gainHF),
            ("decayTime", decayTime), ("decayHFRatio", decayHFRatio), ("reflectionsGain", reflectionsGain),
            ("reflectionsDelay", reflectionsDelay), ("lateReverbGain", lateReverbGain),
            ("lateReverbDelay", lateReverbDelay), ("airAbsorptionGainHF", airAbsorptionGainHF),
            ("roomRolloffFactor", roomRolloffFactor)
        ] {
            _ = try value.finite("reverb \(name)")
        }
        return self
    }
}
