import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceDesktop
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

/// Other processes on a bus, written to be hostile (issue #32, class 3): MPRIS players that never answer, names
/// taken and dropped in a loop, huge and malformed method calls, forged signals. Each is a process of its own that
/// speaks D-Bus through Debian's python3-dbus (`/usr/bin/python3`: the `python3` on PATH may be a pyenv without it)
/// or `dbus-monitor`, never through the engine's D-Bus code, so what they send does not depend on the code
/// under test. A long-running peer ends with its bus, when the test process that started it is gone, or on `stop()`.
final class HostileBusPeer: Sendable {
    /// A long-running peer.
    enum Kind: CustomTestStringConvertible {
        /// Owns `name`, never answers a call, and emits `PropertiesChanged` (status and title) `hertz` times a second.
        case mutePlayer(name: String, hertz: Int)
        /// Takes `name`, holds it `hold` seconds without answering anything, drops it, and again, for ever.
        case flickeringName(String, hold: Double)
        /// `count` connections, the i-th owning `prefix` + i, none ever answering.
        case silentPlayers(prefix: String, count: Int)

        var arguments: [String] {
            switch self {
            case .mutePlayer(let name, let hertz): ["mute", name, "\(hertz)"]
            case .flickeringName(let name, let hold): ["flicker", name, "\(hold)"]
            case .silentPlayers(let prefix, let count): ["silent", prefix, "\(count)"]
            }
        }

        var testDescription: String {
            switch self {
            case .mutePlayer(let name, let hertz): "\(name), which never answers and signals at \(hertz) Hz"
            case .flickeringName(let name, let hold): "\(name), taken for \(hold) s and dropped, over and over"
            case .silentPlayers(let prefix, let count): "\(count) names \(prefix)N that never answer"
            }
        }
    }

    static let python = "/usr/bin/python3"
    let process: ChildProcess
    private let output: LineReader

    /// Starts the peer on the bus at `bus` and waits until it has done what it set up (owned its names), at most 30 s.
    init(_ kind: Kind, bus: String) throws {
        process = try ChildProcess(
            [Self.python, "-c", Self.script] + [kind.arguments[0], bus] + kind.arguments.dropFirst(), stdout: .pipe)
        output = LineReader(process.output!)
        guard eventually(within: 30, { output.lines.contains("ready") || !process.isRunning }), process.isRunning
        else {
            process.kill()
            throw FixtureError.toolFailed("hostile peer \(kind.arguments[0]) did not start (is python3-dbus there?)")
        }
    }

    deinit { stop() }

    /// Kills the peer: the bus drops its names with its connections.
    func stop() { process.kill() }

    // MARK: One-shot peers

    /// What one method call got: `return`, or `error:` and the error's name (`org.freedesktop.DBus.Error.NoReply`
    /// when nothing came within the peer's timeout), and how long it took.
    struct Outcome: CustomStringConvertible {
        var reply: String
        var seconds: Double
        var isError: Bool { reply.hasPrefix("error:") }
        var description: String { "\(reply) after \(seconds) s" }

        init(_ object: Any?) {
            let fields = object as? [String: Any]
            reply = fields?["reply"] as? String ?? "missing"
            seconds = fields?["seconds"] as? Double ?? .infinity
        }
    }

    /// One call of `bytes` bytes (an `ay` to `OpenUri`, which takes an `s`) to `destination`'s MPRIS object, with
    /// `Get(PlaybackStatus)` asked from a second connection every 50 ms while it is unanswered (at least 5 times).
    /// Returns the huge call's outcome and the slowest `Get`'s (the first failed one, if any failed).
    static func hugeCall(bus: String, destination: String, bytes: Int, timeout: Double) throws -> (
        call: Outcome, slowestGet: Outcome
    ) {
        let report = try run(["huge", bus, destination, "\(bytes)", "\(timeout)"], timeout: 3 * timeout + 30)
        return (Outcome(report["huge"]), Outcome(report["slowestGet"]))
    }

