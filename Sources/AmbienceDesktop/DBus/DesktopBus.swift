import AmbienceCore
import AmbiencePlatform
import Glibc
import Synchronization

/// The D-Bus failures, in terms of the shared `DesktopError`.
extension DesktopError {
    /// The connection to the bus is closed (the bus went away, or the connection was closed).
    static let busClosed = DesktopError.busUnavailable("the connection to the bus is closed")

    /// Something D-Bus cannot carry (a malformed bus name, object path, member, signature or string): nothing was sent.
    static func notValidOnDBus(_ what: String) -> DesktopError { .unsupported("not valid on D-Bus: \(what)") }

    /// A reply without the shape the protocol promises.
    static func unexpectedReply(_ asked: String, _ got: [DBusValue]) -> DesktopError {
        .unsupported("\(asked): unexpected reply \(got.map(\.signature).joined())")
    }

    /// A message whose arguments are over `DBusLimits`: refused, not decoded.
    static func overLimits(_ what: String) -> DesktopError {
        .unsupported("\(what): over the limits of what the engine decodes from the bus")
    }

    /// `member` sent to `destination` got no reply within its timeout.
    static func noReply(_ member: String, _ destination: String) -> DesktopError {
        .timeout("\(destination) did not answer \(member)")
    }
}

/// Where the session bus is, and how long a desktop call may wait.
package enum DesktopBus {
    /// `DBUS_SESSION_BUS_ADDRESS`; when it is not set, the user's bus at `$XDG_RUNTIME_DIR/bus` if there is one
    /// (what systemd user sessions provide, and what libdbus itself falls back to). Nil when neither is there, or
    /// when the variable is set but empty, which turns the session bus off. Nothing is ever autolaunched.
    package static var sessionAddress: String? {
        let environment = ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"].reduce(into: [String: String]()) {
            found, name in
            if let value = ProcessEnvironment.value(name) { found[name] = value }
        }
        return sessionAddress(environment: environment) { path in
            (try? FileStatus(path: path))?.kind == .socket
        }
    }

    static func sessionAddress(environment: [String: String], isSocket: (String) -> Bool) -> String? {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"] { return address.isEmpty ? nil : address }
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return nil }
        let socket = runtime + "/bus"
        return isSocket(socket) ? "unix:path=" + escapedAddressValue(socket) : nil
    }

    /// A D-Bus address value: bytes outside the spec's optionally-escaped set become `%xx`.
    static func escapedAddressValue(_ value: String) -> String {
        var escaped = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "\\"),
                UInt8(ascii: "*"):
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                escaped += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return escaped
    }

    /// True when a bus at `address` answers (connects and registers) within `timeout`, or when libdbus is not
    /// there to be held up by it.
    package static func answers(at address: String, within timeout: Duration = defaultTimeout) -> Bool {
        do throws(DesktopError) {
            try DBusConnection(address: address, timeout: timeout).close()
            return true
        } catch {
            if case .libraryUnavailable = error { return true }
            return false
        }
    }

    /// A bus address where nothing listens: connecting fails at once (`/dev/null` is no socket).
    package static let nowhere = "unix:path=/dev/null"

    /// The longest any desktop call waits for an answer, unless told otherwise.
    package static let defaultTimeout: Duration = .milliseconds(250)

    /// How long a monitor that only listens (the screen lock's, the sleep monitor's) waits for a signal before it
    /// looks again. Nothing is due meanwhile: stopping wakes the connection, and the bus going away makes its socket
    /// readable; a shorter wait only woke the thread for nothing (200 ms made 5 wake-ups a second per monitor).
    package static let listenTimeout: Duration = .seconds(2)
}

/// The thread that owns a bus connection (the MPRIS client's and server's, the sleep monitor's). Its loop runs
/// while `isRunning`, waiting in bounded bus calls; `stop` wakes the connection, joins the thread (each call it may
/// be in is bounded by its timeout) and only then closes the connection, so a thread still in a call to a hung peer
/// keeps its connection instead of losing it underneath.
final class DesktopThread: Sendable {
    let connection: DBusConnection
    private let stopped = Atomic<Bool>(false)
    private let worker = Lock<WorkerThread?>(nil)

    init(connection: DBusConnection) { self.connection = connection }

    /// Not stopped, and the bus is still there.
    var isRunning: Bool { !stopped.load(ordering: .acquiring) && connection.isConnected }

    func start(name: String, _ loop: @escaping @Sendable () -> Void) {
        let thread = WorkerThread(name: name) { _ in loop() }
        worker.withLock { $0 = thread }
    }

    /// Stops the loop and joins it, then closes the connection. Only the first call does anything.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        connection.wake()
        worker.withLock { worker in
            defer { worker = nil }; return worker
        }?.stop()
        connection.close()
    }
}

/// A value D-Bus carries, in Swift terms.
///
/// `dict` is the ubiquitous `a{sv}` (its values are the variants' contents). Other dictionaries read as an `array`
/// whose element signature starts with `{` and whose elements are two-field `structure`s.
indirect enum DBusValue: Sendable, Hashable {
    case string(String)
    case objectPath(String)
    case bool(Bool)
    case byte(UInt8)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    /// An array: the signature of one element (needed when the array is empty), and the elements.
    case array(String, [DBusValue])
    /// `a{sv}`.
    case dict([String: DBusValue])
    case variant(DBusValue)
    case structure([DBusValue])

    static func strings(_ values: [String]) -> DBusValue { .array("s", values.map(DBusValue.string)) }

    /// The D-Bus type signature of this value.
    var signature: String {
        switch self {
        case .string: "s"
        case .objectPath: "o"
        case .bool: "b"
        case .byte: "y"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .array(let element, _): "a" + element
        case .dict: "a{sv}"
        case .variant: "v"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        }
    }

    /// The value with any variant wrappers removed.
    var unwrapped: DBusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    var string: String? {
        switch unwrapped {
        case .string(let s), .objectPath(let s): s
        default: nil
        }
    }

    var bool: Bool? { if case .bool(let b) = unwrapped { b } else { nil } }

    /// Any integer or floating-point value, as a Double.
    var number: Double? {
        switch unwrapped {
        case .byte(let v): Double(v)
        case .int32(let v): Double(v)
        case .uint32(let v): Double(v)
        case .int64(let v): Double(v)
        case .uint64(let v): Double(v)
        case .double(let v): v
        default: nil
        }
    }

    /// Any integer value, as an Int64 (nil when it does not fit or is not an integer).
    var integer: Int64? {
        switch unwrapped {
        case .byte(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .int64(let v): v
        case .uint64(let v): Int64(exactly: v)
        default: nil
        }
    }

    /// An array of strings (a lone string counts as one).
    var strings: [String]? {
        switch unwrapped {
        case .array(_, let items): items.compactMap(\.string)
        case .string(let s): [s]
        default: nil
        }
    }

    var dict: [String: DBusValue]? { if case .dict(let d) = unwrapped { d } else { nil } }
}

/// A message that arrived on a connection, decoded.
struct DBusMessage: Sendable {
    enum Kind: Sendable { case methodCall, methodReturn, error, signal }
    var kind: Kind
    var serial: UInt32
    var sender: String?
    var path: String?
    var interface: String?
    var member: String?
    var arguments: [DBusValue]
    /// False when the caller flagged the call no-reply-expected.
    var expectsReply: Bool

    /// The argument signature, as D-Bus would write it.
    var signature: String { arguments.map(\.signature).joined() }
}
