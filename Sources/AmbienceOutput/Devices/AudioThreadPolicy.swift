import AmbiencePlatform

/// What the engine asks for its output's audio thread: a raised nice level by default; real time only when the game
/// asks, since a real-time thread that runs too long without blocking is dropped (or killed) by the kernel's
/// RLIMIT_RTTIME, and a game may not want rtkit's real time at all (README, "Real-time priority", has the figures).
///
/// `AMBIENCE_REALTIME` decides first: `0` is `unchanged` (for a debugger), `1` is `realtime`; unset or any other
/// value leaves the configuration's choice.
public enum AudioThreadPolicy: String, Sendable, Equatable, CaseIterable {
    /// Nothing is asked: the thread runs as its creator (SDL, libpulse) left it.
    case unchanged
    /// A raised nice level: rtkit's `MakeThreadHighPriority` at its `MinNiceLevel`, else the kernel's nice −20 (what
    /// SDL asks for its own audio thread). No real time, so no SIGXCPU handler is installed.
    case raised
    /// The raised nice level, then real time on top (SCHED_RR 4, from rtkit, else the kernel) with a SIGXCPU handler
    /// that drops the thread back to its nice level if it runs half RLIMIT_RTTIME without blocking.
    case realtime

    /// The policy applied: `AMBIENCE_REALTIME` (read through `environment`) over `chosen`.
    package static func effective(
        _ chosen: AudioThreadPolicy, environment: (String) -> String? = ProcessEnvironment.value
    ) -> AudioThreadPolicy {
        switch environment("AMBIENCE_REALTIME") {
        case "0": .unchanged
        case "1": .realtime
        default: chosen
        }
    }
}
