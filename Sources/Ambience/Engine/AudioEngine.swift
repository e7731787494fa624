import AmbienceCore
import AmbienceDecoding
import AmbiencePlatform
import Synchronization

/// The game's audio engine: sounds and voices, buses, the listener, and the output.
///
/// Call `update()` once per game frame: it advances fades, ducking and virtual voices, and returns every event since
/// the last call, on the calling thread. Every other method may be called from any thread.
public final class AudioEngine: @unchecked Sendable {
    /// The configuration the engine was built with, as validated.
    public let configuration: EngineConfiguration
    package let mixer: Mixer
    /// The application music player, streaming through the `music` bus.
    public let musicPlayer: MusicPlayer
    /// The audio session: category, activation, interruptions and route changes.
    public let session: AudioSession
    /// The desktop's own music player, driven over MPRIS.
    public let systemMusicPlayer: SystemMusicPlayer
    /// The session bus and what rides on it; nil without desktop integration.
    let desktopLink: DesktopLink?
    /// Where the output goes, as the sound server (or SDL) says; nil for an offline engine.
    let routes: RouteMonitor?
    /// What the session hears from outside the game, polled by `update()` in this order: the session bus, the screen
    /// lock, sleep, the output.
    let monitors: [any SessionMonitor]
    let cache: SoundCache
    let state = Lock<EngineState>(EngineState())
    /// The game's log handler and the diagnostics waiting for it (EngineLog.swift).
    let logSink = LogSink()

    struct EngineState {
        var device: DeviceOutput?
        var lastTickFrame = 0
        var isShutDown = false
        /// `update()` has reported the first lost event (it does so once).
        var reportedDroppedEvents = false
        /// The music player was playing when the session paused app audio, so resuming restarts it.
        var musicPausedBySession = false
        /// What the desktop players were doing when last seen (it stands while the session bus is gone).
        var playersLastSeen = PlayersSeen()
        /// The MPRIS client `playersLastSeen` was read from, and its `changeCount` then: a look with the same skips
        /// the copy of its players. Held, not named by address: a new client at a freed one's address starts its
        /// count again. Let go while the session bus is gone.
        var playersSeenFrom: (client: MPRISClient, changes: Int)?
        /// When `update()` last looked at the desktop players and the output (`pollMonitors`).
        var lastDeviceLook: Int?
        /// What the session was last told of other apps' audio (`watchOtherAudio`).
        var otherAudioReported: OtherAudioReport?
        var libraries: [MediaLibrary] = []
        /// This engine's place in the process's exit (`ProcessExit`), until it is shut down.
        var exitToken: Int?
    }

