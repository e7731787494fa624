import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDesktop
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport
@testable import GravityWaveCore

/// No player running: the launcher starts the user's player (a real mpv, chosen through gio from the desktop's
/// default for audio files) on the test bus, and a player that fails or never appears is a typed error within a
/// bounded time. Then the game: its picks play in the player it started, or, when none can be, in its own player,
/// and it says why. On the shared bus, in the MPRIS suite, so no other test's player is there meanwhile.
extension MPRISTests {
    /// A home whose desktop default for audio files is mpv (`mimeapps.list`, as a desktop's settings write it), with
    /// the rest of the test's environment, the way the launcher reads it.
    func launchEnvironment(defaultPlayer: String = "mpv.desktop") throws -> [String: String] {
        let home = fixtures.path("launch-home")
        try FileManager.default.createDirectory(atPath: home + "/.config", withIntermediateDirectories: true)
        _ = try fixtures.write(
            "launch-home/.config/mimeapps.list",
            bytes: Array("[Default Applications]\naudio/mpeg=\(defaultPlayer)\n".utf8))
        var environment = ChildProgram.currentEnvironment
        environment["HOME"] = home
        environment["XDG_CONFIG_HOME"] = home + "/.config"
        return environment
    }

    /// A folder holding only the programs given (shell scripts), as a PATH with nothing else on it.
    func programs(_ scripts: [String: String]) throws -> String {
        try FileManager.default.createDirectory(atPath: fixtures.path("bin"), withIntermediateDirectories: true)
        for (name, body) in scripts {
            let path = try fixtures.write("bin/\(name)", bytes: Array("#!/bin/sh\n\(body)\n".utf8))
            chmod(path, 0o755)
        }
        return fixtures.path("bin")
    }

