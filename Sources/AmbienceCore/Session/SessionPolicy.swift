/// Something that happened, as the session policy sees it. Monitors (the route monitor, the desktop link, the sleep
/// monitor) and the game's calls only observe and report; what follows is the policy's to decide.
package enum SessionEvent: Sendable, Equatable {
    /// `playingPlayers`: the desktop music players playing right now; `uncontrollable`: those of them that say they
    /// cannot be paused, played or controlled (MPRIS `CanPause`, `CanPlay`, `CanControl`), which are never claimed.
    case activate(playingPlayers: [String], uncontrollable: [String] = [])
    case deactivate(notifyOthers: Bool)
    /// The game is quitting; `systemMusicStartedByGame`: the desktop players it started through the system music
    /// player.
    case appWillTerminate(systemMusicStartedByGame: [String])
    /// The game played this desktop player through the system music player (Play on a paused or stopped player).
    /// `withGameMusic`: the game also handed it music of its own (a queue), so what it plays is the game's, even if
    /// it was the user's music at launch. A Play alone leaves the user's music theirs (see ARCHITECTURE, "Session").
    case systemMusicStarted(player: String, withGameMusic: Bool)
    case setCategory(SessionCategory, SessionOptions, playingPlayers: [String])
    /// A new `othersDuckedVolume`, already checked to be within `SessionState.duckedVolumes`.
    case setOthersDuckedVolume(Double)
    case enteredBackground
    case enteredForeground
    /// The screen locked (`true`) or unlocked, as logind or the screensaver says.
    case screenLockChanged(isLocked: Bool)
    /// `appAudioPlaying`: whether any of the game's audio was playing when it began.
    case interruptionBegan(appAudioPlaying: Bool)
    case interruptionEnded
    /// The sound server asked the game's stream to cork (PulseAudio's module-role-cork: a stream of a trigger role,
    /// such as a call, began); `appAudioPlaying` as for `interruptionBegan`.
    case corkRequested(appAudioPlaying: Bool)
    /// The server asked it to uncork (the call ended): ends the interruption the cork request began, and no other.
    case uncorkRequested
    /// The device the game plays on went away (its sink was removed, or its active port became unavailable);
    /// `current` is where the server moves us (nil: nowhere left).
    case currentDeviceRemoved(previous: AudioRoute, current: AudioRoute?)
    case deviceAdded(AudioRoute, current: AudioRoute)
    case defaultDeviceChanged(previous: AudioRoute, current: AudioRoute)
    /// The sink the game plays on switched to another of its ports while the old port stayed available (a port that
    /// became unavailable is `currentDeviceRemoved`). `newlyAvailable`: the new port had just become available and
    /// took over (headphones plugged in); otherwise it was picked by hand in the desktop's sound settings.
    case activePortChanged(previous: AudioRoute, current: AudioRoute, newlyAvailable: Bool)
    /// The game's output stream stopped although the sound server still has a device for it.
    case outputStreamDied
    case prepareForSleep(appAudioPlaying: Bool)
    case wokeFromSleep(current: AudioRoute)
    /// The user answered a route-change alert with Resume.
    case resumeAfterRouteChange
    /// The user answered it with Stop: what the route change paused is stopped (effects rewound to their start and
    /// held, the music stopped) and stays so; what the game starts afterwards plays.
    case stopAfterRouteChange
    /// What other programs' music is doing now, observed at each look (every 50 ms of updates, or at once when the sound server has news); the hint follows from it.
    case otherMusicChanged(OtherMusic)
    /// Whether the desktop players can be reached (the session bus is there). While they cannot, the resumes and
    /// unducks decided for them are owed, and sent when they can be reached again.
    case otherPlayersReachable(Bool)
    /// The sound server or the session bus went away, or came back.
    case mediaServicesLost(MediaService)
    case mediaServicesReset(MediaService)
}

