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

    /// Tells the session what the desktop players and the sound server's other streams are playing, when that differs
    /// from what it was told last (the session's only source of both: an equal report changes nothing there, and the
    /// look that makes one runs every 50 ms).
    private func watchOtherAudio() {
        // While the session bus is gone, what the players were last seen doing stands.
        let desktop = desktopLink?.connection
        // The players' list is copied (and sorted) only when the client's count says it may have changed since the
        // last copy: with nothing new, what was seen then stands. The count is read before the copy, so a change in
        // between is in the copy and seen again next time.
        let source = desktop.map { (client: $0.client, changes: $0.client.changeCount) }
        let gameDriven = desktop != nil ? systemMusicPlayer.gameDrivenPlayer?.name : nil
        let unchanged = state.withLock { state in
            guard let source else {
                state.playersSeenFrom = nil
                return false
            }
            guard let last = state.playersSeenFrom else { return false }
            return last.client === source.client && last.changes == source.changes
        }
        let players = unchanged ? nil : desktop?.client.players
        let (seen, hasDevice) = state.withLock { state in
            if let desktop, let source {
                if let players {
                    state.playersLastSeen = PlayersSeen(
                        playing: desktop.players.playingPlayers(among: players),
                        processes: Set(players.compactMap(\.processID)), gameDriven: gameDriven)
                    state.playersSeenFrom = source
                } else {
                    state.playersLastSeen.gameDriven = gameDriven
                }
            }
            return (state.playersLastSeen, state.device != nil)
        }
        let report: OtherAudioReport
        if let routes, hasDevice {
            report = OtherAudioReport(
                streamsPlaying: routes.isOtherAudioPlaying,
                music: seen.music(streamWithoutPlayer: routes.isOtherMusicStreamPlaying(besides: seen.processes)))
        } else if desktop != nil {
            report = OtherAudioReport(streamsPlaying: false, music: seen.music(streamWithoutPlayer: false))
        } else {
            return
        }
        let isNew = state.withLock { state in
            guard state.otherAudioReported != report else { return false }
            state.otherAudioReported = report
            return true
        }
        if isNew { session.otherAudioChanged(streamsPlaying: report.streamsPlaying, music: report.music) }
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

/// What `watchOtherAudio` told the session last.
struct OtherAudioReport: Equatable {
    var streamsPlaying: Bool
    var music: OtherMusic
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
