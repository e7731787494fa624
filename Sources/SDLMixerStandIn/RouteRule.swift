import Ambience
import Glibc

// The output going away (issue #33: "the program's sound pauses; it comes back when that output returns, or when the
// user picks another one"). The engine's session pauses app audio on `oldDeviceUnavailable` and waits for the game's
// answer (`resumeAfterRouteChange` or `stopAfterRouteChange`), which a game shows as an alert. An SDL_mixer program
// knows nothing of routes and cannot answer, so the stand-in answers for it, on the update thread: Resume, once the
// output that went away is listed again (`newDeviceAvailable` with its sink back), or once the user has picked another
// output (`routeConfigurationChange` to a route other than the one the session fell back to). Until then the program
// plays on into silence, as it would with the speakers unplugged. Each pause and resume is one line on stderr.

/// What the update thread remembers between route changes.
struct RouteRule {
    /// The output that went away, and the one the engine fell back to, while the session waits for an answer.
    private var lost: (gone: AudioRoute, fallback: AudioRoute)?

    /// Looks at one `update()`'s events and answers the session when the rule says so.
    mutating func observe(_ events: [AudioEvent], engine: AudioEngine) {
        for case .session(.routeChange(let change)) in events {
            switch change.reason {
            case .oldDeviceUnavailable:
                lost = (change.previous, change.current)
                announce(
                    "\(change.previous) went away: sound paused until it returns or another output is picked")
            case .newDeviceAvailable, .routeConfigurationChange:
                guard let (gone, fallback) = lost, engine.session.isPausedForRouteChange else {
                    lost = nil
                    continue
                }
                let returned = engine.outputDevices.contains { $0.sink != nil && $0.sink == gone.sink }
                let picked = change.reason == .routeConfigurationChange && change.current != fallback
                guard returned || picked else { continue }
                lost = nil
                engine.session.resumeAfterRouteChange()
                announce(
                    returned
                        ? "\(gone) is back: sound resumed on \(engine.session.currentRoute)"
                        : "\(change.current) was picked: sound resumed on it")
            default:
                continue
            }
        }
    }
}
