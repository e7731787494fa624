import Foundation
import Glibc

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceDesktop
@testable import AmbienceTestSupport

/// A sound server (PulseAudio, or PipeWire with its PulseAudio server) or dbus-daemon of the test's own, at a fixed
/// address, that can be killed and started again there.
/// A `ChildProcess`, never a Foundation `Process`: pulseaudio closes every inherited descriptor at start-up, which
/// Foundation takes for the child's exit, and later `Process.waitUntilExit()` calls in the test process hang.
final class ThrowawayService {
    let address: String
    let environment: [String: String]
    private let arguments: [String]
    /// The service's own environment: `environment`, and what only its start needs.
    private let serviceEnvironment: [String: String]
    /// Removes what a killed instance left that `isReady` would take for the new one's (a socket, a marker file).
    private let clearLeftovers: () -> Void
    private let isReady: () -> Bool
    private var process: ChildProcess?

    private init(
        arguments: [String], address: String, environment: [String: String],
        serviceEnvironment: [String: String] = [:], clearLeftovers: @escaping () -> Void = {},
        isReady: @escaping () -> Bool
    ) throws {
        self.arguments = arguments
        self.address = address
        self.environment = environment
        self.serviceEnvironment = environment.merging(serviceEnvironment) { $1 }
        self.clearLeftovers = clearLeftovers
        self.isReady = isReady
        try start()
    }

    deinit { kill() }

    /// A server of the kind the run asked for (`SoundServer.requested`) with null sinks named `sinks` (described by
    /// their capitalised names), the first the default, answering on `address` with the PulseAudio protocol.
    static func soundServer(in fixtures: Fixtures, sinks: [String] = ["speakers"]) throws -> ThrowawayService {
        switch SoundServer.requested {
        case .pulseaudio: try pulseaudio(in: fixtures, sinks: sinks)
        case .pipewire: try pipewire(in: fixtures, sinks: sinks)
        }
    }

    /// A PulseAudio server with null sinks named `sinks` (described by their capitalised names), the first the default.
    static func pulseaudio(in fixtures: Fixtures, sinks: [String] = ["speakers"]) throws -> ThrowawayService {
        let config = fixtures.path("server.pa")
        let sinkLines = sinks.map {
            "load-module module-null-sink sink_name=\($0) sink_properties=device.description=\($0.capitalized)\n"
        }
        try
            ("load-module module-native-protocol-unix auth-anonymous=1 socket=\(fixtures.path("native"))\n"
            + sinkLines.joined() + "set-default-sink \(sinks[0])\n").write(
                toFile: config, atomically: true, encoding: .utf8)
        for folder in ["runtime", "state"] {
            try FileManager.default.createDirectory(atPath: fixtures.path(folder), withIntermediateDirectories: true)
        }
        let address = "unix:" + fixtures.path("native")
        let environment = [
            "PULSE_SERVER": address, "PULSE_RUNTIME_PATH": fixtures.path("runtime"),
            "PULSE_STATE_PATH": fixtures.path("state")
        ]
        return try ThrowawayService(
            arguments: [
                "pulseaudio", "-n", "-F", config, "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit=yes",
                "--use-pid-file=no", "--realtime=no", "--high-priority=no",
                "--log-target=file:\(fixtures.path("pulseaudio.log"))"
            ],
            address: address, environment: environment,
            isReady: { (try? Fixtures.run("pactl", ["info"], environment: environment, timeout: 10)) != nil })
    }

    /// pipewire, wireplumber and pipewire-pulse (scripts/pipewire-server.sh) with null sinks named `sinks`, the first
    /// the default; ready once the script says so (wireplumber has made it the default, and every sink is listed).
    /// Killing it kills the script's process group.
    /// `coreDelay`: the pipewire daemon starts that many seconds late (a wrapper on the script's PATH), as on a
    /// loaded machine, while the killed one's socket is still there: the order in which its other parts used to
    /// start before it answered.
    static func pipewire(in fixtures: Fixtures, sinks: [String] = ["speakers"], coreDelay: Double = 0) throws
        -> ThrowawayService
    {
        let root = fixtures.path("pipewire")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let address = "unix:" + root + "/native"
        let environment = ["PULSE_SERVER": address]
        var serviceEnvironment: [String: String] = [:]
        if coreDelay > 0 {
            let wrappers = fixtures.path("slow-pipewire")
            try FileManager.default.createDirectory(atPath: wrappers, withIntermediateDirectories: true)
            let real = try fixtures.run("bash", ["-c", "command -v pipewire"])
                .trimmingCharacters(in: .whitespacesAndNewlines)
            try "#!/bin/sh\nsleep \(coreDelay)\nexec \(real) \"$@\"\n".write(
                toFile: wrappers + "/pipewire", atomically: true, encoding: .utf8)
            chmod(wrappers + "/pipewire", 0o755)
            let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
            serviceEnvironment["PATH"] = wrappers + ":" + path
        }
        return try ThrowawayService(
            arguments: ["bash", BuildProducts.root + "/scripts/pipewire-server.sh", root] + sinks,
            address: address, environment: environment, serviceEnvironment: serviceEnvironment,
            // The killed script's marker: seen before the new script removes it, it made `start()` return at once,
            // and the test waited on a server that had not come back (or had failed to).
            clearLeftovers: { unlink(root + "/ready") },
            isReady: { access(root + "/ready", F_OK) == 0 })
    }

    static func dbus(in fixtures: Fixtures) throws -> ThrowawayService {
        let socket = fixtures.path("bus.sock")
        let address = "unix:path=" + socket
        return try ThrowawayService(
            arguments: ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=\(address)"],
            address: address, environment: ["DBUS_SESSION_BUS_ADDRESS": address],
            clearLeftovers: { unlink(socket) },
            isReady: {
                access(socket, F_OK) == 0
                    && (try? MPRISClient(busAddress: address, timeout: .milliseconds(500)))?.isConnected == true
            })
    }

    /// Starts the service (again) and waits until it answers, at most `waitBound`.
    func start() throws {
        kill()
        clearLeftovers()
        let process = try ChildProcess(arguments, environment: childEnvironment(serviceEnvironment))
        self.process = process
        guard eventually(within: waitBound, { !process.isRunning || isReady() }), process.isRunning else {
            kill()
            throw FixtureError.toolFailed("\(arguments.prefix(2).joined(separator: " ")) did not start")
        }
    }

    /// SIGSTOP to its whole process group: it still accepts connections (the kernel queues them) but answers nothing,
    /// as a server stuck in a kernel wait or a debugger does. `thaw()` lets it go on.
    func freeze() { process?.signalGroup(SIGSTOP) }

    func thaw() { process?.signalGroup(SIGCONT) }

    /// SIGKILL, no clean-up: as if it crashed. Safe to call more than once.
    func kill() {
        process?.kill()
        process = nil
    }
}