/// What the policy decides; the session's executor carries each out, once.
package enum SessionAction: Sendable, Equatable {
    case pauseAppAudio(PauseReason)
    /// Lift the session's pause: voices and music the session paused play on from where they were.
    case resumeAppAudio
    /// Stop what the session paused, for good: the voices it held are rewound to their start and left paused (the
    /// game may play them again), and music it paused is stopped. A later `resumeAppAudio` brings none of it back.
    case stopAppAudio
    /// Silence the whole output (the game stays running and time advances).
    case silenceOutput(Bool)
    case pauseOtherPlayers([String])
    case resumeOtherPlayers([String])
    /// Turn the players down to `volume`, a fraction of their own volume.
    case duckOtherPlayers([String], volume: Double)
    case unduckOtherPlayers([String])
    /// Reopen the output on the system's default device if it is closed or dead (a live stream is left alone).
    case followDefaultDevice
    /// Move the game's live stream to the sound server's sink of this name.
    case moveStream(toSink: String)
    /// No device left: keep rendering into nothing so time advances.
    case renderToNullDevice
    case notify(SessionNotification)
    /// Pause, resume or stop the desktop player the game drives as its music (`SystemMusicPlayer.isGameMusic`):
    /// the route-change rule's part for the system music, as iOS pauses the iPod player when headphones go.
    case pauseSystemMusic(String)
    case resumeSystemMusic(String)
    case stopSystemMusic(String)

    package enum PauseReason: String, Sendable { case interruption, routeChange }
}

/// Other programs' music, as the engine observes it each update.
package struct OtherMusic: Sendable, Equatable {
    /// The desktop (MPRIS) players playing, by bus name; the game's own MPRIS player is never among them.
    package var playingPlayers: [String]
    /// A stream that says it is music (`media.role=music`) plays, of a process with no MPRIS player (mpd, cmus).
    package var musicStreamWithoutPlayer: Bool
    /// The player the game drives as its music through the system music player, if it does.
    package var gameDrivenPlayer: String?

    package init(playingPlayers: [String], musicStreamWithoutPlayer: Bool = false, gameDrivenPlayer: String? = nil) {
        self.playingPlayers = playingPlayers
        self.musicStreamWithoutPlayer = musicStreamWithoutPlayer
        self.gameDrivenPlayer = gameDrivenPlayer
    }

    /// Whether music that is not the game's plays: the player the game drives is the game's soundtrack, so it never
    /// counts (a game that silences its soundtrack on the hint would otherwise pause the very music it plays).
    package var isUsersMusicPlaying: Bool {
        musicStreamWithoutPlayer || playingPlayers.contains { $0 != gameDrivenPlayer }
    }
}

/// The state the rules depend on.
package struct SessionState: Sendable, Equatable {
    /// The values `othersDuckedVolume` may take.
    package static let duckedVolumes = 0.0...1.0

    package var category = SessionCategory.soloAmbient
    package var options = SessionOptions()
    package var isActive = false
    package var isBackgrounded = false
    /// Kept apart from `isBackgrounded`: the game's own foreground event must not unsilence a locked screen, nor an
    /// unlock a minimized game.
    package var isScreenLocked = false
    package var isInterrupted = false
    /// App audio is paused awaiting the game's Resume after the device went away.
    package var isPausedForRouteChange = false
    package var hasDevice = true
    /// Players this session paused, to resume on deactivation.
    package var pausedPlayers: [String] = []
    package var duckedPlayers: [String] = []
    /// Music that is not the game's plays (`OtherMusic.isUsersMusicPlaying`): the secondary-audio hint.
    package var otherMusicPlaying = false
    /// Other programs' music as last observed.
    package var otherMusic = OtherMusic(playingPlayers: [])
    /// The game-driven system player the route-change rule paused, for the alert's Resume or Stop.
    package var systemMusicPausedForRouteChange: String?
    /// The desktop players that were playing at the session's first activation: the user's own music, which the
    /// exit rule leaves playing.
    package internal(set) var playersPlayingAtLaunch: [String] = []
    /// The desktop players the game started through the system music player: never paused as "others", paused at exit.
    package internal(set) var playersStartedByGame: [String] = []
    /// The volume `.duckOthers` turns other players down to, as a fraction of their own (0.3: about −10 dB).
    package internal(set) var othersDuckedVolume = 0.3
    var hasBeenActivated = false
    /// The game-driven system player the user chose to resume after an unplug during an interruption.
    var systemMusicResumeAfterInterruption: String?
    var resumeAfterInterruption = false
    var interruptedByDeviceLoss = false
    /// The interruption in force was begun by the sound server's cork request: only its uncork request (or the game)
    /// ends it.
    var interruptedBySoundServer = false
    /// False while the session bus is gone: resumes and unducks are then owed rather than sent.
    var canReachOtherPlayers = true
    var owedResumes: [String] = []
    var owedUnducks: [String] = []

    package init() {}

    /// Whether the output is silenced right now: in the background or behind a locked screen, except for playback.
    package var isSilenced: Bool { (isBackgrounded || isScreenLocked) && category != .playback }
    /// The user's music is playing: the game's own soundtrack should stay quiet, sound effects still play.
    package var secondaryAudioShouldBeSilencedHint: Bool { otherMusicPlaying }
    /// Whether a desktop player was playing at the first activation.
    package var otherMusicWasPlayingAtLaunch: Bool { !playersPlayingAtLaunch.isEmpty }
    var pausesOthers: Bool {
        category == .soloAmbient
            || (category == .playback && !options.contains(.mixWithOthers) && !options.contains(.duckOthers))
    }
}

