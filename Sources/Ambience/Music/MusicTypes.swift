/// What a music player is doing (the iOS names).
public enum PlaybackState: String, Sendable {
    case stopped, playing, paused, interrupted, seekingForward, seekingBackward
}

public enum ShuffleMode: String, Sendable, CaseIterable { case off, songs, albums }
public enum RepeatMode: String, Sendable, CaseIterable { case none, one, all }

/// What a music player tells the game, delivered by `AudioEngine.update()`.
public enum MusicEvent: Sendable, Equatable {
    case nowPlayingItemDidChange(MediaItem?)
    case playbackStateDidChange(PlaybackState)
    case volumeDidChange(Float)
    case queueDidChange
    /// An item could not be played; the player moved on to the next one.
    case playbackError(MediaItem, DecodingError)
    /// System music only: a desktop player refused a command (a D-Bus error reply) or did not answer it in time.
    /// Reported whether or not notifications are being generated, and for the session's own pauses and resumes too.
    /// `command` is the MPRIS method ("Pause", "OpenUri", "AddTrack").
    case commandFailed(player: String, command: String, reason: DesktopError)
}
