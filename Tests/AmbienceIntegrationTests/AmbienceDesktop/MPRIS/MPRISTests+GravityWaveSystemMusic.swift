import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDesktop
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport
@testable import GravityWaveCore

/// Gravity Wave in System mode beside a real mpv on the private session bus: the user's player is the game's music,
/// so the secondary-audio hint never makes the game pause or resume it; music the game started is paused at exit,
/// music playing at launch is left playing. In the MPRIS suite, so that only one test's mpv runs at a time.
extension MPRISTests {
    /// A settings file that chooses the system player.
    func systemModeSettings() throws -> String {
        let settings = fixtures.path("config/gravity-wave-system.conf")
        var saved = GameSettings()
        saved.player = .system
        try saved.save(to: settings)
        return settings
    }

    /// Ticks the game for `seconds` of wall-clock time (frames at about 60 Hz), so the player's signals arrive.
    func run(_ game: GravityWave, _ engine: AudioEngine, seconds: Double) {
        let start = monotonicSeconds()
        while monotonicSeconds() - start < seconds {
            tick(game, engine)
            usleep(16_000)
        }
    }

    /// The statuses `watcher` heard `name` announce that were not Playing, since it was last drained.
    func statusesOtherThanPlaying(_ watcher: MPRISClient, _ name: String) -> [MPRISPlayerInfo.Status] {
        watcher.drainEvents().compactMap {
            if case .playerChanged(let info) = $0, info.name == MPRISClient.namePrefix + name, info.status != .playing {
                info.status
            } else {
                nil
            }
        }
    }

    /// Makes a volume change after everything else and waits until `watcher` hears it: mpv announces its changes in
    /// order, so by then the watcher has heard anything the game made mpv do before.
    func marker(_ watcher: MPRISClient, _ name: String, volume: Double) -> Bool {
        _ = playerctl(["-p", name, "volume", String(volume)])
        return eventually { abs((watcher.player(named: name)?.volume ?? -1) - volume) < 0.01 }
    }

    func hintNotes(_ game: GravityWave) -> [SessionNotification] {
        game.sessionEvents.filter {
            if case .silenceSecondaryAudioHint = $0 { true } else { false }
        }
    }

    /// The user's music playing at launch, with the system player chosen: it plays on through a whole run of 4 s
    /// and after exit without one pause (the game once paused and resumed it about twice a second: 36 hint flips in
    /// 4 s, and left it paused).
    @Test func theUsersMusicAtLaunchPlaysOnInSystemModeWithoutOnePauseThroughTheRunAndAfterExit() throws {
        let (mpv, name) = try startMPV()
        defer { mpv.kill() }
        let watcher = try MPRISClient(timeout: .seconds(2))
        defer { watcher.close() }
        #expect(eventually { watcher.player(named: name)?.status == .playing })
        let engine = try desktopEngine("gravity-wave-system-launch")
        let game = try gravityWave(on: engine, settings: try systemModeSettings())
        engine.systemMusicPlayer.preferredPlayer = name  // other programs may be on the shared bus
        run(game, engine, seconds: 4)
        print("GravityWaveSystemMusic: \(hintNotes(game).count) hint notifications in 4 s of System mode")
        #expect(hintNotes(game).isEmpty, "\(game.sessionEvents)")
        #expect(!game.soundtrackOffForUserMusic && game.hudNote == nil)
        #expect(playPauseTitle(game) == "Pause")
        #expect(game.nowPlayingText == "Now Playing: Title by Artist")
        #expect(engine.musicPlayer.playbackState != .playing, "the soundtrack played over the system player")
        #expect(statusesOtherThanPlaying(watcher, name).isEmpty, "paused during the run")

        game.shutdown()
        engine.shutdown()
        #expect(marker(watcher, name, volume: 0.5), "the marker never arrived")
        #expect(statusesOtherThanPlaying(watcher, name).isEmpty, "paused at exit")
        #expect(playerctl(["-p", name, "status"]) == "Playing")
    }

