// ambience.h: the application music player.

import Ambience
import AmbiencePlatform
import CAmbience

/// Runs a music-player call on a running engine.
private func music(
    _ function: StaticString, _ engine: OpaquePointer?,
    _ body: (MusicPlayer) throws -> Void
) -> ambience_status {
    api(function) { try body(try engineBox(engine).engine.musicPlayer) }
}

@_cdecl("ambience_music_set_queue")
public func ambience_music_set_queue(
    _ engine: OpaquePointer?, _ paths: UnsafePointer<UnsafePointer<CChar>?>?,
    _ count: Int
) -> ambience_status {
    music("ambience_music_set_queue", engine) { player in
        let paths = try strings(paths, count: count, "paths")
        player.setQueue(with: MediaItemCollection(items: paths.map(MediaItem.init(path:))))
    }
}

@_cdecl("ambience_music_append")
public func ambience_music_append(
    _ engine: OpaquePointer?, _ paths: UnsafePointer<UnsafePointer<CChar>?>?,
    _ count: Int
) -> ambience_status {
    music("ambience_music_append", engine) { player in
        let paths = try strings(paths, count: count, "paths")
        player.append(MediaItemCollection(items: paths.map(MediaItem.init(path:))))
    }
}

@_cdecl("ambience_music_get_queue_count")
public func ambience_music_get_queue_count(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<Int>?)
    -> ambience_status
{
    music("ambience_music_get_queue_count", engine) { player in
        try output(out, "out_count").pointee = player.items.count
    }
}

@_cdecl("ambience_music_play")
public func ambience_music_play(_ engine: OpaquePointer?) -> ambience_status {
    music("ambience_music_play", engine) { $0.play() }
}

@_cdecl("ambience_music_pause")
public func ambience_music_pause(_ engine: OpaquePointer?) -> ambience_status {
    music("ambience_music_pause", engine) { $0.pause() }
}

@_cdecl("ambience_music_stop")
public func ambience_music_stop(_ engine: OpaquePointer?) -> ambience_status {
    music("ambience_music_stop", engine) { $0.stop() }
}

@_cdecl("ambience_music_next")
public func ambience_music_next(_ engine: OpaquePointer?) -> ambience_status {
    music("ambience_music_next", engine) { $0.skipToNextItem() }
}

@_cdecl("ambience_music_previous")
public func ambience_music_previous(_ engine: OpaquePointer?) -> ambience_status {
    music("ambience_music_previous", engine) { $0.skipToPreviousItem() }
}

@_cdecl("ambience_music_set_time")
public func ambience_music_set_time(_ engine: OpaquePointer?, _ seconds: Double) -> ambience_status {
    music("ambience_music_set_time", engine) { player in
        try checked { () throws(InvalidNumber) in try player.seek(to: seconds) }
    }
}

@_cdecl("ambience_music_get_time")
public func ambience_music_get_time(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<Double>?) -> ambience_status {
    music("ambience_music_get_time", engine) { player in
        try output(out, "out_seconds").pointee = player.currentPlaybackTime
    }
}

@_cdecl("ambience_music_get_state")
public func ambience_music_get_state(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<ambience_playback_state>?)
    -> ambience_status
{
    music("ambience_music_get_state", engine) { player in
        try output(out, "out_state").pointee = cPlaybackState(player.playbackState)
    }
}

@_cdecl("ambience_music_get_now_playing")
public func ambience_music_get_now_playing(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<ambience_now_playing>?)
    -> ambience_status
{
    music("ambience_music_get_now_playing", engine) { player in
        let target = try output(out, "out_info")
        var info = ambience_now_playing(
            has_item: false, queue_index: -1, duration: 0, track_number: 0, persistent_id: 0)
        if let item = player.nowPlayingItem {
            info.has_item = true
            info.queue_index = Int64(player.indexOfNowPlayingItem ?? -1)
            info.duration = item.playbackDuration
            info.track_number = Int32(clamping: item.trackNumber ?? 0)
            info.persistent_id = item.persistentID
        }
        target.pointee = info
    }
}

@_cdecl("ambience_music_get_now_playing_tag")
public func ambience_music_get_now_playing_tag(
    _ engine: OpaquePointer?, _ tag: ambience_tag, _ buffer: UnsafeMutablePointer<CChar>?,
    _ size: Int, _ required: UnsafeMutablePointer<Int>?
) -> ambience_status {
    music("ambience_music_get_now_playing_tag", engine) { player in
        let field = try tagField(tag)
        try copyOut(player.nowPlayingItem.flatMap(field) ?? "", buffer, size, required)
    }
}

/// The `MediaItem` field an `ambience_tag` names.
func tagField(_ tag: ambience_tag) throws(APIError) -> (MediaItem) -> String? {
    switch tag {
    case AMBIENCE_TAG_TITLE: \.title
    case AMBIENCE_TAG_ARTIST: \.artist
    case AMBIENCE_TAG_ALBUM: \.albumTitle
    case AMBIENCE_TAG_ALBUM_ARTIST: \.albumArtist
    case AMBIENCE_TAG_GENRE: \.genre
    case AMBIENCE_TAG_COMPOSER: \.composer
    case AMBIENCE_TAG_PATH: \.url
    case AMBIENCE_TAG_ARTWORK:
        { item in
            switch item.artworkLocation {
            case .file(let path)?: path
            case .remote(let url)?: url
            case nil: nil
            }
        }
    default: throw APIError.invalid("tag is \(tag.rawValue), not an ambience_tag")
    }
}

