import AmbienceHost
import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport
@testable import GravityWaveCore

/// The seed app's behaviours (AddMusic), each shown by driving the game: its keys and clicks, the engine's events in
/// `update()`, and what it draws. Offline engines: the frames are rendered as the game's host would render them.
extension GravityWaveTests {
    /// One frame of the game as its host runs it: a fixed step, a block of audio, then the engine's events.
    func frames(_ count: Int, _ game: GravityWave, _ engine: AudioEngine, watch: ([AudioEvent]) -> Void = { _ in })
        throws
    {
        for _ in 0..<count {
            game.update(dt: 1.0 / 60)
            _ = try engine.render(frames: 800)
            let events = engine.update()
            watch(events)
            game.handleAudioEvents(events)
        }
    }

    func button(_ game: GravityWave, _ action: GravityWave.Action) throws -> Control {
        try #require(game.hudButtons().first { $0.action == action })
    }

    func press(_ game: GravityWave, _ key: Key) {
        game.handle(.keyDown(key, isRepeat: false))
        game.handle(.keyUp(key))
    }

    // MARK: Play App Sound

    @Test func playAppSoundIsOffWhileItsSoundPlaysAndOnWhenTheEngineSaysItFinished() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let game = try makeGame(engine)
        #expect(try button(game, .playAppSound).enabled)
        press(game, .character("x"))
        #expect(try !button(game, .playAppSound).enabled)
        let voice = game.appSoundButton.voice
        #expect(voice.isPlaying)
        // Pressed again, by key or by a click, it plays nothing more.
        press(game, .character("x"))
        game.handle(.mouseDown(try button(game, .playAppSound).rect.center, button: 1))
        #expect(game.audio.counts[.appSound] == 1)

