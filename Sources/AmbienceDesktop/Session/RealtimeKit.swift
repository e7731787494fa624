import AmbienceCore
import AmbiencePlatform

/// rtkit (`org.freedesktop.RealtimeKit1` on the system bus), which raises a thread of the calling process for a user
/// who may not: to real time at a low priority, or to a negative nice level. Desktops run it for their sound
/// servers; a game's audio thread asks it as PulseAudio's and PipeWire's clients do. It answers with D-Bus errors
/// (`org.freedesktop.DBus.Error.AccessDenied: Operation not permitted` when refused), which reach the caller as
/// `DesktopError.remoteError`.
package final class RealtimeKit: Sendable {
    static let name = "org.freedesktop.RealtimeKit1"
    static let path = "/org/freedesktop/RealtimeKit1"
    /// rtkit asks polkit before it grants, and a desktop may start it on demand at the first call (bus activation):
    /// more than a plain call's timeout. The caller is a thread of its own, which nothing waits for.
    static let timeout = Duration.seconds(2)

    private let connection: DBusConnection

    /// Connects to the system bus at `address`.
    package init(address: String?) throws(DesktopError) {
        guard let address else { throw .busUnavailable("no system bus (DBUS_SYSTEM_BUS_ADDRESS, /run/dbus)") }
        connection = try DBusConnection(address: address)
    }

    deinit { connection.close() }

    /// What rtkit grants at most: its three properties. A daemon that is not there fails with the bus's own error
    /// (`ServiceUnknown`).
    package func limits() throws(DesktopError) -> ThreadScheduling.Limits {
        let names = ["MaxRealtimePriority", "MinNiceLevel", "RTTimeUSecMax"]
        let calls = names.map { property in
            DBusCall(
                destination: Self.name, path: Self.path, interface: "org.freedesktop.DBus.Properties", member: "Get",
                arguments: [.string(Self.name), .string(property)])
        }
        var values: [Int] = []
        for (property, result) in zip(names, connection.callAll(calls, timeout: Self.timeout)) {
            let reply = try result.get()
            guard let value = reply.first?.integer else { throw .unexpectedReply(property, reply) }
            values.append(Int(clamping: value))
        }
        return ThreadScheduling.Limits(
            maxRealtimePriority: values[0], minNiceLevel: values[1], realtimeCPUMicrosecondsMax: values[2])
    }

    /// Makes `thread` (a kernel thread id of this process) SCHED_RR at `priority`.
    package func makeRealtime(thread: Int32, priority: Int) throws(DesktopError) {
        _ = try connection.call(
            destination: Self.name, path: Self.path, interface: Self.name, member: "MakeThreadRealtime",
            arguments: [.uint64(UInt64(clamping: max(thread, 0))), .uint32(UInt32(clamping: max(priority, 0)))],
            timeout: Self.timeout)
    }

    /// Gives `thread` (a kernel thread id of this process) the nice level `level`.
    package func makeHighPriority(thread: Int32, level: Int) throws(DesktopError) {
        _ = try connection.call(
            destination: Self.name, path: Self.path, interface: Self.name, member: "MakeThreadHighPriority",
            arguments: [.uint64(UInt64(clamping: max(thread, 0))), .int32(Int32(clamping: level))],
            timeout: Self.timeout)
    }
}
