import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceDesktop
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// The C demo (Demos/CGameLoop) follows UtopiaGL's rules, against real mpv players on the private session bus: the
/// ambient category, the user's music reported at launch and left playing, the soundtrack only while the user has
/// none (mid-game too), and at exit only the music it started stopped. In the MPRIS suite, so no other mpv runs.
extension MPRISTests {
    /// Builds the demo with `cc` against the library; returns the program's path.
    @discardableResult
    func buildCGameLoop(into folder: String) throws -> String {
        let program = folder + "/cgameloop"
        let build = try CAPI.compile("Demos/CGameLoop/main.c", into: program)
        try #require(build.status == 0, "cc cgameloop: \(build.stderr)")
        return program
    }

    /// The demo started on the private session bus, its output going to `log` (read while it runs).
    /// `environment`: more variables for it.
    func startCGameLoop(
        _ program: String, _ arguments: [String], log: String, environment: [String: String] = [:]
    ) throws -> ChildProcess {
        try ChildProcess(
            ["sh", "-c", "exec \"$0\" \"$@\" >\"$CGAMELOOP_LOG\" 2>&1", program] + arguments,
            environment: childEnvironment(
                [
                    "SDL_AUDIODRIVER": "dummy", "CGAMELOOP_LOG": log, "DBUS_SESSION_BUS_ADDRESS": sharedSessionBus
                ].merging(environment) { $1 }), directory: CAPI.root,
            stdout: .null, stderr: .null)
    }

    func text(of log: String) -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    @Test(
        .enabled(
            if: CAPI.libraryBuilt && CAPI.onPath("cc") && !BuildProducts.sanitized,
            Comment(rawValue: CAPI.missingLibrary)))
    func theCGameLoopReportsTheUsersMusicAtLaunchLeavesItPlayingAndKeepsItsSoundtrackOff() throws {
        let folder = try CAPI.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let program = try buildCGameLoop(into: folder)
        let (users, userName) = try startMPV()
        defer { users.kill() }
        let log = folder + "/out.txt"
        let game = try startCGameLoop(program, ["--seconds", "2"], log: log)
        defer { game.kill() }
        #expect(game.waitForExit(within: 30) && game.terminationStatus == 0, "\(text(of: log))")
        let output = text(of: log)
        #expect(output.contains("music already playing at launch: Title - Artist"), "\(output)")
        #expect(output.contains("the user's music plays: the soundtrack stays off"), "\(output)")
        #expect(
            output.contains("queued: Gravity Wave Theme") && !output.contains("now playing:"),
            "the soundtrack played over the user's music: \(output)")
        #expect(playerctl(["-p", userName, "status"]) == "Playing", "the game stopped the user's music")
    }

    @Test(
        .enabled(
            if: CAPI.libraryBuilt && CAPI.onPath("cc") && !BuildProducts.sanitized,
            Comment(rawValue: CAPI.missingLibrary)))
    func theCGameLoopPlaysItsSoundtrackOnlyWhileTheUserHasNoMusic() throws {
        let folder = try CAPI.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let program = try buildCGameLoop(into: folder)
        let log = folder + "/out.txt"
        let game = try startCGameLoop(program, ["--seconds", "60"], log: log)
        defer { game.kill() }
        #expect(
            eventually { text(of: log).contains("now playing: Gravity Wave Theme") }, "\(text(of: log))")
        #expect(!text(of: log).contains("already playing"))

        // The user starts their music mid-game: the soundtrack makes way; they pause it: the soundtrack comes back.
        let (users, userName) = try startMPV()
        defer { users.kill() }
        #expect(
            eventually { text(of: log).contains("your music started: the soundtrack is paused") },
            "\(text(of: log))")
        #expect(playerctl(["-p", userName, "pause"]) != nil)
        #expect(
            eventually { text(of: log).contains("your music stopped: the soundtrack plays") },
            "\(text(of: log))")

        kill(game.pid, SIGTERM)
        #expect(game.waitForExit(within: waitBound))
        #expect(playerctl(["-p", userName, "status"]) == "Paused", "the game touched the user's player")
    }

    @Test(
        .enabled(
            if: CAPI.libraryBuilt && CAPI.onPath("cc") && !BuildProducts.sanitized,
            Comment(rawValue: CAPI.missingLibrary)))
    func theCGameLoopStopsOnlyTheMusicItStartedAtExit() throws {
        let folder = try CAPI.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let program = try buildCGameLoop(into: folder)
        let (users, userName) = try startMPV()
        defer { users.kill() }
        let (games, gameName) = try startMPV(paused: true)
        defer { games.kill() }
        let log = folder + "/out.txt"
        let game = try startCGameLoop(program, ["--seconds", "4", "--system-music", gameName], log: log)
        defer { game.kill() }
        #expect(
            eventually { playerctl(["-p", gameName, "status"]) == "Playing" },
            "the game did not start its player")
        #expect(playerctl(["-p", userName, "status"]) == "Playing")
        #expect(game.waitForExit(within: 30) && game.terminationStatus == 0, "\(text(of: log))")
        #expect(text(of: log).contains("music already playing at launch: Title - Artist"), "\(text(of: log))")
        #expect(
            eventually { playerctl(["-p", gameName, "status"]) == "Paused" },
            "the music the game started plays on")
        #expect(playerctl(["-p", userName, "status"]) == "Playing", "the user's music was stopped at exit")
    }

    /// `--system-music` naming the user's player, playing at launch: the game's music is the user's, which plays on
    /// through the whole run and after exit without one pause (the hint never counts the player the game drives).
    @Test(
        .enabled(
            if: CAPI.libraryBuilt && CAPI.onPath("cc") && !BuildProducts.sanitized,
            Comment(rawValue: CAPI.missingLibrary)))
    func theCGameLoopsSystemMusicPlayingAtLaunchPlaysOnWithoutOnePause() throws {
        let folder = try CAPI.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let program = try buildCGameLoop(into: folder)
        let (users, userName) = try startMPV()
        defer { users.kill() }
        let watcher = try MPRISClient(timeout: .seconds(2))
        defer { watcher.close() }
        #expect(eventually { watcher.player(named: userName)?.status == .playing })
        let log = folder + "/out.txt"
        // On no sound server: the route-change suites unload the shared server's sinks meanwhile, and an unplug
        // rightly pauses the system player a game drives (RouteChangeSystemMusicTests), which is not this rule.
        let game = try startCGameLoop(
            program, ["--seconds", "3", "--system-music", userName], log: log,
            environment: ["PULSE_SERVER": "unix:/nonexistent/ambience-no-server"])
        defer { game.kill() }
        #expect(game.waitForExit(within: 30) && game.terminationStatus == 0, "\(text(of: log))")
        #expect(marker(watcher, userName, volume: 0.5), "the marker never arrived")
        #expect(
            statusesOtherThanPlaying(watcher, userName).isEmpty, "paused during the run or at exit: \(text(of: log))")
        #expect(playerctl(["-p", userName, "status"]) == "Playing")
        #expect(!text(of: log).contains("your music"), "the hint flipped: \(text(of: log))")
    }
}
