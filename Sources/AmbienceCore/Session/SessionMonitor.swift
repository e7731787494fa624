/// Something outside the game that the session must hear about: the sound server (routes and cork requests),
/// logind's sleep, the screen lock, the session bus going and coming back. It only observes: what it saw comes out
/// of `poll` as the session's events, and the policy (`SessionPolicy`) decides what to do about them.
package protocol SessionMonitor: AnyObject, Sendable {
    /// Names its queue in `AudioEvent.eventsDropped` and the dropped-events warning ("sound server", "sleep
    /// monitor", …).
    var name: String { get }
    /// What happened since the last poll, oldest first. Called by `update()` on the game thread. Usually it only
    /// drains a queue; a lost connection is closed here, each call bounded by the desktop's timeout.
    func poll(_ context: MonitorContext) -> [SessionEvent]
    /// Observations lost to a full queue because `update()` came too rarely.
    var droppedEvents: Int { get }
    /// Stops listening; what was already queued may still be polled. Idempotent; any thread.
    func close()
}

/// What a monitor may ask while it turns observations into events, for one `update()`.
package struct MonitorContext: Sendable {
    /// Whether the game makes sound now (a cork request and a sleep carry it). Asked only when an event needs it.
    package var appAudioPlaying: @Sendable () -> Bool
    /// Where the output goes now (a wake carries it). Asked only when an event needs it.
    package var currentRoute: @Sendable () -> AudioRoute
    /// Whether this `update()` takes the costly look at the output (the sound server's streams, SDL's device): the
    /// server has news, or the last look is `AudioEngine.deviceLookIntervalNanoseconds` old. A monitor that only
    /// drains a queue ignores it.
    package var isLookDue: Bool

    package init(
        appAudioPlaying: @escaping @Sendable () -> Bool, currentRoute: @escaping @Sendable () -> AudioRoute,
        isLookDue: Bool
    ) {
        self.appAudioPlaying = appAudioPlaying
        self.currentRoute = currentRoute
        self.isLookDue = isLookDue
    }
}