        var finishedEvent: Int?, enabledAt: Int?
        for frame in 1...60 {
            try frames(1, game, engine) { events in if events.contains(.voiceFinished(voice)) { finishedEvent = frame }
            }
            if enabledAt == nil, try button(game, .playAppSound).enabled { enabledAt = frame }
        }
        // pickup.wav is 0.3 s, played at pitch 0.8: 0.375 s, 22.5 frames. The button follows the event, in that frame.
        let finished = try #require(finishedEvent, "no voiceFinished for the app sound")
        #expect((22...26).contains(finished), "finished in frame \(finished)")
        #expect(enabledAt == finished)
        #expect(!voice.isAlive)
        press(game, .character("x"))
        #expect(game.audio.counts[.appSound] == 2)
        #expect(try !button(game, .playAppSound).enabled)
    }

    /// The pure part: only the app sound's own voice ending turns the button on.
    @Test func theAppSoundButtonListensToItsOwnVoiceOnly() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let sound = try engine.load(BuildProducts.assets + "/SFX/pickup.wav")
        let mine = engine.play(sound), other = engine.play(sound)
        var button = AppSoundButton()
        button.started(mine)
        #expect(!button.isEnabled)
        button.handle(.voiceFinished(other))
        button.handle(.music(.queueDidChange))
        #expect(!button.isEnabled)
        button.handle(.voiceStolen(mine))
        #expect(button.isEnabled && button.voice == .none)
        button.started(mine)
        button.stoppedAfterRouteChange()
        #expect(button.isEnabled && button.voice == mine)
    }

    // MARK: Play/pause

    @Test func playPauseSwapsItsTitleWithTheApplicationPlayersState() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let game = try makeGame(engine)
        try frames(2, game, engine)
        #expect(engine.musicPlayer.playbackState == .playing)
        #expect(try button(game, .playPause).label == "Pause")
        press(game, .character("p"))
        #expect(engine.musicPlayer.playbackState == .paused)
        #expect(try button(game, .playPause).label == "Play")
        game.handle(.mouseDown(try button(game, .playPause).rect.center, button: 1))
        #expect(engine.musicPlayer.playbackState == .playing)
        #expect(try button(game, .playPause).label == "Pause")
        // A change the game did not make (the session pausing for a lost device) shows too.
        engine.session.handle(
            .currentDeviceRemoved(
                previous: AudioRoute(name: "Headphones", driver: "pulseaudio"),
                current: AudioRoute(name: "Speakers", driver: "pulseaudio")))
        try frames(1, game, engine)
        #expect(try button(game, .playPause).label == "Play")
        #expect(NowPlayingLine(item: nil, state: .stopped, hasPlayedMusic: false) == .instructions)
        for state in [PlaybackState.playing, .seekingForward, .seekingBackward] {
            #expect(playPauseTitle(state) == "Pause")
        }
        for state in [PlaybackState.paused, .stopped, .interrupted] { #expect(playPauseTitle(state) == "Play") }
    }

    // MARK: The Now Playing line

    @Test func nowPlayingLineGoesFromInstructionsToTheSongToMusicEndedAndPlayStartsTheQueueAgain() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        engine.session.attach(otherPlayers: FakePlayers(playing: ["org.mpris.MediaPlayer2.spotify"]))
        let game = try makeGame(engine)  // the user's music plays: the game's stays off, so nothing has played
        try frames(2, game, engine)
        #expect(game.nowPlayingLine == .instructions)
        #expect(game.nowPlayingText == "Press P to play the game's music, or M to add your own")
        // The seed's player: no shuffle, no repeat.
        #expect(engine.musicPlayer.shuffleMode == .off && engine.musicPlayer.repeatMode == .none)

        press(game, .character("p"))
        try frames(2, game, engine)
        #expect(game.nowPlayingText == "Now Playing: Gravity Wave Theme by Ambience Ensemble")
        press(game, .character("n"))
        try frames(2, game, engine)
        #expect(game.nowPlayingText == "Now Playing: Orbit Lullaby by Ambience Ensemble")
        try engine.musicPlayer.seek(to: engine.musicPlayer.nowPlayingItem!.playbackDuration - 0.3)
        try frames(90, game, engine)
        #expect(engine.musicPlayer.playbackState == .stopped)
        #expect(game.nowPlayingLine == .musicEnded)
        #expect(game.nowPlayingText == "Music ended. Press P to play it again, or M to pick more")
        #expect(try button(game, .playPause).label == "Play")
        // Rewound: the queue is whole, and Play starts it from its first item.
        #expect(engine.musicPlayer.items.count == 2)
        press(game, .character("p"))
        try frames(2, game, engine)
        #expect(engine.musicPlayer.playbackState == .playing)
        #expect(game.nowPlayingText == "Now Playing: Gravity Wave Theme by Ambience Ensemble")
        #expect(engine.musicPlayer.currentPlaybackTime < 0.5)
    }

    /// Repeat is a pause-menu setting, off by default and remembered; with it on the queue wraps instead of ending.
    @Test func repeatIsAMenuSettingThatIsRememberedAndKeepsTheMusicGoing() throws {
        do {
            let engine = try AudioEngine(.offline())
            defer { engine.shutdown() }
            let game = try makeGame(engine)
            #expect(engine.musicPlayer.repeatMode == .none)
            press(game, .escape)
            press(game, .down)
            press(game, .down)
            press(game, .right)
            #expect(game.settings.repeatMusic && engine.musicPlayer.repeatMode == .all)
            #expect(try String(contentsOfFile: settingsPath, encoding: .utf8).contains("repeat = on"))
            press(game, .escape)
        }
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let game = try makeGame(engine)
        #expect(engine.musicPlayer.repeatMode == .all)
        press(game, .character("n"))
        try frames(2, game, engine)
        try engine.musicPlayer.seek(to: engine.musicPlayer.nowPlayingItem!.playbackDuration - 0.3)
        try frames(90, game, engine)
        #expect(engine.musicPlayer.playbackState == .playing)
        #expect(game.nowPlayingText == "Now Playing: Gravity Wave Theme by Ambience Ensemble")
    }

    // MARK: Artwork

    /// The cover of what plays (the soundtrack's cover.png), or the no-artwork picture for an item with none.
    @Test func theHUDShowsTheCoverOrTheNoArtworkPicture() throws {
        try fixtures.libraryOgg("Music/bare.ogg", ["TITLE=Bare Song", "ARTIST=Nobody"])
        let library = try MediaLibrary(folders: [fixtures.path("Music")], databasePath: fixtures.path("library.sqlite"))
        _ = try library.scan()
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let game = try makeGame(engine)
        try frames(2, game, engine)
        let canvas = try Canvas(offscreenWidth: 960, height: 600)

        #expect(try drawnArtworkDifference(game, on: canvas) > 600, "the soundtrack's cover is not drawn")
        game.openPicker(library: library)
        game.frameEnded(1, time: 0)
        press(game, .enter)
        press(game, .tab)
        try frames(2, game, engine)
        #expect(game.nowPlayingText == "Now Playing: Bare Song by Nobody")
        #expect(
            try drawnArtworkDifference(game, on: canvas) == 0, "an item without artwork shows the no-artwork picture")
    }

    // MARK: Add Music / Show Music

    @Test func showMusicListsTheQueueAndLeavingItRestoresThePlaybackState() throws {
        try fixtures.libraryOgg("Music/a.ogg", ["TITLE=Alpha Song", "ARTIST=Ann"])
        try fixtures.libraryOgg("Music/b.ogg", ["TITLE=Beta Song", "ARTIST=Bob"])
        let library = try MediaLibrary(folders: [fixtures.path("Music")], databasePath: fixtures.path("library.sqlite"))
        _ = try library.scan()
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let game = try makeGame(engine)
        game.openPicker(library: library)
        game.frameEnded(1, time: 0)
        press(game, .enter)
        press(game, .down)
        press(game, .enter)
        press(game, .tab)
        try frames(2, game, engine)
        #expect(try button(game, .addOrShowMusic).label == "Show Music")

        // Playing: the list shows the queue, the song playing marked; leaving it, the song plays on where it was.
        press(game, .character("m"))
        #expect(game.screen == .queue)
        #expect(game.queueRows().map(\.line) == ["Alpha Song — Ann", "Beta Song — Bob"])
        #expect(game.queueRows().map(\.isNowPlaying) == [true, false])
        try frames(6, game, engine)
        press(game, .escape)
        #expect(game.screen == .playing && engine.musicPlayer.playbackState == .playing)
        #expect(engine.musicPlayer.nowPlayingItem?.title == "Alpha Song")

        // Paused: it stays paused, at the same time, through the list and through the picker's Cancel.
        press(game, .character("p"))
        let time = engine.musicPlayer.currentPlaybackTime
        press(game, .character("m"))
        press(game, .character("a"))
        #expect(game.screen == .picker)
        press(game, .escape)
        #expect(game.screen == .queue)
        press(game, .enter)
        try frames(3, game, engine)
        #expect(engine.musicPlayer.playbackState == .paused)
        #expect(abs(engine.musicPlayer.currentPlaybackTime - time) < 0.01)
        #expect(game.nowPlayingText == "Now Playing: Alpha Song by Ann")
    }

    // MARK: The route-change alert

    @Test func routeChangeAlertResumePlaysOnAndStopRewindsTheAppSoundAndEnablesItsButton() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let game = try makeGame(engine)
        func deviceGoes() throws {
            engine.session.handle(
                .currentDeviceRemoved(
                    previous: AudioRoute(name: "Headphones", driver: "pulseaudio"),
                    current: AudioRoute(name: "Speakers", driver: "pulseaudio")))
            try frames(1, game, engine)
        }
        // Resume: the app sound goes on from where it was paused, and its button stays off until it ends.
        press(game, .character("x"))
        let voice = game.appSoundButton.voice
        try frames(6, game, engine)
        try deviceGoes()
        #expect(game.alert == .routeChange)  // the session suspended the game's audio: the sound waits (below)
        let pausedAt = try #require(voice.elapsed)
        try frames(10, game, engine)
        #expect(voice.elapsed == pausedAt)
        press(game, .enter)
        #expect(game.alert == nil && voice.isPlaying)
        #expect(try !button(game, .playAppSound).enabled)
        try frames(40, game, engine)
        #expect(try button(game, .playAppSound).enabled && !voice.isAlive)

        // Stop: the app sound is rewound and held, its button on; pressed, the same sound plays from its start.
        press(game, .character("x"))
        let second = game.appSoundButton.voice
        try frames(6, game, engine)
        try deviceGoes()
        game.handle(
            .mouseDown(try #require(game.alertElements().first { $0.action == .alertStop }).rect.center, button: 1))
        #expect(game.alert == nil)
        #expect(try button(game, .playAppSound).enabled)
        #expect(second.isAlive && !second.isPlaying && (second.elapsed ?? 1) < 0.001)
        try frames(10, game, engine)
        #expect(!second.isPlaying)  // nothing brings it back by itself
        press(game, .character("x"))
        #expect(game.appSoundButton.voice == second && second.isPlaying)
        #expect(game.audio.counts[.appSound] == 2)  // the held voice, not a new one
        var finished = false
        try frames(40, game, engine) { if $0.contains(.voiceFinished(second)) { finished = true } }
        let enabledAgain = try button(game, .playAppSound).enabled
        #expect(finished && enabledAgain)
    }

    // MARK: Interruptions, through the host

    /// A whole run (host, game, offline recording) with an interruption begun and ended through the session, as a
    /// host does for a call or an in-game video: only what was playing comes back.
    @Test(arguments: [false, true])
    func anInterruptionResumesOnlyWhatWasPlaying(musicPausedFirst: Bool) throws {
        var launch = LaunchOptions()
        launch.headless = true
        launch.seconds = 2
        launch.record = fixtures.path("interruption.wav")
        launch.script = [
            ScriptStep(frame: 6, action: .key(.character("x"))),
            ScriptStep(frame: 12, action: .interruption(began: true)),
            ScriptStep(frame: 72, action: .interruption(began: false))
        ]
        if musicPausedFirst { launch.script.insert(ScriptStep(frame: 3, action: .key(.character("p"))), at: 0) }
        let run = try GameRun(launch: launch, headless: true, assets: BuildProducts.assets, settingsPath: settingsPath)
        // Only the app sound is heard: the music, the clicks and the world's effects are turned down.
        run.engine.music.gain = 0
        run.engine.ui.gain = 0
        for (kind, bus) in run.game.audio.buses where kind != .appSound { bus.gain = 0 }
        let summary = try run.run()
        #expect(summary.sessionEvents.contains(.interruption(.began)))
        #expect(summary.sessionEvents.contains(.interruption(.ended(shouldResume: true))))
        #expect(summary.playbackState == (musicPausedFirst ? .paused : .playing))

        let heard = Signal(try AudioFile.decode(fixtures.path("interruption.wav")))
        func level(_ from: Double, _ to: Double) -> Double { heard.rms(Int(from * 48_000)..<Int(to * 48_000)) }
        #expect(level(0.11, 0.19) > 0.01, "the app sound before the interruption")
        #expect(level(0.21, 1.19) < 0.0005, "silence during the interruption")
        #expect(level(1.21, 1.45) > 0.01, "the app sound resumed where it stopped")
        #expect(level(1.55, 2.0) < 0.0005, "and ended (0.1 s before, 0.275 s after)")
        #expect(summary.buttons.contains("Play App Sound"))
    }
}
