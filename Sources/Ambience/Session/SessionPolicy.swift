/// Something that happened, as the session policy sees it.
public enum SessionEvent: Sendable, Equatable {
    /// `playingPlayers`: the desktop music players playing right now.
    case activate(playingPlayers: [String])
    case deactivate(notifyOthers: Bool)
    case setCategory(SessionCategory, SessionOptions, playingPlayers: [String])
    case enteredBackground
    case enteredForeground
    /// `appAudioPlaying`: whether any of the game's audio was playing when it began.
    case interruptionBegan(appAudioPlaying: Bool)
    case interruptionEnded
    /// The device the game plays on went away; `current` is where the server moves us (nil: nowhere left).
    case currentDeviceRemoved(previous: AudioRoute, current: AudioRoute?)
    case deviceAdded(AudioRoute, current: AudioRoute)
    case defaultDeviceChanged(previous: AudioRoute, current: AudioRoute)
    case prepareForSleep(appAudioPlaying: Bool)
    case wokeFromSleep(current: AudioRoute)
    /// The user answered a route-change alert with Resume.
    case resumeAfterRouteChange
    /// The user answered it with Stop: effects go on, the music stays stopped.
    case stopAfterRouteChange
    /// Whether a desktop music player is playing (not counting those the session paused).
    case otherMusicChanged(playing: Bool)
    /// The sound server or the session bus went away, or came back.
    case mediaServicesLost(MediaService)
    case mediaServicesReset(MediaService)
}

/// What the policy decides; the session carries it out.
public enum SessionAction: Sendable, Equatable {
    case pauseAppAudio(PauseReason)
    case resumeAppAudio
    /// Resume the game's sound effects but leave the music player stopped.
    case resumeEffectsOnly
    /// Silence the whole output (the game stays running and time advances).
    case silenceOutput(Bool)
    case pauseOtherPlayers([String])
    case resumeOtherPlayers([String])
    case duckOtherPlayers([String])
    case unduckOtherPlayers([String])
    /// Move output to the system's default device.
    case followDefaultDevice
    /// No device left: keep rendering into nothing so time advances.
    case renderToNullDevice
    case notify(SessionNotification)

    public enum PauseReason: String, Sendable { case interruption, routeChange }
}

/// The state the rules depend on.
public struct SessionState: Sendable, Equatable {
    public var category = SessionCategory.soloAmbient
    public var options = SessionOptions()
    public var isActive = false
    public var isBackgrounded = false
    public var isInterrupted = false
    /// App audio is paused awaiting the game's Resume after the device went away.
    public var isPausedForRouteChange = false
    public var hasDevice = true
    /// Players this session paused, to resume on deactivation.
    public var pausedPlayers: [String] = []
    public var duckedPlayers: [String] = []
    public var otherMusicPlaying = false
    var resumeAfterInterruption = false
    var interruptedByDeviceLoss = false

    public init() {}

    /// Whether the output is silenced right now.
    public var isSilenced: Bool { isBackgrounded && category != .playback }
    /// The user's music is playing: the game's own soundtrack should stay quiet, sound effects still play.
    public var secondaryAudioShouldBeSilencedHint: Bool { otherMusicPlaying }
    var pausesOthers: Bool {
        category == .soloAmbient || (category == .playback && !options.contains(.mixWithOthers) && !options.contains(.duckOthers))
    }
}

/// The session's rules as a pure state machine: events in, actions out. No I/O, no clocks, no threads.
public struct SessionPolicy: Sendable {
    public private(set) var state: SessionState

    public init(state: SessionState = SessionState()) { self.state = state }

