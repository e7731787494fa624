import CDBus
import Dispatch
import Foundation
import Synchronization

/// A private connection to a D-Bus bus. The only file in the engine that calls libdbus.
///
/// libdbus-1 is not linked: it is opened the first time a connection is made (`library`), and every call goes
/// through its function table, looked up once. Without it, connecting throws `libraryUnavailable` and the engine
/// runs as with no bus.
///
/// Threads: every method may be called from any thread. One lock serializes use of the libdbus connection, and
/// `call` holds it while it waits for its reply (at most its timeout), so the intended shape is one owning
/// "desktop thread" that calls `receive` in a loop and does the blocking calls, while other threads only `wake()`
/// it (which takes no lock) after queuing work for it. `receive` waits in `poll` *without* the lock.
///
/// Nothing blocks without a bound. Opening the connection, authenticating and registering with the bus (`Hello`)
/// share one timeout; the connect itself runs on a helper thread, so even an unreachable TCP address cannot hold the
/// caller. Every call waits at most its own timeout (see `call(on:…)` for why that is not libdbus's blocking call).
/// Match rules and name requests are ordinary calls with a timeout (the `dbus_bus_*` helpers would wait up to
/// libdbus's 25-second default).
///
/// Incoming messages reach Swift through one connection filter (a captureless C function with the connection as
/// unretained userdata), which only decodes and queues them when `receive` (or a `call` waiting for its reply)
/// dispatches: handlers run later, on the owner's thread, outside libdbus and outside the lock, and may use the
/// connection freely. Method calls to paths not exported here are
/// left to libdbus, which answers them with `UnknownMethod` (and answers `org.freedesktop.DBus.Peer` itself).
final class DBusConnection: @unchecked Sendable {
    /// The bus-assigned unique name (":1.42").
    let uniqueName: String
    private let lock = Lock<Void>(())
    // Guarded by `lock`.
    private var connection: OpaquePointer?
    private var inbox: [DBusMessage] = []
    private var exportedPaths: Set<String> = []
    /// A pipe that interrupts `receive`'s wait: [read end, write end], both non-blocking.
    private let wakePipe: (read: Int32, write: Int32)
    /// libdbus's functions (a connection exists only once they loaded).
    fileprivate let libdbus: LibDBus

    private static let daemon = "org.freedesktop.DBus"
    private static let daemonPath = "/org/freedesktop/DBus"

    /// libdbus-1, opened the first time it is needed. Without it the engine has no desktop integration (MPRIS,
    /// sleep and screen lock), as with no bus. Once loaded, libdbus is told, before any other use, that several
    /// threads may use it.
    static let library = OptionalLibrary<LibDBus>(
        name: "libdbus-1.so.3", feature: "desktop integration (MPRIS players, sleep and screen lock)",
        names: String(cString: ambience_dbus_function_names()),
        then: { $0.dbus_threads_init_default() != 0 ? nil : "libdbus could not set up its thread locks" })

    /// The table, or `libraryUnavailable` saying why there is none.
    private static func loadedLibrary(for what: String, from library: OptionalLibrary<LibDBus> = library)
        throws(DesktopError) -> LibDBus
    {
        do throws(SharedLibraryError) { return try library.functions() } catch {
            throw .libraryUnavailable("\(what): \(error)")
        }
    }

