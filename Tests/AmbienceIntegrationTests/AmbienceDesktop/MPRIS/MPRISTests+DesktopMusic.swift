import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDesktop
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// Start-up detection, the category rules for other players, the system music player and the exit rule, against a
/// real mpv on the private session bus. In the MPRIS suite, so that only one mpv runs at a time.
extension MPRISTests {
    /// An engine that talks to the desktop (offline, so the test hears nothing and needs no device).
    func desktopEngine(_ appName: String) throws -> AudioEngine {
        var configuration = EngineConfiguration.offline()
        configuration.desktopIntegration = true
        configuration.appName = appName
        return try AudioEngine(configuration)
    }

    func startMPV(paused: Bool = false) throws -> (MPV, String) {
        let mpv = try MPV(playing: song)
        let client = try MPRISClient(timeout: .seconds(2))
        defer { client.close() }
        var name: String?
        #expect(
            eventually {
                let info = client.refresh().first { $0.processID == mpv.pid }
                name = info?.name
                return info?.status == .playing && info?.title == "Title"
            })
        let bus = try #require(name)
        if paused {
            _ = playerctl(["-p", String(bus.dropFirst(MPRISClient.namePrefix.count)), "pause"])
            #expect(
                eventually {
                    playerctl(["-p", String(bus.dropFirst(MPRISClient.namePrefix.count)), "status"]) == "Paused"
                })
        }
        return (mpv, String(bus.dropFirst(MPRISClient.namePrefix.count)))
    }

    @Test func musicPlayingAtLaunchIsDetectedAndNamed() throws {
        let (mpv, name) = try startMPV()
        defer { mpv.kill() }
        let engine = try desktopEngine("detect")
        defer { engine.shutdown() }
        engine.session.setCategory(.ambient)
        engine.session.setActive(true)
        #expect(engine.session.otherMusicWasPlayingAtLaunch)
        #expect(engine.session.playersPlayingAtLaunch == [MPRISClient.namePrefix + name])
        #expect(engine.systemMusicPlayer.nowPlayingItem?.title == "Title")
        #expect(engine.systemMusicPlayer.playbackState == .playing)
        let events = engine.update()
        #expect(events.contains(.session(.silenceSecondaryAudioHint(true))))
        #expect(engine.session.secondaryAudioShouldBeSilencedHint)
        #expect(engine.session.isOtherAudioPlaying)
        #expect(playerctl(["-p", name, "status"]) == "Playing")  // ambient leaves it alone
    }

    /// `update()` copies the desktop players only when the MPRIS client's change count moved (`watchOtherAudio`):
    /// the user's music started, paused and started again while the game runs reaches the session each time, and
    /// looks with nothing new in between leave what was seen as it was. Fails if the count misses a change.
    @Test func theUsersMusicStartedAndPausedMidRunReachesTheSession() throws {
        let (mpv, name) = try startMPV(paused: true)
        defer { mpv.kill() }
        let engine = try desktopEngine("midrun")
        defer { engine.shutdown() }
        engine.session.setCategory(.ambient)
        engine.session.setActive(true)
        let bus = MPRISClient.namePrefix + name
        func seenPlaying() -> Bool {
            engine.update()
            return engine.state.withLock { $0.playersLastSeen.playing }.contains(bus)
        }
        #expect(!seenPlaying())
        for round in 0..<2 {
            _ = playerctl(["-p", name, "play"])
            #expect(eventually { seenPlaying() }, "round \(round): mpv playing not seen")
            // Other programs on the shared bus can only add to it: the hint must be on.
            #expect(engine.session.secondaryAudioShouldBeSilencedHint)
            // Looks with nothing new keep it.
            for _ in 0..<5 {
                Thread.sleep(forTimeInterval: 0.06)
                #expect(seenPlaying())
            }
            _ = playerctl(["-p", name, "pause"])
            #expect(eventually { !seenPlaying() }, "round \(round): mpv paused not seen")
        }
    }

    @Test(arguments: [true, false])
    func nothingPlayingAtLaunchIsNotDetected(mpvPaused: Bool) throws {
        let mpv = mpvPaused ? try startMPV(paused: true).0 : nil
        defer { mpv?.kill() }
        let engine = try desktopEngine("quiet")
        defer { engine.shutdown() }
        engine.session.setActive(true)
        // Other test programs on the shared bus may be playing; what matters is that no (playing) mpv is counted.
        #expect(!engine.session.playersPlayingAtLaunch.contains { $0.contains("mpv") })
        let playing = engine.systemMusicPlayer.players.filter { $0.status == .playing }
        #expect(engine.session.otherMusicWasPlayingAtLaunch == !engine.session.playersPlayingAtLaunch.isEmpty)
        #expect(!playing.contains { $0.name.contains("mpv") })
    }

    @Test func soloAmbientPausesThePlayerAndDeactivationWithNotifyResumesIt() throws {
        let (mpv, name) = try startMPV()
        defer { mpv.kill() }
        let engine = try desktopEngine("solo")
        defer { engine.shutdown() }
        engine.session.setCategory(.soloAmbient)
        engine.session.setActive(true)
        #expect(eventually { playerctl(["-p", name, "status"]) == "Paused" })
        engine.session.setActive(false, options: .notifyOthersOnDeactivation)
        #expect(eventually { playerctl(["-p", name, "status"]) == "Playing" })
    }

    @Test func exitLeavesMusicThatWasPlayingAtLaunch() throws {
        let (mpv, name) = try startMPV()
        defer { mpv.kill() }
        // Hears every change mpv announces, from before the engine starts until after it has exited.
        let watcher = try MPRISClient(timeout: .seconds(2))
        defer { watcher.close() }
        let engine = try desktopEngine("exit-keep")
        engine.session.setCategory(.ambient)
        engine.session.setActive(true)
        engine.update()
        engine.shutdown()  // returns once mpv has answered every command the exit rule sent
        // The positive marker: a volume change made after the exit. mpv announces its property changes in the order
        // they were made, so once the watcher has heard this one, it has heard any pause the engine caused.
        _ = playerctl(["-p", name, "volume", "0.5"])
        #expect(
            eventually { abs((watcher.player(named: name)?.volume ?? 1) - 0.5) < 0.01 },
            "the marker never arrived")
        let paused = watcher.drainEvents().filter {
            if case .playerChanged(let info) = $0 {
                info.name == MPRISClient.namePrefix + name && info.status != .playing
            } else {
                false
            }
        }
        #expect(paused.isEmpty, "\(paused)")
        #expect(playerctl(["-p", name, "status"]) == "Playing")
    }

    @Test func exitStopsMusicTheGameStarted() throws {
        let (mpv, name) = try startMPV(paused: true)
        defer { mpv.kill() }
        let engine = try desktopEngine("exit-stop")
        engine.session.setCategory(.ambient)
        engine.session.setActive(true)
        engine.systemMusicPlayer.beginGeneratingPlaybackNotifications()
        // Other test engines may be on the bus too: name the player to drive.
        engine.systemMusicPlayer.preferredPlayer = name
        engine.systemMusicPlayer.play()
        #expect(eventually { playerctl(["-p", name, "status"]) == "Playing" })
        #expect(eventually { engine.update().contains(.systemMusic(.playbackStateDidChange(.playing))) })
        engine.shutdown()
        #expect(eventually { playerctl(["-p", name, "status"]) == "Paused" })
    }

    @Test func soloAmbientResumesTheUsersPlayerAtExit() throws {
        let (mpv, name) = try startMPV()
        defer { mpv.kill() }
        let engine = try desktopEngine("solo-exit")
        engine.session.setActive(true)  // solo ambient is the default
        #expect(eventually { playerctl(["-p", name, "status"]) == "Paused" })
        engine.shutdown()
        #expect(eventually { playerctl(["-p", name, "status"]) == "Playing" })
    }

    /// mpv has no TrackList: a queue of many goes over as a playlist file, and plays in order.
    @Test func systemPlayerTakesAQueueOfMany() throws {
        let second = try fixtures.sineOgg("second.ogg", seconds: 3, tags: ["TITLE=Second", "ARTIST=Artist"])
        let (mpv, name) = try startMPV()
        defer { mpv.kill() }
        let engine = try desktopEngine("queue")
        defer { engine.shutdown() }
        engine.systemMusicPlayer.preferredPlayer = name
        try engine.systemMusicPlayer.setQueue(
            with: MediaItemCollection(items: [MediaItem(path: second), MediaItem(path: song)]))
        #expect(eventually { playerctl(["-p", name, "metadata", "title"]) == "Second" })
        _ = playerctl(["-p", name, "next"])
        #expect(eventually { playerctl(["-p", name, "metadata", "title"]) == "Title" })
    }

    @Test func playerctlDrivesTheGamesOwnPlayer() throws {
        let engine = try desktopEngine("drive")
        defer { engine.shutdown() }
        try engine.musicPlayer.setQueue(paths: [song, song])
        engine.musicPlayer.play()
        let player = "ambience.drive"
        #expect(eventually { playerctl(["-p", player, "status"]) == "Playing" })
        #expect(playerctl(["-p", player, "metadata", "title"]) == "Title")
        _ = playerctl(["-p", player, "pause"])
        #expect(eventually { engine.musicPlayer.playbackState == .paused })
        _ = playerctl(["-p", player, "next"])
        #expect(eventually { engine.musicPlayer.indexOfNowPlayingItem == 1 })
    }
}

