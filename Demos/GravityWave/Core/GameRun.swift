import Ambience
import AmbienceHost
import AmbiencePlatform
import Glibc

/// One run of the game: an engine, a host, the game, and (headless) a recording. `main` builds one; so do tests.
public final class GameRun {
    public let launch: LaunchOptions
    public let isHeadless: Bool
    public let engine: AudioEngine
    public let host: GameHost
    public let game: GravityWave
    private var writer: WAVWriter?
    private var peakVoices = 0
    private var failure: GameError?
    private var summary: RunSummary?
    private var screenshotWritten: String?
    private var scriptShotsWritten: [String] = []
    /// The effects' HDR window frame by frame, kept when `--hdr-plot` asks for it.
    public private(set) var hdrPlot = HDRPlot()
    /// Headless runs stop after this many frames.
    private let frameLimit: Int?

    /// What the headless pilot does besides flying: presses "Play App Sound", opens the menu, moves in it, closes it.
    static let interfaceScript: [(frame: Int, key: Key)] = [
        (60, .character("x")), (150, .escape), (170, .down), (190, .escape)
    ]

    public init(launch: LaunchOptions, headless: Bool, assets: String, settingsPath: String) throws(GameError) {
        self.launch = launch
        isHeadless = headless
        do {
            engine = try AudioEngine(
                headless && !launch.realtime ? .offline() : EngineConfiguration(appName: "gravity-wave"))
        } catch {
            throw .engine("audio engine: \(error)")
        }
        var configuration = HostConfiguration(
            window: .init(title: "Gravity Wave", width: Int(World.width), height: Int(World.height)))
        if headless {
            configuration.window = nil
            configuration.clock = launch.realtime ? .realTime : .simulated(framesPerSecond: 60)
            configuration.maxFrameRate = 60
            if launch.screenshot != nil || !Self.scriptShots(launch).isEmpty {
                configuration.offscreenSize = (Int(World.width), Int(World.height))
            }
            frameLimit = launch.realtime ? nil : Int(((launch.seconds ?? 10) * 60).rounded())
            if let frameLimit, launch.screenshot != nil, launch.screenshotFrame > frameLimit {
                engine.shutdown()
                throw .usage(
                    "--screenshot-frame \(launch.screenshotFrame) is past the run's last frame, \(frameLimit) "
                        + "(\(launch.seconds ?? 10) s at 60 frames a second)")
            }
        } else {
            frameLimit = nil
        }
        do {
            host = try GameHost(engine: engine, configuration: configuration)
        } catch {
            engine.shutdown()
            throw .host(error.description)
        }
        var options = GravityWave.Options(assets: assets, settingsPath: settingsPath)
        options.seed = launch.seed
        options.ambientVoices = launch.voices
        options.volumeOverrides = launch.volumes
        options.category = launch.category
        do {
            game = try GravityWave(engine: engine, options: options)
        } catch {
            host.shutdown()
            throw error
        }
        if headless || launch.pilot { game.pilot = Pilot() }
        for path in [launch.record, launch.screenshot, launch.hdrPlot].compactMap({ $0 })
            + Self.scriptShots(launch).map(\.path)
        {
            if let problem = makeParentFolders(of: path) {
                host.shutdown()
                throw .output("\(path): cannot create its folder (\(problem))")
            }
        }
        if headless, let path = launch.record {
            do {
                writer = try WAVWriter(
                    path: path, sampleRate: engine.configuration.sampleRate, channels: 2, encoding: .pcm16)
            } catch {
                host.shutdown()
                throw .output(error.description)
            }
        }
        wire()
    }