    /// Builds the engine. A configuration outside `EngineConfiguration`'s limits is refused with
    /// `EngineError.invalidNumber` before anything is opened.
    public init(_ configuration: EngineConfiguration = EngineConfiguration()) throws(EngineError) {
        guard !ProcessExit.mustRefuse else { throw .processExiting }
        self.configuration = try configuration.validated()
        do {
            mixer = try Mixer(
                MixerConfiguration(
                    sampleRate: configuration.sampleRate, realVoices: configuration.realVoices,
                    maxVoices: configuration.maxVoices, hrtf: configuration.hrtf,
                    resampler: configuration.resampler, outputLimiter: configuration.outputLimiter,
                    rankMargin: configuration.rankMargin))
        } catch {
            throw .mixer(error)
        }
        cache = SoundCache(budget: configuration.soundMemoryBudget, decoding: configuration.decodingOptions)
        musicPlayer = try MusicPlayer(mixer: mixer, bus: mixer.bus(.music), decoding: configuration.decodingOptions)
        let (session, systemMusicPlayer) = (AudioSession(), SystemMusicPlayer())
        self.session = session
        self.systemMusicPlayer = systemMusicPlayer
        // No bus (or none reachable within 250 ms) means no desktop integration until one appears.
        desktopLink =
            configuration.desktopIntegration
            ? DesktopLink(
                address: configuration.sessionBusAddress, appName: configuration.appName, controls: musicPlayer,
                onConnectionChanged: { Self.use($0, session: session, systemMusicPlayer: systemMusicPlayer) })
            : nil
        // No system bus (containers, CI) or no logind simply means no sleep notifications.
        var sleepMonitor: SleepMonitor?
        if configuration.desktopIntegration, let address = configuration.systemBusAddress {
            do {
                sleepMonitor = try SleepMonitor(address: address)
            } catch {
                Log.info("desktop: no sleep and wake notifications: \(error)")
            }
        }
        let screenLock =
            configuration.desktopIntegration
            ? ScreenLockMonitor(
                systemBusAddress: configuration.systemBusAddress, sessionBusAddress: configuration.sessionBusAddress)
            : nil
        var device: DeviceOutput?
        if case .device(let name) = configuration.output {
            // Always: SDL's own handlers would swallow SIGTERM and SIGINT into an SDL_QUIT that a game without an SDL
            // event loop never reads, so even a game that opts out of the engine's handling could not be ended.
            SDLAudio.leaveTerminationSignalsToTheEngine()
            do {
                device = try DeviceOutput(
                    mixer: mixer, sampleRate: configuration.sampleRate, blockFrames: configuration.blockFrames,
                    deviceName: name, appName: configuration.appName, backend: configuration.outputBackend,
                    threadPolicy: configuration.audioThreadPriority,
                    grantor: { [systemBus = configuration.systemBusAddress] in
                        SystemPriorityGrantor(systemBus: systemBus)
                    }, busForSDL: Self.sessionBusForSDL)
            } catch {
                throw .output(error)
            }
        }
        routes = device.map { RouteMonitor(appName: configuration.appName, device: $0) }
        let watched: [(any SessionMonitor)?] = [desktopLink, screenLock, sleepMonitor, routes]
        monitors = watched.compactMap { $0 }
        if let device {
            state.withLock { $0.device = device }
            musicPlayer.startStreamingThread()
        }
        session.attach(output: self)
        systemMusicPlayer.reportStarts { [session] player, withGameMusic in
            session.handle(.systemMusicStarted(player: player, withGameMusic: withGameMusic))
        }
        if configuration.desktopIntegration && configuration.handlesTerminationSignals {
            TerminationWatch.shared.register(self)
        }
        // exit() on any thread shuts the engine down before OpenAL Soft's destructor runs (ProcessExit).
        let exitToken = ProcessExit.add(
            ProcessExit.Participant(
                shutDown: { [weak self] in self?.shutdown() }, waitOutCallers: { [mixer] in mixer.waitOutCallers() }))
        state.withLock { $0.exitToken = exitToken }
        // The link has already learnt who is playing, before the game activates its session (start-up detection).
        Self.use(desktopLink?.connection, session: session, systemMusicPlayer: systemMusicPlayer)
        Log.info(
            "engine: \(outputDriver) output\(outputBackend.map { " (\($0.rawValue))" } ?? "") at \(configuration.sampleRate) Hz, "
                + "\(mixer.capabilities.realVoices) real voices"
        )
    }

    deinit {
        shutdown()
        // Only now: a thread may still call into a shut-down engine, and the exit must wait it out too.
        if let token = state.withLock({ $0.exitToken }) { ProcessExit.remove(token) }
    }

    /// Stops output and releases the device. The engine renders nothing afterwards.
    ///
    /// The exit rule: players the session paused are resumed, system music the game started is paused, and music
    /// that was already playing when the game started is left playing.
    public func shutdown() {
        if !state.withLock({ $0.isShutDown }) {
            TerminationWatch.shared.unregister(self)
            session.handle(.appWillTerminate(systemMusicStartedByGame: systemMusicPlayer.playersStartedByGame))
            desktopLink?.connection?.players.flush()
            // The output's monitor among them ends our streams on no sink, before the device closes below.
            for monitor in monitors { monitor.close() }
        }
        let device = state.withLock { state -> DeviceOutput? in
            if state.isShutDown { return nil }
            state.isShutDown = true
            let device = state.device
            state.device = nil
            return device
        }
        device?.close()
        musicPlayer.close()
        mixer.close()
        logSink.close()  // no update() will deliver again
    }