@_cdecl("ambience_music_set_shuffle")
public func ambience_music_set_shuffle(_ engine: OpaquePointer?, _ mode: ambience_shuffle_mode) -> ambience_status {
    music("ambience_music_set_shuffle", engine) { player in
        switch mode {
        case AMBIENCE_SHUFFLE_OFF: player.shuffleMode = .off
        case AMBIENCE_SHUFFLE_SONGS: player.shuffleMode = .songs
        case AMBIENCE_SHUFFLE_ALBUMS: player.shuffleMode = .albums
        default: throw APIError.invalid("mode is \(mode.rawValue), not an ambience_shuffle_mode")
        }
    }
}

@_cdecl("ambience_music_get_shuffle")
public func ambience_music_get_shuffle(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<ambience_shuffle_mode>?)
    -> ambience_status
{
    music("ambience_music_get_shuffle", engine) { player in
        let target = try output(out, "out_mode")
        switch player.shuffleMode {
        case .off: target.pointee = AMBIENCE_SHUFFLE_OFF
        case .songs: target.pointee = AMBIENCE_SHUFFLE_SONGS
        case .albums: target.pointee = AMBIENCE_SHUFFLE_ALBUMS
        }
    }
}

@_cdecl("ambience_music_set_repeat")
public func ambience_music_set_repeat(_ engine: OpaquePointer?, _ mode: ambience_repeat_mode) -> ambience_status {
    music("ambience_music_set_repeat", engine) { player in
        switch mode {
        case AMBIENCE_REPEAT_NONE: player.repeatMode = .none
        case AMBIENCE_REPEAT_ONE: player.repeatMode = .one
        case AMBIENCE_REPEAT_ALL: player.repeatMode = .all
        default: throw APIError.invalid("mode is \(mode.rawValue), not an ambience_repeat_mode")
        }
    }
}

@_cdecl("ambience_music_get_repeat")
public func ambience_music_get_repeat(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<ambience_repeat_mode>?)
    -> ambience_status
{
    music("ambience_music_get_repeat", engine) { player in
        let target = try output(out, "out_mode")
        switch player.repeatMode {
        case .none: target.pointee = AMBIENCE_REPEAT_NONE
        case .one: target.pointee = AMBIENCE_REPEAT_ONE
        case .all: target.pointee = AMBIENCE_REPEAT_ALL
        }
    }
}

@_cdecl("ambience_music_set_volume")
public func ambience_music_set_volume(_ engine: OpaquePointer?, _ volume: Float) -> ambience_status {
    music("ambience_music_set_volume", engine) { player in
        try checked { () throws(InvalidNumber) in try player.setVolume(volume) }
    }
}

@_cdecl("ambience_music_get_volume")
public func ambience_music_get_volume(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<Float>?) -> ambience_status
{
    music("ambience_music_get_volume", engine) { player in
        try output(out, "out_volume").pointee = player.volume
    }
}

@_cdecl("ambience_music_set_crossfade")
public func ambience_music_set_crossfade(_ engine: OpaquePointer?, _ seconds: Double) -> ambience_status {
    music("ambience_music_set_crossfade", engine) { player in
        player.crossfadeDuration = try checked { () throws(InvalidNumber) in
            try seconds.clamped(to: MixerLimits.crossfade, "seconds")
        }
    }
}

@_cdecl("ambience_music_get_crossfade")
public func ambience_music_get_crossfade(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<Double>?)
    -> ambience_status
{
    music("ambience_music_get_crossfade", engine) { player in
        try output(out, "out_seconds").pointee = player.crossfadeDuration
    }
}

@_cdecl("ambience_music_set_loudness_matching")
public func ambience_music_set_loudness_matching(_ engine: OpaquePointer?, _ mode: ambience_loudness_matching)
    -> ambience_status
{
    music("ambience_music_set_loudness_matching", engine) { player in
        switch mode {
        case AMBIENCE_LOUDNESS_OFF: player.loudnessMatching = .off
        case AMBIENCE_LOUDNESS_TRACK: player.loudnessMatching = .track
        case AMBIENCE_LOUDNESS_ALBUM: player.loudnessMatching = .album
        case AMBIENCE_LOUDNESS_AUTOMATIC: player.loudnessMatching = .automatic
        default: throw APIError.invalid("mode is \(mode.rawValue), not an ambience_loudness_matching")
        }
    }
}

@_cdecl("ambience_music_get_loudness_matching")
public func ambience_music_get_loudness_matching(
    _ engine: OpaquePointer?,
    _ out: UnsafeMutablePointer<ambience_loudness_matching>?
) -> ambience_status {
    music("ambience_music_get_loudness_matching", engine) { player in
        let target = try output(out, "out_mode")
        switch player.loudnessMatching {
        case .off: target.pointee = AMBIENCE_LOUDNESS_OFF
        case .track: target.pointee = AMBIENCE_LOUDNESS_TRACK
        case .album: target.pointee = AMBIENCE_LOUDNESS_ALBUM
        case .automatic: target.pointee = AMBIENCE_LOUDNESS_AUTOMATIC
        }
    }
}
