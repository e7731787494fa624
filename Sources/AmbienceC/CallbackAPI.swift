// ambience.h: the event callbacks, and delivering each event to them in update().

import Ambience
import CAmbience
import Glibc

// MARK: - Callbacks

private func setCallback(
    _ function: StaticString, _ engine: OpaquePointer?,
    _ body: (inout Callbacks) -> Void
) -> ambience_status {
    api(function) {
        let box = try engineBox(engine)
        box.callbacks.withLock { body(&$0) }
    }
}

@_cdecl("ambience_set_route_change_callback")
public func ambience_set_route_change_callback(
    _ engine: OpaquePointer?, _ callback: ambience_route_change_callback?,
    _ userdata: UnsafeMutableRawPointer?
) -> ambience_status {
    setCallback("ambience_set_route_change_callback", engine) {
        $0.routeChange = callback.map { Callback(function: $0, userdata: userdata) }
    }
}

@_cdecl("ambience_set_interruption_callback")
public func ambience_set_interruption_callback(
    _ engine: OpaquePointer?, _ callback: ambience_interruption_callback?,
    _ userdata: UnsafeMutableRawPointer?
) -> ambience_status {
    setCallback("ambience_set_interruption_callback", engine) {
        $0.interruption = callback.map { Callback(function: $0, userdata: userdata) }
    }
}

@_cdecl("ambience_set_now_playing_callback")
public func ambience_set_now_playing_callback(
    _ engine: OpaquePointer?, _ callback: ambience_now_playing_callback?,
    _ userdata: UnsafeMutableRawPointer?
) -> ambience_status {
    setCallback("ambience_set_now_playing_callback", engine) {
        $0.nowPlaying = callback.map { Callback(function: $0, userdata: userdata) }
    }
}

@_cdecl("ambience_set_playback_state_callback")
public func ambience_set_playback_state_callback(
    _ engine: OpaquePointer?, _ callback: ambience_playback_state_callback?,
    _ userdata: UnsafeMutableRawPointer?
) -> ambience_status {
    setCallback("ambience_set_playback_state_callback", engine) {
        $0.playbackState = callback.map { Callback(function: $0, userdata: userdata) }
    }
}

@_cdecl("ambience_set_silence_hint_callback")
public func ambience_set_silence_hint_callback(
    _ engine: OpaquePointer?, _ callback: ambience_silence_hint_callback?,
    _ userdata: UnsafeMutableRawPointer?
) -> ambience_status {
    setCallback("ambience_set_silence_hint_callback", engine) {
        $0.silenceHint = callback.map { Callback(function: $0, userdata: userdata) }
    }
}

@_cdecl("ambience_set_playback_error_callback")
public func ambience_set_playback_error_callback(
    _ engine: OpaquePointer?, _ callback: ambience_playback_error_callback?,
    _ userdata: UnsafeMutableRawPointer?
) -> ambience_status {
    setCallback("ambience_set_playback_error_callback", engine) {
        $0.playbackError = callback.map { Callback(function: $0, userdata: userdata) }
    }
}

@_cdecl("ambience_set_voice_finished_callback")
public func ambience_set_voice_finished_callback(
    _ engine: OpaquePointer?, _ callback: ambience_voice_finished_callback?,
    _ userdata: UnsafeMutableRawPointer?
) -> ambience_status {
    setCallback("ambience_set_voice_finished_callback", engine) {
        $0.voiceFinished = callback.map { Callback(function: $0, userdata: userdata) }
    }
}

@_cdecl("ambience_set_library_changed_callback")
public func ambience_set_library_changed_callback(
    _ engine: OpaquePointer?, _ callback: ambience_library_changed_callback?,
    _ userdata: UnsafeMutableRawPointer?
) -> ambience_status {
    setCallback("ambience_set_library_changed_callback", engine) {
        $0.libraryChanged = callback.map { Callback(function: $0, userdata: userdata) }
    }
}

@_cdecl("ambience_set_media_services_callback")
public func ambience_set_media_services_callback(
    _ engine: OpaquePointer?, _ callback: ambience_media_services_callback?,
    _ userdata: UnsafeMutableRawPointer?
) -> ambience_status {
    setCallback("ambience_set_media_services_callback", engine) {
        $0.mediaServices = callback.map { Callback(function: $0, userdata: userdata) }
    }
}

// MARK: - Delivering events

/// Calls the C callback for one event. The callbacks are read under the lock and called outside it, so a callback
/// may call anything, including setting callbacks or destroying the engine.
func deliver(_ event: AudioEvent, to box: EngineBox) {
    let callbacks = box.callbacks.withLock { $0 }
    switch event {
    case .voiceFinished(let voice), .voiceStolen(let voice):
        let how = if case .voiceStolen = event { AMBIENCE_VOICE_STOLEN } else { AMBIENCE_VOICE_FINISHED }
        let id = registry.withLock { state -> UInt64? in
            guard let id = state.voiceIDs[voice] else { return nil }
            state.removeVoice(id)
            return id
        }
        if let id, let callback = callbacks.voiceFinished { callback.function(callback.userdata, id, how) }
    case .music(let music):
        deliver(music, callbacks)
    case .systemMusic, .library, .eventsDropped:
        // C reads the system player through its getters; libraries opened through the C API deliver their own events;
        // lost events are counted by ambience_engine_dropped_events.
        break
    case .session(let note):
        deliver(note, callbacks)
    }
}