    public mutating func handle(_ event: SessionEvent) -> [SessionAction] {
        let silencedBefore = state.isSilenced
        var actions: [SessionAction] = []
        switch event {
        case .activate(let playing):
            // Activating again is how a game recovers from an interruption whose end never came.
            if state.isInterrupted && !state.interruptedByDeviceLoss {
                state.isInterrupted = false
                state.resumeAfterInterruption = false
            }
            guard !state.isActive else { break }
            state.isActive = true
            actions += claimOthers(playing)

        case .deactivate(let notify):
            guard state.isActive else { break }
            state.isActive = false
            if !state.duckedPlayers.isEmpty { actions.append(.unduckOtherPlayers(state.duckedPlayers)) }
            if notify && !state.pausedPlayers.isEmpty { actions.append(.resumeOtherPlayers(state.pausedPlayers)) }
            state.duckedPlayers = []
            state.pausedPlayers = []

        case .setCategory(let category, let options, let playing):
            let changed = category != state.category || options != state.options
            state.category = category
            state.options = options
            guard changed else { break }
            if !state.duckedPlayers.isEmpty && !options.contains(.duckOthers) {
                actions.append(.unduckOtherPlayers(state.duckedPlayers))
                state.duckedPlayers = []
            }
            if state.isActive { actions += claimOthers(playing) }
            actions.append(.notify(.categoryChanged(category)))

        case .enteredBackground:
            state.isBackgrounded = true
        case .enteredForeground:
            state.isBackgrounded = false

        case .interruptionBegan(let playing):
            guard !state.isInterrupted else { break }
            state.isInterrupted = true
            state.resumeAfterInterruption = playing
            if playing { actions.append(.pauseAppAudio(.interruption)) }
            actions.append(.notify(.interruption(.began)))

        case .interruptionEnded:
            actions += endInterruption()

        case .currentDeviceRemoved(let previous, let current):
            if let current {
                actions.append(.followDefaultDevice)
                if !state.isPausedForRouteChange {
                    state.isPausedForRouteChange = true
                    actions.append(.pauseAppAudio(.routeChange))
                }
                actions.append(.notify(.routeChange(RouteChange(reason: .oldDeviceUnavailable, previous: previous, current: current))))
            } else {
                state.hasDevice = false
                actions.append(.renderToNullDevice)
                actions.append(.notify(.routeChange(RouteChange(reason: .noSuitableRouteForCategory, previous: previous, current: .none))))
                if !state.isInterrupted {
                    state.isInterrupted = true
                    state.interruptedByDeviceLoss = true
                    state.resumeAfterInterruption = true
                    actions.append(.pauseAppAudio(.interruption))
                    actions.append(.notify(.interruption(.began)))
                }
            }

        case .deviceAdded(let route, let current):
            if !state.hasDevice {
                state.hasDevice = true
                actions.append(.followDefaultDevice)
                actions.append(.notify(.routeChange(RouteChange(reason: .newDeviceAvailable, previous: .none, current: route))))
                if state.interruptedByDeviceLoss { actions += endInterruption() }
            } else {
                actions.append(.notify(.routeChange(RouteChange(reason: .newDeviceAvailable, previous: current, current: current))))
            }

        case .defaultDeviceChanged(let previous, let current):
            actions.append(.followDefaultDevice)
            actions.append(.notify(.routeChange(RouteChange(reason: .routeConfigurationChange, previous: previous, current: current))))

        case .prepareForSleep(let playing):
            return handle(.interruptionBegan(appAudioPlaying: playing))

        case .wokeFromSleep(let current):
            actions += endInterruption()
            actions.append(.notify(.routeChange(RouteChange(reason: .wakeFromSleep, previous: current, current: current))))

        case .resumeAfterRouteChange:
            guard state.isPausedForRouteChange else { break }
            state.isPausedForRouteChange = false
            if !state.isInterrupted { actions.append(.resumeAppAudio) }

        case .mediaServicesLost(let service):
            actions.append(.notify(.mediaServicesWereLost(service)))
        case .mediaServicesReset(let service):
            actions.append(.notify(.mediaServicesWereReset(service)))

        case .stopAfterRouteChange:
            guard state.isPausedForRouteChange else { break }
            state.isPausedForRouteChange = false
            if !state.isInterrupted { actions.append(.resumeEffectsOnly) }

        case .otherMusicChanged(let playing):
            guard playing != state.otherMusicPlaying else { break }
            state.otherMusicPlaying = playing
            actions.append(.notify(.silenceSecondaryAudioHint(playing)))
        }
        if state.isSilenced != silencedBefore { actions.insert(.silenceOutput(state.isSilenced), at: 0) }
        return actions
    }

    /// At activation (or a category change while active): pause or duck the players that are playing.
    private mutating func claimOthers(_ playing: [String]) -> [SessionAction] {
        var actions: [SessionAction] = []
        if state.options.contains(.duckOthers) {
            let fresh = playing.filter { !state.duckedPlayers.contains($0) }
            if !fresh.isEmpty {
                state.duckedPlayers += fresh
                actions.append(.duckOtherPlayers(fresh))
            }
        } else if state.pausesOthers {
            let fresh = playing.filter { !state.pausedPlayers.contains($0) }
            if !fresh.isEmpty {
                state.pausedPlayers += fresh
                actions.append(.pauseOtherPlayers(fresh))
            }
        }
        return actions
    }

    private mutating func endInterruption() -> [SessionAction] {
        guard state.isInterrupted else { return [] }
        state.isInterrupted = false
        state.interruptedByDeviceLoss = false
        let resume = state.resumeAfterInterruption && !state.isPausedForRouteChange
        state.resumeAfterInterruption = false
        var actions: [SessionAction] = []
        if resume { actions.append(.resumeAppAudio) }
        actions.append(.notify(.interruption(.ended(shouldResume: resume))))
        return actions
    }
}
