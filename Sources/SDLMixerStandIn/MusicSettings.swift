import CSDLMixerABI

// MIDI and synchronisation settings: SoundFonts, Timidity's configuration, the synchro value. They belong with the
// music (a later change); until then each fails SDL_mixer's documented way.

/// Mix_SetSoundFonts: 0 (failure) for now.
@_cdecl("Mix_SetSoundFonts")
public func mixSetSoundFonts(_ paths: UnsafePointer<CChar>?) -> Int32 {
    report(notYetSupported("Mix_SetSoundFonts"))
    return 0
}

/// Mix_GetSoundFonts: NULL, no SoundFont is set.
@_cdecl("Mix_GetSoundFonts")
public func mixGetSoundFonts() -> UnsafePointer<CChar>? { nil }

/// Mix_EachSoundFont: 0, no SoundFont to visit.
@_cdecl("Mix_EachSoundFont")
public func mixEachSoundFont(_ function: standin_each_sound_font?, _ data: UnsafeMutableRawPointer?) -> Int32 {
    report("Mix_EachSoundFont: no SoundFonts are set")
    return 0
}

/// Mix_SetTimidityCfg: 0 (failure): MIDI plays through libfluidsynth, not Timidity.
@_cdecl("Mix_SetTimidityCfg")
public func mixSetTimidityCfg(_ path: UnsafePointer<CChar>?) -> Int32 {
    report("Mix_SetTimidityCfg is not supported: MIDI plays through libfluidsynth")
    return 0
}

@_cdecl("Mix_GetTimidityCfg")
public func mixGetTimidityCfg() -> UnsafePointer<CChar>? { nil }

@_cdecl("Mix_SetSynchroValue")
public func mixSetSynchroValue(_ value: Int32) -> Int32 { refuse(notYetSupported("Mix_SetSynchroValue")) }

@_cdecl("Mix_GetSynchroValue")
public func mixGetSynchroValue() -> Int32 { refuse(notYetSupported("Mix_GetSynchroValue")) }
