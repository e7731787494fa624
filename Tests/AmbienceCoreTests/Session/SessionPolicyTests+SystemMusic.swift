import Testing

@testable import AmbienceCore
@testable import AmbienceTestSupport

/// The session's rules for the desktop player the game drives as its music (the seeds' iPod player): the hint, the
/// route change, and the launch music's owner. Pure: no D-Bus.
extension SessionPolicyTests {
    static let mpv = "org.mpris.MediaPlayer2.mpv"
    static let vlc = "org.mpris.MediaPlayer2.vlc"

    /// The player the game drives is its soundtrack: playing, pausing or playing again never flips the hint, so a
    /// game that quiets its soundtrack on the hint never pauses it. Another player still counts.
    @Test(arguments: SessionCategory.allCases)
    func theHintNeverCountsThePlayerTheGameDrives(category: SessionCategory) {
        var policy = policy(category)
        for playing in [[Self.mpv], [], [Self.mpv], [], [Self.mpv]] {
            let actions = policy.handle(
                .otherMusicChanged(OtherMusic(playingPlayers: playing, gameDrivenPlayer: Self.mpv)))
            #expect(actions.isEmpty, "\(playing): \(actions)")
            #expect(!policy.state.secondaryAudioShouldBeSilencedHint)
        }
        #expect(
            policy.handle(
                .otherMusicChanged(OtherMusic(playingPlayers: [Self.mpv, Self.vlc], gameDrivenPlayer: Self.mpv)))
                == [.notify(.silenceSecondaryAudioHint(true))])
        // A music stream no player accounts for (mpd) is the user's too.
        #expect(
            policy.handle(
                .otherMusicChanged(
                    OtherMusic(playingPlayers: [Self.mpv], musicStreamWithoutPlayer: true, gameDrivenPlayer: Self.mpv)))
                == [])
        #expect(policy.state.secondaryAudioShouldBeSilencedHint)
        #expect(
            policy.handle(.otherMusicChanged(OtherMusic(playingPlayers: [Self.mpv], gameDrivenPlayer: Self.mpv)))
                == [.notify(.silenceSecondaryAudioHint(false))])
    }

    /// The same player, not driven by the game, is the user's music: it sets the hint.
    @Test func thePlayerCountsOnceTheGameNoLongerDrivesIt() {
        var policy = policy(.ambient)
        #expect(
            policy.handle(.otherMusicChanged(OtherMusic(playingPlayers: [Self.mpv], gameDrivenPlayer: Self.mpv))) == [])
        #expect(
            policy.handle(.otherMusicChanged(OtherMusic(playingPlayers: [Self.mpv])))
                == [.notify(.silenceSecondaryAudioHint(true))])
    }

    func removal() -> SessionEvent { .currentDeviceRemoved(previous: Self.speakers, current: Self.headphones) }
    func unplugged() -> SessionAction {
        .notify(
            .routeChange(RouteChange(reason: .oldDeviceUnavailable, previous: Self.speakers, current: Self.headphones)))
    }

    /// An unplug pauses the system player the game drives with the game's audio; Resume resumes it.
    @Test(arguments: SessionCategory.allCases)
    func anUnplugPausesTheDrivenSystemPlayerAndResumeResumesIt(category: SessionCategory) {
        var policy = policy(category)
        _ = policy.handle(.otherMusicChanged(OtherMusic(playingPlayers: [Self.mpv], gameDrivenPlayer: Self.mpv)))
        #expect(
            policy.handle(removal())
                == [.followDefaultDevice, .pauseAppAudio(.routeChange), .pauseSystemMusic(Self.mpv), unplugged()])
        // A second removal before the answer pauses nothing twice.
        #expect(!policy.handle(removal()).contains(.pauseSystemMusic(Self.mpv)))
        #expect(policy.handle(.resumeAfterRouteChange) == [.resumeAppAudio, .resumeSystemMusic(Self.mpv)])
        #expect(policy.state.systemMusicPausedForRouteChange == nil)
        #expect(policy.handle(.resumeAfterRouteChange) == [])
    }

    /// Stop stops it, and a later Resume brings nothing back.
    @Test func stopAfterAnUnplugStopsTheDrivenSystemPlayer() {
        var policy = policy(.ambient)
        _ = policy.handle(.otherMusicChanged(OtherMusic(playingPlayers: [Self.mpv], gameDrivenPlayer: Self.mpv)))
        _ = policy.handle(removal())
        #expect(policy.handle(.stopAfterRouteChange) == [.stopAppAudio, .resumeAppAudio, .stopSystemMusic(Self.mpv)])
        #expect(policy.handle(.resumeAfterRouteChange) == [])
    }

    /// Resume chosen during an interruption (a call) waits, as the game's own audio does, for the interruption's end.
    @Test func resumeDuringAnInterruptionWaitsForItsEnd() {
        var policy = policy(.ambient)
        _ = policy.handle(.otherMusicChanged(OtherMusic(playingPlayers: [Self.mpv], gameDrivenPlayer: Self.mpv)))
        _ = policy.handle(removal())
        _ = policy.handle(.interruptionBegan(appAudioPlaying: false))
        let resumed = policy.handle(.resumeAfterRouteChange)
        #expect(!resumed.contains(.resumeSystemMusic(Self.mpv)) && !resumed.contains(.resumeAppAudio), "\(resumed)")
        #expect(policy.handle(.interruptionEnded).contains(.resumeSystemMusic(Self.mpv)))
        #expect(!policy.handle(.interruptionEnded).contains(.resumeSystemMusic(Self.mpv)))
    }

    /// A player the game does not drive is the user's: an unplug leaves it alone, and so do Resume and Stop. So is
    /// the driven player when it was not playing (nothing to resume later).
    @Test(arguments: [
        OtherMusic(playingPlayers: [Self.mpv]), OtherMusic(playingPlayers: [Self.vlc], gameDrivenPlayer: Self.mpv),
        OtherMusic(playingPlayers: [], gameDrivenPlayer: Self.mpv)
    ])
    func anUnplugLeavesAPlayerTheGameDoesNotDriveAlone(music: OtherMusic) {
        for answer in [SessionEvent.resumeAfterRouteChange, .stopAfterRouteChange] {
            var policy = policy(.ambient)
            _ = policy.handle(.otherMusicChanged(music))
            #expect(policy.handle(removal()) == [.followDefaultDevice, .pauseAppAudio(.routeChange), unplugged()])
            let actions = policy.handle(answer)
            #expect(
                !actions.contains { action in
                    switch action {
                    case .pauseSystemMusic, .resumeSystemMusic, .stopSystemMusic, .pauseOtherPlayers,
                        .resumeOtherPlayers:
                        true
                    default: false
                    }
                }, "\(answer): \(actions)")
        }
    }

    /// With the session bus gone the driven player cannot be reached: nothing is decided for it, so a later Resume
    /// does not start music the unplug never paused.
    @Test func anUnplugWithoutTheSessionBusDecidesNothingForThePlayer() {
        var policy = policy(.ambient)
        _ = policy.handle(.otherMusicChanged(OtherMusic(playingPlayers: [Self.mpv], gameDrivenPlayer: Self.mpv)))
        _ = policy.handle(.otherPlayersReachable(false))
        #expect(!policy.handle(removal()).contains(.pauseSystemMusic(Self.mpv)))
        #expect(policy.handle(.resumeAfterRouteChange) == [.resumeAppAudio])
    }

    /// The launch-music decision: the user's music playing at launch that the game pauses and plays again (its
    /// Play button) stays the user's, so exit leaves it playing; handed the game's own music it is the game's, and
    /// exit pauses it. A player paused at launch that the game plays is music the game started.
    @Test(arguments: [SessionCategory.ambient, .playback])
    func launchMusicPlayedAgainStaysTheUsersAndGameMusicMakesItTheGames(category: SessionCategory) {
        let options: SessionOptions = category == .playback ? [.mixWithOthers] : []
        var replayed = policy(category, options, active: false)
        #expect(replayed.handle(.activate(playingPlayers: [Self.mpv])) == [])
        _ = replayed.handle(.systemMusicStarted(player: Self.mpv, withGameMusic: false))
        #expect(replayed.state.playersPlayingAtLaunch == [Self.mpv])
        #expect(replayed.handle(.appWillTerminate(systemMusicStartedByGame: [Self.mpv])) == [])

        var handed = policy(category, options, active: false)
        _ = handed.handle(.activate(playingPlayers: [Self.mpv]))
        _ = handed.handle(.systemMusicStarted(player: Self.mpv, withGameMusic: true))
        #expect(
            handed.handle(.appWillTerminate(systemMusicStartedByGame: [Self.mpv])) == [.pauseOtherPlayers([Self.mpv])])

        var started = policy(category, options, active: false)
        _ = started.handle(.activate(playingPlayers: []))
        _ = started.handle(.systemMusicStarted(player: Self.mpv, withGameMusic: false))
        #expect(
            started.handle(.appWillTerminate(systemMusicStartedByGame: [Self.mpv])) == [.pauseOtherPlayers([Self.mpv])])
    }
}
