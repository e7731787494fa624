import AmbienceCore
import AmbienceMixer
import AmbiencePlatform

/// Real-time output: an SDL audio device or the engine's own libpulse stream (`OutputDevice`) pulling blocks from the
/// mixer, or, when no device is left, a null output that renders at real-time pace into nothing so that time (music,
/// voices) still advances.
///
/// Reopening the device keeps the mixer — the OpenAL loopback device with its buffers, sources and voice positions —
/// untouched: nothing is reloaded. The game thread replaces the device; any thread may ask about it, so the device
/// and the null output live under one lock. The audio callback never takes it.
package final class DeviceOutput: @unchecked Sendable {
    private let sampleRate: Int
    private let blockFrames: Int
    private let appName: String
    private let deviceName: String?
    private let renderer: MixerRenderer
    private let busForSDL: @Sendable () -> String?
    /// What is asked for every opened device's audio thread.
    private let threadPolicy: AudioThreadPolicy
    /// Makes what asks for it (the engine's rtkit and kernel), on the thread that asks.
    private let grantor: @Sendable () -> any PriorityGranting
    /// The backends tried at every open, in order (`OutputBackend.candidates`).
    let backends: [OutputBackend]
    /// The libpulse stream's buffer, read once.
    let buffering = PulseBuffering.configured

    private struct State {
        var device: (any OutputDevice)?
        var null: NullOutput?
    }
    private let state: Lock<State>

    package init(
        mixer: Mixer, sampleRate: Int, blockFrames: Int, deviceName: String?, appName: String,
        backend: OutputBackend = .automatic, threadPolicy: AudioThreadPolicy = .raised,
        grantor: @escaping @Sendable () -> any PriorityGranting, busForSDL: @escaping @Sendable () -> String?
    ) throws(OutputError) {
        self.busForSDL = busForSDL
        self.threadPolicy = threadPolicy
        self.grantor = grantor
        self.sampleRate = sampleRate
        self.blockFrames = blockFrames
        self.appName = appName
        self.deviceName = deviceName
        backends = OutputBackend.candidates(for: backend)
        renderer = MixerRenderer(mixer: mixer)
        state = Lock(State())
        let device = try open(deviceName: deviceName, awaitingNewDevice: true)
        state.withLock { $0.device = device }
    }

    deinit { close() }

    /// Opens `deviceName` (nil: the default) on the first backend that opens. A server that does not answer ends the
    /// search: SDL would wait on the same server.
    private func open(deviceName: String?, awaitingNewDevice: Bool) throws(OutputError) -> any OutputDevice {
        var failure = OutputError.noDriver(tried: [])
        for backend in backends {
            do throws(OutputError) {
                switch backend {
                case .libpulse:
                    return try PulseOutputStream(
                        sampleRate: sampleRate, blockFrames: blockFrames, deviceName: deviceName, appName: appName,
                        buffering: buffering, threadPolicy: threadPolicy, grantor: grantor, renderer: renderer)
                case .sdl, .automatic:
                    return try SDLAudioDevice(
                        sampleRate: sampleRate, blockFrames: blockFrames, deviceName: deviceName, appName: appName,
                        awaitingNewDevice: awaitingNewDevice, busForStart: busForSDL, threadPolicy: threadPolicy,
                        grantor: grantor, renderer: renderer)
                }
            } catch {
                if case .notAnswering = error { throw error }
                if backend != backends.last { Log.info("output: \(error); trying SDL") }
                failure = error
            }
        }
        throw failure
    }

    package var driver: String { state.withLock { $0.device?.driver } ?? "null" }
    /// The backend of the open device; nil while rendering to nothing.
    package var backend: OutputBackend? { state.withLock { $0.device?.backend } }

    /// Underflows the server reported on the libpulse stream open now; nil on SDL (which does not tell) or none.
    package var streamUnderflows: Int? {
        (state.withLock { $0.device } as? PulseOutputStream)?.underflows.load(ordering: .relaxed)
    }

    /// What the open device's audio thread obtained (`.pending` until asked); nil while rendering to nothing.
    package func audioThreadPriority(waitingUpTo seconds: Double = 0) -> AudioThreadPriority? {
        state.withLock { $0.device?.audioThread }?.priority(waitingUpTo: seconds)
    }

    /// The kernel id of the open device's audio thread, once recorded (`AudioThreadRaise`); nil before, when
    /// nothing is asked for it, and while rendering to nothing.
    package var audioThreadID: Int32? { state.withLock { $0.device?.audioThread }?.kernelThread }

    /// Where the audio goes now.
    package var route: AudioRoute {
        state.withLock { state in state.device.map { AudioRoute(name: $0.deviceName, driver: $0.driver) } } ?? .none
    }

    /// Whether the device is still there. SDL marks a device that died (its sink removed, its card unplugged)
    /// stopped; the libpulse stream is dead once the server ended it.
    package var isDeviceAlive: Bool { state.withLock { $0.device?.isAlive } ?? false }
    package var isNull: Bool { state.withLock { $0.device == nil } }

    /// Closes the current device and opens the one the game named, or the system default when it named none or
    /// its device is gone (a named device is a preference, not a reason to fall silent). Falls back to the null
    /// output when nothing opens.
    @discardableResult
    package func followDefaultDevice() -> Bool {
        state.withLock { state in
            state.device?.close()
            state.device = nil
            for name in deviceName == nil ? [nil] : [deviceName, nil] {
                guard let device = try? open(deviceName: name, awaitingNewDevice: false) else { continue }
                state.device = device
                state.null?.stop()
                state.null = nil
                return true
            }
            startNull(&state)
            return false
        }
    }

    /// Renders into nothing at real-time pace.
    package func renderToNull() {
        state.withLock { state in startNull(&state) }
    }

    private func startNull(_ state: inout State) {
        state.device?.close()
        state.device = nil
        if state.null == nil {
            let output = NullOutput(renderer: renderer, sampleRate: sampleRate, blockFrames: blockFrames)
            output.start()
            state.null = output
        }
    }

    /// Runs `body` while no block is being rendered: SDL's device lock (or libpulse's main-loop lock) holds its
    /// callback back (the callback itself takes no lock of ours), and the null output's thread is stopped and
    /// restarted. For changes OpenAL must not
    /// see mid-render, such as resetting the device for HRTF.
    package func withRenderingHeld(_ body: () -> Bool) -> Bool {
        state.withLock { state in
            if let device = state.device {
                return device.withCallbackLocked(body)
            }
            guard let null = state.null else { return body() }
            null.stop()
            defer { null.start() }
            return body()
        }
    }

    package func close() {
        state.withLock { state in
            state.device?.close()
            state.device = nil
            state.null?.stop()
            state.null = nil
        }
    }
}

