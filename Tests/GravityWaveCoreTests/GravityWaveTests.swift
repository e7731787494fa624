import AmbienceHost
import AmbiencePlatform
import Foundation
import Synchronization
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport
@testable import GravityWaveCore

/// The demo game and its SDL host, driven headless: the audio it records, the picture it draws, its screens, and the
/// session rules it follows.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5)), .serialized) struct GravityWaveTests {

    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    var settingsPath: String { fixtures.path("config/ambience/gravity-wave.conf") }

    func makeGame(_ engine: AudioEngine, category: SessionCategory = .ambient) throws -> GravityWave {
        var options = GravityWave.Options(assets: BuildProducts.assets, settingsPath: settingsPath)
        options.category = category
        return try GravityWave(engine: engine, options: options)
    }

    /// A headless run recorded to `name`, with `configure` applied to it before it starts (bus gains, say).
    func record(
        _ name: String, seconds: Double = 5, voices: Int = 0,
        configure: (GameRun) -> Void = { _ in }
    ) throws -> (summary: RunSummary, audio: PCMBuffer) {
        var launch = LaunchOptions()
        launch.headless = true
        launch.seconds = seconds
        launch.voices = voices
        launch.record = fixtures.path(name)
        let run = try GameRun(launch: launch, headless: true, assets: BuildProducts.assets, settingsPath: settingsPath)
        configure(run)
        let summary = try run.run()
        return (summary, try AudioFile.decode(fixtures.path(name)))
    }

    // MARK: Headless audio

    @Test func headlessRunRecordsMusicThroughoutAndEveryEffectWhereTheSummarySaysIt() throws {
        let (summary, full) = try record("full.wav")
        #expect(summary.frames == 300)
        #expect(summary.recordedFrames == 240_000)
        #expect(full.frames == 240_000 && full.sampleRate == 48_000 && full.channels == 2)

        // The summary's counts are the run's: every one-shot in its timeline, the scripted interface presses.
        let logged = Dictionary(grouping: summary.sfxLog, by: \.kind).mapValues(\.count)
        for kind in SoundKind.allCases where kind != .thrust {
            #expect(summary.sfx[kind, default: 0] == logged[kind, default: 0], "\(kind)")
        }
        #expect(summary.oneShots == summary.sfxLog.count)
        #expect(summary.sfx[.uiClick] == 4)  // X, Esc, Down, Esc
        #expect(summary.sfx[.appSound] == 1)
        #expect(summary.sfx[.thrust] == 1)
        #expect(summary.sfx[.laser, default: 0] >= 2)
        #expect(summary.peakVoices >= 2)
        #expect(summary.nowPlaying == "Now Playing: Gravity Wave Theme by Ambience Ensemble")
        #expect(summary.text.hasPrefix(summary.summaryLine))

        // Music all the way through, in the mix and alone.
        let (_, music) = try record("music.wav") { run in
            run.engine.sfx.gain = 0
            run.engine.ui.gain = 0
        }
        for start in stride(from: 0, to: 240_000 - 4_800, by: 4_800) {
            #expect(Signal(music).rms(start..<start + 4_800) > 0.005, "music at \(Double(start) / 48_000) s")
            #expect(Signal(full).rms(start..<start + 4_800) > 0.005, "mix at \(Double(start) / 48_000) s")
        }
        // The mix is the music plus the effects, sample for sample (within 16-bit rounding): the WAV holds both.
        let (_, effects) = try record("effects.wav") { run in run.engine.music.gain = 0 }
        #expect(Signal(effects).rms() > 0.01)
        var worst: Float = 0
        for i in full.samples.indices {
            worst = max(worst, abs(full.samples[i] - music.samples[i] - effects.samples[i]))
        }
        #expect(worst < 4 / 32_768)

        // Each kind alone: its onsets in the recording are exactly the starts the summary logged.
        var heard = 0
        for kind in SoundKind.allCases where kind != .thrust && summary.sfx[kind, default: 0] > 0 {
            let (_, stem) = try record("\(kind.rawValue).wav") { run in
                run.engine.music.gain = 0
                for (other, bus) in run.game.audio.buses where other != kind { bus.gain = 0 }
                if kind != .uiClick { run.engine.ui.gain = 0 }
            }
            let expected = Self.groups(summary.sfxLog.filter { $0.kind == kind }.map(\.time))
            let found = Self.onsets(stem)
            #expect(found.count == expected.count, "\(kind): expected \(expected), heard \(found)")
            for (want, got) in zip(expected, found) {
                #expect(abs(want - got) < 0.016, "\(kind): expected \(expected), heard \(found)")
            }
            heard += found.count
        }
        let distinct = SoundKind.allCases.filter { $0 != .thrust }.map { kind in
            Self.groups(summary.sfxLog.filter { $0.kind == kind }.map(\.time)).count
        }
        #expect(heard == distinct.reduce(0, +))
    }

    /// Start times closer than the detector's refractory time count as one onset.
    static let refractory = 0.15

    static func groups(_ times: [Double]) -> [Double] {
        var out: [Double] = []
        for t in times.sorted() where out.last.map({ t - $0 > refractory }) ?? true { out.append(t) }
        return out
    }

    /// Onsets (seconds): the high-passed level in 5 ms windows jumping to three times the quietest of the previous
    /// 20 ms, no closer together than the refractory time.
    static func onsets(_ pcm: PCMBuffer) -> [Double] {
        let window = 240
        var previous: Float = 0
        var levels: [Double] = []
        var sum = 0.0
        for frame in 0..<pcm.frames {
            let mono = (pcm.samples[frame * 2] + pcm.samples[frame * 2 + 1]) / 2
            let high = Double(mono - previous)
            previous = mono
            sum += high * high
            if frame % window == window - 1 {
                levels.append((sum / Double(window)).squareRoot())
                sum = 0
            }
        }
        var found: [Double] = []
        for i in levels.indices {
            let before = levels[max(0, i - 4)..<i].min() ?? 0
            let t = Double(i * window) / 48_000
            if levels[i] > 0.002, levels[i] > 3 * before, found.last.map({ t - $0 > refractory }) ?? true {
                found.append(t)
            }
        }
        return found
    }

    @Test func framePacingIsMeasuredAndReportedWith200Voices() throws {
        let (summary, _) = try record("voices.wav", seconds: 2, voices: 200)
        #expect(summary.peakVoices >= 200)
        #expect(summary.update.count == summary.frames)
        #expect(
            summary.update.averageMilliseconds > 0
                && summary.update.maxMilliseconds >= summary.update.averageMilliseconds)
        #expect(summary.summaryLine.contains("engine.update()") && summary.summaryLine.contains("ms avg"))
        #expect(summary.text.contains("pacing     engine.update() avg"))
        #expect(summary.text.contains("200 ambient voices"))
    }

    @Test func aSeedAlwaysPlaysTheSameGame() throws {
        let (first, a) = try record("first.wav", seconds: 2)
        let (second, b) = try record("second.wav", seconds: 2)
        #expect(first.sfxLog == second.sfxLog)
        #expect(a.samples == b.samples)
    }

    // MARK: The picture

    @Test func screenshotInAnXvfbWindowShowsTheGameAndTheHUDText() throws {
        guard FileManager.default.isExecutableFile(atPath: BuildProducts.gravityWave) else {
            Issue.record("\(BuildProducts.gravityWave) is missing: build the package (swift build) before the tests")
            return
        }
        let shot = fixtures.path("window.png")
        var environment = childEnvironment(["XDG_CONFIG_HOME": fixtures.path("config")])
        environment["SDL_AUDIODRIVER"] = environment["SDL_AUDIODRIVER"] ?? "dummy"
        environment["SDL_VIDEODRIVER"] = nil
        // Under AddressSanitizer: X11's and Mesa's drivers, unloaded at exit, leave allocations LeakSanitizer can
        // neither attribute nor suppress; the game's own memory is checked in-process by the other tests here.
        if let options = environment["ASAN_OPTIONS"] { environment["ASAN_OPTIONS"] = options + " detect_leaks=0" }
        // 10 s for the 60 frames before the picture: a loaded machine drew 41 in 2 s.
        let run = try ChildProcess.run(
            [
                "xvfb-run", "-a", "-s", "-screen 0 1024x768x24", BuildProducts.gravityWave, "--pilot",
                "--seconds", "10", "--screenshot", shot, "--assets", BuildProducts.assets
            ], environment: environment, timeout: 120)
        let text = String(decoding: run.stdout, as: UTF8.self)
        #expect(
            run.status == 0 && !run.timedOut, "\(text)\n\(String(decoding: run.stderr.suffix(3000), as: UTF8.self))")
        #expect(text.contains("in a window") && text.contains("video x11"), "\(text)")

        let picture = try Self.decodePNG(shot)
        #expect(picture.width == 960 && picture.height == 600)
        // Not blank: many colours, and the world's shapes are there.
        var colours = Set<UInt32>()
        for y in stride(from: 0, to: picture.height, by: 3) {
            for x in stride(from: 0, to: picture.width, by: 3) {
                let c = picture.color(x: x, y: y)
                colours.insert(UInt32(c.red) << 16 | UInt32(c.green) << 8 | UInt32(c.blue))
            }
        }
        #expect(colours.count > 100)
        // The HUD's Now Playing line: bright text pixels in the top bar; the buttons' labels in the bottom one.
        #expect(Self.brightPixels(picture, in: 50..<600, 4..<40) > 300)
        #expect(Self.brightPixels(picture, in: 12..<432, 556..<590) > 300)
        #expect(Self.brightPixels(picture, in: 50..<600, 100..<140) < Self.brightPixels(picture, in: 50..<600, 4..<40))
    }

    static func decodePNG(_ path: String) throws -> Picture {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let artwork = try MediaItemArtwork(data: data, source: .file(path), name: path)
        let image = try #require(artwork.image(size: artwork.bounds))
        return try #require(Picture(width: image.width, height: image.height, pixels: image.pixels))
    }

    static func brightPixels(_ picture: Picture, in xs: Range<Int>, _ ys: Range<Int>) -> Int {
        var count = 0
        for y in ys {
            for x in xs {
                let c = picture.color(x: x, y: y)
                if Int(c.red) + Int(c.green) + Int(c.blue) > 600 { count += 1 }
            }
        }
        return count
    }

    @Test func headlessScreenshotIsDrawnOffscreenWithoutADisplay() throws {
        var launch = LaunchOptions()
        launch.headless = true
        launch.seconds = 1.5
        launch.screenshot = fixtures.path("offscreen.png")
        let summary = try GameRun(
            launch: launch, headless: true, assets: BuildProducts.assets, settingsPath: settingsPath
        ).run()
        #expect(summary.screenshot == launch.screenshot)
        let picture = try Self.decodePNG(fixtures.path("offscreen.png"))
        #expect(Self.brightPixels(picture, in: 50..<600, 4..<40) > 300)
    }

    // MARK: Screens

    @Test func pickerModelDrivesTheMusicPlayersQueue() throws {
        try fixtures.libraryOgg("Music/a.ogg", ["TITLE=Alpha Song", "ARTIST=Ann"])
        try fixtures.libraryOgg("Music/b.ogg", ["TITLE=Beta Song", "ARTIST=Bob"])
        try fixtures.libraryOgg("Music/c.ogg", ["TITLE=Gamma Tune", "ARTIST=Cat"])
        let library = try MediaLibrary(folders: [fixtures.path("Music")], databasePath: fixtures.path("library.sqlite"))
        _ = try library.scan()

        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let game = try makeGame(engine)
        #expect(game.hudButtons().map(\.label).contains("Add Music"))
        game.openPicker(library: library)
        let picker = try #require(game.picker)
        #expect(game.screen == .picker && picker.allowsPickingMultipleItems)
        #expect(picker.shownItems.count == 3)

        // Typing filters (the key that opened the picker does not type itself).
        game.handle(.text("m"))
        #expect(picker.filterText.isEmpty)
        game.frameEnded(1, time: 0)
        game.handle(.text("so"))
        game.handle(.text("ng"))
        #expect(picker.shownItems.map(\.title) == ["Alpha Song", "Beta Song"])
        // Enter selects the highlighted row; Down moves; Tab is Done.
        game.handle(.keyDown(.enter, isRepeat: false))
        game.handle(.keyDown(.down, isRepeat: false))
        game.handle(.keyDown(.enter, isRepeat: false))
        #expect(picker.selectedItems.map(\.title) == ["Alpha Song", "Beta Song"])
        game.handle(.keyDown(.tab, isRepeat: false))

        #expect(game.screen == .playing && game.picker == nil)
        #expect(engine.musicPlayer.items.map(\.title) == ["Alpha Song", "Beta Song"])
        #expect(game.userCollection?.items.map(\.title) == ["Alpha Song", "Beta Song"])
        #expect(engine.musicPlayer.playbackState == .playing)
        #expect(engine.musicPlayer.nowPlayingItem?.title == "Alpha Song")
        #expect(game.nowPlayingText == "Now Playing: Alpha Song by Ann")

        // "Add Music" became "Show Music": it lists the queue, and adds more from there, with the mouse this time.
        let show = try #require(game.hudButtons().first { $0.action == .addOrShowMusic })
        #expect(show.label == "Show Music")
        game.handle(.mouseDown(show.rect.center, button: 1))
        #expect(game.screen == .queue)
        game.perform(.addOrShowMusic)
        #expect(game.screen == .picker)
        let gamma = try #require(game.pickerElements().first { $0.label.hasPrefix("Gamma Tune") })
        game.handle(.mouseDown(gamma.rect.center, button: 1))
        let done = try #require(game.pickerElements().first { $0.action == .pickerDone })
        game.handle(.mouseDown(done.rect.center, button: 1))
        #expect(engine.musicPlayer.items.map(\.title) == ["Alpha Song", "Beta Song", "Gamma Tune"])
        #expect(engine.musicPlayer.nowPlayingItem?.title == "Alpha Song")  // what was playing goes on

        // Cancel leaves the queue alone and goes back where it came from.
        game.perform(.queueDone)
        game.perform(.addOrShowMusic)
        game.perform(.addOrShowMusic)
        game.perform(.pickerCancel)
        #expect(game.screen == .queue)
        #expect(engine.musicPlayer.items.count == 3)
    }

    @Test func userMusicPlayingAtLaunchKeepsTheSoundtrackOffUntilSoloAmbient() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let others = FakePlayers(playing: ["org.mpris.MediaPlayer2.spotify"])
        engine.session.attach(otherPlayers: others)
        let game = try makeGame(engine)
        #expect(engine.session.otherMusicWasPlayingAtLaunch)
        #expect(game.soundtrackOffForUserMusic)
        #expect(game.hudNote == "Your music is playing: the game's music is off")
        #expect(engine.musicPlayer.playbackState != .playing)
        #expect(others.paused.isEmpty)
        // Effects still play, mixed with the user's music.
        game.perform(.playAppSound)
        #expect(try Signal(engine.render(frames: 9_600)).peak() > 0.05)

        // Solo ambient: the session pauses the user's player and the game's soundtrack takes over.
        game.perform(.openMenu)
        let solo = try #require(game.menuElements().first { $0.action == .setCategory(.soloAmbient) })
        game.handle(.mouseDown(solo.rect.center, button: 1))
        #expect(engine.session.category == .soloAmbient)
        #expect(others.paused == ["org.mpris.MediaPlayer2.spotify"])
        #expect(engine.musicPlayer.playbackState == .playing)
        #expect(game.hudNote == nil)
        // At exit (the engine's rule) the session gives the user's player back.
        game.shutdown()
        engine.shutdown()
        #expect(others.resumed == ["org.mpris.MediaPlayer2.spotify"])
    }

    @Test func userMusicIsLeftPlayingAtExitInAmbient() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let others = FakePlayers(playing: ["org.mpris.MediaPlayer2.vlc"])
        engine.session.attach(otherPlayers: others)
        let game = try makeGame(engine)
        #expect(game.soundtrackOffForUserMusic)
        game.shutdown()
        engine.shutdown()
        #expect(others.paused.isEmpty && others.resumed.isEmpty)
    }

    @Test func pauseMenuSetsCategoryVolumesAndRemembersThePlayerChoice() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let game = try makeGame(engine)
        #expect(engine.session.category == .ambient)  // the default, as UtopiaGL
        game.handle(.keyDown(.escape, isRepeat: false))
        #expect(game.screen == .menu && !game.isSimulating)

        // Keyboard: the category row cycles ambient → solo ambient → playback.
        game.handle(.keyDown(.right, isRepeat: false))
        #expect(engine.session.category == .soloAmbient)
        game.handle(.keyDown(.right, isRepeat: false))
        #expect(engine.session.category == .playback)
        // Sliders: click halfway along the music slider; drag the effects slider.
        let music = try #require(game.menuElements().first { $0.label == "Music" })
        game.handle(.mouseDown(Point(music.rect.x + music.rect.width / 2, music.rect.center.y), button: 1))
        game.handle(.mouseUp(music.rect.center, button: 1))
        #expect(abs(engine.music.gain - 0.5) < 0.01)
        let effects = try #require(game.menuElements().first { $0.label == "Effects" })
        game.handle(.mouseDown(Point(effects.rect.maxX - 1, effects.rect.center.y), button: 1))
        game.handle(.mouseMoved(Point(effects.rect.x + effects.rect.width / 4, effects.rect.center.y)))
        game.handle(.mouseUp(effects.rect.center, button: 1))
        #expect(abs(engine.sfx.gain - 0.25) < 0.01)

        // The player choice is written at once, atomically, under XDG_CONFIG_HOME.
        let system = try #require(game.menuElements().first { $0.action == .setPlayer(.system) })
        game.handle(.mouseDown(system.rect.center, button: 1))
        #expect(game.settings.player == .system)
        let saved = try String(contentsOfFile: settingsPath, encoding: .utf8)
        #expect(saved.contains("player = system"))
        // an offline engine reaches no desktop: the game's player stands in
        #expect(game.player === engine.musicPlayer)
        #expect(game.statusMessage?.contains("System player not available") == true)
        let folder = (settingsPath as NSString).deletingLastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["gravity-wave.conf"])

        game.handle(.keyDown(.escape, isRepeat: false))
        #expect(game.screen == .playing)
        let again = GameSettings.load(from: settingsPath)
        #expect(again.player == .system)
        #expect(again.volumes["music"] == 0.5 && again.volumes["sfx"] == 0.25)
        #expect(
            GameSettings.defaultPath(environment: ["XDG_CONFIG_HOME": "/x/conf", "HOME": "/home/u"])
                == "/x/conf/ambience/gravity-wave.conf")
        #expect(
            GameSettings.defaultPath(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/home/u"])
                == "/home/u/.config/ambience/gravity-wave.conf")
        #expect(
            GameSettings.defaultPath(environment: ["HOME": "/home/u"]) == "/home/u/.config/ambience/gravity-wave.conf")
    }

    @Test func launchOptionsParseAndRefuseBadInput() throws {
        let options = try LaunchOptions.parse([
            "--headless", "--seconds", "10", "--record", "out/gw.wav", "--voices", "200", "--volume", "music=0"
        ])
        #expect(options.headless && options.seconds == 10 && options.record == "out/gw.wav" && options.voices == 200)
        #expect(options.volumes == ["music": 0])
        #expect(throws: GameError.self) { try LaunchOptions.parse(["--seconds", "-1"]) }
        #expect(throws: GameError.self) { try LaunchOptions.parse(["--volume", "bass=2"]) }
        #expect(throws: GameError.self) { try LaunchOptions.parse(["--realtime", "--record", "x.wav"]) }
        #expect(throws: GameError.self) { try LaunchOptions.parse(["--fly"]) }
    }

    // MARK: The host

    @Test func hostMapsWindowAndAppEventsToTheSessionAndQuitShutsDown() throws {
        let engine = try AudioEngine(.offline())
        let host = try GameHost(
            engine: engine, configuration: HostConfiguration(window: nil, clock: .simulated(framesPerSecond: 60)))
        host.handle(.window(.focusLost))
        #expect(!engine.session.state.isBackgrounded)  // focus loss is not background by default
        host.handle(.window(.minimized))
        #expect(engine.session.state.isBackgrounded)
        host.handle(.window(.hidden))
        host.handle(.window(.restored))
        #expect(!engine.session.state.isBackgrounded)
        host.handle(.app(.willEnterBackground))
        #expect(engine.session.state.isBackgrounded)
        host.handle(.app(.didEnterForeground))
        #expect(!engine.session.state.isBackgrounded)

        var updates = 0, shutdowns = 0
        var alphas: [Double] = []
        host.onUpdate = { _ in updates += 1 }
        host.onDraw = { _, alpha in alphas.append(alpha) }
        host.onFrameEnd = { [unowned host] in if host.frameCount == 5 { host.handle(.quit) } }
        host.onShutdown = { shutdowns += 1 }
        host.run()
        #expect(host.frameCount == 5 && updates == 5 && shutdowns == 1)
        #expect(host.updateTiming.count == 5)
        #expect(!host.isRunning)
    }

    @Test func focusLossCanBeBackground() {
        var tracker = BackgroundTracker(focusLossIsBackground: true)
        #expect(tracker.handle(.window(.focusLost)) == .enterBackground)
        #expect(tracker.handle(.window(.minimized)) == nil)
        #expect(tracker.handle(.window(.restored)) == nil)  // still unfocused
        #expect(tracker.handle(.window(.focusGained)) == .enterForeground)
    }

    @Test func fixedTimestepStepsAndInterpolates() {
        var step = FixedTimestep(rate: 60)
        #expect(step.advance(by: 1.0 / 60) == 1)
        #expect(step.advance(by: 1.0 / 120) == 0)
        #expect(abs(step.alpha - 0.5) < 1e-9)
        #expect(step.advance(by: 1.0 / 120) == 1)
        #expect(step.advance(by: 2) == 5 && step.alpha == 0)  // a long stall is dropped, not replayed
    }

    @Test func videoDriverIsChosenDeliberately() {
        #expect(videoDriverCandidates(environment: ["SDL_VIDEODRIVER": "wayland", "DISPLAY": ":0"]) == ["wayland"])
        #expect(videoDriverCandidates(environment: ["DISPLAY": ":1"]) == ["x11"])
        #expect(videoDriverCandidates(environment: ["WAYLAND_DISPLAY": "wayland-0"]) == ["wayland", "x11"])
        #expect(videoDriverCandidates(environment: [:]) == ["offscreen", "dummy"])
        #expect(videoDriverCandidates(explicit: "offscreen", environment: ["DISPLAY": ":0"]) == ["offscreen", "dummy"])
        #expect(!hasDisplay(environment: [:]) && hasDisplay(environment: ["DISPLAY": ":0"]))
        #expect(!hasDisplay(environment: ["SDL_VIDEODRIVER": "dummy", "DISPLAY": ":0"]))
    }
}

/// Other apps' players as the session sees them, without D-Bus.
final class FakePlayers: OtherPlayers, Sendable {
    private let state: Lock<(playing: [String], paused: [String], resumed: [String])>
    init(playing: [String]) { state = Lock((playing, [], [])) }
    var paused: [String] { state.withLock { $0.paused } }
    var resumed: [String] { state.withLock { $0.resumed } }
    func playingPlayers() -> [String] { state.withLock { $0.playing } }
    func uncontrollable(_ players: [String]) -> [String] { [] }
    func pause(_ players: [String]) {
        state.withLock {
            $0.paused += players; $0.playing.removeAll { players.contains($0) }
        }
    }
    func play(_ players: [String]) {
        state.withLock {
            $0.resumed += players; $0.playing += players
        }
    }
    func stop(_ players: [String]) { state.withLock { $0.playing.removeAll { players.contains($0) } } }
    func duck(_ players: [String], to scale: Double) {}
}
