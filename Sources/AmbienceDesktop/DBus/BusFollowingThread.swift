import AmbiencePlatform
import Synchronization

/// A thread that listens on a bus it connects to itself, and connects again whenever the bus goes or does not
/// answer. The caller never waits for the bus; a bus that is slow at start (a loaded desktop at login) or restarted
/// later is still followed once it answers. For monitors that only listen, such as the screen lock's.
final class BusFollowingThread: Sendable {
    /// The bound of one connection attempt, and of the calls a follower makes to set itself up. This is the
    /// monitor's own thread, not the game's, so it can wait longer than `DesktopBus.defaultTimeout`.
    static let setupTimeout: Duration = .seconds(2)
    /// The wait before the next attempt, in seconds: doubled after each attempt, from the first to at most the last.
    static let retryWaits = (first: 0.25, longest: 8.0)
    /// A follower that kept its connection this long had the bus answer; the waits start again from the first.
    static let settledSeconds = 10.0

    private let address: String
    private let stopped = Atomic<Bool>(false)
    /// The connection being followed, for `stop()` to wake (a class, so the thread can share it).
    private final class Current: Sendable { let connection = Lock<DBusConnection?>(nil) }
    private let current = Current()
    private let worker = Lock<WorkerThread?>(nil)

    /// Nothing runs until `start(name:follow:)`.
    init(address: String) { self.address = address }

    /// Starts the thread. `follow` runs with each new connection; it loops while `isFollowing(connection)`, and
    /// returns when that turns false or when its setup failed, after which the thread waits and connects again.
    func start(name: String, follow: @escaping @Sendable (DBusConnection) -> Void) {
        let thread = WorkerThread(name: name) { [address, current] control in
            var wait = Self.retryWaits.first
            while !control.isStopRequested {
                if let connection = try? DBusConnection(address: address, timeout: Self.setupTimeout) {
                    current.connection.withLock { $0 = connection }
                    let since = ContinuousClock.now
                    if !control.isStopRequested { follow(connection) }
                    current.connection.withLock { $0 = nil }
                    connection.close()
                    if ContinuousClock.now - since > .seconds(Self.settledSeconds) { wait = Self.retryWaits.first }
                }
                control.wait(seconds: wait)
                wait = min(wait * 2, Self.retryWaits.longest)
            }
        }
        worker.withLock { $0 = thread }
    }

    deinit { stop() }

    /// Not stopped, and `connection` still has its bus.
    func isFollowing(_ connection: DBusConnection) -> Bool {
        !stopped.load(ordering: .acquiring) && connection.isConnected
    }

    /// Stops the follower (it returns within its bounded wait) and joins the thread. Only the first call does
    /// anything.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        current.connection.withLock { $0 }?.wake()
        worker.withLock { worker in
            defer { worker = nil }; return worker
        }?.stop()
    }
}
