import AmbienceCore
import AmbiencePlatform
import CDBus
import Dispatch
import Foundation
import Synchronization

extension DBusConnection {
    /// Opens a private connection on a helper thread, so a connect that hangs (an unreachable TCP host, a frozen
    /// daemon whose listen queue is full) costs the caller `timeout` and no more; a connection that arrives after
    /// that is closed by the helper.
    ///
    /// One connect at a time per address: an attempt behind another waits for it within its own `timeout`, so two
    /// monitors connecting at once both succeed (refusing the second, as before, failed under load as if the bus
    /// were stuck). While a helper whose caller gave up is still in `connect()`, a new attempt fails at once instead
    /// of leaving another thread stuck beside it.
    static func open(_ address: String, within timeout: Duration, _ libdbus: LibDBus) throws(DesktopError)
        -> OpaquePointer
    {
        let (seconds, attoseconds) = timeout.components
        let deadline = monotonicDeadline(afterSeconds: Double(seconds) + Double(attoseconds) / 1e18)
        let attempt = OpenAttempt(libdbus, address: address)
        while true {
            // Checked before the lane is taken: a caller out of time must start no connect, which it would abandon
            // at once, refusing every caller after it while it lasted.
            guard monotonicNanoseconds() < deadline else {
                throw .busUnavailable("\(address): no answer within \(timeout) (behind an earlier connect)")
            }
            let ahead = OpenAttempt.lanes.withLock { lanes -> OpenAttempt? in
                if let current = lanes[address] { return current }
                lanes[address] = attempt
                return nil
            }
            guard let ahead else { break }
            if ahead.isAbandoned {
                throw .busUnavailable("\(address): an earlier connect there has not returned")
            }
            sleep(milliseconds: 5)
        }
        guard WorkerThread.detached(name: "ambience.dbus-connect", { attempt.run() }) else {
            OpenAttempt.lanes.withLock { lanes in
                if lanes[address] === attempt { lanes[address] = nil }
            }
            throw .busUnavailable("\(address): no thread to connect on")
        }
        let left = max(deadline - monotonicNanoseconds(), 0)
        _ = attempt.done.wait(timeout: .now() + .nanoseconds(left))
        switch attempt.take() {
        case .some(.success(let box)): return box.pointer
        case .some(.failure(let reason)): throw .busUnavailable("\(address): \(reason)")
        case nil: throw .busUnavailable("\(address): no answer within \(timeout)")
        }
    }
}

/// A raw libdbus connection handed from one thread to another.
final class ConnectionBox: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}

/// One connect attempt, shared by the caller (who may give up) and the helper thread (which may finish late).
private final class OpenAttempt: Sendable {
    enum Outcome: Sendable {
        case success(ConnectionBox)
        case failure(String)
    }
    /// The attempt connecting to each address now: one at a time.
    static let lanes = Lock<[String: OpenAttempt]>([:])

    let done = DispatchSemaphore(value: 0)
    private let libdbus: LibDBus
    private let address: String
    private let state = Lock<(outcome: Outcome?, abandoned: Bool)>((nil, false))

    init(_ libdbus: LibDBus, address: String) {
        self.libdbus = libdbus
        self.address = address
    }

    /// Whether its caller gave up while it was still connecting.
    var isAbandoned: Bool { state.withLock { $0.abandoned } }

    func run() {
        var error = DBusError()
        libdbus.dbus_error_init(&error)
        defer { libdbus.dbus_error_free(&error) }
        let outcome: Outcome
        if let connection = libdbus.dbus_connection_open_private(address, &error) {
            outcome = .success(ConnectionBox(connection))
        } else {
            outcome = .failure(error.message.map { String(cString: $0) } ?? "cannot connect")
        }
        // The lane is free before the outcome is posted: a caller that finds it taken then is behind a connect still
        // in `connect()`, never one that has just returned.
        Self.lanes.withLock { lanes in
            if lanes[address] === self { lanes[address] = nil }
        }
        let late = state.withLock { state -> Bool in
            if state.abandoned { return true }
            state.outcome = outcome
            return false
        }
        if late, case .success(let box) = outcome {
            libdbus.dbus_connection_close(box.pointer)
            libdbus.dbus_connection_unref(box.pointer)
        }
        done.signal()
    }

    /// The outcome, or nil (and the attempt abandoned) when the helper has not finished.
    func take() -> Outcome? {
        state.withLock { state in
            if state.outcome == nil { state.abandoned = true }
            return state.outcome
        }
    }
}
