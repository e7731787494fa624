import Synchronization

/// Other apps' music players, as the session needs them. The desktop layer (MPRIS) provides the real one.
protocol OtherPlayers: AnyObject, Sendable {
    /// Names of the players playing right now.
    func playingPlayers() -> [String]
    func pause(_ players: [String])
    func play(_ players: [String])
    /// Scales the players' volume (1 restores what it was).
    func duck(_ players: [String], to scale: Double)
}

/// Carries out what the session decides. The engine implements it.
protocol SessionEffects: AnyObject, Sendable {
    func perform(_ action: SessionAction)
    /// Whether any of the game's audio (voices or music) is playing.
    var isAppAudioPlaying: Bool { get }
    var currentRoute: AudioRoute { get }
}

/// The game's audio session: its category, activation, interruptions and route changes, with the rules mobile
/// games take for granted. Notifications arrive in `AudioEngine.update()` as `.session(...)` events.
///
/// All methods may be called from any thread.
public final class AudioSession: @unchecked Sendable {
    private let lock = Lock<Void>(())
    // Guarded by `lock`.
    private var policy = SessionPolicy()
    private var notifications: [SessionNotification] = []
    private var otherPlayers: OtherPlayers?
    /// Players to resume or unduck that could not be reached (no session bus at the time): sent on the next attach.
    private var owedResumes: [String] = []
    private var owedUnducks: [String] = []
    private var otherAudioPlaying = false
    private var launchMusic: [String] = []
    private weak var effects: SessionEffects?

    init() {}

    func attach(effects: SessionEffects) { lock.withLock { _ in self.effects = effects } }
    /// Sets (or clears, while the session bus is gone) the desktop players, and gives back to them what the session
    /// owed them meanwhile: a resume or an unduck decided while they could not be reached.
    func attach(otherPlayers: OtherPlayers?) {
        let (resumes, unducks) = lock.withLock { _ -> ([String], [String]) in
            self.otherPlayers = otherPlayers
            guard otherPlayers != nil else { return ([], []) }
            defer { owedResumes.removeAll(); owedUnducks.removeAll() }
            return (owedResumes, owedUnducks)
        }
        if !resumes.isEmpty { otherPlayers?.play(resumes) }
        if !unducks.isEmpty { otherPlayers?.duck(unducks, to: 1) }
    }

    // MARK: Category and activation

    public var category: SessionCategory { lock.withLock { _ in policy.state.category } }
    public var categoryOptions: SessionOptions { lock.withLock { _ in policy.state.options } }
    public var isActive: Bool { lock.withLock { _ in policy.state.isActive } }

    public func setCategory(_ category: SessionCategory, options: SessionOptions = []) {
        let playing = otherPlayersPlaying()
        handle(.setCategory(category, options, playingPlayers: playing))
    }

    /// Activates the session: applies the category's rules to other players and records what was already playing.
    /// Deactivating with `.notifyOthersOnDeactivation` resumes exactly the players the session paused.
    public func setActive(_ active: Bool, options: SetActiveOptions = []) {
        if active {
            let playing = otherPlayersPlaying()
            lock.withLock { _ in if !policy.state.isActive { launchMusic = playing } }
            handle(.activate(playingPlayers: playing))
        } else {
            handle(.deactivate(notifyOthers: options.contains(.notifyOthersOnDeactivation)))
        }
    }

    // MARK: What the session sees

    /// Another app is making sound (an uncorked stream on the sound server, or a playing music player).
    public var isOtherAudioPlaying: Bool { lock.withLock { _ in otherAudioPlaying || policy.state.otherMusicPlaying } }
    /// The user's music is playing: keep the game's own soundtrack quiet; effects still play.
    public var secondaryAudioShouldBeSilencedHint: Bool { lock.withLock { _ in policy.state.secondaryAudioShouldBeSilencedHint } }
    /// Whether a music player was playing when the session was activated (and which), so it can be left alone at exit.
    public var otherMusicWasPlayingAtLaunch: Bool { lock.withLock { _ in !launchMusic.isEmpty } }
    public var playersPlayingAtLaunch: [String] { lock.withLock { _ in launchMusic } }
    public var isOutputSilenced: Bool { lock.withLock { _ in policy.state.isSilenced } }
    public var isInterrupted: Bool { lock.withLock { _ in policy.state.isInterrupted } }
    /// App audio is paused after the output device went away, until `resumeAfterRouteChange()`.
    public var isPausedForRouteChange: Bool { lock.withLock { _ in policy.state.isPausedForRouteChange } }
    public var currentRoute: AudioRoute { lock.withLock { _ in effects }?.currentRoute ?? .none }
    /// A snapshot of the rules' state, for logging and tests.
    public var state: SessionState { lock.withLock { _ in policy.state } }

    // MARK: Events from the game

    /// The game went to the background (window minimized or hidden, screen locked).
    public func enterBackground() { handle(.enteredBackground) }
    public func enterForeground() { handle(.enteredForeground) }

    /// Starts an interruption the game itself causes (an in-game video, voice chat).
    public func beginInterruption() {
        let playing = lock.withLock { _ in effects }?.isAppAudioPlaying ?? false
        handle(.interruptionBegan(appAudioPlaying: playing))
    }

    public func endInterruption() { handle(.interruptionEnded) }

    /// The game's answer to an `oldDeviceUnavailable` alert: resume app audio where it paused.
    public func resumeAfterRouteChange() { handle(.resumeAfterRouteChange) }

    /// The other answer: sound effects go on, the music stays stopped (stop the player as well to forget its place).
    public func stopAfterRouteChange() { handle(.stopAfterRouteChange) }

    // MARK: Events from the system

    func systemWillSleep() {
        let playing = lock.withLock { _ in effects }?.isAppAudioPlaying ?? false
        handle(.prepareForSleep(appAudioPlaying: playing))
    }

    func otherAudioChanged(streamsPlaying: Bool, musicPlaying: Bool) {
        lock.withLock { _ in otherAudioPlaying = streamsPlaying }
        handle(.otherMusicChanged(playing: musicPlaying))
    }

    /// Feeds an event to the rules and carries out what they decide.
    func handle(_ event: SessionEvent) {
        let (actions, effects, players) = lock.withLock { _ in
            let actions = policy.handle(event)
            for case .notify(let note) in actions where notifications.count < 1024 { notifications.append(note) }
            return (actions, self.effects, otherPlayers)
        }
        for action in actions {
            switch action {
            case .pauseOtherPlayers(let names): players?.pause(names)
            case .resumeOtherPlayers(let names):
                if let players { players.play(names) } else { lock.withLock { _ in owedResumes += names } }
            case .duckOtherPlayers(let names): players?.duck(names, to: 0.3)
            case .unduckOtherPlayers(let names):
                if let players { players.duck(names, to: 1) } else { lock.withLock { _ in owedUnducks += names } }
            case .notify: break
            default: effects?.perform(action)
            }
        }
    }

    func drainNotifications() -> [SessionNotification] {
        lock.withLock { _ in
            let drained = notifications
            notifications.removeAll(keepingCapacity: true)
            return drained
        }
    }

    private func otherPlayersPlaying() -> [String] {
        lock.withLock { _ in otherPlayers }?.playingPlayers() ?? []
    }
}
