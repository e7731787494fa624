import Ambience
import AmbiencePlatform
import Glibc

/// How a `GameHost` runs.
public struct HostConfiguration: Sendable {
    public struct WindowOptions: Sendable {
        public var title: String
        /// The logical size every drawing call uses; the window may be resized and the picture scales.
        public var width: Int
        public var height: Int
        public var vsync: Bool
        public init(title: String = "Ambience", width: Int = 960, height: Int = 600, vsync: Bool = true) {
            self.title = title
            self.width = width
            self.height = height
            self.vsync = vsync
        }
    }

    /// Where frame time comes from.
    public enum Clock: Sendable, Equatable {
        /// The wall clock: frames are paced to `maxFrameRate`.
        case realTime
        /// Every frame advances exactly 1 / framesPerSecond, as fast as the CPU allows (headless runs, tests).
        case simulated(framesPerSecond: Double)
    }

    /// A window to draw in; nil for none.
    public var window: WindowOptions?
    /// Without a window: draw into memory at this size (for screenshots). Nil draws nothing.
    public var offscreenSize: (width: Int, height: Int)?
    /// Overrides the video driver choice (see `videoDriverCandidates`).
    public var videoDriver: String?
    /// Game updates per second (the fixed step).
    public var updateRate: Double
    /// Real-time frames per second at most (0: as fast as presenting allows).
    public var maxFrameRate: Double
    public var clock: Clock
    /// Whether losing the keyboard focus sends the game to the background (by default it does not).
    public var focusLossIsBackground: Bool

    public init(
        window: WindowOptions? = WindowOptions(), offscreenSize: (width: Int, height: Int)? = nil,
        videoDriver: String? = nil,
        updateRate: Double = 60, maxFrameRate: Double = 120, clock: Clock = .realTime,
        focusLossIsBackground: Bool = false
    ) {
        self.window = window
        self.offscreenSize = offscreenSize
        self.videoDriver = videoDriver
        self.updateRate = updateRate
        self.maxFrameRate = maxFrameRate
        self.clock = clock
        self.focusLossIsBackground = focusLossIsBackground
    }

    /// Game updates per second a host accepts.
    public static let updateRates: ClosedRange<Double> = 1...1000
    /// Frame-rate caps a host accepts, besides 0 (no cap).
    public static let maxFrameRates: ClosedRange<Double> = 1...10_000

    /// The configuration when its numbers are within the limits above and the sizes within 1…16384 pixels, else a
    /// refusal that names the first that is not. `GameHost` checks this before it opens anything.
    public func validated() throws(HostError) -> HostConfiguration {
        func check(_ value: Double, _ range: ClosedRange<Double>, zeroAllowed: Bool, _ what: String) throws(HostError) {
            guard value.isFinite, range.contains(value) || (zeroAllowed && value == 0) else {
                let expected = "\(zeroAllowed ? "0 or " : "")a number within \(range.lowerBound)...\(range.upperBound)"
                throw .invalidNumber(InvalidNumber(what, value: "\(value)", expected: expected))
            }
        }
        try check(updateRate, Self.updateRates, zeroAllowed: false, "updateRate")
        try check(maxFrameRate, Self.maxFrameRates, zeroAllowed: true, "maxFrameRate")
        if let window { _ = try pixelSize(window.width, window.height) }
        if let offscreenSize { _ = try pixelSize(offscreenSize.width, offscreenSize.height) }
        return self
    }
}

/// An SDL2 game loop around an `AudioEngine`: events in, fixed-step updates, one `engine.update()` per frame, a
/// drawing pass with an interpolation alpha, and a clean shutdown.
///
/// Each frame: SDL events are handled (window minimized or hidden, or the app sent to the background, →
/// `engine.session.enterBackground()`, and back → `enterForeground()`; quit stops the loop), `onUpdate` runs zero
/// or more times with the fixed step, `engine.update()` runs once and its events go to `onAudioEvents`, an offline
/// engine renders the frame's audio for `onOfflineAudio`, and `onDraw` draws.
///
/// A game with its own loop (a C game through the C API, say) needs none of this: it calls `engine.update()` once
/// per frame and tells the session about background and foreground itself; `FixedTimestep` and
/// `BackgroundTracker` are usable on their own.
public final class GameHost {
    public let engine: AudioEngine
    public let configuration: HostConfiguration
    /// The SDL video driver in use, or nil without video.
    public var videoDriver: String? { subsystems?.videoDriver }
    /// Where the game draws: the window's canvas, an offscreen one, or nil.
    public var canvas: Canvas? { window?.canvas ?? offscreen }

    public private(set) var isRunning = false
    public private(set) var frameCount = 0
    /// Seconds of game time stepped so far.
    public private(set) var time: Double = 0
    /// Time spent inside `engine.update()`, per frame.
    public private(set) var updateTiming = FrameTiming()
    /// Time spent in `engine.render(frames:)` per frame (offline engines only).
    public private(set) var renderTiming = FrameTiming()
    /// Keys held down now.
    public private(set) var heldKeys: Set<Key> = []
    public var isInBackground: Bool { background.isInBackground }

    public var onEvent: (HostEvent) -> Void = { _ in }
    /// Runs with the fixed step (seconds).
    public var onUpdate: (Double) -> Void = { _ in }
    /// The events `engine.update()` returned this frame (often none).
    public var onAudioEvents: ([AudioEvent]) -> Void = { _ in }
    /// Draws the frame; the alpha (0…1) says how far the present lies between the last update and the next.
    public var onDraw: (Canvas, Double) -> Void = { _, _ in }
    /// The audio an offline engine rendered for this frame (stereo, interleaved).
    public var onOfflineAudio: (PCMBuffer) -> Void = { _ in }
    public var onFrameEnd: () -> Void = {}
    /// Runs once, before the engine shuts down.
    public var onShutdown: () -> Void = {}