private func deliver(_ event: MusicEvent, _ callbacks: Callbacks) {
    switch event {
    case .nowPlayingItemDidChange(let item):
        guard let callback = callbacks.nowPlaying else { return }
        guard let item else { return callback.function(callback.userdata, nil) }
        withMediaItem(item) { callback.function(callback.userdata, $0) }
    case .playbackStateDidChange(let state):
        guard let callback = callbacks.playbackState else { return }
        callback.function(callback.userdata, cPlaybackState(state))
    case .playbackError(let item, let error):
        guard let callback = callbacks.playbackError else { return }
        item.url.withCString { path in
            error.description.withCString { message in callback.function(callback.userdata, path, message) }
        }
    case .volumeDidChange, .queueDidChange, .commandFailed:
        // The application player never fails a desktop command; system music is read through its getters.
        break
    }
}

private func deliver(_ note: SessionNotification, _ callbacks: Callbacks) {
    switch note {
    case .routeChange(let change):
        guard let callback = callbacks.routeChange else { return }
        withRoute(change.previous) { previous in
            withRoute(change.current) { current in
                var c = ambience_route_change(
                    reason: cRouteChangeReason(change.reason), previous: previous, current: current)
                callback.function(callback.userdata, &c)
            }
        }
    case .interruption(let interruption):
        guard let callback = callbacks.interruption else { return }
        switch interruption {
        case .began: callback.function(callback.userdata, AMBIENCE_INTERRUPTION_BEGAN, false)
        case .ended(let shouldResume): callback.function(callback.userdata, AMBIENCE_INTERRUPTION_ENDED, shouldResume)
        }
    case .silenceSecondaryAudioHint(let silence):
        guard let callback = callbacks.silenceHint else { return }
        callback.function(callback.userdata, silence)
    case .mediaServicesWereLost(let service), .mediaServicesWereReset(let service):
        guard let callback = callbacks.mediaServices else { return }
        let available = if case .mediaServicesWereReset = note { true } else { false }
        callback.function(callback.userdata, cMediaService(service), available)
    case .categoryChanged:
        break
    }
}

private func withRoute<R>(_ route: AudioRoute, _ body: (ambience_route) -> R) -> R {
    route.name.withCString { name in
        route.driver.withCString { driver in
            withOptionalCString(route.sink) { sink in body(ambience_route(name: name, driver: driver, sink: sink)) }
        }
    }
}

private func withMediaItem<R>(_ item: MediaItem, _ body: (UnsafePointer<ambience_media_item>) -> R) -> R {
    item.url.withCString { path in
        withOptionalCString(item.title) { title in
            withOptionalCString(item.artist) { artist in
                withOptionalCString(item.albumTitle) { album in
                    var c = ambience_media_item(
                        path: path, title: title, artist: artist, album: album,
                        duration: item.playbackDuration,
                        track_number: Int32(clamping: item.trackNumber ?? 0),
                        persistent_id: item.persistentID)
                    return body(&c)
                }
            }
        }
    }
}

// MARK: - Enum mapping (explicit, both ways)

func cPlaybackState(_ state: PlaybackState) -> ambience_playback_state {
    switch state {
    case .stopped: AMBIENCE_PLAYBACK_STOPPED
    case .playing: AMBIENCE_PLAYBACK_PLAYING
    case .paused: AMBIENCE_PLAYBACK_PAUSED
    case .interrupted: AMBIENCE_PLAYBACK_INTERRUPTED
    case .seekingForward: AMBIENCE_PLAYBACK_SEEKING_FORWARD
    case .seekingBackward: AMBIENCE_PLAYBACK_SEEKING_BACKWARD
    }
}

func cMediaService(_ service: MediaService) -> ambience_media_service {
    switch service {
    case .soundServer: AMBIENCE_SERVICE_SOUND_SERVER
    case .sessionBus: AMBIENCE_SERVICE_SESSION_BUS
    }
}

func cRouteChangeReason(_ reason: RouteChangeReason) -> ambience_route_change_reason {
    switch reason {
    case .newDeviceAvailable: AMBIENCE_ROUTE_NEW_DEVICE_AVAILABLE
    case .oldDeviceUnavailable: AMBIENCE_ROUTE_OLD_DEVICE_UNAVAILABLE
    case .categoryChange: AMBIENCE_ROUTE_CATEGORY_CHANGE
    case .override: AMBIENCE_ROUTE_OVERRIDE
    case .wakeFromSleep: AMBIENCE_ROUTE_WAKE_FROM_SLEEP
    case .noSuitableRouteForCategory: AMBIENCE_ROUTE_NO_SUITABLE_ROUTE_FOR_CATEGORY
    case .routeConfigurationChange: AMBIENCE_ROUTE_CONFIGURATION_CHANGE
    }
}
