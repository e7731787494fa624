import AmbienceCore
import AmbiencePlatform
import Glibc
import Synchronization

/// Watches where the game's audio goes and reports what it sees as session events. It decides nothing and changes
/// nothing: the session's policy answers the events, and its executor moves the stream or reopens the device.
///
/// With a PulseAudio (or PipeWire-Pulse) server it follows the sinks precisely (`RouteTracker`): the server moves a
/// stream silently when its sink goes away, so the monitor watches the sink our own stream is on. Without one it
/// relies on SDL, which marks a dead device stopped, and on SDL's device list. Polls on the game thread, inside
/// `update()`; what other threads may read (`devices`, `route(driver:)`, `isOtherAudioPlaying`, `ourStream()`) is
/// published under a lock after every change. The server's cork requests come over the same connection and queue,
/// so this monitor reports them too, in their order among the sink events.
package final class RouteMonitor: SessionMonitor, @unchecked Sendable {
    /// How often the device list is read while nothing is open (reading it costs milliseconds).
    static let listingIntervalNanoseconds = 500_000_000
    /// How often a lost sound server is tried again.
    static let reconnectIntervalNanoseconds = 2_000_000_000
    /// How long SDL's word that our stream died waits for the server's own account (a sink removed) before it is
    /// reported alone: SDL may notice first, and the server's event says which device went.
    static let deadStreamGraceNanoseconds = 500_000_000
    /// The `media.role` of the stream that hears the server's cork requests: the output stream's own (SDLAudioDevice
    /// gives SDL's stream `game`), so the server's rules for that stream are the ones the game hears. Whether a call
    /// corks games is the server's setting: module-role-cork's default `cork_roles` (music, video) leave them alone,
    /// and `cork_roles=music,video,game` (or `any_role`) includes them.
    static let corkRole = "game"

    private let appName: String
    /// The game's output, whose stream (or SDL device) this monitor follows.
    private let device: DeviceOutput
    /// Set by `close()`: the engine is shutting down and its device closing, so polls look at nothing.
    private let isClosed = Atomic<Bool>(false)
    // Game thread only (poll), published to `view`.
    private var pulse: PulseAudioMonitor? {
        didSet {
            seenSnapshot = -1
            publish()
        }
    }
    private var tracker: RouteTracker { didSet { publish() } }
    private var otherStreamsPlaying = false { didSet { publish() } }
    private var otherMusicStreams: [SinkInput] = [] { didSet { publish() } }
    private var lastReconnect = 0
    /// The server's snapshot the last refresh read (`PulseAudioMonitor.snapshotChanges`; -1 before the first), and
    /// when: a look with nothing new since skips the refresh (`observeServer`).
    private var seenSnapshot = -1
    private var lastRefresh = 0
    /// When SDL was first seen to have given up on our stream, while the server has not explained why.
    private var streamDeadSince: Int?
    /// When SDL was first seen to have stopped our device, without a sound server to say why.
    private var sdlDeviceDeadSince: Int?
    private var lostServer = false
    /// SDL's device list when it was last read, and when: a name new to it is a device plugged in.
    private var listedDevices: [String] = []
    private var lastListing = 0
    /// Events that sound-server monitors closed since (the server went away) had dropped.
    private let droppedByClosedMonitors = Atomic<Int>(0)
    /// A reconnection under way on `reconnectLane`, and the monitor it made, for the next poll to take up.
    private let reconnection = Reconnection()
    private final class Reconnection: Sendable {
        let state = Lock<(attempting: Bool, monitor: PulseAudioMonitor?, closed: Bool)>((false, nil, false))
    }
    /// Where lost servers are tried again, off the game thread: a server coming back can take seconds to answer on
    /// a loaded machine (a restarted PipeWire did, past the game thread's 300 ms), and the game thread waits on none.
    private static let reconnectLane = BoundedCallLane(name: "ambience-pulse-reconnect")
    /// How long a reconnection's connect, and then its first load, may each take on that thread.
    static let reconnectTimeout = Duration.seconds(3)

    /// What any thread may read: a copy of the game thread's state.
    private struct View {
        var pulse: PulseAudioMonitor?
        var tracker: RouteTracker
        var otherStreamsPlaying = false
        var otherMusicStreams: [SinkInput] = []
    }
    private let view: Lock<View>

    package init(appName: String, device: DeviceOutput) {
        self.appName = appName
        self.device = device
        tracker = RouteTracker(processID: ProcessIdentity.current, appName: appName)
        view = Lock(View(tracker: tracker))
        do {
            pulse = try PulseAudioMonitor(appName: appName + "-monitor", corkRole: Self.corkRole)
        } catch {
            Log.info("output: no sound server to watch (\(error)); route changes come from SDL's device list")
            pulse = nil
        }
        if let pulse { tracker.refresh(pulse.snapshot, now: monotonicNanoseconds()) }
        publish()
    }

    private func publish() {
        let current = View(
            pulse: pulse, tracker: tracker, otherStreamsPlaying: otherStreamsPlaying,
            otherMusicStreams: otherMusicStreams)
        view.withLock { $0 = current }
    }

    deinit {
        pulse?.close()
        let late = reconnection.state.withLock { state in
            state.closed = true
            defer { state.monitor = nil }
            return state.monitor
        }
        late?.close()
    }

    var hasSoundServer: Bool { view.withLock { $0.pulse } != nil }

    /// The output devices there are: the sound server's sinks, else what SDL lists.
    package var devices: [AudioRoute] {
        let (pulse, tracker) = view.withLock { ($0.pulse, $0.tracker) }
        if let pulse { return pulse.sinks.map { tracker.route(of: $0, driver: "pulseaudio") } }
        return SDLAudio.deviceNames().map { AudioRoute(name: $0, driver: "sdl") }
    }

    /// The route as the sound server names it, when there is one.
    package func route(driver: String) -> AudioRoute? {
        let (pulse, tracker) = view.withLock { ($0.pulse, $0.tracker) }
        guard pulse != nil else { return nil }
        return tracker.ourSink.map { tracker.route(of: $0, driver: driver) } ?? AudioRoute.none
    }

    package var name: String { "sound server" }

    /// Sound-server events lost to a full queue, over every connection this monitor has had.
    package var droppedEvents: Int {
        let current = view.withLock { $0.pulse }?.droppedEvents ?? 0
        return current.addingSaturated(droppedByClosedMonitors.load(ordering: .relaxed))
    }

    /// Whether another process has an uncorked stream.
    package var isOtherAudioPlaying: Bool { view.withLock { $0.otherStreamsPlaying } }
    /// Whether another process has an uncorked stream that says it is music (`media.role=music`: mpd, cmus), other
    /// than those of `playerProcesses`: a stream of a process with an MPRIS player is that player's music, which its
    /// MPRIS status already tells; any other is the user's music even without a player.
    package func isOtherMusicStreamPlaying(besides playerProcesses: Set<Int>) -> Bool {
        view.withLock { $0.otherMusicStreams }.contains { stream in
            stream.processID.map { !playerProcesses.contains(Int($0)) } ?? true
        }
    }

    /// The sound server and the game's own stream on it, for the executor to move (with the cork listener's stream,
    /// `PulseAudioMonitor.corkListenerIndex`, which must stay on the output's sink to hear what is meant for it).
    package func ourStream() -> (server: PulseAudioMonitor, stream: SinkInput)? {
        let (pulse, tracker) = view.withLock { ($0.pulse, $0.tracker) }
        guard let pulse, let ours = pulse.sinkInputs.first(where: tracker.isOurStream) else { return nil }
        return (pulse, ours)
    }

    /// Ends the game's streams that the server keeps on no sink, before the device they belong to is closed.
    /// PulseAudio ends a stream whose sink went when no other sink is left; PipeWire keeps it, unlinked and never
    /// writable, until a sink comes. SDL 2.26's PulseAudio backend waits for such a stream to take data with no
    /// timeout, and closing the SDL device joins that wait: without this, the close never returns. Ending the
    /// stream wakes the wait with a failure, as PulseAudio's own ending of it does. Carries out part of the
    /// executor's close; decides nothing.
    package func endOurStreamsWithoutSink() {
        let (pulse, tracker) = view.withLock { ($0.pulse, $0.tracker) }
        guard let pulse else { return }
        for stream in pulse.snapshot.streamsOnNoSink(tracker.isOurStream) {
            try? pulse.killSinkInput(index: stream.index)  // gone already, or no answer: nothing left to wake
        }
    }

    /// A shut-down engine hears no more cork requests and leaves no stream on the server: stops the cork listener
    /// and ends the game's streams on no sink (before the engine closes the device), and later polls look at
    /// nothing. The server's connection stays, so `devices` still answers. Any thread.
    package func close() {
        isClosed.store(true, ordering: .relaxed)
        view.withLock { $0.pulse }?.stopCorkListener()
        endOurStreamsWithoutSink()
        // A reconnect still under way would otherwise keep its new connection, and its cork stream, on the server
        // until the engine is freed: no poll takes it up any more.
        let late = reconnection.state.withLock { state in
            state.closed = true
            defer { state.monitor = nil }
            return state.monitor
        }
        late?.close()
    }

    /// Whether the sound server has sent events that the next poll would turn into session events. Game thread.
    package var hasPendingEvents: Bool { pulse?.hasPendingEvents ?? false }

    /// What changed since the last look, as session events, oldest first; nothing when no look is due
    /// (`MonitorContext.isLookDue`: the server's news always makes one due). `appAudioPlaying` is asked only when a
    /// cork request needs it.
    package func poll(_ context: MonitorContext) -> [SessionEvent] {
        guard context.isLookDue, !isClosed.load(ordering: .relaxed) else { return [] }
        let now = monotonicNanoseconds()
        if let pulse {
            return observeServer(pulse, device: device, now: now, appAudioPlaying: context.appAudioPlaying)
        }
        return reconnectIfDue(now: now) + observeSDL(device, now: now)
    }

    private func observeServer(
        _ pulse: PulseAudioMonitor, device: DeviceOutput, now: Int, appAudioPlaying: () -> Bool
    ) -> [SessionEvent] {
        let driver = device.isNull ? "null" : device.driver
        var events: [SessionEvent] = []
        let drained = pulse.drainEvents()
        for event in drained {
            switch event {
            case .connectionLost:
                droppedByClosedMonitors.add(pulse.droppedEvents, ordering: .relaxed)
                pulse.close()
                self.pulse = nil
                lostServer = true
                otherStreamsPlaying = false
                otherMusicStreams = []
                return events + [.mediaServicesLost(.soundServer)]
            case .corkRequested:
                events.append(.corkRequested(appAudioPlaying: appAudioPlaying()))
            case .uncorkRequested:
                events.append(.uncorkRequested)
            default:
                events += tracker.observe(event, in: pulse.snapshot, driver: driver, now: now)
            }
        }
        // The count is read before the snapshot: a change in between is in this snapshot, and seen again next time.
        // With no event, the same snapshot and no timer of the tracker's running out, the refresh would find what
        // the last one found: skipped (it copied the snapshot twice and published the view twice every look).
        let changes = pulse.snapshotChanges
        if !drained.isEmpty || changes != seenSnapshot || tracker.refreshIsDue(since: lastRefresh) {
            seenSnapshot = changes
            lastRefresh = now
            let snapshot = pulse.snapshot
            tracker.refresh(snapshot, now: now)
            let others = snapshot.otherAppsPlaying(excludingPID: ProcessIdentity.current)
            if otherStreamsPlaying == others.isEmpty { otherStreamsPlaying = !others.isEmpty }
            let music = others.filter { $0.mediaRole == "music" }
            if music != otherMusicStreams { otherMusicStreams = music }
        }
        // SDL gave up on our stream though the server has a sink for it (the last sink went and another came).
        if !device.isNull && !device.isDeviceAlive && pulse.defaultSink != nil && events.isEmpty {
            let since = streamDeadSince ?? now
            streamDeadSince = since
            if now - since >= Self.deadStreamGraceNanoseconds {
                streamDeadSince = nil
                events.append(.outputStreamDied)
            }
        } else {
            streamDeadSince = nil
        }
        return events
    }

    /// Without a sound server: SDL marks a device that died stopped, and lists the devices there are.
    private func observeSDL(_ device: DeviceOutput, now: Int) -> [SessionEvent] {
        if device.isNull {
            guard now - lastListing > Self.listingIntervalNanoseconds else { return [] }
            lastListing = now
            let listed = SDLAudio.deviceNames()
            defer { listedDevices = listed }
            guard let plugged = listed.first(where: { !listedDevices.contains($0) }) else { return [] }
            return [.deviceAdded(AudioRoute(name: plugged, driver: "sdl"), current: .none)]
        }
        guard !device.isDeviceAlive else {
            sdlDeviceDeadSince = nil
            return []
        }
        // SDL stops a device it is closing itself (the program's SDL_Quit, under way on another thread): closing it
        // too, at the same moment, would free it twice. A device still stopped after the grace is really gone.
        let since = sdlDeviceDeadSince ?? now
        sdlDeviceDeadSince = since
        guard now - since >= Self.deadStreamGraceNanoseconds else { return [] }
        sdlDeviceDeadSince = nil
        let previous = device.route
        listedDevices = SDLAudio.deviceNames()
        let left = listedDevices.first { $0 != previous.name }
        return [.currentDeviceRemoved(previous: previous, current: left.map { AudioRoute(name: $0, driver: "sdl") })]
    }

    /// After the server went away, try to reach it again every two seconds, on `reconnectLane`; the poll after an
    /// attempt succeeded takes its monitor up and reports the reset.
    private func reconnectIfDue(now: Int) -> [SessionEvent] {
        guard lostServer else { return [] }
        let made = reconnection.state.withLock { state in
            defer { state.monitor = nil }
            return state.monitor
        }
        if let made {
            pulse = made
            lostServer = false
            tracker.refresh(made.snapshot, now: now)
            return [.mediaServicesReset(.soundServer)]
        }
        guard now - lastReconnect > Self.reconnectIntervalNanoseconds,
            reconnection.state.withLock({ state in
                guard !state.attempting else { return false }
                state.attempting = true
                return true
            })
        else { return [] }
        lastReconnect = now
        let (name, reconnection) = (appName + "-monitor", self.reconnection)
        let finish: @Sendable (PulseAudioMonitor?) -> Void = { monitor in
            // One taken up at most: a monitor made after the engine closed, or one a later attempt replaced, closes.
            let unwanted = reconnection.state.withLock { state -> PulseAudioMonitor? in
                state.attempting = false
                guard !state.closed else { return monitor }
                guard let monitor else { return nil }
                defer { state.monitor = monitor }
                return state.monitor
            }
            unwanted?.close()
        }
        // A deadline of 0: the game thread never waits; the attempt's outcome comes through `finish` either way.
        let attempt: PulseAudioMonitor?? = Self.reconnectLane.run(
            seconds: 0,
            { try? PulseAudioMonitor(appName: name, timeout: Self.reconnectTimeout, corkRole: Self.corkRole) },
            late: finish)
        if let attempt { finish(attempt) }
        // A lane stuck in another engine's attempt refused this one: it is tried again at the next interval.
        if Self.reconnectLane.isStuck { reconnection.state.withLock { $0.attempting = false } }
        return []
    }
}
