import Testing

@testable import Ambience
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
}
