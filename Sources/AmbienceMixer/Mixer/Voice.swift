import AmbiencePlatform

/// Where a voice sounds: panned in 2D (head-relative) or placed in the 3D world.
public enum Placement: Sendable, Equatable {
    /// -1 is hard left, 0 centre, 1 hard right.
    case pan(Float)
    /// A point in world space, with a velocity for doppler.
    case world(position: Vector3, velocity: Vector3 = .zero)

    /// A point in world space given axis by axis: `.world(x: -3, y: 0, z: -1)`.
    public static func world(x: Float, y: Float, z: Float, velocity: Vector3 = .zero) -> Placement {
        .world(position: Vector3(x: x, y: y, z: z), velocity: velocity)
    }
}

/// How to start a voice.
public struct PlayOptions: Sendable {
    /// Linear gain before the bus's (1 is as recorded); clamped to `MixerLimits.gain`.
    public var gain: Float = 1
    /// Playback speed (1 is as recorded); clamped to `MixerLimits.pitch`.
    public var pitch: Float = 1
    /// Plays again from the start at its end, until stopped. A looping voice never finishes by itself.
    public var loop = false
    /// The bus it plays through; nil is the engine's `sfx` bus.
    public var bus: Bus? = nil
    /// Higher wins: 0 (background) to 255 (must be heard). Priority outranks loudness when voices compete.
    public var priority: UInt8 = 128
    /// Panned on screen, or placed in the world (distance, doppler, reverb zones).
    public var placement: Placement = .pan(0)
    /// Starts the voice silent and fades it in over this many seconds.
    public var fadeIn: Double = 0
    /// How loud this play is in the world, in the game's decibels (`MixerLimits.loudness`); nil takes the sound's
    /// `Sound.loudness`. Heard only on a bus with an HDR window (`Bus.hdr`): see docs/HDR.md.
    public var loudness: Float? = nil

    /// Options for `AudioEngine.play(_:_:)`, checked by `PlayOptions.validated()` when the voice starts.
    @inlinable  // made by the game at every start: a call across modules cost more than the rest of its making
    public init(
        gain: Float = 1, pitch: Float = 1, loop: Bool = false, bus: Bus? = nil, priority: UInt8 = 128,
        placement: Placement = .pan(0), fadeIn: Double = 0, loudness: Float? = nil
    ) {
        self.gain = gain
        self.pitch = pitch
        self.loop = loop
        self.bus = bus
        self.priority = priority
        self.placement = placement
        self.fadeIn = fadeIn
        self.loudness = loudness
    }
}

/// What happened to a call on a voice.
public enum VoiceResult: Sendable, Equatable {
    /// The call did what was asked.
    case ok
    /// The voice had already finished or was stolen: the call did nothing.
    case stale
    /// A number was NaN or infinite (`MixerLimits`): the call did nothing. Finite values out of range are clamped
    /// and give `.ok`.
    case invalid(InvalidNumber)
}

/// One playing copy of a `Sound`, or a stream fed by the game's callback (`AudioEngine.playStream`): a handle to a
/// playhead.
///
/// A handle outlives its voice harmlessly: once the voice has finished or been stolen, every call does nothing and
/// returns `.stale`. Numbers are checked against `MixerLimits` before the handle: NaN and infinities give `.invalid`,
/// finite values out of range are clamped. Handles are cheap to copy and safe to use from any thread.
public struct Voice: Hashable, Sendable, CustomStringConvertible {
    let owner: HandleOwner?
    package let slot: Int32
    package let generation: UInt32
    /// A stream voice (`AudioEngine.playStream`): `slot` is in the mixer's stream table, not the voice pool.
    package let isStream: Bool

    init(owner: HandleOwner?, slot: Int32, generation: UInt32, isStream: Bool = false) {
        self.owner = owner
        self.slot = slot
        self.generation = generation
        self.isStream = isStream
    }

    var mixer: Mixer? { owner?.mixer }

    /// A handle that never refers to a voice, e.g. when nothing could be played.
    public static let none = Voice(owner: nil, slot: -1, generation: 0)

    public static func == (a: Voice, b: Voice) -> Bool {
        a.slot == b.slot && a.generation == b.generation && a.isStream == b.isStream && a.owner === b.owner
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(slot)
        hasher.combine(generation)
        hasher.combine(isStream)
    }
    public var description: String { "\(isStream ? "StreamVoice" : "Voice")(\(slot)#\(generation))" }

    /// Whether the voice is still alive and not paused.
    public var isPlaying: Bool { mixer?.isPlaying(self) ?? false }
    /// Whether the handle still refers to a live voice (playing or paused).
    public var isAlive: Bool { mixer?.isAlive(self) ?? false }
    /// Whether the voice is currently mixed by a real source rather than tracked virtually.
    public var isReal: Bool { mixer?.isReal(self) ?? false }

    /// Stops the voice, at once or after fading out over `fade` seconds.
    @discardableResult public func stop(fade: Double = 0) -> VoiceResult { mixer?.stop(self, fade: fade) ?? .stale }
    /// Pauses the voice where it is; `resume()` goes on from there.
    @discardableResult public func pause() -> VoiceResult { mixer?.setPaused(self, true) ?? .stale }
    /// Resumes a paused voice.
    @discardableResult public func resume() -> VoiceResult { mixer?.setPaused(self, false) ?? .stale }
    /// Sets the voice's linear gain at once (clamped to `MixerLimits.gain`).
    @discardableResult public func setGain(_ gain: Float) -> VoiceResult { mixer?.setGain(self, gain) ?? .stale }
    /// Sets the voice's playback speed (clamped to `MixerLimits.pitch`).
    @discardableResult public func setPitch(_ pitch: Float) -> VoiceResult { mixer?.setPitch(self, pitch) ?? .stale }
    /// Moves the voice: a new pan, or a new world position and velocity.
    @discardableResult public func setPlacement(_ placement: Placement) -> VoiceResult {
        mixer?.setPlacement(self, placement) ?? .stale
    }
    /// Muffles the voice as if behind a wall: 0 is clear, 1 fully occluded (a low-pass filter; needs EFX).
    @discardableResult public func setOcclusion(_ amount: Float) -> VoiceResult {
        mixer?.setOcclusion(self, amount) ?? .stale
    }
    /// Ramps the voice's gain to `gain` over `seconds`.
    @discardableResult public func fade(to gain: Float, over seconds: Double) -> VoiceResult {
        mixer?.fade(self, to: gain, over: seconds, thenStop: false) ?? .stale
    }
    /// Seconds of the sound played so far (modulo its length when looping); for a stream voice, seconds of the stream
    /// heard so far.
    public var elapsed: Double? { mixer?.elapsed(self) }
}
