import AmbienceCore
import CDBus

/// One method call of a batch (`DBusConnection.callAll`).
struct DBusCall: Sendable {
    var destination: String?
    var path: String
    var interface: String?
    var member: String
    var arguments: [DBusValue] = []
}

extension LibDBus {
    /// Sends every call, then waits for all their replies together, never past `timeout`: peers that do not answer
    /// cost one timeout between them, not one each. Returns one result per call, in order.
    ///
    /// Not `dbus_connection_send_with_reply_and_block`: it first flushes the outgoing queue with no timeout at all,
    /// and until authentication completes nothing can be flushed, so a socket that accepts but never speaks would
    /// hold it forever. Here every wait is a `dbus_connection_read_write` bounded by what is left of the timeout,
    /// which also carries the authentication along. Dispatching completes a call once its reply is read; any other
    /// message dispatched meanwhile goes through the filter into the inbox, as in `receive`.
    func callAll(on connection: OpaquePointer, _ calls: [DBusCall], timeout: Duration)
        -> [Result<[DBusValue], DesktopError>]
    {
        let deadline = ContinuousClock.now + timeout
        var results = [Result<[DBusValue], DesktopError>](repeating: .failure(.busClosed), count: calls.count)
        var pending: [(index: Int, call: OpaquePointer)] = []
        defer { for entry in pending { dbus_pending_call_unref(entry.call) } }
        for (index, call) in calls.enumerated() {
            do throws(DesktopError) {
                pending.append((index, try send(call, on: connection)))
            } catch {
                results[index] = .failure(error)
            }
        }
        func waiting() -> Bool { pending.contains { dbus_pending_call_get_completed($0.call) == 0 } }
        while waiting() {
            let left = deadline - .now
            guard left > .zero else { break }
            if dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS {
                _ = dbus_connection_dispatch(connection)
                continue
            }
            // Zero: disconnected. The next dispatch-status check completes the calls with error replies.
            if dbus_connection_read_write(connection, max(DBusConnection.milliseconds(left), 1)) == 0,
                dbus_connection_get_dispatch_status(connection) != DBUS_DISPATCH_DATA_REMAINS
            {
                break
            }
        }
        let connected = dbus_connection_get_is_connected(connection) != 0
        for (index, pendingCall) in pending {
            let call = calls[index]
            guard dbus_pending_call_get_completed(pendingCall) != 0,
                let reply = dbus_pending_call_steal_reply(pendingCall)
            else {
                dbus_pending_call_cancel(pendingCall)
                results[index] = .failure(
                    connected ? .noReply(call.member, call.destination ?? "(no destination)") : .busClosed)
                continue
            }
            defer { dbus_message_unref(reply) }
            results[index] = Result { () throws(DesktopError) in
                try arguments(ofReply: reply, to: call, connected: connected)
            }
        }
        return results
    }

    /// Sends one call expecting a reply; the pending call is the caller's to unref.
    private func send(_ call: DBusCall, on connection: OpaquePointer) throws(DesktopError) -> OpaquePointer {
        let message = try makeMethodCall(
            destination: call.destination, path: call.path, interface: call.interface, member: call.member,
            arguments: call.arguments)
        defer { dbus_message_unref(message) }
        var pendingCall: OpaquePointer?
        // An infinite libdbus timeout: the deadline is kept here (libdbus's own only fires inside its blocking calls).
        guard dbus_connection_send_with_reply(connection, message, &pendingCall, Int32.max) != 0,
            let pendingCall  // nil: the connection is closed
        else { throw .busClosed }
        return pendingCall
    }

    /// A reply's arguments, or the error it carries.
    private func arguments(ofReply reply: OpaquePointer, to call: DBusCall, connected: Bool) throws(DesktopError)
        -> [DBusValue]
    {
        let arguments = readArguments(reply)
        guard dbus_message_get_type(reply) != DBUS_MESSAGE_TYPE_ERROR else {
            if !connected { throw .busClosed }
            let name =
                dbus_message_get_error_name(reply).map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
            throw .remoteError(name: name, message: arguments?.first?.string ?? "")
        }
        guard let arguments else { throw .overLimits("the reply to \(call.member)") }
        return arguments
    }
}
