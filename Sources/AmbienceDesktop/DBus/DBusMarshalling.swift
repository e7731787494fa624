import AmbienceCore
import CDBus
import Glibc

// MARK: libdbus, below the Swift types

/// libdbus's functions, looked up by the names the C target's header lists (CDBus/shim.h). Every libdbus call below
/// goes through this table: inside its extension an unqualified `dbus_...` is the table's field, and elsewhere a
/// connection's `libdbus`.
package typealias LibDBus = ambience_dbus_functions

extension LibDBus {
    func check(path: String, interface: String?, member: String) throws(DesktopError) {
        guard dbus_validate_path(path, nil) != 0 else { throw .notValidOnDBus("object path \(path)") }
        if let interface, dbus_validate_interface(interface, nil) == 0 {
            throw .notValidOnDBus("interface \(interface)")
        }
        guard dbus_validate_member(member, nil) != 0 else { throw .notValidOnDBus("member \(member)") }
    }

    func makeMethodCall(
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

    /// Fills in a reply's reply-serial and destination from the call it answers.
    func address(_ reply: OpaquePointer, asReplyTo call: DBusMessage) throws(DesktopError) {
        dbus_message_set_no_reply(reply, 1)
        guard dbus_message_set_reply_serial(reply, call.serial) != 0 else { throw .notValidOnDBus("reply serial") }
        if let sender = call.sender {
            guard dbus_validate_bus_name(sender, nil) != 0 else { throw .notValidOnDBus("bus name \(sender)") }
            _ = dbus_message_set_destination(reply, sender)
        }
    }

    /// A message's header, with no arguments: all the filter needs to decide whether the body is worth decoding.
    func header(of message: OpaquePointer) -> DBusMessage {
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
            arguments: [], expectsReply: dbus_message_get_no_reply(message) == 0)
    }

    // MARK: Marshalling

    /// D-Bus type codes (the header's `DBUS_TYPE_*` are cast macros, which Swift does not import).
    enum TypeCode {
        static let invalid: Int32 = 0
        static let byte = code("y"), bool = code("b"), int16 = code("n"), uint16 = code("q"), int32 = code("i")
        static let uint32 = code("u"), int64 = code("x"), uint64 = code("t"), double = code("d"), string = code("s")
        static let objectPath = code("o"), signature = code("g"), unixFD = code("h"), array = code("a")
        static let variant = code("v"), structure = code("r"), dictEntry = code("e")
        static func code(_ c: Unicode.Scalar) -> Int32 { Int32(c.value) }
    }

    /// A message's arguments, or nil when they are over `DBusLimits` (then nothing more of them is read).
    func readArguments(_ message: OpaquePointer) -> [DBusValue]? {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        var budget = DecodeBudget()
        let values = readAll(&iter, &budget, depth: 0)
        return budget.isSpent ? nil : values
    }

    private func readAll(_ iter: inout DBusMessageIter, _ budget: inout DecodeBudget, depth: Int) -> [DBusValue] {
        var values: [DBusValue] = []
        while !budget.isSpent, dbus_message_iter_get_arg_type(&iter) != TypeCode.invalid {
            if let value = readValue(&iter, &budget, depth: depth) { values.append(value) }
            _ = dbus_message_iter_next(&iter)
        }
        return values
    }

    private func signature(of iter: inout DBusMessageIter) -> String {
        guard let raw = dbus_message_iter_get_signature(&iter) else { return "" }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }

    /// The value at the iterator, or nil for a type Swift does not carry (a Unix file descriptor) and once the
    /// budget is spent.
    private func readValue(_ iter: inout DBusMessageIter, _ budget: inout DecodeBudget, depth: Int) -> DBusValue? {
        guard budget.spend(values: 1, depth: depth) else { return nil }
        func basic<T>(_ initial: T) -> T {
            var value = initial
            withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(&iter, UnsafeMutableRawPointer($0)) }
            return value
        }
        func text() -> String {
            let pointer: UnsafePointer<CChar>? = basic(nil)
            guard let pointer, budget.spend(textBytes: strlen(pointer)) else { return "" }
            return String(cString: pointer)
        }
        func inner() -> DBusMessageIter {
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &inner)
            return inner
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
            var contents = inner()
            return readValue(&contents, &budget, depth: depth + 1).map(DBusValue.variant)
        case TypeCode.structure, TypeCode.dictEntry:
            var fields = inner()
            return .structure(readAll(&fields, &budget, depth: depth + 1))
        case TypeCode.array:
            let element = String(signature(of: &iter).dropFirst())
            var elements = inner()
            let items = readAll(&elements, &budget, depth: depth + 1)
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

    func append(_ values: [DBusValue], to message: OpaquePointer) throws(DesktopError) {
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for value in values { try append(value, to: &iter) }
    }

    /// Appends one value. Everything libdbus would abort on (invalid paths, strings, signatures, mismatched array
    /// elements) is checked first and thrown as `notValidOnDBus`.
    func append(_ value: DBusValue, to iter: inout DBusMessageIter) throws(DesktopError) {
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

/// How much of one incoming message the engine decodes. An MPRIS player's metadata is a few kilobytes and a few
/// dozen values; a peer that sends more is refused before it costs memory or time (a 60 MB call once cost 2.3 GB and
/// 14 s, decoded whole under the connection's lock).
enum DBusLimits {
    static let values = 16_384
    static let textBytes = 1 << 20
    /// Containers within containers (D-Bus itself allows 64).
    static let depth = 32
}

/// What is left of `DBusLimits` while one message is decoded.
struct DecodeBudget {
    private var values = DBusLimits.values
    private var textBytes = DBusLimits.textBytes
    private(set) var isSpent = false

    /// Takes `values` values at nesting `depth`; false (and spent for good) past a limit.
    mutating func spend(values count: Int, depth: Int) -> Bool {
        values -= count
        if values < 0 || depth > DBusLimits.depth { isSpent = true }
        return !isSpent
    }

    mutating func spend(textBytes count: Int) -> Bool {
        textBytes -= count
        if textBytes < 0 { isSpent = true }
        return !isSpent
    }
}
