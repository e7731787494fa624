/// A voice slot in the pool. `generation` changes whenever the slot is freed, which makes old handles stale.
///
/// What a rank reads of a live slot is copied into the pool's `rankKeys` (`RankKey`), so the pool's methods are the
/// only writers of a slot (`VoicePool.slots` is `private(set)`): each write of a field a score reads updates the key.
struct VoiceSlot {
    var placement: Placement = .pan(0)
    var gain: Float = 1
    var fadeGain: Float = 1
    /// 10^(loudness/20): the voice's loudness (docs/HDR.md) as a linear factor, so a rank needs no logarithm.
    var loudnessGain: Float = 1
    var bus = 0
    /// Index into the mixer's sources, or -1 while virtual.
    var source: Int32 = -1
    var priority: UInt8 = 128
    var paused = false
    /// Where the slot is in the pool's `active` list (and its key in `rankKeys`), or -1 when the slot is free.
    var activeIndex: Int32 = -1
    var generation: UInt32 = 1
    var sound: Sound? = nil
    var fade: Ramp? = nil
    var stopAfterFade = false
    var pitch: Float = 1
    var loop = false
    /// 0 (clear) to 1 (behind a wall): a low-pass on the dry sound.
    var occlusion: Float = 0
    /// While virtual: the playhead in the sound's frames at `anchor` on the pool's clock (exact while paused).
    var elapsedFrames: Double = 0
    var anchor = 0
    /// Sound frames per output frame: pitch times the rate ratio.
    var step: Double = 1
    var soundFrames: Double = 0
    /// Changes whenever the voice's ending moves, making scheduled endings stale.
    var timing: UInt32 = 0
    /// Index into the pool's `fading` list, or -1.
    var fadeIndex: Int32 = -1

    /// Output frames the voice needs to play its sound from `position` (in the sound's frames) to the end.
    func outputFramesToEnd(from position: Double) -> Double {
        max(soundFrames - position, 0) / step
    }
}

/// What a rank reads of a live voice, 36 bytes kept in the order of the pool's `active` list: a rank of 10,000
/// voices walks 360 KB in order instead of a cache line of each 160-byte slot (1.6 MB apart), which was what was left
/// of its cost once the distance attenuation was cached (docs/bench/profile.md).
struct RankKey {
    /// The voice's gain × its fade's gain: the product the scores always took first.
    var gain: Float = 1
    /// The listener's distance attenuation of `position` (1 for a pan), valid while `epoch` is the pool's
    /// `listenerEpoch`.
    var attenuation: Float = 1
    var loudnessGain: Float = 1
    /// Where a world voice stands (zero for a pan, which is not attenuated).
    var position = Vector3.zero
    var bus: Int32 = 0
    /// The pool's `listenerEpoch` when `attenuation` was computed; 0 (never an epoch) when it is to be computed.
    var epoch: UInt16 = 0
    var priority: UInt8 = 128
    var paused = false
    /// The voice has a source: its audibility counts the rank margin more.
    var real = false
    var world = false

    /// The key of `slot` with its attenuation to be computed (or `attenuation` given, as for a score made afresh).
    init(_ slot: UnsafePointer<VoiceSlot>, attenuation: Float = 1) {
        gain = slot.pointee.gain * slot.pointee.fadeGain
        self.attenuation = attenuation
        loudnessGain = slot.pointee.loudnessGain
        bus = Int32(clamping: slot.pointee.bus)
        priority = slot.pointee.priority
        paused = slot.pointee.paused
        real = slot.pointee.source >= 0
        place(slot.pointee.placement)
    }

    /// Takes a new placement; the attenuation is recomputed at the next rank (written is recomputed, not compared).
    mutating func place(_ placement: Placement) {
        switch placement {
        case .pan:
            world = false
            position = .zero
        case .world(let point, _):
            world = true
            position = point
        }
        epoch = 0
    }

    /// The listener's distance attenuation of the voice, computed now: 1 for a panned one.
    func distanceAttenuation(by listener: ListenerState) -> Float { world ? listener.attenuation(position) : 1 }
}

/// A virtual one-shot's scheduled end.
struct VoiceEnding {
    var clock: Int
    var slot: Int32
    var timing: UInt32
}
