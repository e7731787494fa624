import Ambience

/// What the Now Playing line says, from the player's state alone (AddMusic's `nowPlayingLabel`): how to start at
/// launch, the item while one is loaded, and a prompt to play again or pick more once the music has stopped.
public enum NowPlayingLine: Sendable, Equatable {
    /// Nothing has played yet: how to start some music.
    case instructions
    /// An item is playing or paused.
    case item(title: String?, artist: String?)
    /// The music played and stopped (the queue ended, or Stop): Play starts the queue again.
    case musicEnded

    /// `item` and `state` are the player's; `hasPlayedMusic` says whether it played this run.
    public init(item: MediaItem?, state: PlaybackState, hasPlayedMusic: Bool) {
        if let item, state != .stopped {
            self = .item(title: item.title, artist: item.artist)
        } else {
            self = hasPlayedMusic ? .musicEnded : .instructions
        }
    }

    public var text: String {
        switch self {
        case .instructions:
            localized("Press P to play the game's music, or M to add your own")
        case .item(let title, let artist):
            artist.map { localized("Now Playing: {1} by {2}", title ?? localized("Untitled"), $0) }
                ?? localized("Now Playing: {1}", title ?? localized("Untitled"))
        case .musicEnded:
            localized("Music ended. Press P to play it again, or M to pick more")
        }
    }
}

/// The play/pause button's title: Pause while the player plays (or seeks), Play otherwise. For either player.
public func playPauseTitle(_ state: PlaybackState) -> String {
    switch state {
    case .playing, .seekingForward, .seekingBackward: localized("Pause")
    case .stopped, .paused, .interrupted: localized("Play")
    }
}

/// "Play App Sound" (AddMusic's `appSoundButton`): off from the press until the engine says its voice finished (or
/// was stolen), or until the user answers a route change with Stop, which rewinds it.
public struct AppSoundButton: Sendable, Equatable {
    /// The app sound's voice: playing, or (after Stop) held at its start to be played again.
    public private(set) var voice = Voice.none
    public private(set) var isEnabled = true

    public init() {}

    /// The button was pressed and `voice` started (or resumed from its start).
    public mutating func started(_ voice: Voice) {
        self.voice = voice
        isEnabled = voice == .none
    }

    /// An event from `engine.update()`: the voice played to its end or was stolen.
    public mutating func handle(_ event: AudioEvent) {
        switch event {
        case .voiceFinished(let ended), .voiceStolen(let ended):
            guard ended == voice else { return }
            voice = .none
            isEnabled = true
        default:
            break
        }
    }

    /// The route-change alert's Stop: the engine rewound the voice and holds it; the button plays it again.
    public mutating func stoppedAfterRouteChange() { isEnabled = true }
}
