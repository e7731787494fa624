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
    func setQueue(with collection: MediaItemCollection)
}

extension MusicPlayer: GameMusicPlayer {}

/// Which player the game's music goes through.
public enum PlayerChoice: String, Sendable, CaseIterable {
    /// The game's own player (`engine.musicPlayer`), mixed with the effects.
    case application
    /// The desktop's music player, driven over MPRIS.
    case system

    public var title: String { self == .application ? "Application" : "System" }
}

extension AudioEngine {
    /// The desktop's music player for the "System" choice, or nil when this build of Ambience has none.
    ///
    /// `AudioEngine.systemMusicPlayer` does not exist yet. When it does, plug it in with one line here:
    /// `extension SystemMusicPlayer: GameMusicPlayer {}` and return `systemMusicPlayer` below.
    var gameSystemMusicPlayer: (any GameMusicPlayer)? { nil }
}
