import Ambience
import AmbiencePlatform
import CSDLMixerABI
import Glibc

// Music: a Mix_Music is an engine `MusicFile` (a path, or an SDL_RWops' bytes in an in-memory file), played through
// the engine's music player on the `music` bus. Loops: -1 is the player's repeat-one (a module or MIDI file plays its
// own loop, seamlessly; other formats start again gaplessly); N > 1 queues N copies of the item, joined gaplessly
// sample for sample (the update thread tops the queue up, 16 copies at a time). Fades are ramps of the music bus's
// gain; Mix_VolumeMusic is the player's own volume; the session's silence mutes the bus (UpdateThread.swift).

/// Copies of the item queued at a time for a finite loop count.
let musicBatch = 16

/// Mix_LoadMUS: the file at `file`, in any format the engine decodes. NULL with the reason when it cannot be read,
/// is in no such format, or is MIDI with no SoundFont to play it (Mix_SetSoundFonts' list, else Debian's).
@_cdecl("Mix_LoadMUS")
public func mixLoadMUS(_ file: UnsafePointer<CChar>?) -> OpaquePointer? {
    guard let file else {
        report("Mix_LoadMUS: NULL file name")
        return nil
    }
    let path = String(cString: file)
    let options = StandIn.shared.state.withLock { $0.music.decoderOptions }
    let music: MusicFile
    do { music = try MusicFile(path: path, decoding: options) } catch {
        report("Mix_LoadMUS: \(error.description)")
        return nil
    }
    let name = path.split(separator: "/").last.map(String.init) ?? path
    return register(MusicRecord(music, fileName: name))
}

@_cdecl("Mix_LoadMUS_RW")
public func mixLoadMUSRW(_ source: UnsafeMutablePointer<SDL_RWops>?, _ freeSource: Int32) -> OpaquePointer? {
    load(source, freeSource: freeSource != 0, function: "Mix_LoadMUS_RW")
}

/// Mix_LoadMUSType_RW: as Mix_LoadMUS_RW; the type is a hint the engine does not need (it reads the format from
/// the bytes, which win when the two disagree).
@_cdecl("Mix_LoadMUSType_RW")
public func mixLoadMUSTypeRW(
    _ source: UnsafeMutablePointer<SDL_RWops>?, _ type: Mix_MusicType, _ freeSource: Int32
) -> OpaquePointer? {
    load(source, freeSource: freeSource != 0, function: "Mix_LoadMUSType_RW")
}

/// Reads the source whole (bounded; a source that fails or falls short is NULL with the reason), closes it when
/// asked (on failure too), and keeps its bytes in an in-memory file the engine's decoders open.
private func load(_ source: UnsafeMutablePointer<SDL_RWops>?, freeSource: Bool, function: String) -> OpaquePointer? {
    let bytes: [UInt8]
    switch RWopsReader.readAll(source, freeSource: freeSource) {
    case .success(let read): bytes = read
    case .failure(let error):
        report("\(function): \(error.description)")
        return nil
    }
    let options = StandIn.shared.state.withLock { $0.music.decoderOptions }
    let music: MusicFile
    do { music = try MusicFile(bytes: bytes, name: function, decoding: options) } catch {
        report("\(function): \(error.description)")
        return nil
    }
    return register(MusicRecord(music, fileName: nil))
}

private func register(_ record: MusicRecord) -> OpaquePointer {
    StandIn.shared.state.withLock { $0.music.registry.add(record) }.raw
}

/// Mix_FreeMusic: halts the music if it is the one playing (without the finished hook, as SDL_mixer), then frees
/// it and its tag strings. NULL is ignored; a freed or unknown pointer is refused (the error set, nothing freed).
@_cdecl("Mix_FreeMusic")
public func mixFreeMusic(_ music: OpaquePointer?) {
    guard let pointer = music.map(MusicPointer.init) else { return }
    let record = StandIn.shared.state.withLock { state -> MusicRecord? in
        if state.music.current == pointer { _ = state.haltMusic() }
        return state.music.registry.remove(pointer)
    }
    guard let record else {
        report("Mix_FreeMusic: \(MusicLookupError.freed.description), or not a music this library loaded")
        return
    }
    record.freeStrings()
}

