import Ambience
import CAmbience

// The system music player (the desktop's own, over MPRIS) for C.

private func systemMusic(
    _ function: StaticString, _ engine: OpaquePointer?,
    _ body: (SystemMusicPlayer) throws -> Void
) -> ambience_status {
    api(function) { try body(try engineBox(engine).engine.systemMusicPlayer) }
}

@_cdecl("ambience_system_music_is_available")
public func ambience_system_music_is_available(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<Bool>?)
    -> ambience_status
{
    systemMusic("ambience_system_music_is_available", engine) {
        try output(out, "out_available").pointee = $0.isAvailable
    }
}

@_cdecl("ambience_system_music_set_player")
public func ambience_system_music_set_player(_ engine: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> ambience_status
{
    systemMusic("ambience_system_music_set_player", engine) { player in
        player.preferredPlayer = try name.map { (pointer) throws(APIError) in try string(pointer, "name") }
    }
}

@_cdecl("ambience_system_music_set_game_music")
public func ambience_system_music_set_game_music(_ engine: OpaquePointer?, _ isGameMusic: Bool) -> ambience_status {
    systemMusic("ambience_system_music_set_game_music", engine) { $0.isGameMusic = isGameMusic }
}

@_cdecl("ambience_system_music_get_game_music")
public func ambience_system_music_get_game_music(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<Bool>?)
    -> ambience_status
{
    systemMusic("ambience_system_music_get_game_music", engine) {
        try output(out, "out_game_music").pointee = $0.isGameMusic
    }
}

@_cdecl("ambience_system_music_play")
public func ambience_system_music_play(_ engine: OpaquePointer?) -> ambience_status {
    systemMusic("ambience_system_music_play", engine) { $0.play() }
}

@_cdecl("ambience_system_music_pause")
public func ambience_system_music_pause(_ engine: OpaquePointer?) -> ambience_status {
    systemMusic("ambience_system_music_pause", engine) { $0.pause() }
}

@_cdecl("ambience_system_music_stop")
public func ambience_system_music_stop(_ engine: OpaquePointer?) -> ambience_status {
    systemMusic("ambience_system_music_stop", engine) { $0.stop() }
}

@_cdecl("ambience_system_music_next")
public func ambience_system_music_next(_ engine: OpaquePointer?) -> ambience_status {
    systemMusic("ambience_system_music_next", engine) { $0.skipToNextItem() }
}

@_cdecl("ambience_system_music_previous")
public func ambience_system_music_previous(_ engine: OpaquePointer?) -> ambience_status {
    systemMusic("ambience_system_music_previous", engine) { $0.skipToPreviousItem() }
}

@_cdecl("ambience_system_music_set_time")
public func ambience_system_music_set_time(_ engine: OpaquePointer?, _ seconds: Double) -> ambience_status {
    systemMusic("ambience_system_music_set_time", engine) { player in
        try checked { () throws(InvalidNumber) in try player.seek(to: seconds) }
    }
}

@_cdecl("ambience_system_music_get_time")
public func ambience_system_music_get_time(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<Double>?)
    -> ambience_status
{
    systemMusic("ambience_system_music_get_time", engine) {
        try output(out, "out_seconds").pointee = $0.currentPlaybackTime
    }
}

@_cdecl("ambience_system_music_get_state")
public func ambience_system_music_get_state(
    _ engine: OpaquePointer?, _ out: UnsafeMutablePointer<ambience_playback_state>?
) -> ambience_status {
    systemMusic("ambience_system_music_get_state", engine) {
        try output(out, "out_state").pointee = cPlaybackState($0.playbackState)
    }
}

@_cdecl("ambience_system_music_get_now_playing_tag")
public func ambience_system_music_get_now_playing_tag(
    _ engine: OpaquePointer?, _ tag: ambience_tag, _ buffer: UnsafeMutablePointer<CChar>?,
    _ size: Int, _ required: UnsafeMutablePointer<Int>?
) -> ambience_status {
    systemMusic("ambience_system_music_get_now_playing_tag", engine) { player in
        let field = try tagField(tag)
        try copyOut(player.nowPlayingItem.flatMap(field) ?? "", buffer, size, required)
    }
}

@_cdecl("ambience_system_music_open")
public func ambience_system_music_open(_ engine: OpaquePointer?, _ path: UnsafePointer<CChar>?) -> ambience_status {
    systemMusic("ambience_system_music_open", engine) { player in
        let file = try string(path, "path")
        try player.setQueue(with: MediaItemCollection(items: [MediaItem(path: file)]))
    }
}
