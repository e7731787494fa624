import AmbiencePlatform
import Synchronization

/// The game's audio session: its category, activation, interruptions and route changes, with the rules mobile
/// games take for granted. Notifications arrive in `AudioEngine.update()` as `.session(...)` events.
///
/// Every call and every observation becomes a `SessionEvent`; `SessionPolicy` decides; one `SessionExecutor`
/// carries out each action. All methods may be called from any thread.
public final class AudioSession: @unchecked Sendable {
    private let lock = Lock<Void>(())
    // Guarded by `lock`.
    private var policy = SessionPolicy()
    private var otherPlayers: OtherPlayers?
    private weak var output: SessionOutput?
    /// Uncorked streams of other apps on the sound server: reported, not a rule's input.
    private var otherStreamsPlaying = false
    private let notifications = SessionNotifications()
    private let droppedFeedback = Atomic<Int>(0)

    package init() {}

    package func attach(output: SessionOutput) { lock.withLock { _ in self.output = output } }

    /// Sets (or clears, while the session bus is gone) the desktop players. The policy then sends them what it owed
    /// them meanwhile: a resume or an unduck decided while they could not be reached.
    package func attach(otherPlayers: OtherPlayers?) {
        lock.withLock { _ in self.otherPlayers = otherPlayers }
        handle(.otherPlayersReachable(otherPlayers != nil))
    }

    // MARK: Category and activation

    /// The category in force (`soloAmbient` until set).
    public var category: SessionCategory { lock.withLock { _ in policy.state.category } }
    /// The options set with the category.
    public var categoryOptions: SessionOptions { lock.withLock { _ in policy.state.options } }
    /// Whether the session has been activated (`setActive(true)`) and not deactivated since.
    public var isActive: Bool { lock.withLock { _ in policy.state.isActive } }

    /// Sets the category and its options. While the session is active, the new rules apply at once: players that are
    /// playing are paused or ducked as the new category says, and a category without `duckOthers` gives ducked players
    /// their volume back. Delivers `categoryChanged` when anything changed.
    public func setCategory(_ category: SessionCategory, options: SessionOptions = []) {
        let (playing, uncontrollable) = otherPlayersPlaying()
        handle(.setCategory(category, options, playingPlayers: playing.filter { !uncontrollable.contains($0) }))
    }

    /// Activates the session: applies the category's rules to other players and, the first time, records what was
    /// already playing. Deactivating with `.notifyOthersOnDeactivation` resumes exactly the players the session paused.
    public func setActive(_ active: Bool, options: SetActiveOptions = []) {
        if active {
            let (playing, uncontrollable) = otherPlayersPlaying()
            handle(.activate(playingPlayers: playing, uncontrollable: uncontrollable))
        } else {
            handle(.deactivate(notifyOthers: options.contains(.notifyOthersOnDeactivation)))
        }
    }

    /// The volume `.duckOthers` turns other players down to, as a fraction of their own volume (0.3, about −10 dB,
    /// by default). Values outside 0...1 are clamped; setting NaN or an infinity keeps the old value
    /// (`setOthersDuckedVolume(_:)` says why). Players ducked at the time move to the new volume at once.
    public var othersDuckedVolume: Double {
        get { lock.withLock { _ in policy.state.othersDuckedVolume } }
        set { try? setOthersDuckedVolume(newValue) }
    }

    /// Sets `othersDuckedVolume`, clamped to `SessionState.duckedVolumes`; refuses NaN and infinities.
    public func setOthersDuckedVolume(_ volume: Double) throws(InvalidNumber) {
        handle(.setOthersDuckedVolume(try volume.clamped(to: SessionState.duckedVolumes, "othersDuckedVolume")))
    }

    // MARK: What the session sees

    /// Another app is making sound (an uncorked stream on the sound server, or a playing music player).
    public var isOtherAudioPlaying: Bool {
        lock.withLock { _ in otherStreamsPlaying || policy.state.otherMusicPlaying }
    }
    /// The user's music is playing: keep the game's own soundtrack quiet; effects still play.
    public var secondaryAudioShouldBeSilencedHint: Bool {
        lock.withLock { _ in policy.state.secondaryAudioShouldBeSilencedHint }
    }
    /// Whether a music player was playing when the session was first activated, so it can be left alone at exit.
    public var otherMusicWasPlayingAtLaunch: Bool { lock.withLock { _ in policy.state.otherMusicWasPlayingAtLaunch } }
    /// Which players those were.
    public var playersPlayingAtLaunch: [String] { lock.withLock { _ in policy.state.playersPlayingAtLaunch } }
    /// Whether the whole output is silenced now: in the background or behind a locked screen, in `ambient` and
    /// `soloAmbient`.
    public var isOutputSilenced: Bool { lock.withLock { _ in policy.state.isSilenced } }
    /// Whether an interruption has begun and not ended.
    public var isInterrupted: Bool { lock.withLock { _ in policy.state.isInterrupted } }
    /// App audio is paused after the output device went away, until `resumeAfterRouteChange()`.
    public var isPausedForRouteChange: Bool { lock.withLock { _ in policy.state.isPausedForRouteChange } }
    /// The device the game plays on (`AudioRoute.none` when there is none; "offline" for an offline engine).
    public var currentRoute: AudioRoute { lock.withLock { _ in output }?.currentRoute ?? .none }
    /// A snapshot of the rules' state, for logging and tests.
    package var state: SessionState { lock.withLock { _ in policy.state } }

