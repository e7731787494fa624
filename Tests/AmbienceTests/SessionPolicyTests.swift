import Testing
@testable import Ambience

/// The session rules, tested directly: no audio, no services.
@Suite struct SessionPolicyTests {
    static let speakers = AudioRoute(name: "Speakers", driver: "pulseaudio", sink: "speakers")
    static let headphones = AudioRoute(name: "Headphones", driver: "pulseaudio", sink: "headphones")

    static let events: [SessionEvent] = [
        .activate(playingPlayers: ["mpv"]), .deactivate(notifyOthers: true), .deactivate(notifyOthers: false),
        .setCategory(.ambient, [], playingPlayers: ["mpv"]), .enteredBackground, .enteredForeground,
        .interruptionBegan(appAudioPlaying: true), .interruptionEnded,
        .currentDeviceRemoved(previous: speakers, current: headphones), .currentDeviceRemoved(previous: speakers, current: nil),
        .deviceAdded(headphones, current: speakers), .defaultDeviceChanged(previous: speakers, current: headphones),
        .prepareForSleep(appAudioPlaying: true), .wokeFromSleep(current: speakers), .resumeAfterRouteChange, .stopAfterRouteChange,
        .otherMusicChanged(playing: true), .mediaServicesLost(.soundServer), .mediaServicesReset(.sessionBus),
        .appWillTerminate(systemMusicStartedByGame: ["rhythmbox"]), .setOthersDuckedVolume(0.5), .outputStreamDied, .otherPlayersReachable(false), .otherPlayersReachable(true),
        .systemMusicStarted(player: "mpv"),
    ]

    func policy(_ category: SessionCategory, _ options: SessionOptions = [], active: Bool = true) -> SessionPolicy {
        var policy = SessionPolicy()
        _ = policy.handle(.setCategory(category, options, playingPlayers: []))
        if active { _ = policy.handle(.activate(playingPlayers: [])) }
        return policy
    }

