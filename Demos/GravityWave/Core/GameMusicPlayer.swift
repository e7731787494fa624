import Ambience

/// What the game asks of a music player: the subset the application player (`MusicPlayer`) and the desktop's
/// player (`SystemMusicPlayer`) share, so the pause menu's choice between them is one switch.
public protocol GameMusicPlayer: AnyObject {
    func play()
    func pause()
    func stop()
    func skipToNextItem()
    func skipToPreviousItem()
    var nowPlayingItem: MediaItem? { get }
    var playbackState: PlaybackState { get }
    var currentPlaybackTime: Double { get }
    /// The system player may refuse a queue (MPRIS opens one item at a time); the application player never does.
    func setQueue(with collection: MediaItemCollection) throws
    /// Adds to the end of the queue, keeping the song playing and its place (the system player may refuse).
    func append(_ collection: MediaItemCollection) throws
    func beginGeneratingPlaybackNotifications()
}

extension MusicPlayer: GameMusicPlayer {}

/// Which player the game's music goes through.
public enum PlayerChoice: String, Sendable, CaseIterable {
    /// The game's own player (`engine.musicPlayer`), mixed with the effects.
    case application
    /// The desktop's music player, driven over MPRIS.
    case system

    public var title: String { self == .application ? localized("Application") : localized("System") }
}

// The desktop's music player for the "System" choice, or nil when it cannot be reached (no session bus). This one
// line is the whole plug: without `SystemMusicPlayer` it reads
// `extension AudioEngine { var gameSystemMusicPlayer: (any GameMusicPlayer)? { nil } }`.
extension SystemMusicPlayer: GameMusicPlayer {};
extension AudioEngine {
    var gameSystemMusicPlayer: (any GameMusicPlayer)? { systemMusicPlayer.isAvailable ? systemMusicPlayer : nil }
}
