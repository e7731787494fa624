import Ambience
import CSDLMixerABI

// Music's volume, position, length and loop points, and its hooks.

/// Mix_VolumeMusic: the music volume (0...128, clamped; negative only asks), the music player's own volume; returns
/// the previous one. Kept while no device is open, and applied when one opens.
@_cdecl("Mix_VolumeMusic")
public func mixVolumeMusic(_ volume: Int32) -> Int32 {
    StandIn.shared.state.withLock { state in
        let previous = Int32(state.music.volume)
        if let volume = clampedVolume(volume) {
            state.music.volume = volume
            try? state.device?.engine.musicPlayer.setVolume(gain(volume))
        }
        return previous
    }
}

/// Mix_GetMusicVolume: the music volume, for NULL (the music playing) or any loaded music (the volume is one for
/// all music, as Mix_VolumeMusic sets it); -1 for a freed or unknown music.
@_cdecl("Mix_GetMusicVolume")
public func mixGetMusicVolume(_ music: OpaquePointer?) -> Int32 {
    let pointer = music.map(MusicPointer.init)
    return StandIn.shared.state.withLock { state in
        if pointer != nil, case .failure(let error) = state.music.registry.record(pointer) {
            return refuse("Mix_GetMusicVolume: \(error.description)")
        }
        return Int32(state.music.volume)
    }
}

/// Mix_RewindMusic: the music playing starts again from its beginning.
@_cdecl("Mix_RewindMusic")
public func mixRewindMusic() {
    StandIn.shared.state.withLock { state in
        guard state.music.current != nil, let device = state.device else { return }
        try? device.engine.musicPlayer.seek(to: 0)
    }
}

/// Mix_SetMusicPosition: seconds into the music playing, for every format, tracker modules included: Debian's
/// SDL_mixer 2.6 plays modules through libmodplug, whose seek takes seconds too (the "pattern order number" of
/// SDL_mixer's documentation is its MikMod backend's). -1 with the reason when no music plays, or for a NaN,
/// infinite, negative or past-the-end position.
@_cdecl("Mix_SetMusicPosition")
public func mixSetMusicPosition(_ position: Double) -> Int32 {
    guard position.isFinite, position >= 0 else {
        return refuse("Mix_SetMusicPosition: \(position) is not a position in the music")
    }
    return StandIn.shared.state.withLock { state in
        guard let current = state.music.current, let device = state.device,
            let record = try? state.music.registry.record(current).get()
        else {
            return refuse("Mix_SetMusicPosition: music isn't playing")
        }
        // Past the end is refused, as SDL_mixer's decoders refuse it (Ogg's seek fails there).
        let duration = record.file.duration
        guard duration <= 0 || position <= duration else {
            return refuse("Mix_SetMusicPosition: \(position) s is past the end of the music (\(duration) s)")
        }
        try? device.engine.musicPlayer.seek(to: position)
        return 0
    }
}

/// Mix_GetMusicPosition: seconds into `music` (NULL: the music playing): where the player is for the music
/// playing, 0 for a loaded music that is not playing; -1 with the reason when there is none, or it was freed.
@_cdecl("Mix_GetMusicPosition")
public func mixGetMusicPosition(_ music: OpaquePointer?) -> Double {
    let named = music.map(MusicPointer.init)
    return StandIn.shared.state.withLock { state in
        switch state.music.resolve(named, "Mix_GetMusicPosition") {
        case nil: return -1
        case .some(let (pointer, _)):
            guard pointer == state.music.current, let device = state.device else { return 0 }
            return device.engine.musicPlayer.currentPlaybackTime
        }
    }
}

/// Mix_MusicDuration: seconds of one play-through of `music` (NULL: the music playing); -1 with the reason when
/// there is none, or it was freed.
@_cdecl("Mix_MusicDuration")
public func mixMusicDuration(_ music: OpaquePointer?) -> Double {
    let named = music.map(MusicPointer.init)
    return StandIn.shared.state.withLock { state in
        state.music.resolve(named, "Mix_MusicDuration")?.record.file.duration ?? -1
    }
}

/// Mix_GetMusicLoopStartTime: -1, as documented for music without loop points: the engine reads no loop tags
/// (LOOPSTART, LOOPEND, LOOPLENGTH), so no music has them. The reason says which.
@_cdecl("Mix_GetMusicLoopStartTime")
public func mixGetMusicLoopStartTime(_ music: OpaquePointer?) -> Double {
    noLoopPoints(music, "Mix_GetMusicLoopStartTime")
}

@_cdecl("Mix_GetMusicLoopEndTime")
public func mixGetMusicLoopEndTime(_ music: OpaquePointer?) -> Double { noLoopPoints(music, "Mix_GetMusicLoopEndTime") }

@_cdecl("Mix_GetMusicLoopLengthTime")
public func mixGetMusicLoopLengthTime(_ music: OpaquePointer?) -> Double {
    noLoopPoints(music, "Mix_GetMusicLoopLengthTime")
}

private func noLoopPoints(_ music: OpaquePointer?, _ function: String) -> Double {
    let named = music.map(MusicPointer.init)
    return StandIn.shared.state.withLock { state in
        if state.music.resolve(named, function) != nil {
            report("\(function): the music has no loop points (the engine reads no LOOPSTART/LOOPEND tags)")
        }
        return -1
    }
}

/// Mix_ModMusicJumpToOrder: -1: the engine seeks a module by time (Mix_SetMusicPosition), not by order.
@_cdecl("Mix_ModMusicJumpToOrder")
public func mixModMusicJumpToOrder(_ order: Int32) -> Int32 {
    refuse("Mix_ModMusicJumpToOrder is not supported: modules seek by time (Mix_SetMusicPosition), not by order")
}

/// Mix_SetMusicCMD: refused for good: the stand-in never runs an outside player.
@_cdecl("Mix_SetMusicCMD")
public func mixSetMusicCMD(_ command: UnsafePointer<CChar>?) -> Int32 {
    refuse("Mix_SetMusicCMD is not supported: music plays through the engine, never an outside command")
}

// Mix_HookMusic and Mix_GetMusicHookData: MusicHook.swift.

/// Mix_HookMusicFinished: the callback run when the music ends by itself or fades out (on the stand-in's update
/// thread, within about 10 ms) or is halted (Mix_HaltMusic, Mix_CloseAudio: on the calling thread, before the call
/// returns). Never with a lock of the stand-in's held: it may play music again. NULL removes it.
@_cdecl("Mix_HookMusicFinished")
public func mixHookMusicFinished(_ callback: standin_music_finished?) {
    StandIn.shared.state.withLock { $0.music.finished = callback }
}

extension MusicState {
    /// The music a query names: `music` when it is live, the one playing for NULL; nil (with the reason set) when
    /// it was freed or is unknown, or NULL names none.
    func resolve(_ music: MusicPointer?, _ function: String) -> (pointer: MusicPointer, record: MusicRecord)? {
        guard let pointer = music ?? current else {
            report("\(function): music isn't playing")
            return nil
        }
        switch registry.record(pointer) {
        case .success(let record): return (pointer, record)
        case .failure(let error):
            report("\(function): \(error.description)")
            return nil
        }
    }
}