    /// Every category meets every event: the policy answers, and what it answers follows the table in DESIGN.md.
    @Test(arguments: SessionCategory.allCases, events)
    func everyCategoryHandlesEveryEvent(category: SessionCategory, event: SessionEvent) {
        var policy = policy(category, active: !(event == .activate(playingPlayers: ["mpv"])))
        let actions = policy.handle(event)
        switch event {
        case .activate:
            #expect(actions.contains(.pauseOtherPlayers(["mpv"])) == (category != .ambient))
        case .enteredBackground:
            #expect(actions == (category == .playback ? [] : [.silenceOutput(true)]))
            #expect(policy.state.isSilenced == (category != .playback))
        case .enteredForeground:
            #expect(actions.isEmpty)  // it was never backgrounded
        case .interruptionBegan:
            #expect(actions == [.pauseAppAudio(.interruption), .notify(.interruption(.began))])
        case .interruptionEnded, .wokeFromSleep, .resumeAfterRouteChange, .stopAfterRouteChange:
            #expect(!actions.contains(.resumeAppAudio) && !actions.contains(.resumeEffectsOnly))  // nothing was paused
        case .currentDeviceRemoved(_, let current?):
            #expect(actions == [.followDefaultDevice, .pauseAppAudio(.routeChange),
                                .notify(.routeChange(RouteChange(reason: .oldDeviceUnavailable, previous: Self.speakers, current: current)))])
        case .currentDeviceRemoved(_, nil):
            #expect(actions.contains(.renderToNullDevice))
            #expect(actions.contains(.notify(.routeChange(RouteChange(reason: .noSuitableRouteForCategory, previous: Self.speakers, current: .none)))))
        case .deviceAdded:
            #expect(actions == [.notify(.routeChange(RouteChange(reason: .newDeviceAvailable, previous: Self.speakers, current: Self.speakers)))])
        case .defaultDeviceChanged(let previous, let current):
            #expect(actions == [.followDefaultDevice, .moveStream(toSink: "headphones"),
                                .notify(.routeChange(RouteChange(reason: .routeConfigurationChange, previous: previous, current: current)))])
        case .appWillTerminate:
            #expect(actions == [.pauseOtherPlayers(["rhythmbox"])])  // started by the game, not playing at launch
            #expect(!policy.state.isActive)
        case .setOthersDuckedVolume(let volume):
            #expect(actions.isEmpty)  // nobody is ducked
            #expect(policy.state.othersDuckedVolume == volume)
        case .outputStreamDied:
            #expect(actions == [.followDefaultDevice])
        case .otherPlayersReachable(let reachable):
            #expect(actions.isEmpty, "nothing is owed (reachable: \(reachable))")
        case .setCategory(let new, _, _):
            #expect(actions.contains(.notify(.categoryChanged(new))) == (new != category))
        case .deactivate(let notify):
            #expect(actions.isEmpty, "nothing was paused, so nothing is resumed (notify: \(notify))")
        case .prepareForSleep:
            #expect(actions.contains(.notify(.interruption(.began))))
        case .otherMusicChanged:
            #expect(actions == [.notify(.silenceSecondaryAudioHint(true))])
        case .mediaServicesLost(let service):
            #expect(actions == [.notify(.mediaServicesWereLost(service))])
        case .mediaServicesReset(let service):
            #expect(actions == [.notify(.mediaServicesWereReset(service))])
        case .systemMusicStarted(let player):
            #expect(actions.isEmpty)
            #expect(policy.state.playersStartedByGame == [player])
        }
    }

    @Test func soloAmbientPausesExactlyThePlayersPlayingAndResumesOnlyThem() {
        var policy = SessionPolicy()
        #expect(policy.handle(.activate(playingPlayers: ["mpv", "vlc"])) == [.pauseOtherPlayers(["mpv", "vlc"])])
        #expect(policy.handle(.deactivate(notifyOthers: true)) == [.resumeOtherPlayers(["mpv", "vlc"])])
        // A second round starts from nothing.
        #expect(policy.handle(.activate(playingPlayers: [])) == [])
        #expect(policy.handle(.deactivate(notifyOthers: true)) == [])
    }

    @Test func deactivationWithoutNotifyLeavesOthersPaused() {
        var policy = SessionPolicy()
        _ = policy.handle(.activate(playingPlayers: ["mpv"]))
        #expect(policy.handle(.deactivate(notifyOthers: false)) == [])
    }

    @Test func ambientAndMixingPlaybackLeaveOthersAlone() {
        var ambient = policy(.ambient, active: false)
        #expect(ambient.handle(.activate(playingPlayers: ["mpv"])) == [])
        var mixing = policy(.playback, .mixWithOthers, active: false)
        #expect(mixing.handle(.activate(playingPlayers: ["mpv"])) == [])
    }

    @Test func duckOthersDucksWhileActiveAndRestores() {
        var policy = policy(.playback, [.mixWithOthers, .duckOthers], active: false)
        #expect(policy.handle(.activate(playingPlayers: ["mpv"])) == [.duckOtherPlayers(["mpv"], volume: 0.3)])
        #expect(policy.handle(.deactivate(notifyOthers: true)) == [.unduckOtherPlayers(["mpv"])])
    }

    @Test func backgroundSilencesAmbientButNotPlayback() {
        var ambient = policy(.ambient)
        #expect(ambient.handle(.enteredBackground) == [.silenceOutput(true)])
        #expect(ambient.handle(.enteredForeground) == [.silenceOutput(false)])
        var playback = policy(.playback)
        #expect(playback.handle(.enteredBackground) == [])
        // Switching to ambient while in the background silences at once.
        #expect(playback.handle(.setCategory(.ambient, [], playingPlayers: [])).first == .silenceOutput(true))
    }

    @Test func interruptionResumesOnlyWhatWasPlaying() {
        var playing = policy(.soloAmbient)
        _ = playing.handle(.interruptionBegan(appAudioPlaying: true))
        #expect(playing.handle(.interruptionEnded) == [.resumeAppAudio, .notify(.interruption(.ended(shouldResume: true)))])
        var idle = policy(.soloAmbient)
        #expect(idle.handle(.interruptionBegan(appAudioPlaying: false)) == [.notify(.interruption(.began))])
        #expect(idle.handle(.interruptionEnded) == [.notify(.interruption(.ended(shouldResume: false)))])
    }

    @Test func aBeganWithoutEndedLeavesNothingStuck() {
        var policy = policy(.soloAmbient)
        _ = policy.handle(.interruptionBegan(appAudioPlaying: true))
        #expect(policy.handle(.interruptionBegan(appAudioPlaying: true)) == [])  // no double pause
        _ = policy.handle(.activate(playingPlayers: []))                        // the game reactivates
        #expect(!policy.state.isInterrupted)
        #expect(policy.handle(.interruptionEnded) == [])                         // a late end changes nothing
        _ = policy.handle(.interruptionBegan(appAudioPlaying: true))            // and a new one works normally
        #expect(policy.handle(.interruptionEnded).contains(.resumeAppAudio))
    }

    @Test func routeChangePausesUntilTheGameResumes() {
        var policy = policy(.soloAmbient)
        _ = policy.handle(.currentDeviceRemoved(previous: Self.speakers, current: Self.headphones))
        #expect(policy.state.isPausedForRouteChange)
        // A second removal does not pause twice.
        #expect(!policy.handle(.currentDeviceRemoved(previous: Self.headphones, current: Self.speakers)).contains(.pauseAppAudio(.routeChange)))
        #expect(policy.handle(.resumeAfterRouteChange) == [.resumeAppAudio])
        #expect(policy.handle(.resumeAfterRouteChange) == [])
        // Stop instead of Resume: the effects go on, the music does not.
        _ = policy.handle(.currentDeviceRemoved(previous: Self.speakers, current: Self.headphones))
        #expect(policy.handle(.stopAfterRouteChange) == [.resumeEffectsOnly])
        #expect(!policy.state.isPausedForRouteChange)
    }

    @Test func losingEveryDeviceInterruptsAndADeviceComingBackResumes() {
        var policy = policy(.soloAmbient)
        let lost = policy.handle(.currentDeviceRemoved(previous: Self.speakers, current: nil))
        #expect(lost.contains(.pauseAppAudio(.interruption)))
        #expect(lost.contains(.notify(.interruption(.began))))
        let back = policy.handle(.deviceAdded(Self.headphones, current: .none))
        #expect(back == [.followDefaultDevice,
                         .notify(.routeChange(RouteChange(reason: .newDeviceAvailable, previous: .none, current: Self.headphones))),
                         .resumeAppAudio, .notify(.interruption(.ended(shouldResume: true)))])
    }

    @Test func sleepIsAnInterruptionAndWakeIsARouteChange() {
        var policy = policy(.playback)
        #expect(policy.handle(.prepareForSleep(appAudioPlaying: true)) == [.pauseAppAudio(.interruption), .notify(.interruption(.began))])
        let woke = policy.handle(.wokeFromSleep(current: Self.speakers))
        #expect(woke.contains(.resumeAppAudio))
        #expect(woke.last == .notify(.routeChange(RouteChange(reason: .wakeFromSleep, previous: Self.speakers, current: Self.speakers))))
    }

    @Test func secondaryHintFollowsOtherMusic() {
        var policy = policy(.ambient)
        #expect(policy.handle(.otherMusicChanged(playing: true)) == [.notify(.silenceSecondaryAudioHint(true))])
        #expect(policy.state.secondaryAudioShouldBeSilencedHint)
        #expect(policy.handle(.otherMusicChanged(playing: true)) == [])
        #expect(policy.handle(.otherMusicChanged(playing: false)) == [.notify(.silenceSecondaryAudioHint(false))])
    }
    @Test func theMusicPlayingAtFirstActivationIsRememberedAsLaunchMusic() {
        var policy = SessionPolicy()
        #expect(!policy.state.otherMusicWasPlayingAtLaunch)
        _ = policy.handle(.activate(playingPlayers: ["mpv"]))
        #expect(policy.state.playersPlayingAtLaunch == ["mpv"])
        #expect(policy.state.otherMusicWasPlayingAtLaunch)
        // A later activation is not the launch: what plays then is not the user's music from before the game.
        _ = policy.handle(.deactivate(notifyOthers: true))
        _ = policy.handle(.activate(playingPlayers: ["vlc"]))
        #expect(policy.state.playersPlayingAtLaunch == ["mpv"])
    }

    @Test func resumesAndUnducksDecidedWhileThePlayersAreUnreachableAreOwedAndSentOnce() {
        var paused = SessionPolicy()
        _ = paused.handle(.activate(playingPlayers: ["mpv"]))
        #expect(paused.handle(.otherPlayersReachable(false)) == [])
        #expect(paused.handle(.deactivate(notifyOthers: true)) == [])
        #expect(paused.state.owedResumes == ["mpv"])
        #expect(paused.handle(.otherPlayersReachable(true)) == [.resumeOtherPlayers(["mpv"])])
        #expect(paused.handle(.otherPlayersReachable(true)) == [], "owed once, sent once")

        var ducked = policy(.playback, [.mixWithOthers, .duckOthers], active: false)
        _ = ducked.handle(.activate(playingPlayers: ["vlc"]))
        _ = ducked.handle(.otherPlayersReachable(false))
        #expect(ducked.handle(.setCategory(.playback, .mixWithOthers, playingPlayers: [])) == [.notify(.categoryChanged(.playback))])
        #expect(ducked.handle(.otherPlayersReachable(true)) == [.unduckOtherPlayers(["vlc"])])
        // Without notify nothing is owed: the paused players stay paused.
        var quiet = SessionPolicy()
        _ = quiet.handle(.activate(playingPlayers: ["mpv"]))
        _ = quiet.handle(.otherPlayersReachable(false))
        _ = quiet.handle(.deactivate(notifyOthers: false))
        #expect(quiet.handle(.otherPlayersReachable(true)) == [])
    }

    @Test func theDuckedVolumeIsASettingAndMovesPlayersDuckedNow() {
        var policy = policy(.playback, [.mixWithOthers, .duckOthers], active: false)
        #expect(policy.state.othersDuckedVolume == 0.3)
        #expect(policy.handle(.setOthersDuckedVolume(0.5)) == [])
        #expect(policy.handle(.activate(playingPlayers: ["mpv"])) == [.duckOtherPlayers(["mpv"], volume: 0.5)])
        #expect(policy.handle(.setOthersDuckedVolume(0.1)) == [.duckOtherPlayers(["mpv"], volume: 0.1)])
        #expect(policy.handle(.setOthersDuckedVolume(0.1)) == [])
        #expect(policy.handle(.deactivate(notifyOthers: false)) == [.unduckOtherPlayers(["mpv"])])
    }

    @Test func aDeviceLostTwiceIsReportedOnceAndAStreamThatDiesIsReopenedQuietly() {
        var policy = policy(.soloAmbient)
        #expect(policy.handle(.outputStreamDied) == [.followDefaultDevice])
        _ = policy.handle(.currentDeviceRemoved(previous: Self.speakers, current: nil))
        // A reopen failing afterwards is the same loss, already told; with no device nothing is reopened.
        #expect(policy.handle(.currentDeviceRemoved(previous: Self.speakers, current: nil)) == [])
        #expect(policy.handle(.outputStreamDied) == [])
    }
    /// The UtopiaGL rule: music playing at launch plays on after the game; music the game started stops with it.
    @Test func exitResumesWhatTheSessionPausedAndPausesOnlyMusicTheGameStarted() {
        var solo = SessionPolicy()
        _ = solo.handle(.activate(playingPlayers: ["mpv"]))
        #expect(solo.handle(.appWillTerminate(systemMusicStartedByGame: ["mpv", "rhythmbox"]))
                == [.resumeOtherPlayers(["mpv"]), .pauseOtherPlayers(["rhythmbox"])])
        var ambient = policy(.ambient, active: false)
        _ = ambient.handle(.activate(playingPlayers: ["mpv"]))
        #expect(ambient.handle(.appWillTerminate(systemMusicStartedByGame: ["mpv"])) == [])
    }

    /// Only the first activation records the user's music, and music the game started stays the game's through a
    /// deactivate and a reactivate: the reactivation does not pause it as another app's, and exit stops it.
    @Test(arguments: [SessionCategory.soloAmbient, .ambient, .playback])
    func musicTheGameStartedIsStoppedAtExitAfterAReactivation(category: SessionCategory) {
        var policy = policy(category, active: false)
        #expect(policy.handle(.activate(playingPlayers: [])) == [])
        _ = policy.handle(.systemMusicStarted(player: "mpv"))
        _ = policy.handle(.deactivate(notifyOthers: true))
        #expect(policy.handle(.activate(playingPlayers: ["mpv"])) == [], "the game's own music is not another app's")
        #expect(policy.state.playersPlayingAtLaunch.isEmpty)
        #expect(policy.handle(.appWillTerminate(systemMusicStartedByGame: [])) == [.pauseOtherPlayers(["mpv"])])
    }

    /// The user's player, playing at launch and paused by the session, taken over by the game: it is the game's
    /// now, so it is neither resumed nor left playing at exit. Another player paused by the session is resumed.
    @Test func aLaunchPlayerTheGameTookOverIsPausedAtExit() {
        var policy = SessionPolicy()
        #expect(policy.handle(.activate(playingPlayers: ["mpv", "vlc"])) == [.pauseOtherPlayers(["mpv", "vlc"])])
        _ = policy.handle(.systemMusicStarted(player: "mpv"))
        #expect(policy.state.playersPlayingAtLaunch == ["vlc"])
        _ = policy.handle(.deactivate(notifyOthers: false))
        #expect(policy.handle(.activate(playingPlayers: ["mpv"])) == [])
        #expect(policy.handle(.appWillTerminate(systemMusicStartedByGame: ["mpv"])) == [.pauseOtherPlayers(["mpv"])])
    }
}