    private func wire() {
        host.onEvent = { [unowned self] event in game.handle(event) }
        host.onUpdate = { [unowned self] dt in game.update(dt: dt) }
        host.onAudioEvents = { [unowned self] events in game.handleAudioEvents(events) }
        host.onOfflineAudio = { [unowned self] pcm in
            guard let writer else { return }
            do { try writer.write(pcm.samples) } catch {
                failure = .output("\(error)")
                host.stop()
            }
        }
        host.onDraw = { [unowned self] canvas, alpha in
            let isScreenshotFrame = launch.screenshot != nil && host.frameCount + 1 == launch.screenshotFrame
            let shots = Self.scriptShots(launch).filter { $0.frame == host.frameCount + 1 }.map(\.path)
            guard !isHeadless || isScreenshotFrame || !shots.isEmpty else { return }
            game.draw(canvas, alpha: alpha)
            if isScreenshotFrame, let path = launch.screenshot { saveScreenshot(canvas, to: path) }
            for path in shots where saveScreenshot(canvas, to: path) { scriptShotsWritten.append(path) }
        }
        host.onFrameEnd = { [unowned self] in
            game.frameEnded(host.frameCount, time: host.time)
            let stats = engine.stats
            peakVoices = max(peakVoices, stats.realVoices + stats.virtualVoices)
            if launch.hdrPlot != nil {
                hdrPlot.record(
                    HDRPlot.Sample(
                        time: host.time, top: engine.sfx.hdrWindowTop ?? 0, culled: engine.sfx.hdrCulledVoices))
            }
            if isHeadless && launch.script.isEmpty {
                for step in Self.interfaceScript where step.frame == host.frameCount { press(step.key) }
            }
            for step in launch.script where step.frame == host.frameCount { take(step.action) }
            if let frameLimit, host.frameCount >= frameLimit { host.stop() }
            // A window's clock is the wall's: on a busy machine fewer frames fit in the time, so a scripted run goes
            // on until its last `--at` step has been taken.
            if frameLimit == nil, let seconds = launch.seconds ?? (isHeadless ? 10 : nil), host.time >= seconds,
                host.frameCount > (launch.script.map(\.frame).max() ?? 0)
            {
                host.stop()
            }
            if game.wantsToQuit { host.stop() }
        }
        host.onShutdown = { [unowned self] in
            summary = makeSummary()
            game.shutdown()
            do { try writer?.finish() } catch { failure = .output("\(error)") }
            if let path = launch.hdrPlot {
                hdrPlot.explosions = game.audio.log.filter { $0.kind == .explosion }.map(\.time)
                do { try hdrPlot.write(to: path) } catch { failure = .output("\(path): \(error)") }
            }
        }
    }

    private func press(_ key: Key) {
        host.handle(.keyDown(key, isRepeat: false))
        host.handle(.keyUp(key))
    }

    /// A `--at` step. The route change is reported to the session as its monitor would when the device goes away.
    private func take(_ action: ScriptStep.Action) {
        switch action {
        case .key(let key): press(key)
        case .text(let text): host.handle(.text(text))
        case .click(let x, let y):
            host.handle(.mouseDown(Point(x, y), button: 1))
            host.handle(.mouseUp(Point(x, y), button: 1))
        case .screenshot: break  // taken while the frame is drawn
        case .seekMusic(let seconds): engine.musicPlayer.currentPlaybackTime = seconds
        case .interruption(let began): began ? engine.session.beginInterruption() : engine.session.endInterruption()
        case .routeChange:
            engine.session.handle(
                .currentDeviceRemoved(
                    previous: AudioRoute(name: "Headphones", driver: engine.outputDriver),
                    current: AudioRoute(name: "Speakers", driver: engine.outputDriver)))
        }
    }

    private static func scriptShots(_ launch: LaunchOptions) -> [(frame: Int, path: String)] {
        launch.script.compactMap { step in
            if case .screenshot(let path) = step.action { (step.frame, path) } else { nil }
        }
    }

    @discardableResult
    private func saveScreenshot(_ canvas: Canvas, to path: String) -> Bool {
        guard let picture = canvas.readPixels() else {
            failure = .output("\(path): the renderer cannot read its pixels back")
            return false
        }
        do {
            try picture.writePNG(to: path)
            if path == launch.screenshot { screenshotWritten = path }
            return true
        } catch {
            failure = .output("\(error)")
            return false
        }
    }

    /// Runs until the frame limit, `--seconds`, Quit or the window closing; returns the summary.
    public func run() throws(GameError) -> RunSummary {
        host.run()
        if let failure { throw failure }
        guard let summary else { throw .engine("the run ended before it started") }
        // A run that ended (quit, the window closed, --seconds) before a picture's frame took no picture: that is a
        // failure to say, not a success without the file.
        if let path = launch.screenshot, screenshotWritten == nil {
            throw .output(
                "\(path): not taken; the run ended at frame \(summary.frames), before --screenshot-frame \(launch.screenshotFrame)"
            )
        }
        for (frame, path) in Self.scriptShots(launch) where !scriptShotsWritten.contains(path) {
            throw .output("\(path): not taken; the run ended at frame \(summary.frames), before --at \(frame)")
        }
        return summary
    }

