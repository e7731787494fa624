import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// The exit rule after a deactivate and a reactivate, and when the game is ended by a signal, against real mpv
/// players on the private session bus. In the MPRIS suite, so that no other test's mpv runs meanwhile.
extension MPRISTests {
    /// Music the game started stays the game's through a deactivate and a reactivate: the reactivation does not pause
    /// it as another app's, and exit stops it.
    @Test func exitStopsMusicTheGameStartedAfterADeactivateAndAReactivate() throws {
        let (mpv, name) = try startMPV(paused: true)
        defer { mpv.kill() }
        let engine = try desktopEngine("reactivate")
        engine.session.setActive(true)  // solo ambient: nothing is playing, so nothing is paused
        #expect(!engine.session.otherMusicWasPlayingAtLaunch)
        engine.systemMusicPlayer.preferredPlayer = name
        engine.systemMusicPlayer.play()
        #expect(eventually { playerctl(["-p", name, "status"]) == "Playing" })
        #expect(eventually { engine.systemMusicPlayer.playbackState == .playing })
        engine.session.setActive(false, options: .notifyOthersOnDeactivation)
        engine.session.setActive(true)
        engine.flushDesktopCommands()
        #expect(playerctl(["-p", name, "status"]) == "Playing", "the reactivation paused the game's own music")
        #expect(engine.session.state.pausedPlayers.isEmpty)
        #expect(engine.session.playersPlayingAtLaunch.isEmpty)
        engine.shutdown()
        #expect(eventually { playerctl(["-p", name, "status"]) == "Paused" })
    }

    /// Builds the C demo and runs it with `arguments` beside two real mpv: the user's, playing at launch, and the
    /// one the game starts (`--system-music`). Once the game's session has paused the first and started the second,
    /// sends it `signal`, waits for it to end, checks it ended by that signal, and hands both players' names to
    /// `check`.
    func endGameBySignal(
        _ signal: Int32, arguments: [String] = [],
        check: (_ userPlayer: String, _ gamePlayer: String) throws -> Void
    ) throws {
        let folder = try CAPI.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try buildCGameLoop(into: folder)

        let (users, userName) = try startMPV()  // the user's music, playing at launch
        defer { users.kill() }
        let (games, gameName) = try startMPV(paused: true)  // the player the game will start
        defer { games.kill() }
        #expect(userName != gameName)
        // Solo ambient: the rule that pauses the user's player, so that the exit rule has one to give back.
        let game = try ChildProcess(
            [folder + "/cgameloop", "--seconds", "120", "--system-music", gameName, "--category", "solo-ambient"]
                + arguments,
            environment: childEnvironment(["SDL_AUDIODRIVER": "dummy", "DBUS_SESSION_BUS_ADDRESS": sharedSessionBus]),
            directory: CAPI.root,
            stdout: .null, stderr: .null)
        defer { game.kill() }
        #expect(
            eventually { playerctl(["-p", userName, "status"]) == "Paused" },
            "the session did not pause the user's player")
        #expect(
            eventually { playerctl(["-p", gameName, "status"]) == "Playing" },
            "the game did not start its player")

        kill(game.pid, signal)
        #expect(game.waitForExit(within: waitBound), "the game did not end")
        #expect(
            game.terminationReason == .uncaughtSignal && game.terminationStatus == signal,
            "ended with \(game.terminationReason) \(game.terminationStatus)")
        try check(userName, gameName)
    }

    /// A C game (Demos/CGameLoop) ended by SIGTERM, SIGINT or SIGHUP: the engine resumes the user's player its
    /// session paused and pauses the one it started, then the process ends by that signal.
    // Not in the sanitizers' instrumented build: the demo would need the sanitizer's runtime linked in first.
    @Test(
        .enabled(
            if: CAPI.libraryBuilt && CAPI.onPath("cc") && !BuildProducts.sanitized,
            Comment(rawValue: CAPI.missingLibrary)),
        arguments: [SIGTERM, SIGINT, SIGHUP])
    func aGameEndedByASignalStillAppliesTheExitRule(signal: Int32) throws {
        try endGameBySignal(signal) { userName, gameName in
            #expect(playerctl(["-p", userName, "status"]) == "Playing", "the user's player stays paused")
            #expect(playerctl(["-p", gameName, "status"]) == "Paused", "the music the game started plays on")
        }
    }

    /// The opt-out (`handle_termination_signals = false`, the demo's `--own-signals`): SIGTERM ends the game at once,
    /// by the signal, and the exit rule does not run, so the user's player stays paused and the game's plays on,
    /// which is what the handler, when on, prevents (the test above).
    // Not in the sanitizers' instrumented build: the demo would need the sanitizer's runtime linked in first.
    @Test(
        .enabled(
            if: CAPI.libraryBuilt && CAPI.onPath("cc") && !BuildProducts.sanitized,
            Comment(rawValue: CAPI.missingLibrary)))
    func aGameThatOptsOutIsEndedByTheSignalAlone() throws {
        try endGameBySignal(SIGTERM, arguments: ["--own-signals"]) { userName, gameName in
            usleep(500_000)  // nothing was on its way either
            #expect(playerctl(["-p", userName, "status"]) == "Paused", "the exit rule ran although the game opted out")
            #expect(playerctl(["-p", gameName, "status"]) == "Playing", "the exit rule ran although the game opted out")
        }
    }

    /// A signal the program handles itself (here: ignores) is left to it; the engine takes only default ones.
    @Test func aSignalTheProgramHandlesIsLeftToIt() throws {
        var saved = sigaction()
        sigaction(SIGHUP, nil, &saved)
        defer { sigaction(SIGHUP, &saved, nil) }
        signal(SIGHUP, SIG_IGN)
        let taken = try TerminationSignals.install()
        #expect(!taken.contains(SIGHUP))
        var now = sigaction()
        sigaction(SIGHUP, nil, &now)
        #expect(unsafeBitCast(now.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self))
    }
}
