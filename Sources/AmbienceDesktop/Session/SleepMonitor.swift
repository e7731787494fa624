import AmbienceCore
import AmbiencePlatform
import Foundation
import Synchronization

/// Follows logind's `PrepareForSleep` on the system bus, where there is one, and reports it as the session's
/// `prepareForSleep` before the machine sleeps and `wokeFromSleep` after it wakes. The session's policy turns these
/// into an interruption and a `wakeFromSleep` route change.
package final class SleepMonitor: SessionMonitor {
    /// `DBUS_SYSTEM_BUS_ADDRESS`, else the standard system bus socket when it exists.
    package static var systemBusAddress: String? {
        if let address = ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"], !address.isEmpty {
            return address
        }
        let socket = "/run/dbus/system_bus_socket"
        return FileManager.default.fileExists(atPath: socket) ? "unix:path=\(socket)" : nil
    }

    static let logindName = "org.freedesktop.login1"
    static let prepareForSleep = SignalMatch(
        interface: "org.freedesktop.login1.Manager", member: "PrepareForSleep", path: "/org/freedesktop/login1")

    private let thread: DesktopThread
    /// Signals kept until `update()` drains them. Past the cap the oldest give way: the newest says whether the
    /// machine is asleep now.
    static let signalCapacity = 64
    private let signals = Lock(EventQueue<Bool>(capacity: signalCapacity, overflow: .dropOldest))
    /// Signals after a wake, kept for the next poll (see `poll`).
    private let carried = Lock<[Bool]>([])

    package init(address: String) throws(DesktopError) {
        let connection = try DBusConnection(address: address)
        // Only logind's own signal counts: any process on the bus could send one.
        var owners = BusNameOwners()
        try owners.follow([SleepMonitor.logindName], on: connection)
        try connection.follow(SleepMonitor.prepareForSleep)
        thread = DesktopThread(connection: connection)
        thread.start(name: "ambience.sleep-monitor") { [weak self, owners] in
            var owners = owners
            self?.run(&owners)
        }
    }

    deinit { close() }

    private func run(_ owners: inout BusNameOwners) {
        while thread.isRunning {
            for message in thread.connection.receive(timeout: DesktopBus.listenTimeout) {
                _ = owners.update(with: message)
                guard message.member == SleepMonitor.prepareForSleep.member,
                    message.interface == SleepMonitor.prepareForSleep.interface,
                    owners.isFromOwner(of: SleepMonitor.logindName, message),
                    let sleeping = message.arguments.first?.bool
                else { continue }
                _ = signals.withLock { $0.push(sleeping) }
            }
        }
    }

    package var name: String { "sleep monitor" }

    /// Each signal since the last poll, oldest first: a sleep carries whether the game made sound, a wake the route.
    /// A poll ends with the first wake: a sleep after it must be judged once the session has handled that wake (it
    /// may resume the audio the earlier sleep paused), so it waits for the next poll.
    package func poll(_ context: MonitorContext) -> [SessionEvent] {
        let due = carried.withLock { carried in
            let all = carried + drain()
            let end = all.firstIndex(of: false).map { $0 + 1 } ?? all.count
            carried = Array(all[end...])
            return Array(all[..<end])
        }
        return due.map { sleeping in
            sleeping
                ? .prepareForSleep(appAudioPlaying: context.appAudioPlaying())
                : .wokeFromSleep(current: context.currentRoute())
        }
    }

    /// `true` for "going to sleep", `false` for "woke up", oldest first.
    private func drain() -> [Bool] { signals.withLock { $0.drain() } }

    /// Signals lost to a full queue.
    package var droppedEvents: Int { signals.withLock { $0.dropped } }

    /// Stops the thread and closes the connection. Signals already queued are still polled.
    package func close() { thread.stop() }
}