    private var subsystems: SDLSubsystems?
    private var window: Window?
    private var offscreen: Canvas?
    private var timestep: FixedTimestep
    private var background: BackgroundTracker
    private let clock = ContinuousClock()
    private var lastFrameStart: ContinuousClock.Instant?
    private var nextFrameStart: ContinuousClock.Instant?
    private var pendingAudioFrames = 0.0
    private var isShutDown = false

    public init(engine: AudioEngine, configuration: HostConfiguration = HostConfiguration()) throws(HostError) {
        self.engine = engine
        self.configuration = try configuration.validated()
        timestep = FixedTimestep(rate: configuration.updateRate)
        background = BackgroundTracker(focusLossIsBackground: configuration.focusLossIsBackground)
        if let options = configuration.window {
            let drivers = videoDriverCandidates(explicit: configuration.videoDriver, environment: processEnvironment())
            let subsystems = try SDLSubsystems(videoDrivers: drivers)
            self.subsystems = subsystems
            window = try Window(
                title: options.title, width: options.width, height: options.height, vsync: options.vsync)
        } else {
            subsystems = try SDLSubsystems()
            if let size = configuration.offscreenSize {
                offscreen = try Canvas(offscreenWidth: size.width, height: size.height)
            }
        }
    }

    /// A host released without `run()` (or `shutdown()`) still shuts the engine down and releases SDL; the game's
    /// `onShutdown` is not called from here, as what it refers to may already be gone.
    deinit {
        onShutdown = {}
        shutdown()
    }

    /// Runs the loop with these two closures (the other hooks keep what they were set to): `update` with the fixed
    /// step in seconds, `draw` with the canvas and the interpolation alpha.
    public func run(update: @escaping (Double) -> Void, draw: @escaping (Canvas, Double) -> Void) {
        onUpdate = update
        onDraw = draw
        run()
    }

    /// Runs frames until `stop()` (or a quit event), then shuts down.
    public func run() {
        isRunning = true
        while isRunning { runFrame() }
        shutdown()
    }

    /// Ends the loop after the current frame.
    public func stop() { isRunning = false }

    /// Runs one frame. `run()` calls it in a loop; a test may call it directly.
    public func runFrame() {
        let start = clock.now
        let elapsed: Double
        switch configuration.clock {
        case .simulated(let fps):
            elapsed = 1 / fps
        case .realTime:
            elapsed = lastFrameStart.map { seconds(start - $0) } ?? timestep.step
        }
        lastFrameStart = start

        for event in subsystems?.pollEvents() ?? [] { handle(event) }
        guard !isShutDown else { return }

        let steps = timestep.advance(by: elapsed)
        for _ in 0..<steps {
            onUpdate(timestep.step)
            time += timestep.step
        }

        let before = clock.now
        let events = engine.update()
        updateTiming.record(clock.now - before)
        onAudioEvents(events)

        if engine.isOffline {
            pendingAudioFrames += elapsed * Double(engine.configuration.sampleRate)
            let frames = pendingAudioFrames.saturated(Int.self, rounding: .down)
            pendingAudioFrames -= Double(frames)
            if frames > 0 {
                let renderStart = clock.now
                let pcm = try? engine.render(frames: frames)
                renderTiming.record(clock.now - renderStart)
                if let pcm { onOfflineAudio(pcm) }
            }
        }

        if let canvas {
            onDraw(canvas, timestep.alpha)
            canvas.present()
        }
        frameCount += 1
        onFrameEnd()

        if configuration.clock == .realTime, configuration.maxFrameRate > 0 {
            // Frames start on a fixed schedule, so sleeping late once does not slow the average; a frame that ran long
            // moves the schedule instead of causing a burst.
            let period = Duration.nanoseconds((1e9 / configuration.maxFrameRate).saturated(Int64.self))
            let now = clock.now
            var next = nextFrameStart.map { $0 + period } ?? start + period
            if next < now - period { next = now }
            nextFrameStart = next
            if next > now {
                sleep(for: next - now)
            }
        }
    }

    /// Handles an event as if SDL had delivered it: held keys, background and foreground, quit; then `onEvent`.
    public func handle(_ event: HostEvent) {
        switch event {
        case .keyDown(let key, _): heldKeys.insert(key)
        case .keyUp(let key): heldKeys.remove(key)
        case .window(.focusLost): heldKeys.removeAll()
        case .quit: stop()
        // The engine watches its output device itself (in `update()`); a device event needs nothing more here.
        case .audioDevicesChanged: break
        default: break
        }
        switch background.handle(event) {
        case .enterBackground: engine.session.enterBackground()
        case .enterForeground: engine.session.enterForeground()
        case nil: break
        }
        onEvent(event)
    }

    /// Runs `onShutdown`, shuts the engine down (where the session's exit rules apply) and releases SDL. Once.
    public func shutdown() {
        guard !isShutDown else { return }
        isShutDown = true
        isRunning = false
        onShutdown()
        engine.shutdown()
        window = nil
        offscreen = nil
        subsystems = nil
    }

    private func seconds(_ duration: Duration) -> Double {
        let (s, atto) = duration.components
        return Double(s) + Double(atto) / 1e18
    }
}

/// The process environment, read without Foundation (as a child program the engine starts gets it).
public func processEnvironment() -> [String: String] { ChildProgram.currentEnvironment }