/// The session's rules as a pure state machine: events in, actions out. No I/O, no clocks, no threads.
package struct SessionPolicy: Sendable {
    package private(set) var state: SessionState

    package init(state: SessionState = SessionState()) { self.state = state }

    package mutating func handle(_ event: SessionEvent) -> [SessionAction] {
        let silencedBefore = state.isSilenced
        var actions: [SessionAction] = []
        switch event {
        case .activate(let playing, let uncontrollable):
            // Activating again is how a game recovers from an interruption whose end never came.
            if state.isInterrupted && !state.interruptedByDeviceLoss {
                state.isInterrupted = false
                state.resumeAfterInterruption = false
                state.interruptedBySoundServer = false
            }
            guard !state.isActive else { break }
            state.isActive = true
            if !state.hasBeenActivated {
                state.hasBeenActivated = true
                state.playersPlayingAtLaunch = playing
            }
            actions += claimOthers(playing.filter { !uncontrollable.contains($0) })

        case .deactivate(let notify):
            actions += deactivate(notifyOthers: notify)

        case .appWillTerminate(let started):
            // The exit rule: the players the session paused are resumed, system music the game started is paused,
            // and music that was playing at launch plays on.
            actions += deactivate(notifyOthers: true)
            let startedHere = (state.playersStartedByGame + started.filter { !state.playersStartedByGame.contains($0) })
                .filter { !state.playersPlayingAtLaunch.contains($0) }
            if !startedHere.isEmpty { actions.append(.pauseOtherPlayers(startedHere)) }

        case .systemMusicStarted(let player, let withGameMusic):
            // The game played the player: it is not resumed as one the session paused, nor paused by a later
            // activation. Given the game's own music it is the game's: not left playing at exit even if it played at
            // launch. A Play alone of the user's launch music keeps it theirs, and so left playing at exit.
            if !state.playersStartedByGame.contains(player) { state.playersStartedByGame.append(player) }
            if withGameMusic { state.playersPlayingAtLaunch.removeAll { $0 == player } }
            state.pausedPlayers.removeAll { $0 == player }
            state.owedResumes.removeAll { $0 == player }

        case .setCategory(let category, let options, let playing):
            let changed = category != state.category || options != state.options
            state.category = category
            state.options = options
            guard changed else { break }
            if !options.contains(.duckOthers) {
                actions += unduck(state.duckedPlayers)
                state.duckedPlayers = []
            }
            if state.isActive { actions += claimOthers(playing) }
            actions.append(.notify(.categoryChanged(category)))

        case .setOthersDuckedVolume(let volume):
            guard volume != state.othersDuckedVolume else { break }
            state.othersDuckedVolume = volume
            // Players ducked now go to the new depth (their own volume was kept at the first duck).
            if !state.duckedPlayers.isEmpty && state.canReachOtherPlayers {
                actions.append(.duckOtherPlayers(state.duckedPlayers, volume: volume))
            }

        case .enteredBackground:
            state.isBackgrounded = true
        case .enteredForeground:
            state.isBackgrounded = false
        case .screenLockChanged(let locked):
            // Like the background: what it silences follows from `isSilenced` below.
            state.isScreenLocked = locked

        case .interruptionBegan(let playing):
            guard !state.isInterrupted else { break }
            state.isInterrupted = true
            state.resumeAfterInterruption = playing
            if playing { actions.append(.pauseAppAudio(.interruption)) }
            actions.append(.notify(.interruption(.began)))

        case .interruptionEnded:
            actions += endInterruption()

        case .corkRequested(let playing):
            // In every category: the server has muted the game's output already (module-role-cork mutes what it asks
            // to cork), so the interruption only says so and pauses what would play on unheard. One already in force
            // (the game's, sleep, no device) stays what it is, and the uncork does not end it.
            guard !state.isInterrupted else { break }
            actions += handle(.interruptionBegan(appAudioPlaying: playing))
            state.interruptedBySoundServer = true

        case .uncorkRequested:
            guard state.interruptedBySoundServer else { break }
            actions += endInterruption()

        case .currentDeviceRemoved(let previous, let current?):
            actions.append(.followDefaultDevice)
            if !state.isPausedForRouteChange {
                state.isPausedForRouteChange = true
                actions.append(.pauseAppAudio(.routeChange))
                actions += pauseGameDrivenSystemMusic()
            }
            actions.append(
                .notify(.routeChange(RouteChange(reason: .oldDeviceUnavailable, previous: previous, current: current))))

        case .currentDeviceRemoved(let previous, nil):
            // Already on nothing (a reopen failed after the loss was decided): nothing new to say.
            guard state.hasDevice else { break }
            state.hasDevice = false
            actions.append(.renderToNullDevice)
            actions.append(
                .notify(
                    .routeChange(RouteChange(reason: .noSuitableRouteForCategory, previous: previous, current: .none))))
            if !state.isInterrupted {
                state.isInterrupted = true
                state.interruptedByDeviceLoss = true
                state.resumeAfterInterruption = true
                actions.append(.pauseAppAudio(.interruption))
                actions.append(.notify(.interruption(.began)))
            }

        case .deviceAdded(let route, let current):
            if !state.hasDevice {
                state.hasDevice = true
                actions.append(.followDefaultDevice)
                actions.append(
                    .notify(.routeChange(RouteChange(reason: .newDeviceAvailable, previous: .none, current: route))))
                if state.interruptedByDeviceLoss { actions += endInterruption() }
            } else {
                actions.append(
                    .notify(.routeChange(RouteChange(reason: .newDeviceAvailable, previous: current, current: current)))
                )
            }

        case .defaultDeviceChanged(let previous, let current):
            // A stream that never chose a sink follows the default on recent servers; the move makes sure of it.
            actions.append(.followDefaultDevice)
            if let sink = current.sink { actions.append(.moveStream(toSink: sink)) }
            actions.append(
                .notify(
                    .routeChange(RouteChange(reason: .routeConfigurationChange, previous: previous, current: current))))

        case .activePortChanged(let previous, let current, let newlyAvailable):
            // Same sink: our stream plays on, through the new port; nothing to move, nothing paused. A port that
            // appeared and took over is iOS's `newDeviceAvailable` (headphones plugged in). A port the user picked
            // while the old one was still there is `routeConfigurationChange`, not `override`: iOS keeps `override`
            // for the app's own choice (`overrideOutputAudioPort`), and a choice made in the system's settings is the
            // same kind of change as the user choosing another default device, which is reported so.
            let reason: RouteChangeReason = newlyAvailable ? .newDeviceAvailable : .routeConfigurationChange
            actions.append(.notify(.routeChange(RouteChange(reason: reason, previous: previous, current: current))))

        case .outputStreamDied:
            // The game was told when the device went; reopening on what is left is quiet.
            if state.hasDevice { actions.append(.followDefaultDevice) }

        case .prepareForSleep(let playing):
            return handle(.interruptionBegan(appAudioPlaying: playing))

        case .wokeFromSleep(let current):
            actions += endInterruption()
            actions.append(
                .notify(.routeChange(RouteChange(reason: .wakeFromSleep, previous: current, current: current))))

        case .resumeAfterRouteChange:
            guard state.isPausedForRouteChange else { break }
            state.isPausedForRouteChange = false
            if !state.isInterrupted { actions.append(.resumeAppAudio) }
            if let player = state.systemMusicPausedForRouteChange {
                // Like the game's own audio, it waits for an interruption (a call) to end.
                if state.isInterrupted {
                    state.systemMusicResumeAfterInterruption = player
                } else {
                    actions.append(.resumeSystemMusic(player))
                }
            }
            state.systemMusicPausedForRouteChange = nil

        case .stopAfterRouteChange:
            guard state.isPausedForRouteChange else { break }
            state.isPausedForRouteChange = false
            // Stop first, so that lifting the pause (now, or when an interruption ends) has nothing left to restart.
            actions.append(.stopAppAudio)
            if !state.isInterrupted { actions.append(.resumeAppAudio) }
            if let player = state.systemMusicPausedForRouteChange { actions.append(.stopSystemMusic(player)) }
            state.systemMusicPausedForRouteChange = nil

        case .otherMusicChanged(let music):
            state.otherMusic = music
            let playing = music.isUsersMusicPlaying
            guard playing != state.otherMusicPlaying else { break }
            state.otherMusicPlaying = playing
            actions.append(.notify(.silenceSecondaryAudioHint(playing)))

        case .otherPlayersReachable(let reachable):
            state.canReachOtherPlayers = reachable
            guard reachable else { break }
            actions += resume(state.owedResumes) + unduck(state.owedUnducks)
            state.owedResumes = []
            state.owedUnducks = []

        case .mediaServicesLost(let service):
            actions.append(.notify(.mediaServicesWereLost(service)))
        case .mediaServicesReset(let service):
            actions.append(.notify(.mediaServicesWereReset(service)))
            // The server that asked for the cork is gone, and its uncork with it. A new one asks the new listener
            // again at once if the call is still on (module-role-cork treats a stream it is given as new).
            if service == .soundServer && state.interruptedBySoundServer { actions += endInterruption() }
        }
        if state.isSilenced != silencedBefore { actions.insert(.silenceOutput(state.isSilenced), at: 0) }
        return actions
    }

    /// At activation (or a category change while active): pause or duck the players that are playing.
    private mutating func claimOthers(_ allPlaying: [String]) -> [SessionAction] {
        let playing = allPlaying.filter { !state.playersStartedByGame.contains($0) }
        if state.options.contains(.duckOthers) {
            let fresh = playing.filter { !state.duckedPlayers.contains($0) }
            guard !fresh.isEmpty else { return [] }
            state.duckedPlayers += fresh
            return [.duckOtherPlayers(fresh, volume: state.othersDuckedVolume)]
        }
        guard state.pausesOthers else { return [] }
        let fresh = playing.filter { !state.pausedPlayers.contains($0) }
        guard !fresh.isEmpty else { return [] }
        state.pausedPlayers += fresh
        return [.pauseOtherPlayers(fresh)]
    }

    /// The route-change rule for the system music: the player the game drives as its music is paused with the game's
    /// own audio, as iOS pauses the iPod player when the headphones go. A player the game does not drive is left
    /// alone: it is the user's, and whether their music goes on through the other device is theirs to choose.
    private mutating func pauseGameDrivenSystemMusic() -> [SessionAction] {
        guard let player = state.otherMusic.gameDrivenPlayer, state.otherMusic.playingPlayers.contains(player),
            state.canReachOtherPlayers
        else { return [] }
        state.systemMusicPausedForRouteChange = player
        return [.pauseSystemMusic(player)]
    }

    private mutating func deactivate(notifyOthers: Bool) -> [SessionAction] {
        guard state.isActive else { return [] }
        state.isActive = false
        defer {
            state.duckedPlayers = []
            state.pausedPlayers = []
        }
        return unduck(state.duckedPlayers) + (notifyOthers ? resume(state.pausedPlayers) : [])
    }

    /// Resumes `players` now, or owes it to them until the session bus is back.
    private mutating func resume(_ players: [String]) -> [SessionAction] {
        actNowOrOwe(players, owed: \.owedResumes, SessionAction.resumeOtherPlayers)
    }

    /// Restores `players`' volume now, or owes it to them until the session bus is back.
    private mutating func unduck(_ players: [String]) -> [SessionAction] {
        actNowOrOwe(players, owed: \.owedUnducks, SessionAction.unduckOtherPlayers)
    }

    private mutating func actNowOrOwe(
        _ players: [String], owed: WritableKeyPath<SessionState, [String]>,
        _ action: ([String]) -> SessionAction
    ) -> [SessionAction] {
        guard !players.isEmpty else { return [] }
        guard state.canReachOtherPlayers else {
            state[keyPath: owed] += players.filter { !state[keyPath: owed].contains($0) }
            return []
        }
        return [action(players)]
    }

    private mutating func endInterruption() -> [SessionAction] {
        guard state.isInterrupted else { return [] }
        state.isInterrupted = false
        state.interruptedByDeviceLoss = false
        state.interruptedBySoundServer = false
        let resume = state.resumeAfterInterruption && !state.isPausedForRouteChange
        state.resumeAfterInterruption = false
        var actions: [SessionAction] = []
        if resume { actions.append(.resumeAppAudio) }
        if let player = state.systemMusicResumeAfterInterruption { actions.append(.resumeSystemMusic(player)) }
        state.systemMusicResumeAfterInterruption = nil
        actions.append(.notify(.interruption(.ended(shouldResume: resume))))
        return actions
    }
}
