import CSDLMixerABI

// Music (Mix_LoadMUS and the rest): a later change plays it through the engine's music player. Until then no music
// can be loaded, and each function fails SDL_mixer's documented way, with the reason in Mix_GetError: loads return
// NULL (closing the source when asked), plays -1, queries the "no music" answer.

/// The music settings kept before there is music to apply them to.
struct MusicSettings {
    /// Mix_VolumeMusic, 0...128.
    var volume = Int(STANDIN_MIX_MAX_VOLUME)
    /// Mix_HookMusicFinished's callback.
    var finished: standin_music_finished?
}

@_cdecl("Mix_LoadMUS")
public func mixLoadMUS(_ file: UnsafePointer<CChar>?) -> OpaquePointer? {
    report(notYetSupported("Mix_LoadMUS"))
    return nil
}

@_cdecl("Mix_LoadMUS_RW")
public func mixLoadMUSRW(_ source: UnsafeMutablePointer<SDL_RWops>?, _ freeSource: Int32) -> OpaquePointer? {
    if freeSource != 0, let source { _ = SDL_RWclose(source) }
    report(notYetSupported("Mix_LoadMUS_RW"))
    return nil
}

@_cdecl("Mix_LoadMUSType_RW")
public func mixLoadMUSTypeRW(
    _ source: UnsafeMutablePointer<SDL_RWops>?, _ type: Mix_MusicType, _ freeSource: Int32
) -> OpaquePointer? {
    if freeSource != 0, let source { _ = SDL_RWclose(source) }
    report(notYetSupported("Mix_LoadMUSType_RW"))
    return nil
}

/// Mix_FreeMusic: no music can have been loaded, so there is nothing to free.
@_cdecl("Mix_FreeMusic")
public func mixFreeMusic(_ music: OpaquePointer?) {}

@_cdecl("Mix_PlayMusic")
public func mixPlayMusic(_ music: OpaquePointer?, _ loops: Int32) -> Int32 { refuse(notYetSupported("Mix_PlayMusic")) }

@_cdecl("Mix_FadeInMusic")
public func mixFadeInMusic(_ music: OpaquePointer?, _ loops: Int32, _ ms: Int32) -> Int32 {
    refuse(notYetSupported("Mix_FadeInMusic"))
}

@_cdecl("Mix_FadeInMusicPos")
public func mixFadeInMusicPos(_ music: OpaquePointer?, _ loops: Int32, _ ms: Int32, _ position: Double) -> Int32 {
    refuse(notYetSupported("Mix_FadeInMusicPos"))
}

/// Mix_HaltMusic: 0, as documented, whether or not music was halted.
@_cdecl("Mix_HaltMusic")
public func mixHaltMusic() -> Int32 { 0 }

/// Mix_FadeOutMusic: 0, no music was scheduled to fade.
@_cdecl("Mix_FadeOutMusic")
public func mixFadeOutMusic(_ ms: Int32) -> Int32 { 0 }

@_cdecl("Mix_FadingMusic")
public func mixFadingMusic() -> Mix_Fading { MIX_NO_FADING }

@_cdecl("Mix_PauseMusic")
public func mixPauseMusic() {}

@_cdecl("Mix_ResumeMusic")
public func mixResumeMusic() {}

@_cdecl("Mix_RewindMusic")
public func mixRewindMusic() {}

@_cdecl("Mix_PausedMusic")
public func mixPausedMusic() -> Int32 { 0 }

@_cdecl("Mix_PlayingMusic")
public func mixPlayingMusic() -> Int32 { 0 }

/// Mix_VolumeMusic: the music volume (0...128, clamped; negative only asks); returns the previous one. Kept for the
/// music to come.
@_cdecl("Mix_VolumeMusic")
public func mixVolumeMusic(_ volume: Int32) -> Int32 {
    StandIn.shared.music.withLock { settings in
        let previous = Int32(settings.volume)
        if let volume = clampedVolume(volume) { settings.volume = volume }
        return previous
    }
}

/// Mix_GetMusicVolume: for NULL (the current music), the music volume; no other music exists, so -1.
@_cdecl("Mix_GetMusicVolume")
public func mixGetMusicVolume(_ music: OpaquePointer?) -> Int32 {
    guard music == nil else { return refuse("Mix_GetMusicVolume: unknown music") }
    return StandIn.shared.music.withLock { Int32($0.volume) }
}

@_cdecl("Mix_SetMusicPosition")
public func mixSetMusicPosition(_ position: Double) -> Int32 { refuse("Mix_SetMusicPosition: no music is playing") }

@_cdecl("Mix_GetMusicPosition")
public func mixGetMusicPosition(_ music: OpaquePointer?) -> Double {
    report(notYetSupported("Mix_GetMusicPosition"))
    return -1
}

@_cdecl("Mix_MusicDuration")
public func mixMusicDuration(_ music: OpaquePointer?) -> Double {
    report(notYetSupported("Mix_MusicDuration"))
    return -1
}

@_cdecl("Mix_GetMusicLoopStartTime")
public func mixGetMusicLoopStartTime(_ music: OpaquePointer?) -> Double {
    report(notYetSupported("Mix_GetMusicLoopStartTime"))
    return -1
}

@_cdecl("Mix_GetMusicLoopEndTime")
public func mixGetMusicLoopEndTime(_ music: OpaquePointer?) -> Double {
    report(notYetSupported("Mix_GetMusicLoopEndTime"))
    return -1
}

@_cdecl("Mix_GetMusicLoopLengthTime")
public func mixGetMusicLoopLengthTime(_ music: OpaquePointer?) -> Double {
    report(notYetSupported("Mix_GetMusicLoopLengthTime"))
    return -1
}

@_cdecl("Mix_ModMusicJumpToOrder")
public func mixModMusicJumpToOrder(_ order: Int32) -> Int32 { refuse(notYetSupported("Mix_ModMusicJumpToOrder")) }

/// Mix_SetMusicCMD: refused for good: the stand-in never runs an outside player.
@_cdecl("Mix_SetMusicCMD")
public func mixSetMusicCMD(_ command: UnsafePointer<CChar>?) -> Int32 {
    refuse("Mix_SetMusicCMD is not supported: music plays through the engine, never an outside command")
}

// Mix_HookMusic and Mix_GetMusicHookData: MusicHook.swift.

/// Mix_HookMusicFinished: kept for the music to come.
@_cdecl("Mix_HookMusicFinished")
public func mixHookMusicFinished(_ callback: standin_music_finished?) {
    StandIn.shared.music.withLock { $0.finished = callback }
}
