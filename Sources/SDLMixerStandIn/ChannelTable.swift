import Ambience
import CSDLMixerABI
import Glibc

/// Where a channel's sound is placed: Mix_SetPanning, Mix_SetPosition/Mix_SetDistance and Mix_SetReverseStereo, as
/// SDL_mixer keeps them per channel until the channel's play ends.
struct ChannelPlacement: Equatable {
    var left: UInt8 = 255
    var right: UInt8 = 255
    /// Degrees clockwise from straight ahead, 0..<360 (Mix_SetPosition).
    var angle = 0
    /// 0 (at the listener) to 255 (far) (Mix_SetPosition, Mix_SetDistance).
    var distance: UInt8 = 0
    var reversed = false

    /// The engine's placement: a point on the unit circle around the listener (pan), or one behind it (world),
    /// mirrored left to right when reversed. The distance is a gain (`gain`), not a place: SDL_mixer's distance is
    /// a loudness from 0 (loudest) to 255 (quietest, not silent), which a world distance would not reproduce.
    var placement: Placement {
        let mirror: Float = reversed ? -1 : 1
        if angle != 0 {
            let radians = Double(angle) * Double.pi / 180
            return .world(x: mirror * Float(sin(radians)), y: 0, z: Float(-cos(radians)))
        }
        guard left != right else { return .pan(0) }
        let l = Float(left), r = Float(right)
        return .pan(mirror * (r - l) / (r + l))
    }

    /// The loudness the placement adds: the louder side of the panning (out of 255) times the distance's.
    var gain: Float { Float(max(left, right)) / 255 * (256 - Float(distance)) / 256 }
}

/// How a channel is fading, and until when (monotonic nanoseconds).
enum ChannelFade: Equatable {
    case none
    case fadingIn(until: Int)
    case fadingOut

    var status: Mix_Fading {
        switch self {
        case .none: MIX_NO_FADING
        case .fadingIn: MIX_FADING_IN
        case .fadingOut: MIX_FADING_OUT
        }
    }
}

/// One SDL_mixer channel: at most one engine voice at a time.
struct ChannelSlot {
    /// The current play's voice; nil when no play is on the channel (a voice that ended by itself stays until the
    /// update thread, or the next play here, reports the end).
    var voice: Voice?
    /// The sound the play uses, for the replays a finite loop count asks for.
    var sound: Sound?
    /// The play's stream, when it plays through a stream voice (effects, finite loops: ChannelStreams.swift).
    var stream: ChannelStream?
    /// The chunk's samples when the play started (the copy its sound was made from), and whether the sound swapped
    /// left and right: a play that moves to a stream goes on from these.
    var samples: [UInt8] = []
    var reversedSamples = false
    /// The play loops until stopped (loops -1).
    var forever = false
    /// The channel's effects (Mix_RegisterEffect), made on first use (`ChannelTable.chain`) so that slots copied
    /// from one another never share one; a new chain after a play ends. Its lock is never taken under the
    /// stand-in's (Effects.swift).
    var effects: EffectChain?
    /// How many effects the chain holds, as counted under the stand-in's lock: a play starts as a stream when any.
    var effectCount = 0
    /// The chunk last played here (Mix_GetChunk), and its address.
    var chunk: ChunkPointer?
    var volume = Int(STANDIN_MIX_MAX_VOLUME)
    /// The chunk's volume when the play started, or as Mix_VolumeChunk set it since.
    var chunkVolume = Int(STANDIN_MIX_MAX_VOLUME)
    var tag: Int32 = -1
    var paused = false
    /// When the play started (monotonic nanoseconds): Mix_GroupOldest and Mix_GroupNewer.
    var startedAt = 0
    /// When the play is to be halted (Mix_PlayChannelTimed, Mix_ExpireChannel).
    var expiresAt: Int?
    /// Replays still to come (Mix_PlayChannel's loops > 0).
    var loopsLeft = 0
    var fade = ChannelFade.none
    var placement = ChannelPlacement()

    /// The voice's gain: channel volume × chunk volume × placement.
    var gain: Float { Float(volume) * Float(chunkVolume) / Float(128 * 128) * placement.gain }
}

/// SDL_mixer's channel table: `Mix_AllocateChannels` channels, the first `reserved` of them out of reach of
/// channel -1 (Mix_ReserveChannels).
struct ChannelTable {
    var slots: [ChannelSlot] = []
    var reserved = 0
    /// Effect chains of plays that ended, for their done callbacks (`deliverFinished`, with no lock held).
    var closedChains: [(channel: Int32, chain: EffectChain)] = []

    /// The most channels `Mix_AllocateChannels` gives: past this it fails, as SDL_mixer does when memory runs out.
    static let maximumCount = 65_536

    var count: Int { slots.count }

    /// The index of `channel` when it names an allocated channel.
    func index(_ channel: Int32) -> Int? { channel >= 0 && Int(channel) < slots.count ? Int(channel) : nil }

    /// The channels a call names: all of them for -1, the one for a valid number, none otherwise.
    func indices(_ channel: Int32) -> [Int] {
        if channel == -1 { return Array(slots.indices) }
        return index(channel).map { [$0] } ?? []
    }

    /// Whether a play is on the channel: its voice lives (playing or paused), or it has replays to come.
    func isPlaying(_ i: Int) -> Bool {
        guard let voice = slots[i].voice else { return false }
        return voice.isAlive || slots[i].loopsLeft > 0
    }

    /// The first channel past the reserved ones with no play on it.
    func firstFree() -> Int? { slots.indices.first { $0 >= reserved && !isPlaying($0) } }

    /// Ends the play on channel `i` (stopping its voice if it still sounds) and returns whether there was one, for
    /// the finished callback. Its placement ends with it, as SDL_mixer's effects do.
    mutating func end(_ i: Int) -> Bool {
        guard let voice = slots[i].voice else { return false }
        if let stream = slots[i].stream {
            // Not `stop()`, which waits for a callback under way: an effect may be calling the library, which waits
            // for the lock held here. Silenced now, released within a tick; the halt keeps effects from running.
            stream.halt()
            voice.setGain(0)
            voice.stop(fade: 0.001)
        } else {
            voice.stop()
        }
        // SDL_mixer drops a channel's effects when its play ends (done callbacks: `deliverFinished`).
        if slots[i].stream != nil || slots[i].effectCount > 0 { closeEffects(i) }
        slots[i].voice = nil
        slots[i].sound = nil
        slots[i].stream = nil
        slots[i].samples = []
        slots[i].forever = false
        slots[i].paused = false
        slots[i].expiresAt = nil
        slots[i].loopsLeft = 0
        slots[i].fade = .none
        slots[i].placement = ChannelPlacement()
        return true
    }

    /// Gives channel `i` a new, empty chain and keeps the old one for its done callbacks.
    mutating func closeEffects(_ i: Int) {
        if let chain = slots[i].effects { closedChains.append((Int32(i), chain)) }
        slots[i].effects = nil
        slots[i].effectCount = 0
    }

    /// Channel `i`'s effect chain, made if it has none.
    mutating func chain(_ i: Int) -> EffectChain {
        if let chain = slots[i].effects { return chain }
        let chain = EffectChain()
        slots[i].effects = chain
        return chain
    }

    /// Sets the voice's gain to what the channel's volumes and placement make it.
    func applyGain(_ i: Int) {
        slots[i].voice?.setGain(slots[i].gain)
    }
}