    /// The launch-music decision: the user's music, paused and played again through the game's button, is still
    /// theirs (the game gave it no music of its own), so exit leaves it playing.
    @Test func launchMusicPausedAndPlayedThroughTheGameStaysTheUsersAndPlaysOnAfterExit() throws {
        let (mpv, name) = try startMPV()
        defer { mpv.kill() }
        let engine = try desktopEngine("gravity-wave-system-replay")
        let game = try gravityWave(on: engine, settings: try systemModeSettings())
        engine.systemMusicPlayer.preferredPlayer = name
        for _ in 0..<3 { tick(game, engine) }
        game.perform(.playPause)
        #expect(eventually { playerctl(["-p", name, "status"]) == "Paused" })
        #expect(
            eventually {
                tick(game, engine); return playPauseTitle(game) == "Play"
            })
        game.perform(.playPause)
        #expect(eventually { playerctl(["-p", name, "status"]) == "Playing" })
        run(game, engine, seconds: 1)
        #expect(hintNotes(game).isEmpty, "\(game.sessionEvents)")
        #expect(engine.session.playersPlayingAtLaunch == [MPRISClient.namePrefix + name])

        let watcher = try MPRISClient(timeout: .seconds(2))
        defer { watcher.close() }
        #expect(eventually { watcher.player(named: name)?.status == .playing })
        game.shutdown()
        engine.shutdown()
        #expect(marker(watcher, name, volume: 0.6), "the marker never arrived")
        #expect(statusesOtherThanPlaying(watcher, name).isEmpty, "the exit paused the user's music")
        #expect(playerctl(["-p", name, "status"]) == "Playing")
    }

    /// Music the game started on the system player (Play on a paused one) plays through the run, never paused by
    /// the hint, and is paused at exit.
    @Test func musicStartedInSystemModePlaysThroughTheRunAndIsPausedAtExit() throws {
        let (mpv, name) = try startMPV(paused: true)
        defer { mpv.kill() }
        let engine = try desktopEngine("gravity-wave-system-started")
        let game = try gravityWave(on: engine, settings: try systemModeSettings())
        engine.systemMusicPlayer.preferredPlayer = name
        for _ in 0..<3 { tick(game, engine) }
        #expect(playPauseTitle(game) == "Play")
        let watcher = try MPRISClient(timeout: .seconds(2))
        defer { watcher.close() }
        game.perform(.playPause)
        #expect(eventually { watcher.player(named: name)?.status == .playing }, "the game did not start it")
        _ = statusesOtherThanPlaying(watcher, name)  // from before it played
        run(game, engine, seconds: 3)
        #expect(hintNotes(game).isEmpty, "\(game.sessionEvents)")
        #expect(statusesOtherThanPlaying(watcher, name).isEmpty, "paused during the run")
        #expect(playerctl(["-p", name, "status"]) == "Playing")

        game.shutdown()
        engine.shutdown()
        #expect(eventually { playerctl(["-p", name, "status"]) == "Paused" }, "the game's music plays on after exit")
    }

    /// The rule is the engine's, not only the demo's: a game whose system player is its music never gets the hint
    /// for that player, whatever it does on the hint; once it gives the player back, the player is the user's music.
    @Test func theHintNeverCountsThePlayerAGameDrivesAsItsMusic() throws {
        let (mpv, name) = try startMPV()
        defer { mpv.kill() }
        let engine = try desktopEngine("hint-driven")
        defer { engine.shutdown() }
        engine.session.setCategory(.ambient)
        engine.session.setActive(true)
        engine.systemMusicPlayer.preferredPlayer = name  // names the player to drive: the game's music from now
        #expect(engine.systemMusicPlayer.isGameMusic)
        var notes: [AudioEvent] = []
        let start = monotonicSeconds()
        while monotonicSeconds() - start < 1 {
            notes += engine.update().filter {
                if case .session(.silenceSecondaryAudioHint) = $0 { true } else { false }
            }
            usleep(16_000)
        }
        #expect(notes.isEmpty, "\(notes)")
        #expect(!engine.session.secondaryAudioShouldBeSilencedHint)
        engine.systemMusicPlayer.isGameMusic = false
        #expect(
            eventually { engine.update().contains(.session(.silenceSecondaryAudioHint(true))) },
            "a player the game does not drive is the user's music")
        #expect(playerctl(["-p", name, "status"]) == "Playing")
    }
}