    /// Waits until every command sent to desktop players so far has been carried out (tests, tools).
    package func flushDesktopCommands() { desktopLink?.connection?.players.flush() }

    /// The sound system the output goes to ("pulseaudio", for SDL's driver and the libpulse stream alike; SDL's
    /// "dummy", …), or "offline".
    public var outputDriver: String { state.withLock { $0.device?.driver } ?? "offline" }
    /// Which code carries the mix to the device now (`sdl` or `libpulse`); nil offline and while rendering to
    /// nothing.
    public var outputBackend: EngineConfiguration.OutputBackend? { state.withLock { $0.device }?.backend }
    /// Underflows the server reported on the libpulse output's stream; nil on SDL's output, offline, or none.
    package var outputStreamUnderflows: Int? { state.withLock { $0.device }?.streamUnderflows }
    /// What the output's audio thread obtained from rtkit or the kernel ("realtime 4 via rtkit", "none: …"),
    /// waiting up to `seconds` for the request made off the audio path; nil offline and while rendering to nothing.
    package func outputThreadPriority(waitingUpTo seconds: Double = 0) -> AudioThreadPriority? {
        state.withLock { $0.device }?.audioThreadPriority(waitingUpTo: seconds)
    }
    /// Whether the engine renders only when asked (`render(seconds:)`), not to a device.
    public var isOffline: Bool { configuration.output == .offline }

    // MARK: Buses and listener

    /// The bus every other bus ends in: the whole mix's gain.
    public var master: Bus { mixer.bus(.master) }
    /// The music player's bus.
    public var music: Bus { mixer.bus(.music) }
    /// Sound effects: where voices play unless their `PlayOptions.bus` says otherwise.
    public var sfx: Bus { mixer.bus(.sfx) }
    /// Menus and interface sounds.
    public var ui: Bus { mixer.bus(.ui) }
    /// Speech (named "dialogue"). By default the music bus ducks −9 dB while it plays.
    public var dialogue: Bus { mixer.bus(.dialogue) }

    /// Adds a bus under `parent` (master when nil).
    public func makeBus(named name: String, parent: Bus? = nil) -> Bus { mixer.makeBus(named: name, parent: parent) }

    /// The ducking rules in force. Setting rules with a NaN or infinite number keeps the old ones
    /// (`setDuckingRules(_:)` says why).
    public var duckingRules: [DuckingRule] {
        get { mixer.currentDuckingRules() }
        set { try? mixer.setDuckingRules(newValue) }
    }

    /// Replaces the ducking rules, each checked by `DuckingRule.validated()`.
    public func setDuckingRules(_ rules: [DuckingRule]) throws(InvalidNumber) { try mixer.setDuckingRules(rules) }

    /// The listener. Setting one with a NaN or infinite number, or no direction, keeps the old one
    /// (`setListener(_:)` says why).
    public var listener: ListenerState {
        get { mixer.listenerState() }
        set { try? mixer.setListener(newValue) }
    }

    /// Moves the listener, checked by `ListenerState.validated()`.
    public func setListener(_ listener: ListenerState) throws(InvalidNumber) { try mixer.setListener(listener) }

    // MARK: Effects and capabilities

    /// Puts a reverb on a bus and everything under it (nil removes it). False when this OpenAL has no EFX, or the bus
    /// is another engine's.
    @discardableResult
    public func setReverb(_ preset: ReverbPreset?, on bus: Bus) -> Bool { setReverb(preset?.parameters, on: bus) }

    /// Puts a reverb with these parameters on a bus and everything under it (nil removes it); false as for a preset,
    /// or when a parameter is NaN or infinite.
    @discardableResult
    public func setReverb(_ parameters: ReverbParameters?, on bus: Bus) -> Bool {
        guard bus.owner === mixer.owner else { return false }
        return mixer.setReverb(parameters, bus: bus.index)
    }

    /// Replaces the world's reverb zones. A world voice inside a zone uses its reverb instead of its bus's.
    @discardableResult
    public func setReverbZones(_ zones: [ReverbZone]) -> Bool { mixer.setReverbZones(zones) }

