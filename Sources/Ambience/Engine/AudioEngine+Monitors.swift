import AmbienceCore
import AmbiencePlatform

// MARK: What the session hears from outside

extension AudioEngine {
    /// How often `update()` looks at the desktop players, the sound server's streams and SDL's device when the
    /// sound server has sent nothing new: a look costs more than the rest of `update()`, which a game (or the
    /// SDL_mixer stand-in's update thread) calls every 10–17 ms. The server's events (a sink gone, a port switched,
    /// a cork request) are answered at the next `update()` whatever this is.
    static let deviceLookIntervalNanoseconds = 50_000_000

    /// Feeds the session what each monitor saw, monitor by monitor in `monitors`' order (the session bus first, so
    /// the others' events meet the players of the connection now live), then, when the look is due, what other
    /// apps are playing.
    func pollMonitors() {
        let context = MonitorContext(
            appAudioPlaying: { [unowned self] in isAppAudioPlaying },
            currentRoute: { [unowned self] in currentRoute }, isLookDue: isDeviceLookDue())
        for monitor in monitors {
            for event in monitor.poll(context) { session.handle(event) }
        }
        if context.isLookDue { watchOtherAudio() }
    }

    /// Tells the session what the desktop players and the sound server's other streams are playing.
    private func watchOtherAudio() {
        // While the session bus is gone, what the players were last seen doing stands.
        let desktop = desktopLink?.connection
        let (seen, hasDevice) = state.withLock { state in
            if let desktop {
                state.playersLastSeen = PlayersSeen(
                    playing: desktop.players.playingPlayers(),
                    processes: Set(desktop.client.players.compactMap(\.processID)),
                    gameDriven: systemMusicPlayer.gameDrivenPlayer?.name)
            }
            return (state.playersLastSeen, state.device != nil)
        }
        if let routes, hasDevice {
            session.otherAudioChanged(
                streamsPlaying: routes.isOtherAudioPlaying,
                music: seen.music(streamWithoutPlayer: routes.isOtherMusicStreamPlaying(besides: seen.processes)))
        } else if desktop != nil {
            session.otherAudioChanged(streamsPlaying: false, music: seen.music(streamWithoutPlayer: false))
        }
    }

    /// Whether this `update()` looks at the players and the output: the server has news, or the last look is
    /// `deviceLookIntervalNanoseconds` old.
    private func isDeviceLookDue() -> Bool {
        let now = monotonicNanoseconds()
        let news = routes?.hasPendingEvents ?? false
        return state.withLock { state in
            if !news, let last = state.lastDeviceLook, now - last < Self.deviceLookIntervalNanoseconds { return false }
            state.lastDeviceLook = now
            return true
        }
    }

    /// Points the session and the system music player at the session bus's connection (nil while it is gone).
    static func use(
        _ desktop: DesktopLink.Connection?, session: AudioSession, systemMusicPlayer: SystemMusicPlayer
    ) {
        session.attach(otherPlayers: desktop?.players)
        systemMusicPlayer.use(client: desktop?.client, ownBusName: desktop?.server?.busName)
    }
}

/// What the desktop players were doing when last seen.
struct PlayersSeen {
    /// The bus names of those playing.
    var playing: [String] = []
    /// The processes that have a player on the bus: their music streams are those players' music.
    var processes: Set<Int> = []
    /// The player the game drives as its music (`SystemMusicPlayer.gameDrivenPlayer`).
    var gameDriven: String?

    func music(streamWithoutPlayer: Bool) -> OtherMusic {
        OtherMusic(playingPlayers: playing, musicStreamWithoutPlayer: streamWithoutPlayer, gameDrivenPlayer: gameDriven)
    }
}
