import Ambience
import CSDLMixerABI

// Channels: playing chunks, halting, pausing, volumes. Each channel holds at most one engine voice; the engine's
// `sfx` bus carries them all (its gain is Mix_MasterVolume).

/// Calls Mix_ChannelFinished's callback for each channel, in order, then the done callbacks of the effects the ended
/// plays had (and of any other chain closed since), with no lock of the stand-in's held: the callbacks may call any
/// Mix_ function, Mix_PlayChannel included. A closed chain runs no effect once `close` has returned.
func deliverFinished(_ channels: [Int32]) {
    let (callback, closed) = StandIn.shared.state.withLock { state in
        defer { state.channels.closedChains.removeAll() }
        return (state.channelFinished, state.channels.closedChains)
    }
    var chains = closed
    for channel in channels {
        callback?(channel)
        for (k, ended) in chains.enumerated().reversed() where ended.channel == channel {
            callDone(ended.chain.close(), channel: channel)
            chains.remove(at: k)
        }
    }
    for ended in chains { callDone(ended.chain.close(), channel: ended.channel) }
}

/// Starts `chunk` on `channel` (-1: the first free unreserved channel). `loops` -1 (or any negative) plays forever,
/// N plays N + 1 times; `ticks` > 0 halts it after that many milliseconds; `fadeMs` > 0 fades it in.
func play(_ channel: Int32, _ chunk: UnsafeMutablePointer<Mix_Chunk>?, loops: Int32, fadeMs: Int32, ticks: Int32)
    -> Int32
{
    var finished: [Int32] = []
    let pointer = chunk.map(ChunkPointer.init)
    let result = StandIn.shared.withOpenDevice(else: Int32(-1)) { state, device in
        let record: ChunkRecord
        switch state.chunks.record(pointer) {
        case .success(let found): record = found
        case .failure(let error): return refuse("Tried to play a chunk that is not there: \(error.description)")
        }
        let i: Int
        if channel == -1 {
            guard let free = state.channels.firstFree() else { return refuse("No free channels available") }
            i = free
        } else {
            guard let index = state.channels.index(channel) else {
                return refuse("Invalid channel \(channel): \(state.channels.count) are allocated")
            }
            i = index
        }
        let reversed = state.channels.slots[i].placement.reversed
        // A play still on the channel (or one that ended unnoticed) ends first, with its callback, as in SDL_mixer.
        if state.channels.end(i) { finished.append(Int32(i)) }
        let sound: Sound
        switch record.sound(engine: device.engine, spec: device.spec, generation: device.generation, reversed: reversed)
        {
        case .success(let made): sound = made
        case .failure(let problem): return refuse(problem.description)
        }
        state.channels.slots[i].chunk = pointer
        state.channels.slots[i].chunkVolume = Int(record.chunk.pointee.volume)
        let fadeIn = fadeMs > 0 ? Double(fadeMs) / 1000 : 0
        var voice = Voice.none
        // Effects, and a finite loop count (gapless), take a stream voice; with none left, a finite loop count
        // falls back to replays by the update thread (a gap of up to 10 ms).
        var streamed = false
        if let made = record.made, loops > 0 || state.channels.slots[i].effectCount > 0 {
            switch state.channels.startStream(
                i, device: device, samples: made.bytes, reversed: made.reversed, start: 0, loops: Int(loops),
                fadeIn: fadeIn)
            {
            case .success(let started):
                voice = started
                streamed = true
            case .failure(let problem):
                if state.channels.slots[i].effectCount > 0 { return refuse(problem.description) }
            }
        }
        var slot = state.channels.slots[i]
        if !streamed {
            let options = PlayOptions(
                gain: slot.gain, loop: loops < 0, placement: slot.placement.placement, fadeIn: fadeIn)
            voice = device.engine.play(sound, options)
            guard voice != .none else { return refuse("the engine could not start a voice") }
        }
        slot.samples = record.made?.bytes ?? []
        slot.reversedSamples = record.made?.reversed ?? false
        slot.forever = loops < 0
        let now = monotonicNanoseconds()
        slot.voice = voice
        slot.sound = sound
        slot.paused = false
        slot.startedAt = now
        slot.expiresAt = ticks > 0 ? now + Int(ticks) * 1_000_000 : nil
        slot.loopsLeft = loops > 0 && !streamed ? Int(loops) : 0
        slot.fade = fadeMs > 0 ? .fadingIn(until: now + Int(fadeMs) * 1_000_000) : .none
        state.channels.slots[i] = slot
        return Int32(i)
    }
    deliverFinished(finished)
    return result
}

