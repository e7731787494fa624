import Glibc

/// Watches where the game's audio goes and turns what it sees into session events.
///
/// With a PulseAudio (or PipeWire-Pulse) server it follows the sinks precisely: the server moves a stream silently
/// when its sink goes away, so the monitor watches the sink our own stream is on. Without one it relies on SDL,
/// which marks a dead device stopped. Polls on the game thread, inside `update()`; what other threads may read
/// (`devices`, `route(driver:)`, `isOtherAudioPlaying`) is published under a lock after every change.
final class RouteMonitor: @unchecked Sendable {
    private let appName: String
    private var pulse: PulseAudioMonitor? { didSet { publish() } }
    /// The sink our stream was last seen on.
    private var ourSink: SinkInfo? { didSet { publish() } }
    private var otherStreamsPlaying = false { didSet { publish() } }

    /// What any thread may read: a copy of the game thread's state.
    private struct View {
        var pulse: PulseAudioMonitor?
        var ourSink: SinkInfo?
        var otherStreamsPlaying = false
    }
    private let view = Lock(View())
    private var lastReconnect = 0
    private var lostServer = false
    /// After we move our stream, the server's report of it lags: trust the move until the report agrees (or 1 s).
    private var movedUntil = 0

    init(appName: String) {
        self.appName = appName
        pulse = try? PulseAudioMonitor(appName: appName + "-monitor")
        refresh()
        publish()
    }

    private func publish() {
        let current = View(pulse: pulse, ourSink: ourSink, otherStreamsPlaying: otherStreamsPlaying)
        view.withLock { $0 = current }
    }

    deinit { pulse?.close() }

    var hasSoundServer: Bool { view.withLock { $0.pulse } != nil }

    /// The output devices there are: the sound server's sinks, else what SDL lists.
    var devices: [AudioRoute] {
        if let pulse = view.withLock({ $0.pulse }) {
            return pulse.sinks.map { AudioRoute(name: $0.description, driver: "pulseaudio", sink: $0.name) }
        }
        return SDLAudio.deviceNames().map { AudioRoute(name: $0, driver: "sdl") }
    }

    /// The route as the sound server names it, when there is one.
    func route(driver: String) -> AudioRoute? {
        let (pulse, ourSink) = view.withLock { ($0.pulse, $0.ourSink) }
        guard pulse != nil else { return nil }
        guard let sink = ourSink else { return AudioRoute.none }
        return AudioRoute(name: sink.description, driver: driver, sink: sink.name)
    }

    /// Whether another process has an uncorked stream.
    var isOtherAudioPlaying: Bool { view.withLock { $0.otherStreamsPlaying } }

    func poll(device: DeviceOutput, session: AudioSession, musicPlaying: Bool) {
        guard let pulse else {
            reconnectIfDue(session: session)
            watchSDLDevice(device, session: session)
            return
        }
        for event in pulse.drainEvents() {
            switch event {
            case .sinkRemoved(let sink, let streams)
                where streams.contains(where: isOurStream) || sink.name == ourSink?.name:
                let previous = route(of: sink, device: device)
                if let next = pulse.snapshot.sinkAfterRemoval(pid: getpid()) {
                    if !device.isDeviceAlive { device.followDefaultDevice() }
                    ourSink = next
                    session.handle(.currentDeviceRemoved(previous: previous, current: route(of: next, device: device)))
                } else {
                    // Nothing left to open: render to nothing (the session decides the same, idempotently).
                    ourSink = nil
                    device.renderToNull()
                    session.handle(.currentDeviceRemoved(previous: previous, current: nil))
                }
            case .sinkAdded(let sink):
                let current = ourSink.map { route(of: $0, device: device) } ?? .none
                if ourSink == nil { ourSink = sink }
                session.handle(.deviceAdded(route(of: sink, device: device), current: current))
            case .defaultSinkChanged(let from, let to?) where to != ourSink?.name:
                let previous = ourSink.map { route(of: $0, device: device) }
                    ?? from.flatMap { pulse.snapshot.sink(named: $0) }.map { route(of: $0, device: device) } ?? .none
                // Streams opened without a device follow the default on recent servers; make sure of it.
                if let ours = pulse.sinkInputs.first(where: isOurStream) {
                    try? pulse.moveSinkInput(index: ours.index, toSink: to)
                }
                guard let next = pulse.snapshot.sink(named: to) else { continue }
                ourSink = next
                movedUntil = monotonicNanoseconds() + 1_000_000_000
                session.handle(.defaultDeviceChanged(previous: previous, current: route(of: next, device: device)))
            case .connectionLost:
                self.pulse?.close()
                self.pulse = nil
                lostServer = true
                session.handle(.mediaServicesLost(.soundServer))
                return
            default:
                break
            }
        }
        refresh()
        session.otherAudioChanged(streamsPlaying: otherStreamsPlaying, musicPlaying: musicPlaying)
        // The server is there but our SDL stream died anyway (e.g. the last sink went): reopen quietly; the
        // session has already been told through the sink events.
        if !device.isNull && !device.isDeviceAlive && pulse.defaultSink != nil { device.followDefaultDevice() }
    }

    private func refresh() {
        guard let pulse else { return }
        if let sink = pulse.sinkOfOurStream() {
            if sink.name == ourSink?.name { movedUntil = 0 }
            if monotonicNanoseconds() >= movedUntil {
                ourSink = sink
            }
        } else if ourSink == nil {
            ourSink = pulse.defaultSink
        }
        otherStreamsPlaying = !pulse.otherAppsPlaying(excludingPID: getpid()).isEmpty
    }

    /// The game's own output stream: this process's, under the app's name (a process can hold other streams).
    private func isOurStream(_ stream: SinkInput) -> Bool {
        stream.processID == getpid() && stream.applicationName == appName
    }

    private func route(of sink: SinkInfo, device: DeviceOutput) -> AudioRoute {
        AudioRoute(name: sink.description, driver: device.isNull ? "null" : device.driver, sink: sink.name)
    }

    /// Without a sound server: SDL marks a device that died stopped.
    private func watchSDLDevice(_ device: DeviceOutput, session: AudioSession) {
        if device.isNull {
            guard device.isProbeDue(), device.followDefaultDevice() else { return }
            session.handle(.deviceAdded(device.route, current: .none))
        } else if !device.isDeviceAlive {
            let previous = device.route
            let current: AudioRoute? = device.followDefaultDevice() ? device.route : nil
            session.handle(.currentDeviceRemoved(previous: previous, current: current))
        }
    }

    /// After the server went away, try to reach it again every two seconds.
    private func reconnectIfDue(session: AudioSession) {
        guard lostServer else { return }
        let now = monotonicNanoseconds()
        guard now - lastReconnect > 2_000_000_000 else { return }
        lastReconnect = now
        guard let monitor = try? PulseAudioMonitor(appName: appName + "-monitor") else { return }
        pulse = monitor
        lostServer = false
        refresh()
        session.handle(.mediaServicesReset(.soundServer))
    }
}