@_cdecl("Mix_PlayMusic")
public func mixPlayMusic(_ music: OpaquePointer?, _ loops: Int32) -> Int32 {
    startMusic(music, loops: loops, fadeMs: 0, position: 0, function: "Mix_PlayMusic")
}

@_cdecl("Mix_FadeInMusic")
public func mixFadeInMusic(_ music: OpaquePointer?, _ loops: Int32, _ ms: Int32) -> Int32 {
    startMusic(music, loops: loops, fadeMs: ms, position: 0, function: "Mix_FadeInMusic")
}

@_cdecl("Mix_FadeInMusicPos")
public func mixFadeInMusicPos(_ music: OpaquePointer?, _ loops: Int32, _ ms: Int32, _ position: Double) -> Int32 {
    startMusic(music, loops: loops, fadeMs: ms, position: position, function: "Mix_FadeInMusicPos")
}

/// Plays `music` in place of any music playing (which ends without the finished hook, as in SDL_mixer): `loops` -1
/// (any negative) forever, 0 or 1 once, N N times; from `position` seconds; fading in over `fadeMs` when > 0.
func startMusic(_ music: OpaquePointer?, loops: Int32, fadeMs: Int32, position: Double, function: String) -> Int32 {
    guard position.isFinite, position >= 0 else { return refuse("\(function): position \(position) is not a time") }
    let pointer = music.map(MusicPointer.init)
    return StandIn.shared.withOpenDevice(else: Int32(-1)) { state, device in
        let record: MusicRecord
        switch state.music.registry.record(pointer) {
        case .success(let found): record = found
        case .failure(let error): return refuse("\(function): \(error.description)")
        }
        _ = state.haltMusic()
        let player = device.engine.musicPlayer
        // Held by Mix_HookMusic, it starts (from `position`) once the hook is gone.
        player.isHeld = state.music.hooked
        let passes: Int? = loops < 0 ? nil : max(Int(loops), 1)
        let copies = min(passes ?? 1, musicBatch)
        player.soundFont = state.music.decoderOptions.soundFont
        player.repeatMode = passes == nil ? .one : .none
        player.setQueue(with: MediaItemCollection(items: Array(repeating: record.file.item, count: copies)))
        if position > 0 { try? player.seek(to: position) }
        let now = monotonicNanoseconds()
        if fadeMs > 0 {
            try? device.engine.music.setGain(0)
            try? device.engine.music.fade(to: 1, over: Double(fadeMs) / 1000)
            state.music.fade = .fadingIn(until: now + Int(fadeMs) * 1_000_000)
        } else {
            try? device.engine.music.setGain(1)
            state.music.fade = .none
        }
        player.play()
        state.music.current = pointer
        state.music.passes = passes
        state.music.queued = copies
        state.music.paused = false
        if state.music.hooked { state.holdMusic() }
        state.wakeUpdates()
        return 0
    }
}

/// Mix_HaltMusic: 0, whether or not music was halted. Halted music calls the finished hook before this returns, on
/// the calling thread, with no lock of the stand-in's held.
@_cdecl("Mix_HaltMusic")
public func mixHaltMusic() -> Int32 {
    if StandIn.shared.state.withLock({ $0.haltMusic() }) { deliverMusicFinished() }
    return 0
}

/// Mix_FadeOutMusic: fades the music out over `ms`, then halts it (the finished hook runs on the update thread);
/// 1 when it started fading, 0 when no music plays or it is already fading out. `ms` <= 0 halts at once (1).
@_cdecl("Mix_FadeOutMusic")
public func mixFadeOutMusic(_ ms: Int32) -> Int32 {
    if ms <= 0 {
        guard StandIn.shared.state.withLock({ $0.haltMusic() }) else { return 0 }
        deliverMusicFinished()
        return 1
    }
    return StandIn.shared.state.withLock { state in
        guard state.music.current != nil, let device = state.device else { return 0 }
        if case .fadingOut = state.music.fade { return 0 }
        if state.musicFadeHeld {
            state.holdFadeOut(nanoseconds: Int(ms) * 1_000_000)
            return 1
        }
        // From the level it has now (a fade-in may be under way), down to silence.
        try? device.engine.music.fade(to: 0, over: Double(ms) / 1000)
        state.music.fade = .fadingOut(until: monotonicNanoseconds() + Int(ms) * 1_000_000)
        state.wakeUpdates()
        return 1
    }
}

