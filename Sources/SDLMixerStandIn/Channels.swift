import Ambience
import AmbiencePlatform
import CSDLMixerABI
import Glibc

// Channels: playing chunks, halting, pausing, volumes. Each channel holds at most one engine voice; the engine's
// `sfx` bus carries them all (its gain is Mix_MasterVolume).

/// Calls Mix_ChannelFinished's callback for each channel, in order, each followed by the done callbacks of the
/// effects its ended play had (then those of any other chain closed since that waits for no finished callback), with
/// no lock of the stand-in's held, as SDL_mixer does: the callbacks may call any Mix_ function, Mix_PlayChannel
/// included. A closed chain runs no effect once `close` has returned. The callback is read again for each channel, so
/// one that a callback removes or replaces (Mix_ChannelFinished) is not called for the channels after it. The update
/// thread's ends were marked `reporting` when found; each is `reportingNow` while its callbacks run and unmarked
/// after. One no longer marked was claimed by a shrink that dropped the channel, which reports it, done callbacks
/// included: a chain of an ended play waits for its finished callback, whichever thread calls it (SDL_mixer calls
/// the finished callback, then the effects' done callbacks; each once).
func deliverFinished(_ channels: [Int32], reporting: Bool = false) {
    for channel in channels {
        let claimed = StandIn.shared.state.withChannelLock(publishing: nil) { state -> standin_channel_finished?? in
            if reporting {
                guard state.reporting.contains(channel) else { return .none }
                state.reportingNow = (channel, state.channels.index(channel).flatMap { state.channels.slots[$0].chunk })
            }
            return .some(state.channelFinished)
        }
        guard let callback = claimed else { continue }
        callback?(channel)
        let chains = StandIn.shared.state.withChannelLock(publishing: nil) { $0.channels.takeClosedChains(of: channel) }
        for ended in chains { callDone(ended.chain.close(), channel: channel) }
        if reporting {
            StandIn.shared.state.withChannelLock(publishing: nil) { state in
                state.reporting.remove(channel)
                state.reportingNow = nil
            }
        }
    }
    let rest = StandIn.shared.state.withChannelLock(publishing: nil) { state in
        // A streamed play the caller halted is let go by the engine's next update: within a tick.
        if state.channels.streamStoppedAt != nil { state.wakeUpdates() }
        return state.channels.takeClosedChains(of: nil)
    }
    for ended in rest { callDone(ended.chain.close(), channel: ended.channel) }
}

/// What a play found under the lock, for the work done outside it.
private struct PlayRequest {
    let record: ChunkRecord
    let device: OpenDevice
    let bytes: ChunkBytes
    let made: MadeSound?
}

/// What the first hold of the lock did: the play installed (or refused), or the work left to do outside it.
private enum PlayFirstStep {
    case done(Int32)
    case request(PlayRequest)
}

/// The largest chunk whose bytes a play compares with its sound under the stand-in's lock (at most about 13 µs at the
/// 0.2 ms per MB a compare takes with both copies out of the cache): then a play with nothing to report on its
/// channel is installed in that one hold. A larger chunk's compare runs outside the lock, as a conversion does.
let inLockCompareBytes = 64 * 1_024