extension MPRISTests {
    @Test func duckOthersTurnsThePlayerDownWhileActiveAndRestoresIt() throws {
        let (mpv, name) = try startMPV()
        defer { mpv.kill() }
        let engine = try desktopEngine("duck")
        defer { engine.shutdown() }
        engine.session.setCategory(.playback, options: [.mixWithOthers, .duckOthers])
        engine.session.setActive(true)
        #expect(eventually { (Double(playerctl(["-p", name, "volume"]) ?? "") ?? 1) < 0.35 })
        #expect(playerctl(["-p", name, "status"]) == "Playing")
        engine.session.setActive(false, options: .notifyOthersOnDeactivation)
        #expect(eventually { (Double(playerctl(["-p", name, "volume"]) ?? "") ?? 0) > 0.95 })
    }
}

extension MPRISTests {
    @Test func sessionCommandReportsPlayersDevicesAndCapabilities() throws {
        let (mpv, _) = try startMPV()
        defer { mpv.kill() }
        // A snapshot: an engine that could not reach the sound server within its 300 ms at start (PipeWire at load
        // 20) lists SDL's devices, which have no sink; the next run, once the server answers, lists the sinks. So with
        // rtkit: a run whose connect to the shared system bus was refused under load (seen beside a fresh-root build)
        // fell back to the kernel's nice level; the next run asks rtkit again.
        let rtkitRuns = ProcessInfo.processInfo.environment["AMBIENCE_TEST_RTKIT"] == "1"
        var object: [String: Any] = [:]
        var sinks: Set<String> = []
        _ = eventually {
            guard
                let result = try? ToolRunner.run(
                    ["session", "--json"],
                    environment: ["SDL_AUDIODRIVER": "pulseaudio", "DBUS_SESSION_BUS_ADDRESS": sharedSessionBus]),
                result.status == 0,
                let read = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any]
            else { return false }
            object = read
            sinks = Set(((read["outputDevices"] as? [[String: Any]]) ?? []).compactMap { $0["sink"] as? String })
            let priority = read["audioThreadPriority"] as? String
            return sinks.isSuperset(of: ["speakers", "headphones"]) && (!rtkitRuns || priority == "nice -15 via rtkit")
        }
        for key in ["otherAudioPlaying", "secondaryAudioShouldBeSilenced", "players", "outputDevices", "capabilities"] {
            #expect(object[key] != nil, "missing \(key)")
        }
        let players = try #require(object["players"] as? [[String: Any]])
        #expect(
            players.contains {
                $0["status"] as? String == "playing" && $0["title"] as? String == "Title"
                    && $0["artist"] as? String == "Artist"
            })
        #expect(object["secondaryAudioShouldBeSilenced"] as? Bool == true)
        #expect(sinks.isSuperset(of: ["speakers", "headphones"]), "\(object)")
        #expect((object["capabilities"] as? [String: Any])?["effects"] as? Bool == true)
        // The output's audio thread at the default's raised nice level, rtkit's MinNiceLevel, from the private rtkit
        // that with-services runs on its system bus (real time is the game's opt-in); without that rtkit (its warning
        // said why), the kernel's nice level or the reasons nothing was obtained.
        let priority = object["audioThreadPriority"] as? String ?? "(none)"
        if rtkitRuns {
            #expect(priority == "nice -15 via rtkit", "\(object)")
        } else {
            #expect(priority.hasPrefix("nice ") || priority.hasPrefix("none: "), "\(object)")
        }
    }
}
