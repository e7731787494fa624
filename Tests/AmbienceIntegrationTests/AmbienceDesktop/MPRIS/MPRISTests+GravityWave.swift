import AmbienceHost
import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport
@testable import GravityWaveCore

/// Gravity Wave beside a real mpv on the private session bus: the system player chosen in the settings, and the
/// user's music starting and stopping mid-game. In the MPRIS suite, so that only one test's mpv runs at a time.
extension MPRISTests {
    func gravityWave(on engine: AudioEngine, settings: String) throws -> GravityWave {
        try GravityWave(
            engine: engine, options: GravityWave.Options(assets: BuildProducts.assets, settingsPath: settings))
    }

    /// A frame of the game: a step, a block of (offline) audio, the engine's events.
    func tick(_ game: GravityWave, _ engine: AudioEngine) {
        game.update(dt: 1.0 / 60)
        _ = try? engine.render(frames: 800)
        game.handleAudioEvents(engine.update())
    }

    func playPauseTitle(_ game: GravityWave) -> String? { game.hudButtons().first { $0.action == .playPause }?.label }

    /// The player preference is remembered (settings file); with "system" the game drives the desktop's player, and
    /// at launch shows its song and that it is paused, without starting the game's own soundtrack over it.
    @Test func gravityWaveOnTheSystemPlayerShowsItsSongAndPausedStateAtLaunchAndDrivesIt() throws {
        let (mpv, name) = try startMPV(paused: true)
        defer { mpv.kill() }
        let settings = fixtures.path("config/gravity-wave.conf")
        var saved = GameSettings()
        saved.player = .system
        try saved.save(to: settings)
        let engine = try desktopEngine("gravity-wave-system")
        defer { engine.shutdown() }
        let game = try gravityWave(on: engine, settings: settings)
        #expect(game.settings.player == .system)
        #expect(game.player !== engine.musicPlayer)
        for _ in 0..<3 { tick(game, engine) }
        #expect(game.nowPlayingText == "Now Playing: Title by Artist")
        #expect(playPauseTitle(game) == "Play")
        #expect(engine.musicPlayer.playbackState == .stopped)

        game.handle(.keyDown(.character("p"), isRepeat: false))
        #expect(eventually { playerctl(["-p", name, "status"]) == "Playing" })
        #expect(
            eventually {
                tick(game, engine); return playPauseTitle(game) == "Pause"
            })
        game.handle(
            .mouseDown(try #require(game.hudButtons().first { $0.action == .playPause }).rect.center, button: 1))
        #expect(eventually { playerctl(["-p", name, "status"]) == "Paused" })
        #expect(
            eventually {
                tick(game, engine); return playPauseTitle(game) == "Play"
            })
        #expect(game.nowPlayingText == "Now Playing: Title by Artist")
    }

    /// The secondary-audio hint with a real player started during the run: the game's soundtrack pauses while the
    /// user's music plays, and plays again when the user pauses theirs.
    @Test func gravityWaveQuietsItsSoundtrackWhileTheUsersMusicPlaysMidGame() throws {
        let engine = try desktopEngine("gravity-wave-hint")
        defer { engine.shutdown() }
        let game = try gravityWave(on: engine, settings: fixtures.path("config/gravity-wave.conf"))
        for _ in 0..<3 { tick(game, engine) }
        try #require(!game.soundtrackOffForUserMusic, "some player on the test bus was already playing")
        #expect(engine.musicPlayer.playbackState == .playing)

        let (mpv, name) = try startMPV()
        defer { mpv.kill() }
        #expect(
            eventually {
                tick(game, engine)
                return game.soundtrackOffForUserMusic && engine.musicPlayer.playbackState == .paused
            }, "the soundtrack played on over the user's music")
        #expect(game.hudNote == "Your music is playing: the game's music is off")
        #expect(game.sessionEvents.contains(.silenceSecondaryAudioHint(true)))
        #expect(playerctl(["-p", name, "status"]) == "Playing")  // ambient: theirs is left alone

        #expect(playerctl(["-p", name, "pause"]) != nil)
        #expect(
            eventually {
                tick(game, engine)
                return !game.soundtrackOffForUserMusic && engine.musicPlayer.playbackState == .playing
            }, "the soundtrack did not come back")
        #expect(game.sessionEvents.contains(.silenceSecondaryAudioHint(false)))
    }
}
