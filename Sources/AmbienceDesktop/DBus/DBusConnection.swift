import AmbienceCore
import AmbiencePlatform
import CDBus
import Dispatch
import Foundation
import Synchronization

/// A private connection to a D-Bus bus. With its siblings (DBusCalls, DBusMarshalling, DBusOpening: one wrapper,
/// split to keep each file short) the only code in the engine that calls libdbus.
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
/// caller. Every call waits at most its own timeout (see `LibDBus.callAll` for why that is not libdbus's blocking call),
/// and a batch of calls to several peers waits one timeout in all. Closing never waits (`release`).
/// Match rules and name requests are ordinary calls with a timeout (the `dbus_bus_*` helpers would wait up to
/// libdbus's 25-second default).
///
/// Incoming messages reach Swift through one connection filter (a captureless C function with the connection as
/// unretained userdata), which checks each header, then decodes (within `DBusLimits`) and queues what was asked
/// for when `receive` (or a `call` waiting for its reply) dispatches: handlers run later, on the owner's thread, outside libdbus and outside the lock, and may use the
/// connection freely. Method calls to paths not exported here are
/// left to libdbus, which answers them with `UnknownMethod` (and answers `org.freedesktop.DBus.Peer` itself).
package final class DBusConnection: @unchecked Sendable {
    /// The bus-assigned unique name (":1.42").
    let uniqueName: String
    private let lock = Lock<Void>(())
    // Guarded by `lock`.
    private var connection: OpaquePointer?
    private var inbox: [DBusMessage] = []
    private var exportedPaths: Set<String> = []
    /// The signals `follow` asked for, as interface and member: no other signal is decoded.
    private var followedSignals: Set<SignalMatch.Key> = []
    /// Interrupts `receive`'s wait.
    private let waker: Waker
    /// libdbus's functions (a connection exists only once they loaded).
    let libdbus: LibDBus

    private static let daemon = "org.freedesktop.DBus"
    private static let daemonPath = "/org/freedesktop/DBus"

    /// libdbus-1, opened the first time it is needed. Without it the engine has no desktop integration (MPRIS,
    /// sleep and screen lock), as with no bus. Once loaded, libdbus is told, before any other use, that several
    /// threads may use it.
    package static let library = OptionalLibrary<LibDBus>(
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
            let hello = DBusCall(
                destination: DBusConnection.daemon, path: DBusConnection.daemonPath,
                interface: DBusConnection.daemon, member: "Hello")
            let reply = try libdbus.callAll(on: raw, [hello], timeout: left)[0].get()
            guard let unique = reply.first?.string else { throw .unexpectedReply("Hello", reply) }
            name = unique
        } catch {
            DBusConnection.release(raw, libdbus)
            throw .busUnavailable("\(address): \(error)")
        }
        do throws(Errno) { waker = try Waker() } catch {
            DBusConnection.release(raw, libdbus)
            throw .busUnavailable("cannot make a waker (\(error))")
        }
        self.libdbus = libdbus
        uniqueName = name
        connection = raw
        // Messages that arrived during Hello wait in libdbus's queue until the first dispatch, when the filter exists.
        _ = libdbus.dbus_connection_add_filter(raw, connectionFilter, Unmanaged.passUnretained(self).toOpaque(), nil)
    }

    deinit {
        if let connection { DBusConnection.release(connection, libdbus) }
    }

    /// Closes the connection, without waiting. Later calls throw `busClosed`; `receive` returns nothing.
    func close() {
        let closing = lock.withLock { _ in
            defer { connection = nil }
            return connection
        }
        if let closing { DBusConnection.release(closing, libdbus) }
        wake()
    }

    /// Closes and drops a libdbus connection on a thread of its own. A close takes libdbus's global bus lock, which
    /// anyone else in the process (a library joining a frozen bus with `dbus_bus_get`) may hold without a bound:
    /// then that thread waits, not the caller.
    private static func release(_ raw: OpaquePointer, _ libdbus: LibDBus) {
        let box = ConnectionBox(raw)
        let close: @Sendable () -> Void = {
            libdbus.dbus_connection_close(box.pointer)
            libdbus.dbus_connection_unref(box.pointer)
        }
        // With no thread to spare, closing here is all that is left, even though it may wait as said above.
        if !WorkerThread.detached(name: "ambience.dbus-close", close) { close() }
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
        let call = DBusCall(
            destination: destination, path: path, interface: interface, member: member, arguments: arguments)
        return try callAll([call], timeout: timeout)[0].get()
    }

    /// Makes every call at once and waits for all the replies together, at most `timeout` in all: peers that do
    /// not answer cost one timeout between them. One result per call, in order.
    func callAll(_ calls: [DBusCall], timeout: Duration = DesktopBus.defaultTimeout)
        -> [Result<[DBusValue], DesktopError>]
    {
        let results = lock.withLock { _ in
            guard let connection else {
                return calls.map { _ in Result<[DBusValue], DesktopError>.failure(.busClosed) }
            }
            return libdbus.callAll(on: connection, calls, timeout: timeout)
        }
        wakeIfMessagesQueued()
        return results
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

    /// Asks the bus to route the signals `match` describes to this connection, and lets them through the filter.
    /// Signals nobody followed are dropped before their arguments are decoded.
    func follow(_ match: SignalMatch, timeout: Duration = DesktopBus.defaultTimeout) throws(DesktopError) {
        try libdbus.check(path: match.path ?? "/", interface: match.interface, member: match.member)
        lock.withLock { _ in _ = followedSignals.insert(match.key) }
        _ = try callDaemon("AddMatch", [.string(try match.rule())], timeout: timeout)
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

        _ = waker.wait(
            alongside: busFD, events: Int16(POLLIN) | (wantsWrite ? Int16(POLLOUT) : 0), timeout: timeout)
        return lock.withLock { _ in
            guard let connection else { return [] }
            // reads what is there, writes what is pending; never waits
            _ = libdbus.dbus_connection_read_write(connection, 0)
            return dispatchAll(connection)
        }
    }

    /// Interrupts a `receive` that is waiting. Any thread; takes no lock.
    func wake() { waker.wake() }

    /// Runs libdbus's dispatch until its queue is empty; the filter collects into `inbox`. Call with the lock held.
    private func dispatchAll(_ connection: OpaquePointer) -> [DBusMessage] {
        while libdbus.dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
        defer { inbox.removeAll(keepingCapacity: true) }
        return inbox
    }

    /// Called by libdbus inside `dispatchAll` (so with the lock held) for every incoming message.
    /// Returns true when the message is ours to answer.
    ///
    /// The header decides first, so what nobody here asked for costs nothing: signals nobody follows, and calls to
    /// paths not exported, are not decoded. Arguments over `DBusLimits` are not decoded either: such a signal is
    /// dropped, and such a call answered `LimitsExceeded` here.
    fileprivate func filter(_ message: OpaquePointer) -> Bool {
        var header = libdbus.header(of: message)
        switch header.kind {
        case .signal:
            guard let interface = header.interface, let member = header.member,
                followedSignals.contains(SignalMatch.Key(interface: interface, member: member))
            else { return false }
            guard let arguments = libdbus.readArguments(message) else { return false }
            header.arguments = arguments
            inbox.append(header)
            return false
        case .methodCall:
            guard let path = header.path, exportedPaths.contains(path) else { return false }
            guard let arguments = libdbus.readArguments(message) else {
                refuse(header)
                return true
            }
            header.arguments = arguments
            inbox.append(header)
            return true
        case .methodReturn, .error:
            return false  // late replies to calls that timed out, or to no-reply sends
        }
    }

    /// Answers a call whose arguments are over the limits. With the lock held, inside dispatch: queues, never waits.
    private func refuse(_ call: DBusMessage) {
        guard call.expectsReply, let connection,
            let reply = libdbus.dbus_message_new(DBUS_MESSAGE_TYPE_ERROR)
        else { return }
        defer { libdbus.dbus_message_unref(reply) }
        _ = libdbus.dbus_message_set_error_name(reply, "org.freedesktop.DBus.Error.LimitsExceeded")
        guard (try? libdbus.address(reply, asReplyTo: call)) != nil,
            (try? libdbus.append([.string("the arguments are over the engine's limits")], to: reply)) != nil
        else { return }
        _ = libdbus.dbus_connection_send(connection, reply, nil)
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

    /// `poll`'s timeout for `duration`, rounded up: rounded down, the last fraction of a millisecond before a
    /// deadline would be polls with timeout 0, a busy loop on the desktop thread until the deadline passes.
    static func milliseconds(_ duration: Duration) -> Int32 { Waker.milliseconds(duration) }

    /// Bytes in D-Bus's wire format, taken in as the filter takes a message: the header, then the arguments within
    /// `DBusLimits` (nil over them). Nil when libdbus refuses the bytes. For the bus fuzz target.
    static func inspect(marshalled bytes: [UInt8]) throws(DesktopError) -> (
        header: DBusMessage, arguments: [DBusValue]?
    )? {
        let libdbus = try loadedLibrary(for: "unmarshalling")
        guard let length = Int32(exactly: bytes.count) else { return nil }
        var error = DBusError()
        libdbus.dbus_error_init(&error)
        defer { libdbus.dbus_error_free(&error) }
        let message = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { libdbus.dbus_message_demarshal($0.baseAddress, length, &error) }
        }
        guard let message else { return nil }
        defer { libdbus.dbus_message_unref(message) }
        return (libdbus.header(of: message), libdbus.readArguments(message))
    }

    /// Marshals values into a message and reads them back, with no bus involved (so tests can check both directions).
    static func roundTrip(_ values: [DBusValue]) throws(DesktopError) -> [DBusValue] {
        let libdbus = try loadedLibrary(for: "marshalling")
        let message = try libdbus.makeMethodCall(
            destination: "org.ambience.Test", path: "/", interface: "org.ambience.Test",
            member: "RoundTrip", arguments: values)
        defer { libdbus.dbus_message_unref(message) }
        guard let values = libdbus.readArguments(message) else { throw .overLimits("the values") }
        return values
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