    // MARK: Events from the game

    /// The game went to the background (window minimized or hidden). The screen lock the engine follows by itself
    /// (logind, the screensaver), where the desktop reports it; a game that learns of it otherwise may call this.
    public func enterBackground() { handle(.enteredBackground) }
    /// The game came back to the foreground: what the background silenced is heard again (unless the screen is locked).
    public func enterForeground() { handle(.enteredForeground) }

    /// Starts an interruption the game itself causes (an in-game video, voice chat).
    public func beginInterruption() { handle(.interruptionBegan(appAudioPlaying: isAppAudioPlaying)) }

    /// Ends the interruption `beginInterruption()` began. App audio that was playing when it began resumes, and
    /// `ended(shouldResume: true)` is delivered (unless a route change is waiting for its answer).
    public func endInterruption() { handle(.interruptionEnded) }

    /// The game's answer to an `oldDeviceUnavailable` alert: resume app audio where it paused.
    public func resumeAfterRouteChange() { handle(.resumeAfterRouteChange) }

    /// The other answer, Stop: the effects the route change paused are stopped and rewound to their start (their
    /// voices stay alive and paused, so `voice.resume()` plays one again from the top, as a Play button would; stop
    /// them to free them), and music the session paused is stopped. Nothing of it comes back with a later resume;
    /// what the game starts afterwards plays.
    public func stopAfterRouteChange() { handle(.stopAfterRouteChange) }

    // MARK: Events from the system

    package func otherAudioChanged(streamsPlaying: Bool, music: OtherMusic) {
        lock.withLock { _ in otherStreamsPlaying = streamsPlaying }
        handle(.otherMusicChanged(music))
    }

    /// Events waiting, within one `handle` call, to be fed back to the rules. A batch reveals at most one today (a
    /// device that would not open); the cap bounds what any later fan-out could hold.
    static let feedbackCapacity = 64

    /// Feeds an event to the rules and carries out what they decide, in order, outside the lock. What carrying out
    /// revealed (a device that would not open) is fed back after the whole batch.
    package func handle(_ event: SessionEvent) {
        // Past the cap the newest are refused: the ones already waiting came first and are handled in order. Made
        // only once carrying out reveals an event: most batches reveal none (a look every 50 ms feeds one event).
        var pending: EventQueue<SessionEvent>? = nil
        var next: SessionEvent? = event
        switch event {
        case .mediaServicesLost(let service):
            Log.info("session: \(service) went away; playing on without it until it is back")
        case .mediaServicesReset(let service): Log.info("session: \(service) is back")
        default: break
        }
        while let current = next {
            let (actions, executor) = lock.withLock { _ in
                (
                    policy.handle(current),
                    SessionExecutor(output: output, otherPlayers: otherPlayers, notifications: notifications)
                )
            }
            // Only events that change something: some (other apps' music) are observed at each look, every 50 ms.
            if !actions.isEmpty { Log.debug("session: \(current) -> \(actions.count) actions") }
            for action in actions {
                for revealed in executor.perform(action) {
                    if pending == nil {
                        pending = EventQueue(capacity: Self.feedbackCapacity, overflow: .dropNewest)
                    }
                    pending?.push(revealed)
                }
            }
            next = pending?.pop()
        }
        if let dropped = pending?.dropped, dropped > 0 { droppedFeedback.add(dropped, ordering: .relaxed) }
    }

    package func drainNotifications() -> [SessionNotification] { notifications.drain() }

    /// Notifications lost to a full queue, and fed-back events refused by a full one.
    package var droppedEvents: Int { notifications.dropped.addingSaturated(droppedFeedback.load(ordering: .relaxed)) }

    private var isAppAudioPlaying: Bool { lock.withLock { _ in output }?.isAppAudioPlaying ?? false }

    /// The players playing now, and those of them the session must leave alone.
    private func otherPlayersPlaying() -> (playing: [String], uncontrollable: [String]) {
        guard let players = lock.withLock({ _ in otherPlayers }) else { return ([], []) }
        let playing = players.playingPlayers()
        return (playing, players.uncontrollable(playing))
    }
}