    /// Turns HRTF rendering on or off; returns whether the device now does what was asked.
    @discardableResult
    public func setHRTF(_ on: Bool) -> Bool {
        // Resetting the OpenAL device while the audio thread renders it is a race inside OpenAL Soft: hold rendering.
        guard let device = state.withLock({ $0.device }) else { return mixer.setHRTF(on) }
        return device.withRenderingHeld { mixer.setHRTF(on) }
    }

    /// The output devices the system offers (empty for an offline engine).
    public var outputDevices: [AudioRoute] { routes?.devices ?? [] }

    /// What this machine's OpenAL Soft and optional system libraries support, and what is missing. Asking opens
    /// the optional libraries not yet needed, so the answer is the whole of it.
    public var capabilities: AudioCapabilities { mixer.capabilities.withSystemLibraries() }

    // MARK: Sounds and voices

    /// Loads a file as a `Sound`, or returns the one already loaded from the same path.
    ///
    /// A sound is decoded whole into memory, so its decoded size (frames × channels × 4 bytes) must fit both the
    /// cache's `soundMemoryBudget` and one OpenAL buffer (under 2 GiB). A file over either is refused before any of
    /// it is decoded, with `EngineError.decoding(.tooLarge(path, bytes:limit:))`; it does not fall back to
    /// streaming. Long audio is music: play it with `musicPlayer`, which streams.
    public func load(_ path: String) throws(EngineError) -> Sound {
        try cache.sound(for: path, mixer: mixer)
    }

    /// Decodes files on a background thread so later `load` calls return at once.
    public func preload(_ paths: [String]) { cache.preload(paths, mixer: mixer) }

    /// Makes a `Sound` from audio already in memory (not cached). The buffer is held to the rules a file's header
    /// is: a rate in `AudioInfo.sampleRates`, 1 to `AudioInfo.maximumChannels` channels (more than two are folded
    /// to stereo), whole frames, at most `AudioFile.maximumDecodedBytes`, and every sample finite; anything else is
    /// `EngineError.invalidNumber`. Stereo whose sides are equal is stored and mixed as mono and sounds the same
    /// (`Mixer.makeSound(_:name:)`), as every sound the engine makes.
    public func makeSound(_ pcm: PCMBuffer, name: String) throws(EngineError) -> Sound {
        do throws(InvalidNumber) {
            _ = try pcm.sampleRate.checked(Int.self, in: AudioInfo.sampleRates, "\(name): sample rate")
            _ = try pcm.channels.checked(Int.self, in: 1...AudioInfo.maximumChannels, "\(name): channels")
            _ = try pcm.samples.count.checked(
                Int.self, in: pcm.channels...Int(AudioFile.maximumDecodedBytes) / 4, "\(name): samples")
            guard pcm.samples.count % pcm.channels == 0 else {
                throw InvalidNumber(
                    "\(name): samples", value: "\(pcm.samples.count)",
                    expected: "whole frames of \(pcm.channels) channels")
            }
            if let bad = pcm.samples.first(where: { !$0.isFinite }) { _ = try bad.finite("\(name): a sample") }
        } catch {
            throw .invalidNumber(error)
        }
        guard let sound = mixer.makeSound(pcm, name: name) else { throw .outOfMixerMemory(name) }
        return sound
    }

    /// Stops the sound's voices and frees it.
    public func unload(_ sound: Sound) {
        cache.forget(sound)
        mixer.unload(sound)
    }

    /// Starts a voice. It is audible in the next block the output renders.
    ///
    /// Options are checked by `PlayOptions.validated()`: finite numbers out of range are clamped to `MixerLimits`,
    /// and options with a NaN or infinite number play nothing and give `Voice.none` (call `validated()` to learn why).
    @discardableResult
    public func play(_ sound: Sound, _ options: PlayOptions = PlayOptions()) -> Voice { mixer.play(sound, options) }

    /// The mixer's counters, with `droppedEvents` summed over every queue of the engine.
    public var stats: MixerStats {
        var stats = mixer.stats
        stats.droppedEvents = droppedEventsByQueue.reduce(0) { $0.addingSaturated($1.count) }
        return stats
    }

