/// How the game's audio behaves beside other apps' audio (the iOS categories).
///
/// The category does not change what the sound server is told: in every category the game's stream says
/// `media.role=game`, and a cork request from the server (PulseAudio's `module-role-cork`, for a call) interrupts
/// every category alike, as a call interrupts every category on iOS (see `Interruption`).
public enum SessionCategory: String, Sendable, CaseIterable {
    /// Mixes with the user's music; silenced when the game is in the background.
    case ambient
    /// The default: the game's audio alone. Other players are paused at activation and silenced in the background.
    case soloAmbient
    /// Keeps playing in the background. Other players are paused unless `mixWithOthers`.
    case playback
}

/// Modifiers of a category.
public struct SessionOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Playback leaves other players playing.
    public static let mixWithOthers = SessionOptions(rawValue: 1)
    /// Other players are turned down while the session is active (implies mixing with them).
    public static let duckOthers = SessionOptions(rawValue: 2)
}

/// Options for `AudioSession.setActive(_:options:)`.
public struct SetActiveOptions: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// On deactivation, resume the players the session paused.
    public static let notifyOthersOnDeactivation = SetActiveOptions(rawValue: 1)
}

/// An output device as the session sees it.
public struct AudioRoute: Sendable, Equatable, CustomStringConvertible {
    /// The device's human name ("Speakers", "Headphones"), or "none".
    public var name: String
    /// The audio driver ("pulseaudio", "dummy", "offline", "null").
    public var driver: String
    /// The sound server's sink name, when known.
    public var sink: String?
    /// The sink's active port (`analog-output-headphones`), for sinks that have ports: a jack pulled or plugged
    /// changes the port, not the sink. `name` then names both ("Headphones (Built-in Audio)").
    public var port: String?

    /// A route named `name` on `driver`, with the sound server's sink and port when known.
    public init(name: String, driver: String, sink: String? = nil, port: String? = nil) {
        self.name = name
        self.driver = driver
        self.sink = sink
        self.port = port
    }

    /// No device: what the session reports while the engine renders into nothing.
    public static let none = AudioRoute(name: "none", driver: "null")
    public var description: String { sink.map { "\(name) (\($0))" } ?? name }
}

/// Why the route changed (the iOS reasons).
public enum RouteChangeReason: String, Sendable, CaseIterable {
    /// A device appeared: a sink was added, a port became available, or headphones were plugged in and took over.
    /// Nothing is paused.
    case newDeviceAvailable
    /// The device the game played on went away: its sink was removed, or its active port became unavailable (the
    /// headphone jack pulled). App audio is paused until `AudioSession.resumeAfterRouteChange()` or
    /// `AudioSession.stopAfterRouteChange()`.
    case oldDeviceUnavailable
    /// iOS's reason for a category change; a category change here is reported as `categoryChanged` instead.
    case categoryChange
    /// iOS's reason for the app's own choice of output; the engine makes none, so it is never delivered.
    case override
    /// The system woke from sleep; the route is the one the game plays on now.
    case wakeFromSleep
    /// No device is left: the engine renders into nothing so time advances, and an interruption begins (it ends when
    /// a device comes back).
    case noSuitableRouteForCategory
    /// The game's output moved: a new default device, or another port of its device picked in the sound settings.
    /// Nothing is paused.
    case routeConfigurationChange
}

/// A route change notification: why, and from where to where.
public struct RouteChange: Sendable, Equatable {
    /// Why the route changed.
    public var reason: RouteChangeReason
    /// The device the game played on before.
    public var previous: AudioRoute
    /// The device it plays on now (`AudioRoute.none` when there is none).
    public var current: AudioRoute
}

/// An interruption notification.
///
/// Its sources: the game's own `AudioSession.beginInterruption()`, system sleep, the last output device gone, and
/// the sound server's cork request. PulseAudio's `module-role-cork` asks streams of its `cork_roles` to cork while a
/// stream of a `trigger_roles` role (`phone` by default: a call) plays, and to uncork when it ends. The engine's
/// output stream says `media.role=game` in every category, and hears the requests meant for it, so whether a call
/// interrupts the game is the server's setting: the module's default roles (`music`, `video`) leave games alone;
/// `cork_roles=music,video,game` (or `any_role`) includes them. PipeWire's PulseAudio server sends no such requests.
public enum Interruption: Sendable, Equatable {
    /// Something took the audio away (the game's own `beginInterruption()`, system sleep, the last device gone, or
    /// the sound server's cork request: a call began). App audio that was playing is paused. An end may never come.
    case began
    /// `shouldResume`: the game may resume what the interruption stopped (the session has already done so). The
    /// game's `endInterruption()`, waking, a device back after none, or the server's uncork request (the call ended)
    /// ends an interruption; an uncork ends only one a cork began.
    case ended(shouldResume: Bool)
}

/// What the session tells the game, delivered by `AudioEngine.update()`.
public enum SessionNotification: Sendable, Equatable {
    /// The route changed: why, and from which device to which.
    case routeChange(RouteChange)
    /// An interruption began or ended.
    case interruption(Interruption)
    /// Another app's music started (`true`) or stopped: the game may mute its own soundtrack but keep its effects.
    case silenceSecondaryAudioHint(Bool)
    /// `AudioSession.setCategory(_:options:)` changed the category or its options.
    case categoryChanged(SessionCategory)
    /// A desktop service went away. The engine carries on without it and reconnects by itself.
    case mediaServicesWereLost(MediaService)
    /// The service is back and the engine uses it again (or it appeared only after the engine started).
    case mediaServicesWereReset(MediaService)
}

/// The desktop services the engine depends on.
public enum MediaService: String, Sendable, Equatable {
    /// PulseAudio (or PipeWire's PulseAudio server): devices, route changes, other apps' streams.
    case soundServer
    /// The D-Bus session bus: other music players (MPRIS), the system music player, the game's own MPRIS player.
    case sessionBus
}