/// Connects the audio thread to the mixer, counting blocks that took longer than real time as underruns.
final class MixerRenderer: AudioRenderCallback {
    let mixer: Mixer
    init(mixer: Mixer) { self.mixer = mixer }

    func renderAudio(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        let start = monotonicNanoseconds()
        mixer.render(into: buffer, frames: frames)
        let budget = frames * 1_000_000_000 / mixer.configuration.sampleRate
        if monotonicNanoseconds() - start > budget { mixer.underruns.add(1, ordering: .relaxed) }
    }
}

/// A render thread paced by the clock, for when there is no device at all. It waits between blocks on its
/// `WorkerThread`'s timed wait, so `stop()` wakes and joins it at once.
final class NullOutput: Sendable {
    private let renderer: MixerRenderer
    private let sampleRate: Int
    private let blockFrames: Int
    /// The running thread; nil while stopped.
    private let worker = Lock<WorkerThread?>(nil)

    init(renderer: MixerRenderer, sampleRate: Int, blockFrames: Int) {
        self.renderer = renderer
        self.sampleRate = sampleRate
        self.blockFrames = blockFrames
    }

    deinit { stop() }

    func start() {
        worker.withLock { worker in
            guard worker == nil else { return }
            let (renderer, sampleRate, blockFrames) = (self.renderer, self.sampleRate, self.blockFrames)
            worker = WorkerThread(name: "ambience-null") { control in
                let buffer = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames * 2)
                defer { buffer.deallocate() }
                let blockNanos = blockFrames * 1_000_000_000 / sampleRate
                var due = monotonicNanoseconds()
                while !control.isStopRequested {
                    renderer.renderAudio(into: buffer, frames: blockFrames)
                    due += blockNanos
                    let wait = due - monotonicNanoseconds()
                    // Behind by more than a block: start the schedule again rather than rendering a burst.
                    if wait > 0 { control.wait(seconds: Double(wait) / 1e9) } else { due = monotonicNanoseconds() }
                }
            }
        }
    }

    /// Stops rendering: wakes the thread and joins it.
    func stop() {
        let running = worker.withLock { worker in
            defer { worker = nil }; return worker
        }
        running?.stop()
    }
}