@_cdecl("Mix_PlayChannel")
public func mixPlayChannel(_ channel: Int32, _ chunk: UnsafeMutablePointer<Mix_Chunk>?, _ loops: Int32) -> Int32 {
    play(channel, chunk, loops: loops, fadeMs: 0, ticks: -1)
}

@_cdecl("Mix_PlayChannelTimed")
public func mixPlayChannelTimed(
    _ channel: Int32, _ chunk: UnsafeMutablePointer<Mix_Chunk>?, _ loops: Int32, _ ticks: Int32
) -> Int32 {
    play(channel, chunk, loops: loops, fadeMs: 0, ticks: ticks)
}

@_cdecl("Mix_FadeInChannel")
public func mixFadeInChannel(_ channel: Int32, _ chunk: UnsafeMutablePointer<Mix_Chunk>?, _ loops: Int32, _ ms: Int32)
    -> Int32
{
    play(channel, chunk, loops: loops, fadeMs: ms, ticks: -1)
}

@_cdecl("Mix_FadeInChannelTimed")
public func mixFadeInChannelTimed(
    _ channel: Int32, _ chunk: UnsafeMutablePointer<Mix_Chunk>?, _ loops: Int32, _ ms: Int32, _ ticks: Int32
) -> Int32 {
    play(channel, chunk, loops: loops, fadeMs: ms, ticks: ticks)
}

/// Mix_HaltChannel: ends the play on the channel (-1: every channel); the finished callbacks run before it returns,
/// on the calling thread, as SDL_mixer documents. -1 for a channel that does not exist.
@_cdecl("Mix_HaltChannel")
public func mixHaltChannel(_ channel: Int32) -> Int32 {
    var finished: [Int32] = []
    let result = StandIn.shared.state.withLock { state -> Int32 in
        guard channel == -1 || state.channels.index(channel) != nil else {
            return refuse("Mix_HaltChannel: invalid channel \(channel)")
        }
        for i in state.channels.indices(channel) where state.channels.end(i) { finished.append(Int32(i)) }
        return 0
    }
    deliverFinished(finished)
    return result
}

/// Mix_ExpireChannel: halts the channel (-1: every channel) `ticks` milliseconds from now (-1 cancels); returns how
/// many channels with a play changed.
@_cdecl("Mix_ExpireChannel")
public func mixExpireChannel(_ channel: Int32, _ ticks: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in
        let deadline = ticks > 0 ? monotonicNanoseconds() + Int(ticks) * 1_000_000 : nil
        var changed: Int32 = 0
        for i in state.channels.indices(channel) where state.channels.isPlaying(i) {
            state.channels.slots[i].expiresAt = deadline
            changed += 1
        }
        return changed
    }
}

/// Mix_FadeOutChannel: fades the channel (-1: every channel) out over `ms` and then halts it; returns how many
/// started fading. A channel already fading out is left as it is.
@_cdecl("Mix_FadeOutChannel")
public func mixFadeOutChannel(_ channel: Int32, _ ms: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in fadeOut(state.channels.indices(channel), ms: ms, in: &state) }
}

/// Fades the given channels out over `ms` (at least 1 ms); the update thread reports each end.
func fadeOut(_ indices: [Int], ms: Int32, in state: inout MixerState) -> Int32 {
    var started: Int32 = 0
    for i in indices where state.channels.isPlaying(i) && state.channels.slots[i].fade != .fadingOut {
        state.channels.slots[i].voice?.stop(fade: Double(max(ms, 1)) / 1000)
        state.channels.slots[i].fade = .fadingOut
        state.channels.slots[i].loopsLeft = 0
        started += 1
    }
    return started
}

