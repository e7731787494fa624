import AmbienceCore

/// Everything the engine tells the game. Delivered in order by `AudioEngine.update()`, on the thread that calls it.
///
/// The rare, large cases are indirect (boxed), so that an event takes 32 bytes: a crowd hands the game thousands of
/// `voiceFinished` a second, each written, copied and destroyed at the largest case's size, 328 bytes, before
/// (docs/bench/profile.md, "The gap between instructions and time").
public enum AudioEvent: Sendable, Equatable {
    /// A one-shot voice played to its end.
    case voiceFinished(Voice)
    /// A voice was stolen by a more important one.
    case voiceStolen(Voice)
    /// A notification from the application music player (only between begin/endGeneratingPlaybackNotifications).
    indirect case music(MusicEvent)
    /// A notification from the system music player (the desktop's own player).
    indirect case systemMusic(MusicEvent)
    /// A media library the engine watches (`AudioEngine.watch(_:)`) changed: query it again.
    case library(MediaLibraryEvent)
    /// A notification from the audio session: route changes, interruptions, the silence-secondary-audio hint.
    indirect case session(SessionNotification)
    /// A warning, given once per engine: a bounded queue was full, so events were lost (the game did not call
    /// `update()` for a long time). `queue` names the first one that lost any ("mixer", "music player", "session",
    /// …) and `count` how many it had lost by then; `AudioEngine.stats.droppedEvents` keeps the running total.
    case eventsDropped(queue: String, count: Int)
}
