import AmbienceCore
import AmbiencePlatform
import Foundation
import Synchronization

/// Whether the screen is locked, from several sources that may each report the same lock (GNOME sets logind's
/// `LockedHint` and announces `ActiveChanged` too): locked while any source says so. Pure: no bus, no clock.
struct ScreenLockState: Sendable, Equatable {
    enum Source: Sendable, Hashable {
        /// logind's `LockedHint` on the session the game runs in (system bus).
        case logind
        /// `org.freedesktop.ScreenSaver` or `org.gnome.ScreenSaver` `ActiveChanged` (session bus).
        case screenSaver
    }

    private(set) var lockedBy: Set<Source> = []

    var isLocked: Bool { !lockedBy.isEmpty }

    /// Records what `source` says now; returns the combined state when it changed, nil when it did not.
    mutating func report(_ locked: Bool, from source: Source) -> Bool? {
        let before = isLocked
        if locked { lockedBy.insert(source) } else { lockedBy.remove(source) }
        return isLocked == before ? nil : isLocked
    }
}

/// Follows the screen lock and reports it as `screenLockChanged`, deciding nothing: locked, or unlocked.
/// The session's policy turns that into silence for the categories that are silenced in the background.
///
/// Two sources, each on a thread of its own that owns its bus connection (as `SleepMonitor` does):
/// - the system bus: logind's `org.freedesktop.login1.Session.LockedHint` on the session this process runs in
///   (found with `GetSessionByPID`, else `XDG_SESSION_ID`), through `PropertiesChanged`;
/// - the session bus: `ActiveChanged(bool)` of `org.freedesktop.ScreenSaver` (KDE, Xfce, …) and
///   `org.gnome.ScreenSaver` (GNOME).
/// A bus that is not there, or a service that never answers, only means that source is silent. Each source connects
/// on a thread of its own (`BusFollowingThread`), never the game's, and again when its bus goes or is slow to answer:
/// a loaded desktop at login, or a bus restarted later, is still followed once it answers. Every call is bounded. A
/// screensaver whose name loses its owner (it crashed or was restarted while active) counts as no longer locking the
/// screen. Only the owner of a source's name is heard:
/// a signal from any other connection (`BusNameOwners`) changes nothing.
package final class ScreenLockMonitor: SessionMonitor {
    static let logindName = "org.freedesktop.login1"
    static let sessionInterface = "org.freedesktop.login1.Session"
    static let screenSaverInterfaces = ["org.freedesktop.ScreenSaver", "org.gnome.ScreenSaver"]

    private let threads: [BusFollowingThread]
    /// Changes kept until `update()` drains them. Past the cap the oldest give way: the newest says how it is now.
    static let changeCapacity = 64
    private let shared = Lock<(state: ScreenLockState, pending: EventQueue<Bool>)>(
        (ScreenLockState(), EventQueue(capacity: changeCapacity, overflow: .dropOldest)))

    /// Follows each bus given (nil: that source is off), from threads that connect by themselves; returns at once.
    /// While neither bus answers, the monitor reports nothing.
    package init(systemBusAddress: String?, sessionBusAddress: String?) {
        let logind = systemBusAddress.map(BusFollowingThread.init(address:))
        let saver = sessionBusAddress.map(BusFollowingThread.init(address:))
        threads = [logind, saver].compactMap { $0 }
        logind?.start(name: "ambience.screen-lock.logind") { [weak self] bus in
            if let logind { self?.followLogind(logind, bus) }
        }
        saver?.start(name: "ambience.screen-lock.saver") { [weak self] bus in
            if let saver { self?.followScreenSaver(saver, bus) }
        }
    }

    deinit { close() }

    package var name: String { "screen lock" }

    /// Each change of the combined state since the last poll, oldest first.
    package func poll(_ context: MonitorContext) -> [SessionEvent] { drain().map { .screenLockChanged(isLocked: $0) } }

    /// `true` for "locked", `false` for "unlocked", oldest first: only changes of the combined state.
    func drain() -> [Bool] { shared.withLock { $0.pending.drain() } }

    /// Changes that gave way to newer ones because nobody drained them.
    package var droppedEvents: Int { shared.withLock { $0.pending.dropped } }

    /// Stops the threads (each waits at most for the bounded call it is in) and closes the connections. Changes
    /// already queued are still polled.
    package func close() { for thread in threads { thread.stop() } }

    private func report(_ locked: Bool, from source: ScreenLockState.Source) {
        shared.withLock { shared in
            if let changed = shared.state.report(locked, from: source) { _ = shared.pending.push(changed) }
        }
    }

    // MARK: On the monitor's threads

    private func followLogind(_ thread: BusFollowingThread, _ bus: DBusConnection) {
        let setup = BusFollowingThread.setupTimeout
        var owners = BusNameOwners()
        // no logind, or not in a session: nothing to follow
        guard (try? owners.follow([Self.logindName], on: bus, timeout: setup)) != nil,
            let path = Self.ourSessionPath(on: bus, timeout: setup),
            (try? bus.follow(
                SignalMatch(
                    interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", path: path,
                    argument0: Self.sessionInterface), timeout: setup)) != nil
        else { return }
        // A game started on a locked screen.
        if let reply = try? bus.call(
            destination: Self.logindName, path: path, interface: "org.freedesktop.DBus.Properties",
            member: "Get", arguments: [.string(Self.sessionInterface), .string("LockedHint")], timeout: setup),
            let locked = reply.first?.bool
        {
            report(locked, from: .logind)
        }
        while thread.isFollowing(bus) {
            for message in bus.receive(timeout: DesktopBus.listenTimeout) where message.kind == .signal {
                _ = owners.update(with: message)
                guard message.member == "PropertiesChanged", message.path == path,
                    message.arguments.first?.string == Self.sessionInterface,
                    owners.isFromOwner(of: Self.logindName, message),
                    let locked = message.arguments.dropFirst().first?.dict?["LockedHint"]?.bool
                else { continue }
                report(locked, from: .logind)
            }
        }
    }

    private func followScreenSaver(_ thread: BusFollowingThread, _ bus: DBusConnection) {
        let setup = BusFollowingThread.setupTimeout
        var owners = BusNameOwners()
        // A screensaver that crashes while active never says it stopped: its name losing its owner does.
        guard (try? owners.follow(Self.screenSaverInterfaces, on: bus, timeout: setup)) != nil else { return }
        for interface in Self.screenSaverInterfaces {
            guard (try? bus.follow(SignalMatch(interface: interface, member: "ActiveChanged"), timeout: setup)) != nil
            else { return }
        }
        // Whichever screensaver runs says whether it is active now; the others are not there and answer an error.
        let asked = Self.screenSaverInterfaces.map { interface in
            DBusCall(
                destination: interface, path: "/" + interface.replacingOccurrences(of: ".", with: "/"),
                interface: interface, member: "GetActive")
        }
        // Said even when false: on a connection made again, the screen may have been unlocked while the bus was away.
        report(
            bus.callAll(asked, timeout: setup).contains { (try? $0.get())?.first?.bool == true }, from: .screenSaver)
        while thread.isFollowing(bus) {
            for message in bus.receive(timeout: DesktopBus.listenTimeout) where message.kind == .signal {
                if let gone = owners.update(with: message), Self.screenSaverInterfaces.contains(gone) {
                    report(false, from: .screenSaver)
                } else if message.member == "ActiveChanged", let interface = message.interface,
                    Self.screenSaverInterfaces.contains(interface),
                    // Anyone can send ActiveChanged; only the screensaver's own counts.
                    owners.isFromOwner(of: interface, message),
                    let active = message.arguments.first?.bool
                {
                    report(active, from: .screenSaver)
                }
            }
        }
    }

    /// The logind session object this process belongs to: asked of logind, else made from `XDG_SESSION_ID`.
    private static func ourSessionPath(on bus: DBusConnection, timeout: Duration) -> String? {
        if let reply = try? bus.call(
            destination: logindName, path: "/org/freedesktop/login1", interface: "org.freedesktop.login1.Manager",
            member: "GetSessionByPID", arguments: [.uint32(UInt32(bitPattern: ProcessIdentity.current))],
            timeout: timeout),
            let path = reply.first?.string
        {
            return path
        }
        guard let id = ProcessInfo.processInfo.environment["XDG_SESSION_ID"], !id.isEmpty else { return nil }
        return "/org/freedesktop/login1/session/" + escapedPathElement(id)
    }

    /// systemd's object-path escaping (`sd_bus_path_encode`): every byte but ASCII letters and digits, and a leading
    /// digit, becomes `_` and two lower-case hex digits ("3" → "_33").
    static func escapedPathElement(_ text: String) -> String {
        var escaped = ""
        for (offset, byte) in text.utf8.enumerated() {
            let isLetter =
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            let isDigit = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            if isLetter || (isDigit && offset > 0) {
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                escaped += "_" + String(byte, radix: 16).leftPadded(to: 2)
            }
        }
        return escaped
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
