import CDBus
import Dispatch
import Foundation
import Synchronization

extension DBusConnection {
    /// Opens a private connection on a helper thread, so a connect that hangs (an unreachable TCP host, a frozen
    /// daemon whose listen queue is full) costs the caller `timeout` and no more; a connection that arrives after
    /// that is closed by the helper. While one helper is still stuck on an address, a new attempt there fails at
    /// once instead of leaving another thread stuck beside it.
    static func open(_ address: String, within timeout: Duration, _ libdbus: LibDBus) throws(DesktopError)
        -> OpaquePointer
    {
        guard OpenAttempt.stuck.withLock({ $0.insert(address).inserted }) else {
            throw .busUnavailable("\(address): an earlier connect there has not returned")
        }
        let attempt = OpenAttempt(libdbus)
        let thread = Thread {
            attempt.run(address)
            _ = OpenAttempt.stuck.withLock { $0.remove(address) }
        }
        thread.name = "ambience.dbus-connect"
        thread.start()
        _ = attempt.done.wait(timeout: .now() + .milliseconds(Int(milliseconds(timeout))))
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
    /// The addresses a helper thread is connecting to now.
    static let stuck = Lock<Set<String>>([])

    let done = DispatchSemaphore(value: 0)
    private let libdbus: LibDBus
    private let state = Lock<(outcome: Outcome?, abandoned: Bool)>((nil, false))

    init(_ libdbus: LibDBus) { self.libdbus = libdbus }

    func run(_ address: String) {
        var error = DBusError()
        libdbus.dbus_error_init(&error)
        defer { libdbus.dbus_error_free(&error) }
        let outcome: Outcome
        if let connection = libdbus.dbus_connection_open_private(address, &error) {
            outcome = .success(ConnectionBox(connection))
        } else {
            outcome = .failure(error.message.map { String(cString: $0) } ?? "cannot connect")
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