    /// Connects to the bus at `address` and registers (`Hello`), all within `timeout`.
    /// Throws `busUnavailable` when the address is missing, is an `autolaunch:` address, or nothing answers there,
    /// and `libraryUnavailable` when `library` (libdbus-1) could not be loaded.
    init(
        address: String?, timeout: Duration = DesktopBus.defaultTimeout,
        library: OptionalLibrary<LibDBus> = DBusConnection.library
    ) throws(DesktopError) {
        let libdbus = try DBusConnection.loadedLibrary(for: address ?? "the session bus", from: library)
        guard let address, !address.isEmpty else { throw .busUnavailable("DBUS_SESSION_BUS_ADDRESS is not set") }
        guard !address.hasPrefix("autolaunch:") else {
            throw .busUnavailable("\(address): autolaunch addresses are not used")
        }
        let deadline = ContinuousClock.now + timeout
        let raw = try DBusConnection.open(address, within: timeout, libdbus)
        libdbus.dbus_connection_set_exit_on_disconnect(raw, 0)
        let name: String
        do throws(DesktopError) {
            let left = max(deadline - .now, .milliseconds(1))
            let reply = try libdbus.call(
                on: raw, destination: DBusConnection.daemon, path: DBusConnection.daemonPath,
                interface: DBusConnection.daemon, member: "Hello", arguments: [], timeout: left)
            guard let unique = reply.first?.string else { throw .unexpectedReply("Hello", reply) }
            name = unique
        } catch {
            libdbus.dbus_connection_close(raw)
            libdbus.dbus_connection_unref(raw)
            throw .busUnavailable("\(address): \(error)")
        }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            libdbus.dbus_connection_close(raw)
            libdbus.dbus_connection_unref(raw)
            throw .busUnavailable("cannot make a wake-up pipe (errno \(errno))")
        }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakePipe = (fds[0], fds[1])
        self.libdbus = libdbus
        uniqueName = name
        connection = raw
        // Messages that arrived during Hello wait in libdbus's queue until the first dispatch, when the filter exists.
        _ = libdbus.dbus_connection_add_filter(raw, connectionFilter, Unmanaged.passUnretained(self).toOpaque(), nil)
    }

    deinit {
        if let connection {
            libdbus.dbus_connection_close(connection)
            libdbus.dbus_connection_unref(connection)
        }
        Glibc.close(wakePipe.read)
        Glibc.close(wakePipe.write)
    }

    /// Closes the connection. Later calls throw `busClosed`; `receive` returns nothing.
    func close() {
        lock.withLock { _ in
            guard let connection else { return }
            libdbus.dbus_connection_close(connection)
            libdbus.dbus_connection_unref(connection)
            self.connection = nil
        }
        wake()
    }

    var isConnected: Bool {
        lock.withLock { _ in connection.map { libdbus.dbus_connection_get_is_connected($0) != 0 } ?? false }
    }

    // MARK: Calls

    /// Calls a method and waits for its reply, at most `timeout`. Returns the reply's arguments.
    func call(
        destination: String?, path: String, interface: String?, member: String, arguments: [DBusValue] = [],
        timeout: Duration = DesktopBus.defaultTimeout
    ) throws(DesktopError) -> [DBusValue] {
        let reply = try lock.withLock { _ throws(DesktopError) -> [DBusValue] in
            guard let connection else { throw .busClosed }
            return try libdbus.call(
                on: connection, destination: destination, path: path, interface: interface,
                member: member, arguments: arguments, timeout: timeout)
        }
        wakeIfMessagesQueued()
        return reply
    }

    /// Sends a method call flagged no-reply-expected and returns at once.
    func send(destination: String?, path: String, interface: String?, member: String, arguments: [DBusValue] = [])
        throws(DesktopError)
    {
        let message = try libdbus.makeMethodCall(
            destination: destination, path: path, interface: interface,
            member: member, arguments: arguments)
        defer { libdbus.dbus_message_unref(message) }
        libdbus.dbus_message_set_no_reply(message, 1)
        try enqueue(message)
    }

    /// Broadcasts a signal.
    func emitSignal(path: String, interface: String, member: String, arguments: [DBusValue] = []) throws(DesktopError) {
        try libdbus.check(path: path, interface: interface, member: member)
        guard let message = libdbus.dbus_message_new_signal(path, interface, member) else {
            throw .notValidOnDBus("signal \(interface).\(member)")
        }
        defer { libdbus.dbus_message_unref(message) }
        try libdbus.append(arguments, to: message)
        try enqueue(message)
    }

    /// Answers a method call that `receive` delivered. Does nothing when the caller wants no reply.
    func reply(to call: DBusMessage, with values: [DBusValue] = []) throws(DesktopError) {
        guard call.kind == .methodCall, call.expectsReply else { return }
        guard let message = libdbus.dbus_message_new(DBUS_MESSAGE_TYPE_METHOD_RETURN) else {
            throw .notValidOnDBus("reply")
        }
        defer { libdbus.dbus_message_unref(message) }
        try libdbus.address(message, asReplyTo: call)
        try libdbus.append(values, to: message)
        try enqueue(message)
    }

    /// Answers a method call with a D-Bus error (`name` like `org.freedesktop.DBus.Error.InvalidArgs`).
    func replyError(to call: DBusMessage, name: String, message text: String) throws(DesktopError) {
        guard call.kind == .methodCall, call.expectsReply else { return }
        guard libdbus.dbus_validate_error_name(name, nil) != 0 else { throw .notValidOnDBus("error name \(name)") }
        guard let message = libdbus.dbus_message_new(DBUS_MESSAGE_TYPE_ERROR) else {
            throw .notValidOnDBus("error reply")
        }
        defer { libdbus.dbus_message_unref(message) }
        _ = libdbus.dbus_message_set_error_name(message, name)
        try libdbus.address(message, asReplyTo: call)
        try libdbus.append([.string(text)], to: message)
        try enqueue(message)
    }

    // MARK: The bus daemon

    /// Asks the bus to route signals matching `rule` to this connection.
    func addMatch(_ rule: String, timeout: Duration = DesktopBus.defaultTimeout) throws(DesktopError) {
        _ = try callDaemon("AddMatch", [.string(rule)], timeout: timeout)
    }

    /// Takes a well-known name, without queueing for it. Returns false when another connection owns it.
    func requestName(_ name: String, timeout: Duration = DesktopBus.defaultTimeout) throws(DesktopError) -> Bool {
        guard libdbus.dbus_validate_bus_name(name, nil) != 0, !name.hasPrefix(":") else {
            throw .notValidOnDBus("bus name \(name)")
        }
        let reply = try callDaemon(
            "RequestName", [.string(name), .uint32(UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE))], timeout: timeout)
        switch reply.first?.integer {
        case Int64(DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER), Int64(DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER): return true
        case .some: return false
        case nil: throw .unexpectedReply("RequestName \(name)", reply)
        }
    }

    /// Every name on the bus (unique names included).
    func listNames(timeout: Duration = DesktopBus.defaultTimeout) throws(DesktopError) -> [String] {
        let reply = try callDaemon("ListNames", [], timeout: timeout)
        guard let names = reply.first?.strings else { throw .unexpectedReply("ListNames", reply) }
        return names
    }

    /// The unique name that owns `name`. Throws `remoteError(NameHasNoOwner)` when nobody does.
    func nameOwner(_ name: String, timeout: Duration = DesktopBus.defaultTimeout) throws(DesktopError) -> String {
        let reply = try callDaemon("GetNameOwner", [.string(name)], timeout: timeout)
        guard let owner = reply.first?.string else { throw .unexpectedReply("GetNameOwner \(name)", reply) }
        return owner
    }

    /// The process ID of the connection that owns `name`.
    func processID(of name: String, timeout: Duration = DesktopBus.defaultTimeout) throws(DesktopError) -> Int {
        let reply = try callDaemon("GetConnectionUnixProcessID", [.string(name)], timeout: timeout)
        guard let pid = reply.first?.integer else {
            throw .unexpectedReply("GetConnectionUnixProcessID \(name)", reply)
        }
        return Int(pid)
    }

    private func callDaemon(_ member: String, _ arguments: [DBusValue], timeout: Duration) throws(DesktopError)
        -> [DBusValue]
    {
        try call(
            destination: DBusConnection.daemon, path: DBusConnection.daemonPath, interface: DBusConnection.daemon,
            member: member, arguments: arguments, timeout: timeout)
    }

    // MARK: Receiving

    /// Delivers method calls for `path` through `receive` (instead of libdbus answering `UnknownMethod`).
    func export(path: String) throws(DesktopError) {
        guard libdbus.dbus_validate_path(path, nil) != 0 else { throw .notValidOnDBus("object path \(path)") }
        lock.withLock { _ in _ = exportedPaths.insert(path) }
    }

    /// Returns the signals and method calls (for exported paths) that have arrived. When none are queued, waits for
    /// some, at most `timeout`, or until another thread calls `wake()`. Replies to `call` never come out here.
    func receive(timeout: Duration) -> [DBusMessage] {
        guard
            let (queued, busFD, wantsWrite) = lock.withLock({ _ -> ([DBusMessage], Int32, Bool)? in
                guard let connection else { return nil }
                let queued = dispatchAll(connection)
                var fd: Int32 = -1
                guard libdbus.dbus_connection_get_is_connected(connection) != 0,
                    libdbus.dbus_connection_get_unix_fd(connection, &fd) != 0
                else {
                    return (queued, -1, false)
                }
                return (queued, fd, libdbus.dbus_connection_has_messages_to_send(connection) != 0)
            })
        else { return [] }
        if !queued.isEmpty || busFD < 0 { return queued }

        var fds = [
            pollfd(fd: busFD, events: Int16(POLLIN) | (wantsWrite ? Int16(POLLOUT) : 0), revents: 0),
            pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)
        ]
        _ = poll(&fds, nfds_t(fds.count), DBusConnection.milliseconds(timeout))
        if fds[1].revents != 0 {
            var sink = [UInt8](repeating: 0, count: 64)
            while Glibc.read(wakePipe.read, &sink, sink.count) > 0 {}
        }
        return lock.withLock { _ in
            guard let connection else { return [] }
            // reads what is there, writes what is pending; never waits
            _ = libdbus.dbus_connection_read_write(connection, 0)
            return dispatchAll(connection)
        }
    }

    /// Interrupts a `receive` that is waiting. Any thread; takes no lock.
    func wake() {
        var byte: UInt8 = 1
        _ = Glibc.write(wakePipe.write, &byte, 1)
    }

    /// Runs libdbus's dispatch until its queue is empty; the filter collects into `inbox`. Call with the lock held.
    private func dispatchAll(_ connection: OpaquePointer) -> [DBusMessage] {
        while libdbus.dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
        defer { inbox.removeAll(keepingCapacity: true) }
        return inbox
    }

    /// Called by libdbus inside `dispatchAll` (so with the lock held) for every incoming message.
    /// Returns true when the message is ours to answer.
    fileprivate func filter(_ message: OpaquePointer) -> Bool {
        let decoded = libdbus.decode(message)
        switch decoded.kind {
        case .signal:
            inbox.append(decoded)
            return false
        case .methodCall:
            guard let path = decoded.path, exportedPaths.contains(path) else { return false }
            inbox.append(decoded)
            return true
        case .methodReturn, .error:
            return false  // late replies to calls that timed out, or to no-reply sends
        }
    }

    /// A call reads (and may dispatch) other messages while it waits: the owning thread's `receive` must not sleep
    /// on them.
    private func wakeIfMessagesQueued() {
        let pending = lock.withLock { _ in
            !inbox.isEmpty
                || (connection.map { libdbus.dbus_connection_get_dispatch_status($0) == DBUS_DISPATCH_DATA_REMAINS }
                    ?? false)
        }
        if pending { wake() }
    }

    private func enqueue(_ message: OpaquePointer) throws(DesktopError) {
        try lock.withLock { _ throws(DesktopError) in
            guard let connection, libdbus.dbus_connection_get_is_connected(connection) != 0 else { throw .busClosed }
            guard libdbus.dbus_connection_send(connection, message, nil) != 0 else { throw .busClosed }
        }
        // The owning thread's next `receive` writes whatever the socket did not take at once.
        wake()
    }

    fileprivate static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        let ms = seconds * 1_000 + attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(ms, 0))
    }

    /// Marshals values into a message and reads them back, with no bus involved (so tests can check both directions).
    static func roundTrip(_ values: [DBusValue]) throws(DesktopError) -> [DBusValue] {
        let libdbus = try loadedLibrary(for: "marshalling")
        let message = try libdbus.makeMethodCall(
            destination: "org.ambience.Test", path: "/", interface: "org.ambience.Test",
            member: "RoundTrip", arguments: values)
        defer { libdbus.dbus_message_unref(message) }
        return libdbus.readArguments(message)
    }

    // MARK: Opening

    /// Opens a private connection on a helper thread, so a connect that hangs (an unreachable TCP host) costs the
    /// caller `timeout` and no more; a connection that arrives after that is closed by the helper.
    private static func open(_ address: String, within timeout: Duration, _ libdbus: LibDBus) throws(DesktopError)
        -> OpaquePointer
    {
        let attempt = OpenAttempt(libdbus)
        let thread = Thread { attempt.run(address) }
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

// MARK: libdbus, below the Swift types

/// libdbus's functions, looked up by the names the C target's header lists (CDBus/shim.h). Every libdbus call below
/// goes through this table: inside its extension an unqualified `dbus_...` is the table's field, and elsewhere a
/// connection's `libdbus`.
typealias LibDBus = ambience_dbus_functions

extension LibDBus {
    fileprivate func check(path: String, interface: String?, member: String) throws(DesktopError) {
        guard dbus_validate_path(path, nil) != 0 else { throw .notValidOnDBus("object path \(path)") }
        if let interface, dbus_validate_interface(interface, nil) == 0 {
            throw .notValidOnDBus("interface \(interface)")
        }
        guard dbus_validate_member(member, nil) != 0 else { throw .notValidOnDBus("member \(member)") }
    }

    fileprivate func makeMethodCall(
        destination: String?, path: String, interface: String?, member: String,
        arguments: [DBusValue]
    ) throws(DesktopError) -> OpaquePointer {
        try check(path: path, interface: interface, member: member)
        if let destination, dbus_validate_bus_name(destination, nil) == 0 {
            throw .notValidOnDBus("bus name \(destination)")
        }
        guard let message = dbus_message_new_method_call(destination, path, interface, member) else {
            throw .notValidOnDBus("method call \(member)")
        }
        do throws(DesktopError) {
            try append(arguments, to: message)
        } catch {
            dbus_message_unref(message)
            throw error
        }
        return message
    }

    /// Sends a call and waits for its reply, never past `timeout`.
    ///
    /// Not `dbus_connection_send_with_reply_and_block`: it first flushes the outgoing queue with no timeout at all,
    /// and until authentication completes nothing can be flushed, so a socket that accepts but never speaks would
    /// hold it forever. Here every wait is a `dbus_connection_read_write` bounded by what is left of the timeout,
    /// which also carries the authentication along. Dispatching completes the call once its reply is read; any other
    /// message dispatched meanwhile goes through the filter into the inbox, as in `receive`.
    fileprivate func call(
        on connection: OpaquePointer, destination: String?, path: String, interface: String?,
        member: String, arguments: [DBusValue], timeout: Duration
    ) throws(DesktopError) -> [DBusValue] {
        let deadline = ContinuousClock.now + timeout
        let message = try makeMethodCall(
            destination: destination, path: path, interface: interface, member: member, arguments: arguments)
        defer { dbus_message_unref(message) }
        var pendingCall: OpaquePointer?
        // An infinite libdbus timeout: the deadline is kept here (libdbus's own only fires inside its blocking calls).
        guard dbus_connection_send_with_reply(connection, message, &pendingCall, Int32.max) != 0 else {
            throw .busClosed
        }
        guard let pending = pendingCall else { throw .busClosed }  // the connection is closed
        defer { dbus_pending_call_unref(pending) }
        while dbus_pending_call_get_completed(pending) == 0 {
            let left = deadline - .now
            guard left > .zero else {
                dbus_pending_call_cancel(pending)
                throw .noReply(member, destination ?? "(no destination)")
            }
            if dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS {
                _ = dbus_connection_dispatch(connection)
                continue
            }
            guard dbus_connection_read_write(connection, max(DBusConnection.milliseconds(left), 1)) != 0 else {
                // Disconnected: the next dispatch-status check completes the call with an error reply.
                if dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS
                    || dbus_pending_call_get_completed(pending) != 0
                {
                    continue
                }
                throw .busClosed
            }
        }
        guard let reply = dbus_pending_call_steal_reply(pending) else { throw .busClosed }
        defer { dbus_message_unref(reply) }
        guard dbus_message_get_type(reply) != DBUS_MESSAGE_TYPE_ERROR else {
            if dbus_connection_get_is_connected(connection) == 0 { throw .busClosed }
            let name =
                dbus_message_get_error_name(reply).map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
            throw .remoteError(name: name, message: readArguments(reply).first?.string ?? "")
        }
        return readArguments(reply)
    }

    /// Fills in a reply's reply-serial and destination from the call it answers.
    fileprivate func address(_ reply: OpaquePointer, asReplyTo call: DBusMessage) throws(DesktopError) {
        dbus_message_set_no_reply(reply, 1)
        guard dbus_message_set_reply_serial(reply, call.serial) != 0 else { throw .notValidOnDBus("reply serial") }
        if let sender = call.sender {
            guard dbus_validate_bus_name(sender, nil) != 0 else { throw .notValidOnDBus("bus name \(sender)") }
            _ = dbus_message_set_destination(reply, sender)
        }
    }

    fileprivate func decode(_ message: OpaquePointer) -> DBusMessage {
        func text(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
        let kind: DBusMessage.Kind =
            switch dbus_message_get_type(message) {
            case DBUS_MESSAGE_TYPE_METHOD_CALL: .methodCall
            case DBUS_MESSAGE_TYPE_METHOD_RETURN: .methodReturn
            case DBUS_MESSAGE_TYPE_ERROR: .error
            default: .signal
            }
        return DBusMessage(
            kind: kind, serial: dbus_message_get_serial(message), sender: text(dbus_message_get_sender(message)),
            path: text(dbus_message_get_path(message)),
            interface: text(dbus_message_get_interface(message)), member: text(dbus_message_get_member(message)),
            arguments: readArguments(message),
            expectsReply: dbus_message_get_no_reply(message) == 0)
    }

    // MARK: Marshalling

    /// D-Bus type codes (the header's `DBUS_TYPE_*` are cast macros, which Swift does not import).
    fileprivate enum TypeCode {
        static let invalid: Int32 = 0
        static let byte = code("y"), bool = code("b"), int16 = code("n"), uint16 = code("q"), int32 = code("i")
        static let uint32 = code("u"), int64 = code("x"), uint64 = code("t"), double = code("d"), string = code("s")
        static let objectPath = code("o"), signature = code("g"), unixFD = code("h"), array = code("a")
        static let variant = code("v"), structure = code("r"), dictEntry = code("e")
        static func code(_ c: Unicode.Scalar) -> Int32 { Int32(c.value) }
    }

    fileprivate func readArguments(_ message: OpaquePointer) -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        return readAll(&iter)
    }

    fileprivate func readAll(_ iter: inout DBusMessageIter) -> [DBusValue] {
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iter) != TypeCode.invalid {
            if let value = readValue(&iter) { values.append(value) }
            _ = dbus_message_iter_next(&iter)
        }
        return values
    }

    fileprivate func signature(of iter: inout DBusMessageIter) -> String {
        guard let raw = dbus_message_iter_get_signature(&iter) else { return "" }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }

    /// The value at the iterator, or nil for a type Swift does not carry (a Unix file descriptor).
    fileprivate func readValue(_ iter: inout DBusMessageIter) -> DBusValue? {
        func basic<T>(_ initial: T) -> T {
            var value = initial
            withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iter, UnsafeMutableRawPointer($0)) }
            return value
        }
        func text() -> String {
            let pointer: UnsafePointer<CChar>? = basic(nil)
            return pointer.map { String(cString: $0) } ?? ""
        }
        switch dbus_message_iter_get_arg_type(&iter) {
        case TypeCode.string, TypeCode.signature: return .string(text())
        case TypeCode.objectPath: return .objectPath(text())
        case TypeCode.bool: return .bool(basic(dbus_bool_t(0)) != 0)
        case TypeCode.byte: return .byte(basic(UInt8(0)))
        case TypeCode.int16: return .int32(Int32(basic(Int16(0))))
        case TypeCode.uint16: return .uint32(UInt32(basic(UInt16(0))))
        case TypeCode.int32: return .int32(basic(Int32(0)))
        case TypeCode.uint32: return .uint32(basic(UInt32(0)))
        case TypeCode.int64: return .int64(basic(Int64(0)))
        case TypeCode.uint64: return .uint64(basic(UInt64(0)))
        case TypeCode.double: return .double(basic(Double(0)))
        case TypeCode.variant:
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &inner)
            return readValue(&inner).map(DBusValue.variant)
        case TypeCode.structure, TypeCode.dictEntry:
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &inner)
            return .structure(readAll(&inner))
        case TypeCode.array:
            let element = String(signature(of: &iter).dropFirst())
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &inner)
            let items = readAll(&inner)
            if element == "{sv}" {
                var dict: [String: DBusValue] = [:]
                for case .structure(let pair) in items where pair.count == 2 {
                    if let key = pair[0].string, case .variant(let value) = pair[1] { dict[key] = value }
                }
                return .dict(dict)
            }
            return .array(element, items)
        default:
            return nil
        }
    }

    fileprivate func append(_ values: [DBusValue], to message: OpaquePointer) throws(DesktopError) {
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for value in values { try append(value, to: &iter) }
    }

    /// Appends one value. Everything libdbus would abort on (invalid paths, strings, signatures, mismatched array
    /// elements) is checked first and thrown as `notValidOnDBus`.
    fileprivate func append(_ value: DBusValue, to iter: inout DBusMessageIter) throws(DesktopError) {
        func basic<T>(_ type: Int32, _ v: T) throws(DesktopError) {
            var copy = v
            let ok = withUnsafePointer(to: &copy) { dbus_message_iter_append_basic(&iter, type, UnsafeRawPointer($0)) }
            guard ok != 0 else { throw .notValidOnDBus("value \(v) (out of memory)") }
        }
        func text(_ type: Int32, _ s: String) throws(DesktopError) {
            let ok = s.withCString { pointer -> dbus_bool_t in
                guard dbus_validate_utf8(pointer, nil) != 0 else { return 0 }
                var p: UnsafePointer<CChar>? = pointer
                return withUnsafePointer(to: &p) { dbus_message_iter_append_basic(&iter, type, UnsafeRawPointer($0)) }
            }
            guard ok != 0 else { throw .notValidOnDBus("string \(s.debugDescription)") }
        }
        func container(
            _ type: Int32, _ signature: String?, _ body: (inout DBusMessageIter) throws(DesktopError) -> Void
        ) throws(DesktopError) {
            var sub = DBusMessageIter()
            guard dbus_message_iter_open_container(&iter, type, signature, &sub) != 0 else {
                throw .notValidOnDBus("container \(signature ?? "") (out of memory)")
            }
            do throws(DesktopError) {
                try body(&sub)
            } catch {
                dbus_message_iter_abandon_container(&iter, &sub)
                throw error
            }
            guard dbus_message_iter_close_container(&iter, &sub) != 0 else {
                throw .notValidOnDBus("container (out of memory)")
            }
        }

        switch value {
        case .string(let s): try text(TypeCode.string, s)
        case .objectPath(let p):
            guard dbus_validate_path(p, nil) != 0 else { throw .notValidOnDBus("object path \(p.debugDescription)") }
            try text(TypeCode.objectPath, p)
        case .bool(let b): try basic(TypeCode.bool, dbus_bool_t(b ? 1 : 0))
        case .byte(let v): try basic(TypeCode.byte, v)
        case .int32(let v): try basic(TypeCode.int32, v)
        case .uint32(let v): try basic(TypeCode.uint32, v)
        case .int64(let v): try basic(TypeCode.int64, v)
        case .uint64(let v): try basic(TypeCode.uint64, v)
        case .double(let v): try basic(TypeCode.double, v)
        case .variant(let inner):
            try container(TypeCode.variant, inner.signature) { (sub: inout DBusMessageIter) throws(DesktopError) in
                try append(inner, to: &sub)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw .notValidOnDBus("empty structure") }
            try container(TypeCode.structure, nil) { (sub: inout DBusMessageIter) throws(DesktopError) in
                for field in fields { try append(field, to: &sub) }
            }
        case .dict(let dict):
            try container(TypeCode.array, "{sv}") { (sub: inout DBusMessageIter) throws(DesktopError) in
                for (key, item) in dict.sorted(by: { $0.key < $1.key }) {
                    try appendEntry(.string(key), .variant(item), to: &sub)
                }
            }
        case .array(let element, let items):
            guard dbus_signature_validate_single("a" + element, nil) != 0 else {
                throw .notValidOnDBus("array signature a\(element)")
            }
            let isDict = element.hasPrefix("{")
            try container(TypeCode.array, element) { (sub: inout DBusMessageIter) throws(DesktopError) in
                for item in items {
                    if isDict {
                        guard case .structure(let pair) = item, pair.count == 2,
                            "{" + pair[0].signature + pair[1].signature + "}" == element
                        else {
                            throw .notValidOnDBus("dictionary entry \(item) in a{\(element.dropFirst().dropLast())}")
                        }
                        try appendEntry(pair[0], pair[1], to: &sub)
                    } else {
                        guard item.signature == element else { throw .notValidOnDBus("element \(item) in a\(element)") }
                        try append(item, to: &sub)
                    }
                }
            }
        }

        func appendEntry(_ key: DBusValue, _ item: DBusValue, to sub: inout DBusMessageIter) throws(DesktopError) {
            var entry = DBusMessageIter()
            guard dbus_message_iter_open_container(&sub, TypeCode.dictEntry, nil, &entry) != 0 else {
                throw .notValidOnDBus("dictionary entry (out of memory)")
            }
            do throws(DesktopError) {
                try append(key, to: &entry)
                try append(item, to: &entry)
            } catch {
                dbus_message_iter_abandon_container(&sub, &entry)
                throw error
            }
            guard dbus_message_iter_close_container(&sub, &entry) != 0 else {
                throw .notValidOnDBus("dictionary entry (out of memory)")
            }
        }
    }
}

/// A raw libdbus connection handed from the connecting thread to the caller.
private final class ConnectionBox: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}

/// One connect attempt, shared by the caller (who may give up) and the helper thread (which may finish late).
private final class OpenAttempt: Sendable {
    enum Outcome: Sendable {
        case success(ConnectionBox)
        case failure(String)
    }
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

/// The connection filter: libdbus calls it during dispatch; it captures nothing and finds its connection in `userdata`.
private func connectionFilter(_: OpaquePointer?, _ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?)
    -> DBusHandlerResult
{
    guard let message, let userdata else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    let connection = Unmanaged<DBusConnection>.fromOpaque(userdata).takeUnretainedValue()
    return connection.filter(message) ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
}