@_cdecl("Mix_FadingMusic")
public func mixFadingMusic() -> Mix_Fading {
    StandIn.shared.state.withLock { state in
        guard state.music.current != nil else { return MIX_NO_FADING }
        if case .fadingIn(let until) = state.music.fade, until <= monotonicNanoseconds() { state.music.fade = .none }
        return state.music.fade.status
    }
}

@_cdecl("Mix_PauseMusic")
public func mixPauseMusic() {
    StandIn.shared.state.withLock { state in
        guard state.music.current != nil, let device = state.device else { return }
        device.engine.musicPlayer.pause()
        // A fade waits with the music (SDL_mixer steps it only as it mixes the music).
        if !state.music.hooked {
            let gain = device.engine.music.gain
            state.freezeFade(gain: gain)
            try? device.engine.music.setGain(gain)
        }
        state.music.paused = true
    }
}

@_cdecl("Mix_ResumeMusic")
public func mixResumeMusic() {
    StandIn.shared.state.withLock { state in
        guard state.music.current != nil, let device = state.device else { return }
        // Held by Mix_HookMusic, it plays once the hook is gone.
        state.music.paused = false
        state.thawFade()
        device.engine.musicPlayer.play()
    }
}

/// Mix_PausedMusic: 1 while the music is paused (by Mix_PauseMusic, or by the session or the desktop's media keys,
/// which pause the same player), else 0. Held by Mix_HookMusic, it is paused only if the program paused it. Never
/// waits: safe in an audio callback (`GuardedMixerState`).
@_cdecl("Mix_PausedMusic")
public func mixPausedMusic() -> Int32 {
    StandIn.shared.state.musicAnswers.contains(.paused) ? 1 : 0
}

/// Mix_PlayingMusic: 1 while music is on (paused or silenced by the session too), else 0. Never waits.
@_cdecl("Mix_PlayingMusic")
public func mixPlayingMusic() -> Int32 {
    StandIn.shared.state.musicAnswers.contains(.playing) ? 1 : 0
}

/// Calls Mix_HookMusicFinished's callback, with no lock of the stand-in's held: it may play music again.
func deliverMusicFinished() {
    StandIn.shared.state.withLock { $0.music.finished }?()
}

extension MixerState {
    /// Ends the music on the player (emptying its queue, so an in-memory file is no longer opened) and puts the bus
    /// back to full gain; returns whether music was on, for the finished hook.
    mutating func haltMusic() -> Bool {
        guard music.current != nil else { return false }
        if let device {
            device.engine.musicPlayer.stop()
            device.engine.musicPlayer.setQueue(with: MediaItemCollection(items: []))
            try? device.engine.music.setGain(1)
        }
        music.current = nil
        music.passes = nil
        music.queued = 0
        music.paused = false
        music.fade = .none
        music.heldFade = nil
        return true
    }

    /// One step of the music on the update thread: a fade-in past its time is over, a fade-out past its time
    /// halts, a player that stopped by itself has played its last pass, and a finite loop count's queue is topped
    /// up. Nothing moves while Mix_HookMusic holds the music. Returns whether the music ended (for the finished hook).
    mutating func advanceMusic(engine: AudioEngine, now: Int) -> Bool {
        guard !music.hooked, let current = music.current, let record = try? music.registry.record(current).get() else {
            return false
        }
        switch music.fade {
        case .fadingIn(let until) where until <= now: music.fade = .none
        case .fadingOut(let until) where until <= now: return haltMusic()
        default: break
        }
        let player = engine.musicPlayer
        // The player stops by itself only at the end of its queue (a pause, the program's or the session's, is
        // `.paused` or `.interrupted`).
        if player.playbackState == .stopped && !music.paused { return haltMusic() }
        if let passes = music.passes, music.queued < passes, let index = player.indexOfNowPlayingItem,
            music.queued - index <= musicBatch / 2
        {
            let more = min(musicBatch, passes - music.queued)
            player.append(MediaItemCollection(items: Array(repeating: record.file.item, count: more)))
            music.queued += more
        }
        return false
    }
}
