import AmbienceCore

/// The signals a connection follows: the bus routes them to it by `rule()`, and its filter decodes only signals
/// whose interface and member some followed match names.
struct SignalMatch: Sendable {
    struct Key: Hashable, Sendable {
        let interface: String
        let member: String
    }

    var interface: String
    var member: String
    var sender: String? = nil
    var path: String? = nil
    /// The first argument is this (`arg0`), or with `argument0IsNamespace` this name or one below it.
    var argument0: String? = nil
    var argument0IsNamespace = false

    var key: Key { Key(interface: interface, member: member) }

    /// The daemon's `NameOwnerChanged` for `name` (or, with `namespace`, every name below it).
    static func ownerChanges(of name: String, namespace: Bool = false) -> SignalMatch {
        SignalMatch(
            interface: BusNameOwners.daemon, member: "NameOwnerChanged", sender: BusNameOwners.daemon,
            argument0: name, argument0IsNamespace: namespace)
    }

    /// The match rule the bus daemon reads.
    func rule() throws(DesktopError) -> String {
        let fields: [(String, String?)] = [
            ("sender", sender), ("interface", interface), ("member", member), ("path", path),
            (argument0IsNamespace ? "arg0namespace" : "arg0", argument0)
        ]
        var rule = "type='signal'"
        for case (let key, let value?) in fields {
            // A quote would end the value early; nothing the engine follows has one.
            guard !value.contains("'") else { throw .notValidOnDBus("match rule value \(value.debugDescription)") }
            rule += ",\(key)='\(value)'"
        }
        return rule
    }
}

/// Who owns the well-known names whose signals a monitor trusts.
///
/// Any process on a bus may send a signal with any path, interface and member; only its sender field, which the
/// daemon fills in, cannot be forged. So a signal counts only when its sender is the unique name that owns the
/// well-known name it speaks for now: a screensaver's `ActiveChanged`, logind's `PrepareForSleep`.
struct BusNameOwners {
    static let daemon = "org.freedesktop.DBus"

    /// Well-known name to the unique name that owns it.
    private var owners: [String: String] = [:]

    /// Follows the owner changes of `names` and asks who owns them now, in one batch. Call before following the
    /// names' own signals, so no signal can arrive from an owner not yet known.
    /// Throws when the daemon did not answer within `timeout`: an owner left unknown would go unheard for good.
    mutating func follow(
        _ names: [String], on connection: DBusConnection, timeout: Duration = DesktopBus.defaultTimeout
    ) throws(DesktopError) {
        for name in names { try connection.follow(.ownerChanges(of: name), timeout: timeout) }
        let calls = names.map { name in
            DBusCall(
                destination: BusNameOwners.daemon, path: "/org/freedesktop/DBus", interface: BusNameOwners.daemon,
                member: "GetNameOwner", arguments: [.string(name)])
        }
        for (name, result) in zip(names, connection.callAll(calls, timeout: timeout)) {
            switch result {
            case .success(let reply): if let owner = reply.first?.string { owners[name] = owner }
            case .failure(.remoteError): break  // NameHasNoOwner: its NameOwnerChanged will say when it has one
            case .failure(let error): throw error
            }
        }
    }

    /// Takes in a `NameOwnerChanged` from the daemon. Returns the name when it has just lost its owner.
    mutating func update(with message: DBusMessage) -> String? {
        guard message.kind == .signal, message.sender == BusNameOwners.daemon,
            message.interface == BusNameOwners.daemon, message.member == "NameOwnerChanged",
            message.arguments.count == 3, let name = message.arguments[0].string,
            let newOwner = message.arguments[2].string
        else { return nil }
        owners[name] = newOwner.isEmpty ? nil : newOwner
        return newOwner.isEmpty ? name : nil
    }

    /// True when `message` was sent by the connection that owns `name` now.
    func isFromOwner(of name: String, _ message: DBusMessage) -> Bool {
        guard let sender = message.sender, let owner = owners[name] else { return false }
        return sender == owner
    }
}
