import Ambience
import AmbiencePlatform
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
    /// Mix_SetReverseStereo's swap runs after the positional effect (it was switched on while that was registered).
    var reversesAfterSides = false

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

    /// The loudness the placement adds to a voice whose stream does not scale the sides: the louder side of the panning
    /// (out of 255) times the distance's (255 - distance out of 255, as SDL_mixer is heard to do).
    var gain: Float { Float(max(left, right)) / 255 * (255 - Float(distance)) / 255 }
}

/// How a channel is fading (monotonic nanoseconds). The stand-in fades by steps of the voice's gain on its update
/// thread (as SDL_mixer steps a channel's volume between blocks), so a paused channel's fade waits with it.
enum ChannelFade: Equatable {
    case none
    case fadingIn(startedAt: Int, length: Int)
    case fadingOut(startedAt: Int, length: Int, from: Float)

    var status: Mix_Fading {
        switch self {
        case .none: MIX_NO_FADING
        case .fadingIn: MIX_FADING_IN
        case .fadingOut: MIX_FADING_OUT
        }
    }

    /// The fade's share of the channel's volume at `now` (0...1).
    func level(at now: Int) -> Float {
        switch self {
        case .none: 1
        case .fadingIn(let start, let length): min(max(Float(now - start) / Float(length), 0), 1)
        case .fadingOut(let start, let length, let from):
            from * (1 - min(max(Float(now - start) / Float(length), 0), 1))
        }
    }

    /// Whether the fade is over at `now`.
    func isOver(at now: Int) -> Bool {
        switch self {
        case .none: true
        case .fadingIn(let start, let length), .fadingOut(let start, let length, _): now - start >= length
        }
    }

    /// The same fade started `nanoseconds` later (a pause's length).
    func delayed(by nanoseconds: Int) -> ChannelFade {
        switch self {
        case .none: .none
        case .fadingIn(let start, let length): .fadingIn(startedAt: start + nanoseconds, length: length)
        case .fadingOut(let start, let length, let from):
            .fadingOut(startedAt: start + nanoseconds, length: length, from: from)
        }
    }
}

/// One SDL_mixer channel: at most one engine voice at a time.
struct ChannelSlot {
    /// The current play's voice; nil when no play is on the channel (a voice that ended by itself stays until a call
    /// that reads the channel, the update thread, or the next play here ends the play: ChannelEnds.swift).
    var voice: Voice?
    /// The chunk's sound and bytes as the play started: a sound's voice plays the sound (and replays it when no
    /// stream voice was left for a finite loop count); a stream reads the bytes (a play that moves to a stream goes
    /// on from them).
    var made: MadeSound?
    /// The play's stream, when it plays through a stream voice (effects, finite loops, sides set apart:
    /// ChannelStreams.swift); the voice is its voice.
    var stream: ChannelStream?
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
    /// When the channel was paused (monotonic nanoseconds): its deadline and fade wait from then until it resumes.
    var pausedAt: Int?
    var paused: Bool { pausedAt != nil }
    /// When the play started (monotonic nanoseconds): Mix_GroupOldest and Mix_GroupNewer.
    var startedAt = 0
    /// When the play is to be halted (Mix_PlayChannelTimed, Mix_ExpireChannel).
    var expiresAt: Int?
    /// When a sound's voice playing its last (or only) pass reaches the sound's end (monotonic nanoseconds; moved on
    /// by a pause's length): the update thread looks then (UpdateSchedule.swift) instead of every tick.
    var endsAt: Int?
    /// The same end in the engine's rendered frames (`AudioEngine.renderedFrames` once the last frame is rendered),
    /// which the update thread's look and the game's calls' check are planned from (UpdateSchedule.swift,
    /// ChannelEnds.swift); planned again from what the play has left when it was found still sounding, and due at
    /// once after a pause or the session's hold.
    var endFrame: Int?
    /// Plays from the start still to come after this one (Mix_PlayChannel's loops), for a sound's voice (the update
    /// thread replays it) or a play that moves to a stream; -1 forever. 0 while a stream plays (it loops itself).
    var loopsLeft = 0
    var fade = ChannelFade.none
    /// The fade's share of the volume as the update thread last stepped it (1 when not fading).
    var fadeLevel: Float = 1
    var placement = ChannelPlacement()

    /// The volume SDL_mixer reports for the channel: its own, as faded so far.
    var fadedVolume: Int { Int((Float(volume) * fadeLevel).rounded()) }

    /// The voice's gain: channel volume × fade × chunk volume × placement (a stream that scales the sides applies
    /// the placement itself).
    var gain: Float {
        Float(volume) * fadeLevel * Float(chunkVolume) / Float(128 * 128)
            * (stream?.scalesSides == true ? 1 : placement.gain)
    }
}