    /// Each bounded event queue's losses, by a name for people.
    private var droppedEventsByQueue: [(queue: String, count: Int)] {
        let own: [(queue: String, count: Int)] = [
            ("mixer", mixer.droppedEvents), ("music player", musicPlayer.droppedEvents),
            ("system music player", systemMusicPlayer.droppedEvents), ("session", session.droppedEvents)
        ]
        // The monitors from the output up: the warning names the first queue in this list that lost any, as it did
        // before the monitors were one list (reordering `monitors` changes which one it names).
        return own + monitors.reversed().map { ($0.name, $0.droppedEvents) }
    }
    /// Whether any queue in `droppedEventsByQueue` has lost an event, without building that list.
    private var anyEventsDropped: Bool {
        mixer.droppedEvents > 0 || musicPlayer.droppedEvents > 0 || systemMusicPlayer.droppedEvents > 0
            || session.droppedEvents > 0 || monitors.contains { $0.droppedEvents > 0 }
    }
    /// Bytes held by cached sounds.
    public var soundMemory: Int { cache.memoryInUse }

    // MARK: The game loop

    /// Delivers the library's change notifications in `update()` as `.library(.libraryDidChange)`, between its
    /// `beginGeneratingLibraryChangeNotifications()` and `end…` calls.
    public func watch(_ library: MediaLibrary) {
        state.withLock { state in
            if !state.libraries.contains(where: { $0 === library }) { state.libraries.append(library) }
        }
    }

    /// Advances the mixer to the output's clock and returns every event since the last call, in order: the one way
    /// events reach the game (there are no observers to register, so no event handler ever runs inside the engine,
    /// on another thread or re-entrantly; only code that makes sound does: `playStream`, `setPostMix`). The C API's callbacks are called from this list, inside `ambience_update`.
    @discardableResult
    public func update() -> [AudioEvent] {
        TerminationWatch.shared.finishIfSignalled()
        pollMonitors()
        if !isOffline {
            let now = mixer.framesRendered.count
            let delta = state.withLock { state in
                let delta = now - state.lastTickFrame
                state.lastTickFrame = now
                return delta
            }
            mixer.tick(frames: delta)
        }
        var events = mixer.drainEvents().map { event -> AudioEvent in
            switch event {
            case .voiceFinished(let v): .voiceFinished(v)
            case .voiceStolen(let v): .voiceStolen(v)
            }
        }
        events += musicPlayer.drainEvents().map(AudioEvent.music)
        if let desktop = desktopLink?.connection {
            events += systemMusicPlayer.handle(desktop.client.drainEvents()).map(AudioEvent.systemMusic)
        }
        for library in state.withLock({ $0.libraries }) { events += library.drainEvents().map(AudioEvent.library) }
        events += session.drainNotifications().map(AudioEvent.session)
        if let loss = firstDroppedEvents() { events.insert(loss, at: 0) }
        logSink.deliver()
        return events
    }

    /// `.eventsDropped` the first time any queue has lost an event, else nil. First in its batch: it explains gaps
    /// in what follows.
    private func firstDroppedEvents() -> AudioEvent? {
        // The named list is built only once something was lost: update() asks on every call.
        guard !state.withLock({ $0.reportedDroppedEvents }), anyEventsDropped,
            let (queue, count) = droppedEventsByQueue.first(where: { $0.count > 0 })
        else { return nil }
        state.withLock { $0.reportedDroppedEvents = true }
        Log.warning("events: the \(queue) queue was full and lost \(count) events: call update() every frame")
        return .eventsDropped(queue: queue, count: count)
    }

    /// Where SDL's audio starts on the session bus: nil (its own bus) when the bus answers, else an address where
    /// nothing listens, so that SDL's unbounded join of a frozen bus cannot hang the start (`SDLAudio.startAudio`).
    /// The desktop layer asks; the output layer below it only sets the address.
    @Sendable private static func sessionBusForSDL() -> String? {
        guard let address = DesktopBus.sessionAddress, !DesktopBus.answers(at: address) else { return nil }
        Log.warning("the session bus at \(address) does not answer: SDL's audio starts without it")
        return DesktopBus.nowhere
    }
}