    /// Calls with the wrong signature, absurdly deep nesting (64 variants, 32 arrays, 32 structs: as deep as the bus
    /// lets through) and 300 000 values to `destination`'s MPRIS object, one after the other, then a plain
    /// `Get(PlaybackStatus)` (`afterwards`). Each case's outcome, by name.
    static func malformedCalls(bus: String, destination: String, timeout: Double) throws -> [String: Outcome] {
        let report = try run(["malformed", bus, destination, "\(timeout)"], timeout: 10 * timeout + 30)
        return report.mapValues(Outcome.init)
    }

    /// Sends every connection of process `pid` on the bus a `NameOwnerChanged` that says `name` lost its owner, as a
    /// signal addressed to each (the bus delivers those whatever their match rules). Returns how many were sent.
    @discardableResult
    static func forgeOwnerLost(_ name: String, toConnectionsOf pid: pid_t, bus: String) throws -> Int {
        try run(["owner-lost", bus, "\(pid)", name], timeout: 30)["sent"] as? Int ?? 0
    }

    /// Runs a one-shot peer and returns the JSON object it printed last.
    private static func run(_ arguments: [String], timeout: Double) throws -> [String: Any] {
        let output = try ChildProcess.run([python, "-c", script] + arguments, timeout: timeout)
        let lines = String(decoding: output.stdout, as: UTF8.self).split(separator: "\n")
        guard !output.timedOut, output.status == 0, let last = lines.last,
            let object = try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]
        else {
            throw FixtureError.toolFailed(
                "hostile peer \(arguments[0]): \(output.timedOut ? "timed out" : "status \(output.status)"): "
                    + String(decoding: output.stderr, as: UTF8.self))
        }
        return object
    }

    /// A signal sent `times` times by a connection of its own, which owns no name (a broadcast: the bus delivers it
    /// to every connection whose match rules take it). `arguments` in JSON, marshalled as `signature` says; a JSON
    /// object is an `a{sv}`, and one inside it a variant holding an `a{sv}`. (Not `gdbus emit --address`: it sends
    /// before registering with the bus, which the daemon answers by dropping the connection and the signal.)
    static func forgeSignal(
        bus: String, path: String, interface: String, member: String, signature: String, arguments: [Any],
        times: Int = 3
    ) throws {
        let json = String(decoding: try JSONSerialization.data(withJSONObject: arguments), as: UTF8.self)
        let sent = try run(["forge", bus, path, interface, member, signature, json, "\(times)"], timeout: 30)["sent"]
        guard sent as? Int == times else {
            throw FixtureError.toolFailed("forged \(member): sent \(sent ?? "nothing")")
        }
    }

    /// Whether `name` has an owner on the bus (false when the bus does not answer within 10 s).
    static func hasOwner(_ name: String, bus: String) -> Bool {
        (try? run(["has-owner", bus, name], timeout: 10))?["owned"] as? Bool == true
    }
}

/// `dbus-monitor --profile` on a bus: one line per message that matches `rule`, read as it comes.
final class BusWatcher: Sendable {
    private let process: ChildProcess
    private let output: LineReader

    /// Starts watching and waits (at most 20 s) until the monitor is in place.
    init(bus: String, rule: String) throws {
        process = try ChildProcess(["dbus-monitor", "--address", bus, "--profile", rule], stdout: .pipe)
        output = LineReader(process.output!)
        // A monitor gives up its unique name once it is one; from then on it sees everything that matches.
        guard eventually(within: 20, { output.lines.contains { $0.hasSuffix("\tNameLost") } }) else {
            process.kill()
            throw FixtureError.toolFailed("dbus-monitor did not start on \(bus)")
        }
    }

    deinit { process.kill() }

    /// The method calls seen so far whose member is `member`.
    func calls(to member: String) -> Int {
        output.lines.filter { $0.hasPrefix("mc\t") && $0.hasSuffix("\t" + member) }.count
    }
}