    @Test func theLauncherStartsTheDesktopsDefaultPlayerOnTheBusAndItPlaysTheQueue() throws {
        let engine = try desktopEngine("launcher")
        defer { engine.shutdown() }
        try #require(engine.systemMusicPlayer.players.isEmpty, "a player is already on the test bus")
        let environment = try launchEnvironment()
        #expect(PlayerLauncher.plans(environment: environment).first?.desktopID == "mpv.desktop")

        let start = monotonicNanoseconds()
        let launcher = PlayerLauncher(
            for: engine.systemMusicPlayer, busAddress: engine.configuration.sessionBusAddress,
            environment: environment)
        // The caller did not wait: the player cannot be on the bus yet when the call returns.
        #expect(launcher.outcome == nil, "the launcher made its caller wait: \(String(describing: launcher.outcome))")
        #expect(eventually(within: 15) { launcher.outcome != nil })
        let appeared = Double(monotonicNanoseconds() - start) / 1e9
        guard case .started(let busName, let program, let pid)? = launcher.outcome else {
            Issue.record("no player: \(String(describing: launcher.outcome))")
            return
        }
        defer { ChildProgram.end(pid, grace: 2) }
        print("PlayerLauncher: \(program) on the bus as \(busName) \(appeared) s after the call")
        #expect(program == "mpv" && busName.hasPrefix("org.mpris.MediaPlayer2.mpv"))
        #expect(engine.systemMusicPlayer.players.first { $0.name == busName }?.processID == Int(pid))

        engine.systemMusicPlayer.preferredPlayer = busName
        // Started paused and idle (see MPRISPlayerProgram.known): the queue, then Play, as the game does.
        #expect(engine.systemMusicPlayer.playbackState != .playing)
        try engine.systemMusicPlayer.setQueue(with: MediaItemCollection(items: [MediaItem(path: song)]))
        engine.systemMusicPlayer.play()
        #expect(
            eventually {
                engine.systemMusicPlayer.nowPlayingItem?.title == "Title"
                    && engine.systemMusicPlayer.playbackState == .playing
            }, "the started mpv did not play the queue")
    }

    @Test func aPlayerThatFailsOrNeverAppearsIsATypedErrorWithinTheBound() throws {
        let engine = try desktopEngine("launcher-failures")
        defer { engine.shutdown() }
        let bus = engine.configuration.sessionBusAddress
        // A "mpv" that ends at once and a "vlc" that never joins the bus; nothing else installed.
        let vlcPID = fixtures.path("vlc.pid")
        let folder = try programs(["mpv": "exit 3", "vlc": "echo $$ > '\(vlcPID)'\nexec /bin/sleep 30"])
        let environment = ["PATH": folder, "HOME": fixtures.path("launch-home")]
        let mpvIsDriven = MPVMPRISPlugin.find(environment: environment) { access($0, R_OK) == 0 } != .none
        let start = monotonicNanoseconds()
        let launcher = PlayerLauncher(
            for: engine.systemMusicPlayer, busAddress: bus, patience: 0.5, environment: environment)
        #expect(eventually(within: 10) { launcher.outcome != nil })
        let took = Double(monotonicNanoseconds() - start) / 1e9
        let attempts: [PlayerLaunchError.Attempt] =
            (mpvIsDriven
                ? [.init(program: "mpv", reason: "ended with status 3 before it appeared on the session bus")] : [])
            + [.init(program: "vlc", reason: "did not appear on the session bus within 0.5 s")]
        #expect(launcher.outcome == .failed(.noneStarted(attempts)))
        // A bound, not a measurement: 0.5 s for each player and 1 s to end one, never vlc's 30 s.
        #expect(took < 10, "\(took) s")
        #expect(engine.systemMusicPlayer.players.isEmpty)

        // Nothing installed at all; no session bus.
        let empty = try programs([:])
        let none = PlayerLauncher(
            for: engine.systemMusicPlayer, busAddress: bus, environment: ["PATH": empty + "/nothing"])
        #expect(eventually { none.outcome != nil })
        #expect(none.outcome == .failed(.noPlayerInstalled))
        #expect(PlayerLauncher(for: engine.systemMusicPlayer, busAddress: nil).outcome == .failed(.noSessionBus))

        // Called off while its player is on the way: the player is ended, the launch says so.
        try? FileManager.default.removeItem(atPath: vlcPID)
        let slow = PlayerLauncher(
            for: engine.systemMusicPlayer, busAddress: bus, patience: 30, environment: ["PATH": folder])
        // The shell's redirection makes the file before `echo` writes into it: waited for until it holds a number.
        var started: pid_t = 0
        #expect(
            eventually {
                started =
                    pid_t(
                        (try? String(contentsOfFile: vlcPID, encoding: .utf8))?
                            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
                return started > 0
            })
        try #require(started > 0)
        #expect(kill(started, 0) == 0)
        slow.cancel()
        #expect(slow.outcome == .failed(.cancelled))
        #expect(kill(started, 0) != 0, "the player on its way was not ended")
    }

    // MARK: The game

    func pickEverything(_ game: GravityWave, from library: MediaLibrary) throws {
        game.openPicker(library: library)
        let picker = try #require(game.picker)
        picker.selectAll()
        game.perform(.pickerDone)
    }

    func systemGame(_ engine: AudioEngine, launch environment: [String: String]) throws -> GravityWave {
        let settings = fixtures.path("config/gravity-wave.conf")
        var saved = GameSettings()
        saved.player = .system
        try saved.save(to: settings)
        var options = GravityWave.Options(assets: BuildProducts.assets, settingsPath: settings)
        options.playerLaunchEnvironment = environment
        return try GravityWave(engine: engine, options: options)
    }

    func pickedLibrary() throws -> MediaLibrary {
        try fixtures.libraryOgg("Music/a.ogg", ["TITLE=Alpha Song", "ARTIST=Ann"])
        try fixtures.libraryOgg("Music/b.ogg", ["TITLE=Beta Song", "ARTIST=Bob"])
        let library = try MediaLibrary(folders: [fixtures.path("Music")], databasePath: fixtures.path("library.sqlite"))
        _ = try library.scan()
        return library
    }

    func addOrShowTitle(_ game: GravityWave) -> String? {
        game.hudButtons().first { $0.action == .addOrShowMusic }?.label
    }

    @Test func gravityWaveStartsTheUsersPlayerWhenNoneRunsAndItPlaysThePicks() throws {
        let engine = try desktopEngine("gravity-wave-launch")
        defer { engine.shutdown() }
        try #require(engine.systemMusicPlayer.players.isEmpty, "a player is already on the test bus")
        let game = try systemGame(engine, launch: try launchEnvironment())
        #expect(game.player !== engine.musicPlayer)
        try pickEverything(game, from: try pickedLibrary())

        // While the player starts: said so, and still "Add Music" (no queue plays yet).
        #expect(game.hudNote == "Starting a music player…")
        #expect(addOrShowTitle(game) == "Add Music")
        #expect(
            eventually(within: 15) {
                tick(game, engine)
                return game.userCollection != nil || game.settings.player == .application
            })
        let started = try #require(engine.systemMusicPlayer.currentPlayer)
        defer { started.processID.map { ChildProgram.end(pid_t($0), grace: 2) } }
        #expect(game.settings.player == .system && started.shortName.hasPrefix("mpv"))
        #expect(addOrShowTitle(game) == "Show Music")
        #expect(
            eventually {
                tick(game, engine)
                return engine.systemMusicPlayer.nowPlayingItem?.title == "Alpha Song"
                    && engine.systemMusicPlayer.playbackState == .playing
            }, "the started player did not play the picks")
        #expect(game.nowPlayingText == "Now Playing: Alpha Song by Ann")
        #expect(engine.musicPlayer.playbackState != .playing)
    }

    @Test func gravityWaveSaysSoAndPlaysThePicksItselfWhenNoPlayerCanBeStarted() throws {
        let engine = try desktopEngine("gravity-wave-no-player")
        defer { engine.shutdown() }
        try #require(engine.systemMusicPlayer.players.isEmpty, "a player is already on the test bus")
        let game = try systemGame(engine, launch: ["PATH": fixtures.path("nothing-installed")])
        try pickEverything(game, from: try pickedLibrary())
        #expect(addOrShowTitle(game) == "Add Music")
        #expect(
            eventually {
                tick(game, engine)
                return game.settings.player == .application
            })
        #expect(
            game.hudNote
                == "No music player could be started (\(PlayerLaunchError.noPlayerInstalled)): playing in the game's player"
        )
        #expect(game.player === engine.musicPlayer)
        #expect(engine.musicPlayer.items.map(\.title) == ["Alpha Song", "Beta Song"])
        #expect(engine.musicPlayer.playbackState == .playing)
        #expect(addOrShowTitle(game) == "Show Music")
    }
}
