/// What a music player is doing (the iOS names).
public enum PlaybackState: String, Sendable {
    /// Stopped, paused, playing, or paused by the session for an interruption (`play()` resumes it); the seeking
    /// states are iOS's, which the players here never enter (a seek is done at once).
    case stopped, playing, paused, interrupted, seekingForward, seekingBackward
}

/// Whether the queue plays in a shuffled order (the iOS names).
public enum ShuffleMode: String, Sendable, CaseIterable {
    /// The queue's own order.
    case off
    /// Every item in a shuffled order.
    case songs
    /// Albums in a shuffled order, each album's items in disc and track order.
    case albums
}

/// What happens at the end of an item and of the queue (the iOS names).
public enum RepeatMode: String, Sendable, CaseIterable {
    /// The player stops after the last item.
    case none
    /// The now-playing item plays again and again.
    case one
    /// The queue starts over after its last item.
    case all
}

/// What a music player tells the game, delivered by `AudioEngine.update()`.
public enum MusicEvent: Sendable, Equatable {
    /// Another item is playing now (nil: none, at the end of the queue).
    case nowPlayingItemDidChange(MediaItem?)
    /// The player started, paused, stopped or was interrupted.
    case playbackStateDidChange(PlaybackState)
    /// The player's own volume changed.
    case volumeDidChange(Float)
    /// Items were set, added or removed.
    case queueDidChange
    /// An item could not be played; the player moved on to the next one.
    case playbackError(MediaItem, DecodingError)
    /// System music only: a desktop player refused a command (a D-Bus error reply) or did not answer it in time.
    /// Reported whether or not notifications are being generated, and for the session's own pauses and resumes too.
    /// `command` is the MPRIS method ("Pause", "OpenUri", "AddTrack").
    case commandFailed(player: String, command: String, reason: DesktopError)
}