    private func makeSummary() -> RunSummary {
        RunSummary(
            mode: isHeadless ? (launch.realtime ? "headless in real time" : "headless") : "in a window",
            seconds: host.time, frames: host.frameCount, seed: launch.seed,
            sfx: game.audio.counts,
            sfxLog: game.audio.log.map { RunSummary.SoundStart(frame: $0.frame, time: $0.time, kind: $0.kind) },
            peakVoices: peakVoices, ambientVoices: launch.voices, nowPlaying: game.nowPlayingText,
            playbackState: game.player.playbackState, sessionEvents: game.sessionEvents,
            category: engine.session.category,
            update: host.updateTiming, render: host.renderTiming, score: game.world.score, deaths: game.world.deaths,
            recorded: launch.record, recordedFrames: writer?.framesWritten ?? 0, screenshot: screenshotWritten,
            audioDriver: engine.outputDriver, videoDriver: host.videoDriver,
            buttons: game.hudButtons().map { $0.enabled ? $0.label : "\($0.label) (off)" },
            screenshots: scriptShotsWritten)
    }
}

/// The `gravity-wave` command.
public enum GravityWaveApp {
    /// Runs the command; returns the exit status (0 ok, 1 failed, 2 usage).
    public static func main(arguments: [String]) -> Int32 {
        let launch: LaunchOptions
        do {
            launch = try LaunchOptions.parse(arguments)
        } catch {
            complain("gravity-wave: \(error)", then: LaunchOptions.usage)
            return 2
        }
        if launch.help {
            print(LaunchOptions.usage)
            return 0
        }
        let environment = processEnvironment()
        var headless = launch.headless
        if !headless && !hasDisplay(environment: environment) {
            print("gravity-wave: no display (neither DISPLAY nor WAYLAND_DISPLAY is set), so running headless")
            headless = true
        }
        if launch.record != nil && !headless {
            complain("gravity-wave: --record needs --headless (in a window the game plays through the sound card)")
            return 2
        }
        guard let assets = launch.assets ?? findAssets() else {
            complain("gravity-wave: cannot find the Assets folder (with SFX/ and Music/); pass --assets DIR")
            return 1
        }
        // The game's text in the user's language (LANG, LC_MESSAGES); its messages on the terminal stay English.
        Localization.start(catalogs: "\(assets)/locale", environment: environment)
        let settingsPath = GameSettings.defaultPath(environment: environment)
        do {
            let run: GameRun
            do {
                run = try GameRun(launch: launch, headless: headless, assets: assets, settingsPath: settingsPath)
            } catch .host(let reason) where !headless && launch.record == nil {
                // A display that will not open is no display: say so and play headless, as without one.
                print("gravity-wave: cannot open a window (\(TerminalText.shown(reason))), so running headless")
                run = try GameRun(launch: launch, headless: true, assets: assets, settingsPath: settingsPath)
            }
            print(try run.run().text)
            return 0
        } catch {
            complain("gravity-wave: \(error)")
            if case .usage = error { return 2 }
            return 1
        }
    }

    /// `Assets/` in the current folder, or beside the program or up to five folders above it (`.build/debug/…`).
    public static func findAssets() -> String? {
        func holdsAssets(_ folder: String) -> Bool { FilePaths.isReadable("\(folder)/SFX/laser.wav") }
        if holdsAssets("Assets") { return "Assets" }
        guard var folder = ProcessIdentity.executablePath else { return nil }
        for _ in 0..<6 {
            guard let slash = folder.lastIndex(of: "/") else { return nil }
            folder = String(folder[..<slash])
            if holdsAssets("\(folder)/Assets") { return "\(folder)/Assets" }
        }
        return nil
    }

    /// One line on stderr, then `trailer` (the game's own text, such as its usage) as it is. `message` carries
    /// paths and libraries' errors, so it is shown through `TerminalText`: one inert line, whatever it holds.
    static func complain(_ message: String, then trailer: String? = nil) {
        StandardStream.error.writeWhole(TerminalText.shown(message) + "\n" + (trailer.map { $0 + "\n" } ?? ""))
    }
}
