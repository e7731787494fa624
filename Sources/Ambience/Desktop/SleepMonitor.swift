import Foundation
import Synchronization

/// Follows logind's `PrepareForSleep` on the system bus, where there is one: `true` before the machine sleeps,
/// `false` after it wakes. The session turns these into an interruption and a `wakeFromSleep` route change.
final class SleepMonitor: Sendable {
    /// `DBUS_SYSTEM_BUS_ADDRESS`, else the standard system bus socket when it exists.
    static var systemBusAddress: String? {
        if let address = ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"], !address.isEmpty { return address }
        let socket = "/run/dbus/system_bus_socket"
        return FileManager.default.fileExists(atPath: socket) ? "unix:path=\(socket)" : nil
    }

    static let matchRule = "type='signal',interface='org.freedesktop.login1.Manager',member='PrepareForSleep',path='/org/freedesktop/login1'"

    private let connection: DBusConnection
    private let signals = Lock<[Bool]>([])
    private let running = Atomic<Bool>(true)
    private let finished = Lock<Bool>(false)

    init(address: String) throws(DesktopError) {
        connection = try DBusConnection(address: address)
        try connection.addMatch(SleepMonitor.matchRule)
        let thread = Thread { [weak self] in self?.run() }
        thread.name = "ambience.sleep-monitor"
        thread.start()
    }

    deinit { close() }

    private func run() {
        while running.load(ordering: .relaxed) && connection.isConnected {
            for message in connection.receive(timeout: .milliseconds(200))
            where message.member == "PrepareForSleep" && message.interface == "org.freedesktop.login1.Manager" {
                if let sleeping = message.arguments.first?.bool { signals.withLock { if $0.count < 64 { $0.append(sleeping) } } }
            }
        }
        finished.withLock { $0 = true }
    }

    /// `true` for "going to sleep", `false` for "woke up", oldest first.
    func drain() -> [Bool] {
        signals.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }

    func close() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        connection.wake()
        let deadline = ContinuousClock.now + .seconds(1)
        while !finished.withLock({ $0 }) && ContinuousClock.now < deadline { usleep(1_000) }
        connection.close()
    }
}