/// SDL_mixer's channel table: `Mix_AllocateChannels` channels, the first `reserved` of them out of reach of
/// channel -1 (Mix_ReserveChannels).
struct ChannelTable {
    var slots: [ChannelSlot] = []
    var reserved = 0
    /// Effect chains closed, for their done callbacks (`deliverFinished`, with no lock held). Those of a play that
    /// ended (`awaitsFinished`) are done only after the channel's finished callback, by whoever calls it.
    var closedChains: [ClosedChain] = []
    /// When a streamed play was last halted (monotonic nanoseconds): its voice, silenced, fades for 1 ms and is let
    /// go by an engine update after that, so the update thread ticks for two periods after it (`deliverFinished`,
    /// which every halt calls, wakes it).
    var streamStoppedAt: Int?

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

    /// How many of the channels a call names (`indices`) pass `test`, with no list made: a game loop asks
    /// Mix_Playing of each channel every frame.
    func count(_ channel: Int32, where test: (Int) -> Bool) -> Int32 {
        if channel == -1 { return Int32(clamping: slots.indices.count(where: test)) }
        guard let i = index(channel) else { return 0 }
        return test(i) ? 1 : 0
    }

    /// Whether a play is on the channel (playing, paused, or with replays to come), from the table alone: no call
    /// into the engine (a lock and an OpenAL context switch), since a game loop asks Mix_Playing of each channel every
    /// frame. A one-shot that played out counts until it is ended here: the calls that read the channel do that first
    /// (`MixerState.settle`), asking the engine only once the output has rendered past its planned end.
    func isPlaying(_ i: Int) -> Bool { slots[i].voice != nil }

    /// The first channel past the reserved ones with no play on it.
    func firstFree() -> Int? { slots.indices.first { $0 >= reserved && !isPlaying($0) } }

    /// Ends the play on channel `i` (stopping its voice if it still sounds, unless the caller has: `voiceStopped`) and
    /// returns whether there was one, for the finished callback. Its placement ends with it, as SDL_mixer's effects do.
    mutating func end(_ i: Int, voiceStopped: Bool = false) -> Bool {
        guard let voice = slots[i].voice else { return false }
        if let stream = slots[i].stream {
            // Not `stop()`, which waits for a callback under way: an effect may be calling the library, which waits
            // for the lock held here. Silenced now, released within a tick; the halt keeps effects from running.
            stream.halt()
            voice.setGain(0)
            voice.stop(fade: 0.001)
            streamStoppedAt = monotonicNanoseconds()
        } else if !voiceStopped {
            voice.stop()  // (a sound's voice found played out was let go already: `Mixer.stopIfPlayedOut`)
        }
        // SDL_mixer drops a channel's effects when its play ends (done callbacks: `deliverFinished`).
        if slots[i].stream != nil || slots[i].effectCount > 0 { closeEffects(i, awaitingFinished: true) }
        slots[i].voice = nil
        slots[i].made = nil
        slots[i].stream = nil
        slots[i].pausedAt = nil
        slots[i].expiresAt = nil
        slots[i].endsAt = nil
        slots[i].endFrame = nil
        slots[i].loopsLeft = 0
        slots[i].fade = .none
        slots[i].fadeLevel = 1
        slots[i].placement = ChannelPlacement()
        return true
    }

    /// Gives channel `i` a new, empty chain and keeps the old one for its done callbacks; `awaitingFinished` when its
    /// play ended, so that they wait for the finished callback.
    mutating func closeEffects(_ i: Int, awaitingFinished: Bool = false) {
        if let chain = slots[i].effects {
            closedChains.append(
                ClosedChain(channel: Int32(clamping: i), chain: chain, awaitsFinished: awaitingFinished))
        }
        slots[i].effects = nil
        slots[i].effectCount = 0
    }

    /// Takes the closed chains of `channel` (its finished callback has run), or with nil those that wait for no
    /// finished callback.
    mutating func takeClosedChains(of channel: Int32?) -> [ClosedChain] {
        let belongs = { (closed: ClosedChain) in channel.map { closed.channel == $0 } ?? !closed.awaitsFinished }
        let taken = closedChains.filter(belongs)
        closedChains.removeAll(where: belongs)
        return taken
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

/// An effect chain taken off a channel, for its done callbacks.
struct ClosedChain {
    let channel: Int32
    let chain: EffectChain
    /// Closed by the end of the channel's play: done after that end's finished callback.
    let awaitsFinished: Bool
}
