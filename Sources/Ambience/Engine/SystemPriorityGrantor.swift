import AmbienceCore
import AmbienceDesktop
import AmbienceOutput
import AmbiencePlatform

/// rtkit on the system bus, and the kernel: what the engine hands its outputs to raise their audio threads
/// (`AudioThreadRaise`), so that the output layer needs no D-Bus. The bus is
/// `EngineConfiguration.systemBusAddress`; without one rtkit is not asked, and the kernel alone decides.
struct SystemPriorityGrantor: PriorityGranting {
    /// rtkit on the system bus, connected when the grantor is made (on the thread that asks), or why not.
    private let rtkit: Result<RealtimeKit, DesktopError>

    /// Connects to rtkit on `systemBus`; nil asks no rtkit.
    init(systemBus: String?) {
        guard let systemBus else {
            rtkit = .failure(.busUnavailable("no system bus (EngineConfiguration.systemBusAddress is nil)"))
            return
        }
        rtkit = Result { () throws(DesktopError) in try RealtimeKit(address: systemBus) }
    }

    func rtkitLimits() throws(DesktopError) -> ThreadScheduling.Limits { try rtkit.get().limits() }

    func rtkitRealtime(thread: Int32, priority: Int) throws(DesktopError) {
        let rtkit = try rtkit.get()
        try RealtimeWatchdog.raise(
            thread: thread,
            unwatched: { DesktopError.unsupported("no SIGXCPU watchdog for a real-time thread (\($0))") },
            makeRealtime: { () throws(DesktopError) in try rtkit.makeRealtime(thread: thread, priority: priority) })
    }

    func rtkitHighPriority(thread: Int32, level: Int) throws(DesktopError) {
        try rtkit.get().makeHighPriority(thread: thread, level: level)
    }
}
