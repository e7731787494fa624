import AmbienceHost
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport
@testable import GravityWaveCore

/// The route-change alert, as AddMusic shows it: only when app sound (the app sound, or the game's music) was
/// playing and so was paused; otherwise the session's pause is lifted at once and the game plays on.
extension GravityWaveTests {
    func removeTheDevice(_ engine: AudioEngine, _ game: GravityWave) {
        engine.session.handle(
            .currentDeviceRemoved(
                previous: AudioRoute(name: "Headphones", driver: "pulseaudio"),
                current: AudioRoute(name: "Speakers", driver: "pulseaudio")))
        game.handleAudioEvents(engine.update())
    }

    @Test func noAlertWhenNoAppSoundOrMusicWasPlaying() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let game = try makeGame(engine)
        game.perform(.playPause)  // the soundtrack paused by the user
        game.update(dt: 1.0 / 60)
        #expect(engine.musicPlayer.playbackState == .paused)
        removeTheDevice(engine, game)
        #expect(game.sessionEvents.contains { if case .routeChange = $0 { true } else { false } })
        #expect(game.alert == nil, "nothing of the game's was paused, yet it asks")
        #expect(!engine.session.isPausedForRouteChange && game.isSimulating)
        #expect(engine.musicPlayer.playbackState == .paused, "the user's pause was undone")
    }

    @Test func theAlertWhenTheAppSoundWasPlaying() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let game = try makeGame(engine)
        game.perform(.playPause)
        game.perform(.playAppSound)
        game.update(dt: 1.0 / 60)
        #expect(!game.appSoundButton.isEnabled)
        removeTheDevice(engine, game)
        #expect(game.alert == .routeChange)
        #expect(engine.session.isPausedForRouteChange)
    }

    @Test func theAlertWhenTheGamesMusicWasPlaying() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let game = try makeGame(engine)
        game.update(dt: 1.0 / 60)
        #expect(engine.musicPlayer.playbackState == .playing)
        removeTheDevice(engine, game)
        #expect(game.alert == .routeChange)
        #expect(engine.musicPlayer.playbackState == .paused)
    }

    @Test func routeChangeAlertAppearsOnAnInjectedOldDeviceUnavailable() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let game = try makeGame(engine)
        let headphones = AudioRoute(name: "Headphones", driver: "pulseaudio"),
            speakers = AudioRoute(name: "Speakers", driver: "pulseaudio")
        game.handleAudioEvents([
            .session(.routeChange(RouteChange(reason: .newDeviceAvailable, previous: speakers, current: headphones)))
        ])
        #expect(game.alert == nil)
        game.handleAudioEvents([
            .session(.routeChange(RouteChange(reason: .oldDeviceUnavailable, previous: headphones, current: speakers)))
        ])
        #expect(game.alert == .routeChange)
        #expect(!game.isSimulating)
        #expect(game.sessionEvents.count == 2)

        // Drawn like the seeds' alert: a panel with its title, message and two buttons.
        let canvas = try Canvas(offscreenWidth: 960, height: 600)
        game.draw(canvas, alpha: 0)
        let picture = try #require(canvas.readPixels())
        let panel = GravityWave.alertPanel
        #expect(Self.brightPixels(picture, in: Int(panel.x)..<Int(panel.maxX), Int(panel.y)..<Int(panel.y) + 100) > 300)
        #expect(game.alertElements().map(\.label) == ["Stop", "Resume"])

        // Keys work while it is up; the world waits underneath.
        let before = game.world.time
        game.update(dt: 1.0 / 60)
        #expect(game.world.time == before)
        game.handle(.keyDown(.enter, isRepeat: false))
        #expect(game.alert == nil && game.isSimulating)
    }

    @Test func routeChangeFromTheSessionPausesResumeRestartsStopStops() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let game = try makeGame(engine)
        _ = try engine.render(frames: 4_800)
        #expect(engine.musicPlayer.playbackState == .playing)
        let speakers = AudioRoute(name: "Speakers", driver: "pulseaudio")

        // The real path: the session sees the device go, pauses the game's audio, and tells the game in update().
        engine.session.handle(
            .currentDeviceRemoved(previous: AudioRoute(name: "Headphones", driver: "pulseaudio"), current: speakers))
        game.handleAudioEvents(engine.update())
        #expect(game.alert == .routeChange)
        #expect(engine.musicPlayer.playbackState == .paused)
        #expect(engine.session.isPausedForRouteChange)
        let resume = try #require(game.alertElements().first { $0.action == .alertResume })
        game.handle(.mouseDown(resume.rect.center, button: 1))
        #expect(game.alert == nil)
        #expect(!engine.session.isPausedForRouteChange)
        #expect(engine.musicPlayer.playbackState == .playing)

        engine.session.handle(
            .currentDeviceRemoved(previous: speakers, current: AudioRoute(name: "HDMI", driver: "pulseaudio")))
        game.handleAudioEvents(engine.update())
        #expect(game.alert == .routeChange)
        game.handle(.keyDown(.escape, isRepeat: false))  // Stop
        #expect(game.alert == nil)
        #expect(engine.musicPlayer.playbackState == .stopped)
        #expect(!engine.session.isPausedForRouteChange)  // the effects play on
        #expect(try Signal(engine.render(frames: 9_600)).rms(4_800..<9_600) < 0.02)  // only the quiet engine loop
    }
}
