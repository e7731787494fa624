import Ambience
import AmbiencePlatform
import CSDLMixerABI
import Glibc

// MIDI and synchronisation settings: SoundFonts (the engine plays MIDI through libfluidsynth with one SF2 file),
// Timidity's configuration (kept and returned: the engine has no Timidity), the synchro value (a no-op, as in
// SDL_mixer 2.6).

extension MusicState {
    /// The SoundFont list in force, as Mix_GetSoundFonts reports it: SDL_SOUNDFONTS when the SDL_FORCE_SOUNDFONTS hint
    /// is set, else Mix_SetSoundFonts' list, else SDL_SOUNDFONTS, else the first of Debian's SoundFonts installed.
    var soundFontList: String? {
        let environment = ProcessEnvironment.value("SDL_SOUNDFONTS")
        if let environment, SDL_GetHintBoolean("SDL_FORCE_SOUNDFONTS", SDL_FALSE) == SDL_TRUE { return environment }
        if let soundFonts { return soundFonts }
        if let environment { return environment }
        return DecoderOptions.defaultSoundFonts.first(where: FilePaths.isReadable)
    }

    /// How music is opened: with the one SoundFont the engine takes from the list, the one SDL_mixer's fluidsynth
    /// searches first (the last listed) among those that can be read; when none can, the last listed, so that MIDI
    /// fails to load naming it. No list: the engine's own choice (Debian's SoundFonts).
    var decoderOptions: DecoderOptions {
        var options = DecoderOptions()
        let paths = (soundFontList ?? "").split(separator: ";").map(String.init).filter { !$0.isEmpty }
        options.soundFont = paths.last(where: FilePaths.isReadable) ?? paths.last
        return options
    }
}

/// Mix_SetSoundFonts: the SoundFonts for MIDI, separated by ';' (NULL forgets them); 1, as documented (0 is only for
/// memory running out). A file that is not there is reported when MIDI music loads (Mix_LoadMUS: NULL, naming it).
/// Music loaded earlier keeps the SoundFont it was checked with; music played from now on uses the new one.
@_cdecl("Mix_SetSoundFonts")
public func mixSetSoundFonts(_ paths: UnsafePointer<CChar>?) -> Int32 {
    let list = paths.map { String(cString: $0) }
    StandIn.shared.state.withLock { state in
        state.music.soundFonts = list
        state.device?.engine.musicPlayer.soundFont = state.music.decoderOptions.soundFont
    }
    return 1
}

/// Mix_GetSoundFonts: the list in force (see `soundFontList`), or NULL when there is none. The string is the
/// library's, valid until the next Mix_GetSoundFonts or Mix_SetSoundFonts call.
@_cdecl("Mix_GetSoundFonts")
public func mixGetSoundFonts() -> UnsafePointer<CChar>? {
    let text = StandIn.shared.state.withLock { state in
        free(state.music.soundFontsText.value)
        state.music.soundFontsText = Unchecked(value: state.music.soundFontList.flatMap { strdup($0) })
        return state.music.soundFontsText
    }
    return text.value.map { UnsafePointer($0) }
}

/// Mix_EachSoundFont: calls `function` with each path of the list in force, in order, and `data`, with no lock of
/// the stand-in's held; 1 when any call returned non-zero, else 0 (with the reason when there is no list).
@_cdecl("Mix_EachSoundFont")
public func mixEachSoundFont(_ function: standin_each_sound_font?, _ data: UnsafeMutableRawPointer?) -> Int32 {
    guard let function else {
        report("Mix_EachSoundFont: NULL function")
        return 0
    }
    guard let list = StandIn.shared.state.withLock({ $0.music.soundFontList }) else {
        report("Mix_EachSoundFont: no SoundFonts set")
        return 0
    }
    var found: Int32 = 0
    for path in list.split(separator: ";") where !path.isEmpty {
        if String(path).withCString({ function($0, data) }) != 0 { found = 1 }
    }
    return found
}

/// Mix_SetTimidityCfg: kept, and returned by Mix_GetTimidityCfg; 1. The engine plays MIDI through libfluidsynth
/// and has no Timidity: the file is never read.
@_cdecl("Mix_SetTimidityCfg")
public func mixSetTimidityCfg(_ path: UnsafePointer<CChar>?) -> Int32 {
    let copy = Unchecked(value: path.flatMap { strdup($0) })
    StandIn.shared.state.withLock { state in
        free(state.music.timidityConfig.value)
        state.music.timidityConfig = copy
    }
    return 1
}

/// Mix_GetTimidityCfg: the path Mix_SetTimidityCfg kept, or NULL.
@_cdecl("Mix_GetTimidityCfg")
public func mixGetTimidityCfg() -> UnsafePointer<CChar>? {
    StandIn.shared.state.withLock { $0.music.timidityConfig }.value.map { UnsafePointer($0) }
}

/// Mix_SetSynchroValue: -1, a documented no-op in SDL_mixer 2.6 (no codec supports it).
@_cdecl("Mix_SetSynchroValue")
public func mixSetSynchroValue(_ value: Int32) -> Int32 {
    refuse("Mix_SetSynchroValue does nothing: no codec supports it (as in SDL_mixer 2.6)")
}

/// Mix_GetSynchroValue: -1, a documented no-op in SDL_mixer 2.6.
@_cdecl("Mix_GetSynchroValue")
public func mixGetSynchroValue() -> Int32 {
    refuse("Mix_GetSynchroValue does nothing: no codec supports it (as in SDL_mixer 2.6)")
}