/// Starts `chunk` on `channel` (-1: the first free unreserved channel). `loops` -1 (or any negative) plays forever,
/// N plays N + 1 times; `ticks` > 0 halts it after that many milliseconds; `fadeMs` > 0 fades it in.
///
/// In three steps, so nothing slow holds the stand-in's lock: the chunk is looked up and checked under it (a chunk
/// that cannot play is refused before the channel's current play is touched); its bytes are compared with the
/// sound made from them, or converted into a new one, outside it; then the play is installed under it. A play
/// still on the channel ends first and its finished callback runs before the new chunk is installed (with no lock
/// held), so the callback's Mix_GetChunk is the chunk that ended, as with SDL_mixer. The common case, a chunk of at
/// most `inLockCompareBytes` whose bytes still match its sound, played on a channel with no play and no end waiting
/// to be reported, takes one hold: the compare and the install are done in the first.
func play(_ channel: Int32, _ chunk: UnsafeMutablePointer<Mix_Chunk>?, loops: Int32, fadeMs: Int32, ticks: Int32)
    -> Int32
{
    let pointer = chunk.map(ChunkPointer.init)
    let first = StandIn.shared.state.withChannelLock(publishing: channel) { state -> PlayFirstStep? in
        guard let device = state.device else {
            report(deviceNotOpen)
            return nil
        }
        let record: ChunkRecord
        switch state.chunks.record(pointer) {
        case .success(let known): record = known
        case .failure(let error):
            refuse("Tried to play a chunk that is not there: \(error.description)")
            return nil
        }
        guard let i = channel == -1 ? state.firstFreeChannel() : state.channels.index(channel) else {
            refuse(
                channel == -1
                    ? "No free channels available" : "Invalid channel \(channel): \(state.channels.count) are allocated"
            )
            return nil
        }
        switch record.bytes(device.spec) {
        case .success(let bytes):
            if bytes.length <= inLockCompareBytes, let made = record.made,
                made.matches(bytes, generation: device.generation),
                !state.channels.isPlaying(i), !state.reporting.contains(Int32(clamping: i))
            {
                // Nothing on the channel to end or report (an end waiting for its report is in `reporting`).
                return .done(
                    install(
                        i, made: made, record: record, device: device, loops: loops, fadeMs: fadeMs, ticks: ticks,
                        in: &state))
            }
            record.readers += 1
            return .request(PlayRequest(record: record, device: device, bytes: bytes, made: record.made))
        case .failure(let problem):
            refuse(problem.description)
            return nil
        }
    }
    let request: PlayRequest
    switch first {
    case .none: return -1
    case .done(let result): return result
    case .request(let found): request = found
    }
    let generation = request.device.generation
    let prepared: Result<MadeSound, ChunkProblem> =
        if let made = request.made, made.matches(request.bytes, generation: generation) {
            .success(made)
        } else {
            MadeSound.make(
                request.bytes, engine: request.device.engine, spec: request.device.spec, generation: generation)
        }
    var readDone = false
    // Each pass ends the play found on the channel and reports it; a callback that plays there again is ended in
    // turn, up to a few times (then its end is reported after the install).
    for pass in 0... {
        var finished: [Int32] = []
        var abufToFree: UnsafeMutablePointer<UInt8>?
        var waiting = false
        let result = StandIn.shared.state.withChannelLock(publishing: channel) { state -> Int32? in
            if !readDone {
                readDone = true
                abufToFree = request.record.endRead()
                if case .success(let made) = prepared, state.chunks.isLive(request.record) {
                    request.record.made = made
                }
            }
            guard let device = state.device, device.generation == generation else { return refuse(deviceNotOpen) }
            guard state.chunks.isLive(request.record) else {
                return refuse("Tried to play a chunk that is not there: it was freed (Mix_FreeChunk)")
            }
            let made: MadeSound
            switch prepared {
            case .success(let sound): made = sound
            case .failure(let problem): return refuse(problem.description)
            }
            guard let i = channel == -1 ? state.firstFreeChannel() : state.channels.index(channel) else {
                return refuse(channel == -1 ? "No free channels available" : "Invalid channel \(channel)")
            }
            // An end a game's call found there, not reported yet: reported here, before the install (as one this
            // play ends itself).
            if state.takeSettledEnd(Int32(clamping: i)) {
                finished.append(Int32(clamping: i))
                if pass < 2_004 { return nil }
            }
            // An end the update thread found on this channel is reported before anything new is installed there
            // (unless this is that thread, playing from the callback): wait for it, briefly.
            if state.reporting.contains(Int32(clamping: i)), !state.isUpdateThread, pass < 2_000 {
                waiting = true
                return nil
            }
            if state.channels.end(i) {
                finished.append(Int32(clamping: i))
                if pass < 2_004 { return nil }
            }
            return install(
                i, made: made, record: request.record, device: request.device, loops: loops, fadeMs: fadeMs,
                ticks: ticks, in: &state)
        }
        if let abufToFree { SDL_free(abufToFree) }
        // Nothing ended here: no report, and no third hold of the lock for it (the common case of a game loop's play
        // on a free channel). Chains closed elsewhere are delivered by whoever closed them, or the update thread.
        if !finished.isEmpty { deliverFinished(finished) }
        if let result { return result }
        if waiting { sleep(milliseconds: 1) }
    }
    return -1
}

