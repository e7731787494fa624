import Testing

@testable import AmbienceCore
@testable import AmbienceTestSupport

/// The session rules, tested directly: no audio, no services.
@Suite(.offTheCooperativePool) struct SessionPolicyTests {
    static let speakers = AudioRoute(name: "Speakers", driver: "pulseaudio", sink: "speakers")
    static let headphones = AudioRoute(name: "Headphones", driver: "pulseaudio", sink: "headphones")

    static let events: [SessionEvent] = [
        .activate(playingPlayers: ["mpv"]), .deactivate(notifyOthers: true), .deactivate(notifyOthers: false),
        .setCategory(.ambient, [], playingPlayers: ["mpv"]), .enteredBackground, .enteredForeground,
        .screenLockChanged(isLocked: true), .screenLockChanged(isLocked: false),
        .interruptionBegan(appAudioPlaying: true), .interruptionEnded, .corkRequested(appAudioPlaying: true),
        .uncorkRequested,
        .currentDeviceRemoved(previous: speakers, current: headphones),
        .currentDeviceRemoved(previous: speakers, current: nil),
        .deviceAdded(headphones, current: speakers), .defaultDeviceChanged(previous: speakers, current: headphones),
        .activePortChanged(previous: speakers, current: headphones, newlyAvailable: true),
        .activePortChanged(previous: headphones, current: speakers, newlyAvailable: false),
        .prepareForSleep(appAudioPlaying: true), .wokeFromSleep(current: speakers), .resumeAfterRouteChange,
        .stopAfterRouteChange,
        .otherMusicChanged(OtherMusic(playingPlayers: ["mpv"])), .mediaServicesLost(.soundServer),
        .mediaServicesReset(.sessionBus),
        .appWillTerminate(systemMusicStartedByGame: ["rhythmbox"]), .setOthersDuckedVolume(0.5), .outputStreamDied,
        .otherPlayersReachable(false), .otherPlayersReachable(true),
        .systemMusicStarted(player: "mpv", withGameMusic: true)
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
        case .screenLockChanged(let locked):
            // unlocked: it never was locked
            #expect(actions == (category == .playback || !locked ? [] : [.silenceOutput(true)]))
            #expect(policy.state.isSilenced == (locked && category != .playback))
        case .interruptionBegan, .corkRequested:
            #expect(actions == [.pauseAppAudio(.interruption), .notify(.interruption(.began))])
        case .uncorkRequested:
            #expect(actions.isEmpty)  // no cork began an interruption
        case .interruptionEnded, .wokeFromSleep, .resumeAfterRouteChange, .stopAfterRouteChange:
            #expect(!actions.contains(.resumeAppAudio) && !actions.contains(.stopAppAudio))  // nothing was paused
        case .currentDeviceRemoved(_, let current?):
            #expect(
                actions == [
                    .followDefaultDevice, .pauseAppAudio(.routeChange),
                    .notify(
                        .routeChange(
                            RouteChange(reason: .oldDeviceUnavailable, previous: Self.speakers, current: current)))
                ])
        case .currentDeviceRemoved(_, nil):
            #expect(actions.contains(.renderToNullDevice))
            #expect(
                actions.contains(
                    .notify(
                        .routeChange(
                            RouteChange(reason: .noSuitableRouteForCategory, previous: Self.speakers, current: .none))))
            )
        case .deviceAdded:
            #expect(
                actions == [
                    .notify(
                        .routeChange(
                            RouteChange(reason: .newDeviceAvailable, previous: Self.speakers, current: Self.speakers)))
                ])
        case .defaultDeviceChanged(let previous, let current):
            #expect(
                actions == [
                    .followDefaultDevice, .moveStream(toSink: "headphones"),
                    .notify(
                        .routeChange(
                            RouteChange(reason: .routeConfigurationChange, previous: previous, current: current)))
                ])
        case .appWillTerminate:
            #expect(actions == [.pauseOtherPlayers(["rhythmbox"])])  // started by the game, not playing at launch
            #expect(!policy.state.isActive)
        case .setOthersDuckedVolume(let volume):
            #expect(actions.isEmpty)  // nobody is ducked
            #expect(policy.state.othersDuckedVolume == volume)
        case .activePortChanged(let previous, let current, let newlyAvailable):
            // Same sink: nothing paused, nothing moved, only told.
            #expect(
                actions == [
                    .notify(
                        .routeChange(
                            RouteChange(
                                reason: newlyAvailable ? .newDeviceAvailable : .routeConfigurationChange,
                                previous: previous, current: current)))
                ])
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
        case .systemMusicStarted(let player, _):
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
        #expect(
            playing.handle(.interruptionEnded) == [.resumeAppAudio, .notify(.interruption(.ended(shouldResume: true)))])
        var idle = policy(.soloAmbient)
        #expect(idle.handle(.interruptionBegan(appAudioPlaying: false)) == [.notify(.interruption(.began))])
        #expect(idle.handle(.interruptionEnded) == [.notify(.interruption(.ended(shouldResume: false)))])
    }

    @Test func aBeganWithoutEndedLeavesNothingStuck() {
        var policy = policy(.soloAmbient)
        _ = policy.handle(.interruptionBegan(appAudioPlaying: true))
        #expect(policy.handle(.interruptionBegan(appAudioPlaying: true)) == [])  // no double pause
        _ = policy.handle(.activate(playingPlayers: []))  // the game reactivates
        #expect(!policy.state.isInterrupted)
        #expect(policy.handle(.interruptionEnded) == [])  // a late end changes nothing
        _ = policy.handle(.interruptionBegan(appAudioPlaying: true))  // and a new one works normally
        #expect(policy.handle(.interruptionEnded).contains(.resumeAppAudio))
    }

    @Test func routeChangePausesUntilTheGameResumes() {
        var policy = policy(.soloAmbient)
        _ = policy.handle(.currentDeviceRemoved(previous: Self.speakers, current: Self.headphones))
        #expect(policy.state.isPausedForRouteChange)
        // A second removal does not pause twice.
        #expect(
            !policy.handle(.currentDeviceRemoved(previous: Self.headphones, current: Self.speakers)).contains(
                .pauseAppAudio(.routeChange)))
        #expect(policy.handle(.resumeAfterRouteChange) == [.resumeAppAudio])
        #expect(policy.handle(.resumeAfterRouteChange) == [])
        // Stop instead of Resume: what was paused is stopped, then the pause is lifted for what comes next.
        _ = policy.handle(.currentDeviceRemoved(previous: Self.speakers, current: Self.headphones))
        #expect(policy.handle(.stopAfterRouteChange) == [.stopAppAudio, .resumeAppAudio])
        #expect(!policy.state.isPausedForRouteChange)
    }

    /// The screen lock, as a table: the events in order, and whether the output is silenced after each, per category.
    struct LockRow: Sendable, CustomTestStringConvertible {
        var name: String
        var events: [SessionEvent]
        /// Silenced after each event, for ambient and soloAmbient (playback is never silenced).
        var silenced: [Bool]
        var testDescription: String { name }
    }

    static let lockRows: [LockRow] = [
        LockRow(
            name: "locking silences, unlocking brings the audio back",
            events: [.screenLockChanged(isLocked: true), .screenLockChanged(isLocked: false)], silenced: [true, false]),
        LockRow(
            name: "the game's foreground event does not unsilence a locked screen",
            events: [
                .screenLockChanged(isLocked: true), .enteredBackground, .enteredForeground,
                .screenLockChanged(isLocked: false)
            ],
            silenced: [true, true, true, false]),
        LockRow(
            name: "unlocking does not unsilence a game still in the background",
            events: [
                .enteredBackground, .screenLockChanged(isLocked: true), .screenLockChanged(isLocked: false),
                .enteredForeground
            ],
            silenced: [true, true, true, false]),
        LockRow(
            name: "a lock reported twice is one lock",
            events: [
                .screenLockChanged(isLocked: true), .screenLockChanged(isLocked: true),
                .screenLockChanged(isLocked: false)
            ],
            silenced: [true, true, false])
    ]

    @Test(arguments: SessionCategory.allCases, lockRows)
    func screenLock(category: SessionCategory, row: LockRow) {
        var policy = policy(category)
        var silenced = false
        for (event, expected) in zip(row.events, row.silenced) {
            let actions = policy.handle(event)
            let want = expected && category != .playback
            #expect(policy.state.isSilenced == want, "\(event)")
            // The output is told exactly when the silence changes, and never pauses anything.
            #expect(actions == (want != silenced ? [.silenceOutput(want)] : []), "\(event)")
            silenced = want
        }
    }

    /// Stop after a route change, as a table: the events in order, and what the policy answers to the last one.
    struct StopRow: Sendable, CustomTestStringConvertible {
        var name: String
        var events: [SessionEvent]
        var last: [SessionAction]
        var pausedForRouteChangeAfter = false
        var testDescription: String { name }
    }

    static let stopRows: [StopRow] = {
        let removed = SessionEvent.currentDeviceRemoved(previous: speakers, current: headphones)
        return [
            StopRow(
                name: "Stop stops what the route change paused, then lifts the pause",
                events: [removed, .stopAfterRouteChange], last: [.stopAppAudio, .resumeAppAudio]),
            StopRow(
                name: "a Resume after Stop brings nothing back",
                events: [removed, .stopAfterRouteChange, .resumeAfterRouteChange], last: []),
            StopRow(
                name: "a second Stop does nothing",
                events: [removed, .stopAfterRouteChange, .stopAfterRouteChange], last: []),
            StopRow(
                name: "Stop with nothing paused does nothing",
                events: [.stopAfterRouteChange], last: []),
            StopRow(
                name: "Stop after Resume does nothing",
                events: [removed, .resumeAfterRouteChange, .stopAfterRouteChange], last: []),
            StopRow(
                name: "Stop during an interruption stops now and leaves the pause to the interruption",
                events: [.interruptionBegan(appAudioPlaying: true), removed, .stopAfterRouteChange],
                last: [.stopAppAudio]),
            StopRow(
                name: "the interruption's end after Stop lifts the pause (nothing stopped comes back)",
                events: [.interruptionBegan(appAudioPlaying: true), removed, .stopAfterRouteChange, .interruptionEnded],
                last: [.resumeAppAudio, .notify(.interruption(.ended(shouldResume: true)))]),
            StopRow(
                name: "a second route change after Stop pauses again",
                events: [removed, .stopAfterRouteChange, removed],
                last: [
                    .followDefaultDevice, .pauseAppAudio(.routeChange),
                    .notify(
                        .routeChange(
                            RouteChange(reason: .oldDeviceUnavailable, previous: speakers, current: headphones)))
                ],
                pausedForRouteChangeAfter: true)
        ]
    }()

    @Test(arguments: SessionCategory.allCases, stopRows)
    func stopAfterRouteChange(category: SessionCategory, row: StopRow) {
        var policy = policy(category)
        var last: [SessionAction] = []
        for event in row.events { last = policy.handle(event) }
        #expect(last == row.last)
        #expect(policy.state.isPausedForRouteChange == row.pausedForRouteChangeAfter)
    }

    @Test func losingEveryDeviceInterruptsAndADeviceComingBackResumes() {
        var policy = policy(.soloAmbient)
        let lost = policy.handle(.currentDeviceRemoved(previous: Self.speakers, current: nil))
        #expect(lost.contains(.pauseAppAudio(.interruption)))
        #expect(lost.contains(.notify(.interruption(.began))))
        let back = policy.handle(.deviceAdded(Self.headphones, current: .none))
        #expect(
            back == [
                .followDefaultDevice,
                .notify(
                    .routeChange(RouteChange(reason: .newDeviceAvailable, previous: .none, current: Self.headphones))),
                .resumeAppAudio, .notify(.interruption(.ended(shouldResume: true)))
            ])
    }

    @Test func sleepIsAnInterruptionAndWakeIsARouteChange() {
        var policy = policy(.playback)
        #expect(
            policy.handle(.prepareForSleep(appAudioPlaying: true)) == [
                .pauseAppAudio(.interruption), .notify(.interruption(.began))
            ])
        let woke = policy.handle(.wokeFromSleep(current: Self.speakers))
        #expect(woke.contains(.resumeAppAudio))
        #expect(
            woke.last
                == .notify(
                    .routeChange(RouteChange(reason: .wakeFromSleep, previous: Self.speakers, current: Self.speakers))))
    }

    @Test func secondaryHintFollowsOtherMusic() {
        var policy = policy(.ambient)
        #expect(
            policy.handle(.otherMusicChanged(OtherMusic(playingPlayers: ["mpv"])))
                == [.notify(.silenceSecondaryAudioHint(true))])
        #expect(policy.state.secondaryAudioShouldBeSilencedHint)
        #expect(policy.handle(.otherMusicChanged(OtherMusic(playingPlayers: [], musicStreamWithoutPlayer: true))) == [])
        #expect(
            policy.handle(.otherMusicChanged(OtherMusic(playingPlayers: [])))
                == [.notify(.silenceSecondaryAudioHint(false))])
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
        #expect(
            ducked.handle(.setCategory(.playback, .mixWithOthers, playingPlayers: [])) == [
                .notify(.categoryChanged(.playback))
            ])
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
        #expect(
            solo.handle(.appWillTerminate(systemMusicStartedByGame: ["mpv", "rhythmbox"]))
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
        _ = policy.handle(.systemMusicStarted(player: "mpv", withGameMusic: true))
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
        _ = policy.handle(.systemMusicStarted(player: "mpv", withGameMusic: true))
        #expect(policy.state.playersPlayingAtLaunch == ["vlc"])
        _ = policy.handle(.deactivate(notifyOthers: false))
        #expect(policy.handle(.activate(playingPlayers: ["mpv"])) == [])
        #expect(policy.handle(.appWillTerminate(systemMusicStartedByGame: ["mpv"])) == [.pauseOtherPlayers(["mpv"])])
    }
}
