// ambience.h: the audio session.

import Ambience
import CAmbience

private func session(
    _ function: StaticString, _ engine: OpaquePointer?,
    _ body: (AudioSession) throws -> Void
) -> ambience_status {
    api(function) { try body(try engineBox(engine).engine.session) }
}

@_cdecl("ambience_session_set_category")
public func ambience_session_set_category(
    _ engine: OpaquePointer?, _ category: ambience_session_category,
    _ options: UInt32
) -> ambience_status {
    session("ambience_session_set_category", engine) { session in
        let chosen: SessionCategory
        switch category {
        case AMBIENCE_CATEGORY_AMBIENT: chosen = .ambient
        case AMBIENCE_CATEGORY_SOLO_AMBIENT: chosen = .soloAmbient
        case AMBIENCE_CATEGORY_PLAYBACK: chosen = .playback
        default: throw APIError.invalid("category is \(category.rawValue), not an ambience_session_category")
        }
        let known = UInt32(AMBIENCE_SESSION_MIX_WITH_OTHERS | AMBIENCE_SESSION_DUCK_OTHERS)
        guard options & ~known == 0 else {
            throw APIError.invalid("options 0x\(String(options, radix: 16)) has unknown bits")
        }
        var set: SessionOptions = []
        if options & UInt32(AMBIENCE_SESSION_MIX_WITH_OTHERS) != 0 { set.insert(.mixWithOthers) }
        if options & UInt32(AMBIENCE_SESSION_DUCK_OTHERS) != 0 { set.insert(.duckOthers) }
        session.setCategory(chosen, options: set)
    }
}

@_cdecl("ambience_session_set_active")
public func ambience_session_set_active(_ engine: OpaquePointer?, _ active: Bool, _ flags: UInt32) -> ambience_status {
    session("ambience_session_set_active", engine) { session in
        let known = UInt32(AMBIENCE_SESSION_NOTIFY_OTHERS_ON_DEACTIVATION)
        guard flags & ~known == 0 else {
            throw APIError.invalid("flags 0x\(String(flags, radix: 16)) has unknown bits")
        }
        session.setActive(active, options: flags & known != 0 ? .notifyOthersOnDeactivation : [])
    }
}

@_cdecl("ambience_session_set_others_ducked_volume")
public func ambience_session_set_others_ducked_volume(_ engine: OpaquePointer?, _ volume: Double) -> ambience_status {
    session("ambience_session_set_others_ducked_volume", engine) { session in
        try checked { () throws(InvalidNumber) in try session.setOthersDuckedVolume(volume) }
    }
}

@_cdecl("ambience_session_get_others_ducked_volume")
public func ambience_session_get_others_ducked_volume(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<Double>?)
    -> ambience_status
{
    session("ambience_session_get_others_ducked_volume", engine) { session in
        try output(out, "out_volume").pointee = session.othersDuckedVolume
    }
}

@_cdecl("ambience_session_get_state")
public func ambience_session_get_state(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<ambience_session_state>?)
    -> ambience_status
{
    session("ambience_session_get_state", engine) { session in
        let target = try output(out, "out_state")
        let s = session.state
        var c = ambience_session_state()
        switch s.category {
        case .ambient: c.category = AMBIENCE_CATEGORY_AMBIENT
        case .soloAmbient: c.category = AMBIENCE_CATEGORY_SOLO_AMBIENT
        case .playback: c.category = AMBIENCE_CATEGORY_PLAYBACK
        }
        c.options =
            (s.options.contains(.mixWithOthers) ? UInt32(AMBIENCE_SESSION_MIX_WITH_OTHERS) : 0)
            | (s.options.contains(.duckOthers) ? UInt32(AMBIENCE_SESSION_DUCK_OTHERS) : 0)
        c.is_active = s.isActive
        c.is_other_audio_playing = session.isOtherAudioPlaying
        c.secondary_audio_should_be_silenced_hint = s.secondaryAudioShouldBeSilencedHint
        c.other_music_was_playing_at_launch = session.otherMusicWasPlayingAtLaunch
        c.is_output_silenced = s.isSilenced
        c.is_backgrounded = s.isBackgrounded
        c.is_interrupted = s.isInterrupted
        c.is_paused_for_route_change = s.isPausedForRouteChange
        target.pointee = c
    }
}

@_cdecl("ambience_session_get_route")
public func ambience_session_get_route(
    _ engine: OpaquePointer?, _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int,
    _ required: UnsafeMutablePointer<Int>?
) -> ambience_status {
    session("ambience_session_get_route", engine) { session in
        try copyOut(session.currentRoute.name, buffer, size, required)
    }
}

@_cdecl("ambience_session_begin_interruption")
public func ambience_session_begin_interruption(_ engine: OpaquePointer?) -> ambience_status {
    session("ambience_session_begin_interruption", engine) { $0.beginInterruption() }
}

@_cdecl("ambience_session_end_interruption")
public func ambience_session_end_interruption(_ engine: OpaquePointer?) -> ambience_status {
    session("ambience_session_end_interruption", engine) { $0.endInterruption() }
}

@_cdecl("ambience_session_enter_background")
public func ambience_session_enter_background(_ engine: OpaquePointer?) -> ambience_status {
    session("ambience_session_enter_background", engine) { $0.enterBackground() }
}

@_cdecl("ambience_session_enter_foreground")
public func ambience_session_enter_foreground(_ engine: OpaquePointer?) -> ambience_status {
    session("ambience_session_enter_foreground", engine) { $0.enterForeground() }
}

@_cdecl("ambience_session_resume_after_route_change")
public func ambience_session_resume_after_route_change(_ engine: OpaquePointer?) -> ambience_status {
    session("ambience_session_resume_after_route_change", engine) { $0.resumeAfterRouteChange() }
}

@_cdecl("ambience_session_stop_after_route_change")
public func ambience_session_stop_after_route_change(_ engine: OpaquePointer?) -> ambience_status {
    session("ambience_session_stop_after_route_change", engine) { $0.stopAfterRouteChange() }
}