/// Puts the play on channel `i` (its previous play ended).
private func install(
    _ i: Int, made: MadeSound, record: ChunkRecord, device: OpenDevice, loops: Int32, fadeMs: Int32, ticks: Int32,
    in state: inout MixerState
) -> Int32 {
    let now = monotonicNanoseconds()
    // Read before the voice starts: it plays from the next block rendered after this count, or from the one after when
    // a render is under way (the count grows once it returns). Then the end planned from it is a block early: one
    // look finds the voice still sounding, and the next comes a tick later.
    let renderedBefore = device.engine.renderedFrames
    state.channels.slots[i].chunk = ChunkPointer(raw: record.chunk)
    state.channels.slots[i].chunkVolume = Int(record.chunk.pointee.volume)
    state.channels.slots[i].fade = fadeMs > 0 ? .fadingIn(startedAt: now, length: Int(fadeMs) * 1_000_000) : .none
    state.channels.slots[i].fadeLevel = fadeMs > 0 ? 0 : 1
    let started = state.channels.startVoice(i, device: device, made: made, loops: loops < 0 ? -1 : Int(loops))
    switch started {
    case .success(let voice):
        state.channels.slots[i].voice = voice
        state.channels.slots[i].pausedAt = nil
        state.channels.slots[i].startedAt = now
        state.channels.slots[i].expiresAt = ticks > 0 ? now + Int(ticks) * 1_000_000 : nil
        state.channels.slots[i].endsAt = state.endOfPlay(made.sound, from: now)
        state.channels.slots[i].endFrame = endFrame(of: made.sound, from: renderedBefore, engine: device.engine)
        state.wakeUpdates(for: i)
        return Int32(clamping: i)
    case .failure(let problem):
        state.channels.slots[i].fade = .none
        state.channels.slots[i].fadeLevel = 1
        return refuse(problem.description)
    }
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
/// on the calling thread, as SDL_mixer documents. 0, also for a channel that does not exist (as SDL_mixer).
@_cdecl("Mix_HaltChannel")
public func mixHaltChannel(_ channel: Int32) -> Int32 {
    let finished = StandIn.shared.state.withLock { state -> [Int32] in
        state.channels.indices(channel).filter { state.channels.end($0) }.map(Int32.init)
    }
    deliverFinished(finished)
    return 0
}

/// Mix_ExpireChannel: halts the channel (-1: every channel) `ticks` milliseconds from now (-1 cancels); returns how
/// many channels it named, playing or not, as SDL_mixer does (a channel with no play keeps no deadline: the next
/// play sets its own). A paused channel's deadline waits while it is paused.
@_cdecl("Mix_ExpireChannel")
public func mixExpireChannel(_ channel: Int32, _ ticks: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in
        state.settle(channel)
        let now = monotonicNanoseconds()
        let indices = state.channels.indices(channel)
        for i in indices where state.channels.isPlaying(i) {
            // From the pause on, the time left waits: counted from when the channel was paused.
            let from = state.channels.slots[i].pausedAt ?? now
            state.channels.slots[i].expiresAt = ticks > 0 ? from + Int(ticks) * 1_000_000 : nil
            state.wakeUpdates(for: i)
        }
        return Int32(clamping: indices.count)
    }
}

/// Mix_FadeOutChannel: fades the channel (-1: every channel) out over `ms` and then halts it; returns how many
/// started fading. A channel already fading out, or at volume 0, is left as it is (as SDL_mixer).
@_cdecl("Mix_FadeOutChannel")
public func mixFadeOutChannel(_ channel: Int32, _ ms: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in
        state.settle(channel)
        return fadeOut(state.channels.indices(channel), ms: ms, in: &state)
    }
}

/// Fades the given channels out over `ms` (at least 1 ms), from where a fade-in has got to; the update thread steps
/// the gain (not while paused), halts each at the end and reports it.
func fadeOut(_ indices: [Int], ms: Int32, in state: inout MixerState) -> Int32 {
    var started: Int32 = 0
    let now = monotonicNanoseconds()
    for i in indices where state.channels.isPlaying(i) && state.channels.slots[i].volume > 0 {
        if case .fadingOut = state.channels.slots[i].fade { continue }
        state.channels.slots[i].fade = .fadingOut(
            startedAt: state.channels.slots[i].pausedAt ?? now, length: Int(max(ms, 1)) * 1_000_000,
            from: state.channels.slots[i].fadeLevel)
        state.wakeUpdates(for: i)
        started += 1
    }
    return started
}

/// Mix_FadingChannel: MIX_FADING_IN, MIX_FADING_OUT or MIX_NO_FADING (also for a channel that does not exist).
@_cdecl("Mix_FadingChannel")
public func mixFadingChannel(_ channel: Int32) -> Mix_Fading {
    StandIn.shared.state.withLock { state in
        state.settle(channel)
        guard let i = state.channels.index(channel), state.channels.isPlaying(i) else { return MIX_NO_FADING }
        let slot = state.channels.slots[i]
        if case .fadingIn = slot.fade, !slot.paused, slot.fade.isOver(at: monotonicNanoseconds()) {
            return MIX_NO_FADING
        }
        return slot.fade.status
    }
}

