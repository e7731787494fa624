import Foundation
import Glibc
@testable import Ambience

/// A pulseaudio or dbus-daemon of the test's own, at a fixed address, that can be killed and started again there.
/// Started with `posix_spawn`, never `Process`: pulseaudio closes every inherited descriptor at start-up, which
/// Foundation takes for the child's exit, and later `Process.waitUntilExit()` calls in the test process hang.
final class ThrowawayService {
    let address: String
    let environment: [String: String]
    private let arguments: [String]
    private let isReady: () -> Bool
    private var pid: pid_t = 0

    private init(arguments: [String], address: String, environment: [String: String], isReady: @escaping () -> Bool) throws {
        self.arguments = arguments
        self.address = address
        self.environment = environment
        self.isReady = isReady
        try start()
    }

    deinit { kill() }

    /// A PulseAudio server with null sinks named `sinks` (described by their capitalised names), the first the default.
    static func pulseaudio(in fixtures: Fixtures, sinks: [String] = ["speakers"]) throws -> ThrowawayService {
        let config = fixtures.path("server.pa")
        let sinkLines = sinks.map { "load-module module-null-sink sink_name=\($0) sink_properties=device.description=\($0.capitalized)\n" }
        try ("load-module module-native-protocol-unix auth-anonymous=1 socket=\(fixtures.path("native"))\n"
             + sinkLines.joined() + "set-default-sink \(sinks[0])\n").write(toFile: config, atomically: true, encoding: .utf8)
        for folder in ["runtime", "state"] { try FileManager.default.createDirectory(atPath: fixtures.path(folder), withIntermediateDirectories: true) }
        let address = "unix:" + fixtures.path("native")
        let environment = ["PULSE_SERVER": address, "PULSE_RUNTIME_PATH": fixtures.path("runtime"), "PULSE_STATE_PATH": fixtures.path("state")]
        return try ThrowawayService(
            arguments: ["pulseaudio", "-n", "-F", config, "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit=yes",
                        "--use-pid-file=no", "--realtime=no", "--high-priority=no", "--log-target=file:\(fixtures.path("pulseaudio.log"))"],
            address: address, environment: environment,
            isReady: { (try? Fixtures.run("pactl", ["info"], environment: environment)) != nil })
    }

    static func dbus(in fixtures: Fixtures) throws -> ThrowawayService {
        let socket = fixtures.path("bus.sock")
        let address = "unix:path=" + socket
        return try ThrowawayService(
            arguments: ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=\(address)"],
            address: address, environment: ["DBUS_SESSION_BUS_ADDRESS": address],
            isReady: { access(socket, F_OK) == 0 && (try? MPRISClient(busAddress: address, timeout: .milliseconds(500)))?.isConnected == true })
    }

    /// Starts the service (again) and waits until it answers, at most 10 s.
    func start() throws {
        kill()
        if arguments[0] == "dbus-daemon", let path = address.split(separator: "=").last { unlink(String(path)) }
        pid = try spawn(arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        let deadline = Date().addingTimeInterval(10)
        while !isReady() {
            guard Date() < deadline, waitpid(pid, nil, WNOHANG) == 0 else {
                kill()
                throw FixtureError.toolFailed("\(arguments[0]) did not start")
            }
            usleep(20_000)
        }
    }

    /// SIGKILL, no clean-up: as if it crashed. Safe to call more than once.
    func kill() {
        guard pid > 0 else { return }
        Glibc.kill(pid, SIGKILL)
        waitpid(pid, nil, 0)
        pid = 0
    }
}

/// Starts `arguments[0]` (searched on PATH) with no signals blocked, stdin, stdout and stderr on /dev/null.
func spawn(_ arguments: [String], environment: [String: String]) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    var pid: pid_t = 0
    let status = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
    guard status == 0 else { throw FixtureError.toolFailed("posix_spawnp \(arguments[0]): \(String(cString: strerror(status)))") }
    return pid
}