/// Reads a descriptor to its end on a thread of its own, so the writer never blocks on a full pipe; closes it then.
final class LineReader: Sendable {
    private let buffer = LineBuffer()

    init(_ fd: Int32) {
        let buffer = self.buffer
        Thread {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    buffer.append(Data(chunk[0..<count]))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            close(fd)
        }.start()
    }

    var lines: [String] { buffer.lines }
}

/// Runs `body` on a thread of its own and waits for it at most `seconds`: the seconds it took, or nil when it had not
/// returned by then (it is left running). How a test calls something that might hang without hanging itself.
func timed(within seconds: Double, _ body: @escaping @Sendable () -> Void) -> Double? {
    let done = DispatchSemaphore(value: 0)
    let start = monotonicSeconds()
    Thread {
        body()
        done.signal()
    }.start()
    guard done.wait(timeout: .now() + seconds) == .success else { return nil }
    return monotonicSeconds() - start
}

extension HostileBusPeer {
    /// The peers' Python. Blocking calls only, no main loop: a connection that owns a name and is never dispatched
    /// answers nothing, which is what a hung player looks like from the bus.
    static let script = #"""
        import json, os, sys, threading, time
        import dbus, dbus.lowlevel

        PLAYER, PATH = "org.mpris.MediaPlayer2.Player", "/org/mpris/MediaPlayer2"
        PROPERTIES = "org.freedesktop.DBus.Properties"
        DAEMON = ("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus")
        parent = os.getppid()

        def running(*buses):
            return os.getppid() == parent and all(bus.get_is_connected() for bus in buses)

        def own(bus, name):
            return bus.request_name(name, dbus.bus.NAME_FLAG_DO_NOT_QUEUE) == dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER

        def ready():
            print("ready", flush=True)

        def mute(address, name, hertz):
            bus = dbus.bus.BusConnection(address)
            if not own(bus, name): sys.exit("cannot own " + name)
            ready()
            n = 0
            while running(bus):
                signal = dbus.lowlevel.SignalMessage(PATH, PROPERTIES, "PropertiesChanged")
                metadata = dbus.Dictionary({"xesam:title": "Track %d" % n}, signature="sv", variant_level=1)
                status = dbus.String("Playing" if n % 2 else "Paused", variant_level=1)
                signal.append(PLAYER, {"PlaybackStatus": status, "Metadata": metadata}, dbus.Array([], signature="s"),
                              signature="sa{sv}as")
                bus.send_message(signal)
                bus.flush()
                n += 1
                time.sleep(1 / float(hertz))

        def flicker(address, name, hold):
            bus = dbus.bus.BusConnection(address)
            ready()
            while running(bus):
                own(bus, name)
                time.sleep(float(hold))
                bus.release_name(name)

        def silent(address, prefix, count):
            buses = [dbus.bus.BusConnection(address) for _ in range(int(count))]
            for i, bus in enumerate(buses):
                if not own(bus, prefix + str(i)): sys.exit("cannot own %s%d" % (prefix, i))
            ready()
            while running(*buses): time.sleep(0.2)

        def call(destination, interface, member, signature=None, *arguments):
            message = dbus.lowlevel.MethodCallMessage(destination, PATH, interface, member)
            if signature is not None: message.append(*arguments, signature=signature)
            return message

        def outcome(bus, message, timeout):
            start = time.monotonic()
            try:
                bus.send_message_with_reply_and_block(message, timeout)
                reply = "return"
            except dbus.exceptions.DBusException as error:
                reply = "error:%s" % error.get_dbus_name()
            return {"reply": reply, "seconds": round(time.monotonic() - start, 3)}

        def status_of(destination):
            return call(destination, PROPERTIES, "Get", "ss", PLAYER, "PlaybackStatus")