@_cdecl("Mix_Pause")
public func mixPause(_ channel: Int32) {
    StandIn.shared.state.withLock { state in
        let now = monotonicNanoseconds()
        for i in state.channels.indices(channel) where state.channels.isPlaying(i) && !state.channels.slots[i].paused {
            state.channels.slots[i].voice?.pause()
            state.channels.slots[i].pausedAt = now
        }
    }
}

@_cdecl("Mix_Resume")
public func mixResume(_ channel: Int32) {
    StandIn.shared.state.withLock { state in
        let now = monotonicNanoseconds()
        for i in state.channels.indices(channel) {
            guard let pausedAt = state.channels.slots[i].pausedAt else { continue }
            // The deadline and the fade waited while paused: they go on from where they were.
            let paused = now - pausedAt
            state.channels.slots[i].expiresAt = state.channels.slots[i].expiresAt.map { $0 + paused }
            state.channels.slots[i].endsAt = state.channels.slots[i].endsAt.map { $0 + paused }
            state.channels.slots[i].fade = state.channels.slots[i].fade.delayed(by: paused)
            state.channels.slots[i].voice?.resume()
            // Where the play stands is the engine's to say: its end is planned again from that at the next look.
            if state.channels.slots[i].endFrame != nil, let engine = state.device?.engine {
                state.channels.slots[i].endFrame = engine.renderedFrames
            }
            state.channels.slots[i].pausedAt = nil
            state.wakeUpdates(for: i)
        }
    }
}

/// Mix_Paused: 1 when the channel is paused, else 0; for -1 the number of paused channels.
@_cdecl("Mix_Paused")
public func mixPaused(_ channel: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in
        state.channels.count(channel) { state.channels.slots[$0].paused && state.channels.isPlaying($0) }
    }
}

/// Mix_Playing: 1 when a play is on the channel (paused ones count), else 0; for -1 the number of such channels. A
/// one-shot whose last frame the output has rendered reads 0, whether or not its end has been reported yet
/// (ChannelEnds.swift). The first 64 channels are mostly answered without the lock (PlayingAnswers.swift).
@_cdecl("Mix_Playing")
public func mixPlaying(_ channel: Int32) -> Int32 {
    if let answer = publishedPlaying(channel) { return answer }
    return StandIn.shared.state.withChannelLock(publishing: channel) { state in
        state.settle(channel)
        return state.channels.count(channel) { state.channels.isPlaying($0) }
    }
}

/// Mix_Volume: sets the channel's volume (0...128, clamped; negative only asks) and returns the previous one (as
/// faded so far, during a fade); for -1 sets every channel's and returns their previous average. 0 for a channel
/// that does not exist, as SDL_mixer.
@_cdecl("Mix_Volume")
public func mixVolume(_ channel: Int32, _ volume: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in
        let indices = state.channels.indices(channel)
        guard !indices.isEmpty else { return 0 }
        let previous = indices.reduce(0) { $0 + state.channels.slots[$1].fadedVolume } / indices.count
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
            // The update thread's callback for a channel a shrink dropped meanwhile: the chunk that ended.
            if let now = state.reportingNow, now.channel == channel, state.isUpdateThread { return now.chunk }
            report("Mix_GetChunk: invalid channel \(channel)")
            return nil
        }
        return state.channels.slots[i].chunk
    }?.raw
}

/// Mix_ChannelFinished: the callback run when a channel's play ends. Ends by themselves (and timed or faded ones)
/// are reported on the stand-in's update thread, within about 10 ms, and up to 10 ms more so that ends close together
/// are reported in one wake (`endBatchWindow`); halts (Mix_HaltChannel and the calls that halt), and a play on a
/// channel whose end has not been reported yet, on the calling thread before the call returns. No lock of the
/// stand-in's is held while it runs.
@_cdecl("Mix_ChannelFinished")
public func mixChannelFinished(_ callback: standin_channel_finished?) {
    StandIn.shared.state.withLock { state in
        state.channelFinished = callback
        // Ends are looked for from now on (UpdateSchedule.swift): the thread plans its wait again.
        if callback != nil { state.wakeUpdates() }
    }
}
