import AmbiencePlatform

/// Other apps' music players, as the session needs them. The desktop layer (MPRIS) provides the real one.
package protocol OtherPlayers: AnyObject, Sendable {
    /// Names of the players playing right now.
    func playingPlayers() -> [String]
    /// Those of `players` that say they cannot be paused, played or controlled: the session leaves them alone.
    func uncontrollable(_ players: [String]) -> [String]
    func pause(_ players: [String])
    func play(_ players: [String])
    func stop(_ players: [String])
    /// Scales the players' volume (1 restores what it was).
    func duck(_ players: [String], to scale: Double)
}

/// The game's own audio and its output device, as the session's executor drives them. The engine provides it.
/// Each method carries out one action the policy decided; what it may skip is only what is already so (a live
/// stream needs no reopening, music the session did not stop needs no restart).
package protocol SessionOutput: AnyObject, Sendable {
    /// Suspends every voice and stops the music player (`interrupt()` or `pause()` after `reason`).
    func pauseAppAudio(_ reason: SessionAction.PauseReason)
    /// Resumes the voices, and the music player when the session was what stopped it.
    func resumeAppAudio()
    /// Stops what the session paused: every voice not paused by the game is rewound to its start and left paused
    /// (its handle stays valid), and the music player, when the session paused it, is stopped.
    func stopAppAudio()
    func setOutputSilenced(_ silenced: Bool)
    /// Reopens the device on the system default when it is closed or dead. Returns whether the output plays on a
    /// device afterwards (false: nothing opened, it renders to null).
    func followDefaultDevice() -> Bool
    func moveStream(toSink sink: String)
    func renderToNullDevice()
    /// Whether any of the game's audio (voices or music) is playing: what an interruption would stop.
    var isAppAudioPlaying: Bool { get }
    var currentRoute: AudioRoute { get }
}

/// The one place a `SessionAction` reaches the world: app audio and the device through the engine, other players
/// through MPRIS, notifications into the queue `update()` drains. Made for each batch of actions with what the
/// session held when the policy decided them.
struct SessionExecutor {
    let output: SessionOutput?
    let otherPlayers: OtherPlayers?
    let notifications: SessionNotifications

    /// Carries `action` out and returns what doing so revealed, as events for the policy: a device that would not
    /// open is no device left.
    func perform(_ action: SessionAction) -> [SessionEvent] {
        Log.debug("session: \(action)")
        switch action {
        case .pauseAppAudio(let reason): output?.pauseAppAudio(reason)
        case .resumeAppAudio: output?.resumeAppAudio()
        case .stopAppAudio: output?.stopAppAudio()
        case .silenceOutput(let silenced): output?.setOutputSilenced(silenced)
        case .followDefaultDevice:
            guard let output else { break }
            let previous = output.currentRoute
            if !output.followDefaultDevice() {
                Log.warning("output: no device would open after \(previous.name) went; rendering to nothing")
                return [.currentDeviceRemoved(previous: previous, current: nil)]
            }
        case .moveStream(let sink): output?.moveStream(toSink: sink)
        case .renderToNullDevice: output?.renderToNullDevice()
        case .pauseOtherPlayers(let names): otherPlayers?.pause(names)
        case .resumeOtherPlayers(let names): otherPlayers?.play(names)
        case .duckOtherPlayers(let names, let volume): otherPlayers?.duck(names, to: volume)
        case .unduckOtherPlayers(let names): otherPlayers?.duck(names, to: 1)
        case .pauseSystemMusic(let name): otherPlayers?.pause([name])
        case .resumeSystemMusic(let name): otherPlayers?.play([name])
        case .stopSystemMusic(let name): otherPlayers?.stop([name])
        case .notify(let note): notifications.post(note)
        }
        return []
    }
}

/// What the session tells the game, queued until `update()` delivers it.
final class SessionNotifications: Sendable {
    /// Undelivered notifications kept for a game that does not call `update()`. Past it the oldest give way: route
    /// changes, interruptions and hints are state, and the newest says how the session is now.
    static let capacity = 1024
    private let pending = Lock(EventQueue<SessionNotification>(capacity: capacity, overflow: .dropOldest))

    func post(_ note: SessionNotification) { _ = pending.withLock { $0.push(note) } }

    func drain() -> [SessionNotification] { pending.withLock { $0.drain() } }

    /// Notifications lost to a full queue.
    var dropped: Int { pending.withLock { $0.dropped } }
}