/// Mix_FadingChannel: MIX_FADING_IN, MIX_FADING_OUT or MIX_NO_FADING (also for a channel that does not exist).
@_cdecl("Mix_FadingChannel")
public func mixFadingChannel(_ channel: Int32) -> Mix_Fading {
    StandIn.shared.state.withLock { state in
        guard let i = state.channels.index(channel), state.channels.isPlaying(i) else { return MIX_NO_FADING }
        if case .fadingIn(let until) = state.channels.slots[i].fade, until <= monotonicNanoseconds() {
            state.channels.slots[i].fade = .none
        }
        return state.channels.slots[i].fade.status
    }
}

@_cdecl("Mix_Pause")
public func mixPause(_ channel: Int32) {
    StandIn.shared.state.withLock { state in
        for i in state.channels.indices(channel) where state.channels.isPlaying(i) {
            state.channels.slots[i].voice?.pause()
            state.channels.slots[i].paused = true
        }
    }
}

@_cdecl("Mix_Resume")
public func mixResume(_ channel: Int32) {
    StandIn.shared.state.withLock { state in
        for i in state.channels.indices(channel) where state.channels.slots[i].paused {
            state.channels.slots[i].voice?.resume()
            state.channels.slots[i].paused = false
        }
    }
}

/// Mix_Paused: 1 when the channel is paused, else 0; for -1 the number of paused channels.
@_cdecl("Mix_Paused")
public func mixPaused(_ channel: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in
        Int32(
            state.channels.indices(channel).filter { state.channels.slots[$0].paused && state.channels.isPlaying($0) }
                .count)
    }
}

/// Mix_Playing: 1 when a play is on the channel (paused ones count), else 0; for -1 the number of such channels.
@_cdecl("Mix_Playing")
public func mixPlaying(_ channel: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in
        Int32(state.channels.indices(channel).filter { state.channels.isPlaying($0) }.count)
    }
}

/// Mix_Volume: sets the channel's volume (0...128, clamped; negative only asks) and returns the previous one; for
/// -1 sets every channel's and returns their previous average. -1 for a channel that does not exist.
@_cdecl("Mix_Volume")
public func mixVolume(_ channel: Int32, _ volume: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in
        guard channel == -1 || state.channels.index(channel) != nil else {
            return refuse("Mix_Volume: invalid channel \(channel)")
        }
        let indices = state.channels.indices(channel)
        guard !indices.isEmpty else { return 0 }
        let previous = indices.reduce(0) { $0 + state.channels.slots[$1].volume } / indices.count
        if let volume = clampedVolume(volume) {
            for i in indices {
                state.channels.slots[i].volume = volume
                state.channels.applyGain(i)
            }
        }
        return Int32(previous)
    }
}

/// Mix_MasterVolume (2.6): every channel's volume on top of its own, as the `sfx` bus's gain (music is not
/// touched). Returns the previous value; negative only asks.
@_cdecl("Mix_MasterVolume")
public func mixMasterVolume(_ volume: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in
        let previous = Int32(state.masterVolume)
        if let volume = clampedVolume(volume) {
            state.masterVolume = volume
            try? state.device?.engine.sfx.setGain(gain(volume))
        }
        return previous
    }
}

/// Mix_GetChunk: the chunk most recently played on the channel (NULL when none, or for a channel that does not
/// exist).
@_cdecl("Mix_GetChunk")
public func mixGetChunk(_ channel: Int32) -> UnsafeMutablePointer<Mix_Chunk>? {
    StandIn.shared.state.withLock { state -> ChunkPointer? in
        guard let i = state.channels.index(channel) else {
            report("Mix_GetChunk: invalid channel \(channel)")
            return nil
        }
        return state.channels.slots[i].chunk
    }?.raw
}

/// Mix_ChannelFinished: the callback run when a channel's play ends. Ends by themselves (and timed or faded ones)
/// are reported on the stand-in's update thread, within about 10 ms; halts (Mix_HaltChannel and the calls that halt)
/// on the calling thread before the call returns. No lock of the stand-in's is held while it runs.
@_cdecl("Mix_ChannelFinished")
public func mixChannelFinished(_ callback: standin_channel_finished?) {
    StandIn.shared.state.withLock { $0.channelFinished = callback }
}