        def huge(address, destination, size, timeout):
            timeout = float(timeout)
            attacker, prober = dbus.bus.BusConnection(address), dbus.bus.BusConnection(address)
            message = call(destination, PLAYER, "OpenUri", "ay", dbus.ByteArray(b"\x01" * int(size)))
            result = {}
            thread = threading.Thread(target=lambda: result.update(huge=outcome(attacker, message, timeout)))
            start = time.monotonic()
            thread.start()
            gets = []
            while time.monotonic() - start < timeout and (thread.is_alive() or len(gets) < 5):
                gets.append(outcome(prober, status_of(destination), timeout))
                time.sleep(0.05)
            thread.join()
            failed = [get for get in gets if get["reply"] != "return"]
            result["slowestGet"] = failed[0] if failed else max(gets, key=lambda get: get["seconds"])
            print(json.dumps(result), flush=True)

        def nested(depth, leaf, wrap):
            for _ in range(depth): leaf = wrap(leaf)
            return leaf

        def malformed(address, destination, timeout):
            timeout = float(timeout)
            bus = dbus.bus.BusConnection(address)
            cases = {
                "seek with a string": call(destination, PLAYER, "Seek", "s", "far"),
                "get with integers": call(destination, PROPERTIES, "Get", "ii", 1, 2),
                "volume set to a string": call(destination, PROPERTIES, "Set", "ssv", PLAYER, "Volume",
                                               dbus.String("loud", variant_level=1)),
                "set position with bytes": call(destination, PLAYER, "SetPosition", "ay", dbus.ByteArray(b"\0" * 16)),
                "64 variants deep": call(destination, PLAYER, "Seek", "v", dbus.Int64(1, variant_level=64)),
                "32 arrays deep": call(destination, PLAYER, "Seek", "a" * 32 + "x",
                                       nested(31, [dbus.Int64(1)], lambda inner: [inner])),
                "32 structs deep": call(destination, PLAYER, "Seek", "(" * 32 + "x" + ")" * 32,
                                        nested(32, dbus.Int64(1), lambda inner: (inner,))),
                "300000 strings": call(destination, PLAYER, "Seek", "as", dbus.Array(["s"] * 300000, signature="s")),
            }
            result = {name: outcome(bus, message, timeout) for name, message in cases.items()}
            result["afterwards"] = outcome(bus, status_of(destination), timeout)
            print(json.dumps(result), flush=True)

        def owner_lost(address, pid, name):
            bus = dbus.bus.BusConnection(address)
            sent = 0
            for unique in [n for n in bus.list_names() if n.startswith(":") and n != bus.get_unique_name()]:
                try:
                    if bus.call_blocking(*DAEMON, "GetConnectionUnixProcessID", "s", (unique,)) != int(pid): continue
                except dbus.exceptions.DBusException:
                    continue
                signal = dbus.lowlevel.SignalMessage(DAEMON[1], DAEMON[2], "NameOwnerChanged")
                signal.set_destination(unique)
                signal.append(name, unique, "", signature="sss")
                bus.send_message(signal)
                sent += 1
            bus.flush()
            print(json.dumps({"sent": sent}), flush=True)

        def variants(value):
            if isinstance(value, dict):
                return dbus.Dictionary({key: variants(item) for key, item in value.items()}, signature="sv")
            return value

        def forge(address, path, interface, member, signature, arguments, times):
            bus = dbus.bus.BusConnection(address)
            for _ in range(int(times)):
                signal = dbus.lowlevel.SignalMessage(path, interface, member)
                signal.append(*[variants(argument) for argument in json.loads(arguments)], signature=signature)
                bus.send_message(signal)
            bus.flush()
            print(json.dumps({"sent": int(times)}), flush=True)

        def has_owner(address, name):
            print(json.dumps({"owned": bool(dbus.bus.BusConnection(address).name_has_owner(name))}), flush=True)

        modes = {"mute": mute, "flicker": flicker, "silent": silent, "huge": huge, "malformed": malformed,
                 "owner-lost": owner_lost, "forge": forge, "has-owner": has_owner}
        modes[sys.argv[1]](*sys.argv[2:])
        """#
}
