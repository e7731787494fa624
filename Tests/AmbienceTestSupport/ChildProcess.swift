import AmbiencePlatform
import Foundation
import Glibc
import Synchronization

/// The session bus of the test run (scripts/with-services.sh starts it), where the MPRIS suite's players are.
let sharedSessionBus = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] ?? ""

/// The environment of every program the tests start: the test process's own in a UTF-8 locale, on no session bus,
/// then `overrides`.
/// - In the C locale oggenc turns "Tëst" into "T##st"; C.UTF-8 is built into glibc, so it exists on any Debian.
/// - A program joins the shared session bus only when `overrides` says so (the MPRIS suite's, with
///   `sharedSessionBus`): an engine there in its default category would pause the MPRIS suite's players mid-test.
func childEnvironment(_ overrides: [String: String] = [:]) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["LANG"] = "C.UTF-8"
    environment["LC_ALL"] = "C.UTF-8"
    environment["DBUS_SESSION_BUS_ADDRESS"] = ""
    return environment.merging(overrides) { $1 }
}

/// A program the tests start, and the only way they start one. Every wait on it is bounded.
///
/// It is started with `posix_spawnp`, not Foundation's `Process`:
/// - with no signal blocked or ignored: a test's worker thread may block SIGTERM, and `Process` passes that mask on,
///   so its `terminate()` would never reach the child;
/// - in a process group of its own, so that ending it ends what it started too (a shell's background jobs);
/// - with only the descriptors it is given (everything from 3 up closed), so it cannot hold another child's pipe
///   open and keep that child's reader waiting for an end of file.
final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes. `brokenPipe`: a pipe whose reading end is closed before the
    /// child starts, so that every write to it fails with EPIPE (or raises SIGPIPE), as `COMMAND | head -c0` would.
    enum Stream { case null, pipe, brokenPipe }

    let pid: pid_t
    /// The parent's ends of the pipes asked for (close-on-exec); their owner closes them.
    let input: Int32?, output: Int32?, errors: Int32?
    let command: String
    /// The raw wait status, once reaped.
    private let reaped = Lock<Int32?>(nil)

    init(
        _ arguments: [String], environment: [String: String] = childEnvironment(), directory: String? = nil,
        stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null
    ) throws {
        command = arguments.joined(separator: " ")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [Int32?] = [nil, nil, nil]
        var childEnds: [Int32] = []
        defer { childEnds.forEach { close($0) } }
        for (fd, stream) in [stdin, stdout, stderr].enumerated() {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, Int32(fd), "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            case .pipe, .brokenPipe:
                var ends: [Int32] = [-1, -1]
                guard GNU.pipe2(&ends, O_CLOEXEC) == 0 else {
                    parentEnds.compactMap { $0 }.forEach { close($0) }
                    throw FixtureError.toolFailed("pipe for \(arguments[0]): \(String(cString: strerror(errno)))")
                }
                let (mine, theirs) = fd == 0 ? (ends[1], ends[0]) : (ends[0], ends[1])
                if stream == .brokenPipe { close(mine) } else { parentEnds[fd] = mine }
                childEnds.append(theirs)
                posix_spawn_file_actions_adddup2(&actions, theirs, Int32(fd))  // dup2 clears close-on-exec
            }
        }
        _ = GNU.addClosefrom(&actions, 3)
        if let directory { _ = GNU.addChdir(&actions, directory) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        ChildProgram.setPlainSignals(&attributes)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard status == 0 else {
            parentEnds.compactMap { $0 }.forEach { close($0) }
            throw FixtureError.toolFailed("cannot start \(arguments[0]): \(String(cString: strerror(status)))")
        }
        self.pid = pid
        (input, output, errors) = (parentEnds[0], parentEnds[1], parentEnds[2])
    }

    /// Reaps the child if it has ended. Never blocks.
    var isRunning: Bool {
        reaped.withLock { status in
            guard status == nil else { return false }
            var raw: Int32 = 0
            let result = waitpid(pid, &raw, WNOHANG)
            if result == pid { status = raw } else if result < 0 && errno == ECHILD { status = raw }
            return status == nil
        }
    }

    /// Waits up to `seconds` for the child to end; true when it has.
    @discardableResult
    func waitForExit(within seconds: Double) -> Bool {
        let deadline = monotonicSeconds() + seconds
        var pause: useconds_t = 500
        while isRunning {
            guard monotonicSeconds() < deadline else { return false }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
        return true
    }

    /// Sends `signal` to the child's whole process group.
    func signalGroup(_ signal: Int32) { Glibc.kill(-pid, signal) }

    /// Ends the child and its group: SIGTERM, then SIGKILL if it is still there after `grace` seconds; reaps it.
    func terminate(grace: Double = 2) {
        if isRunning {
            signalGroup(SIGTERM)
            if waitForExit(within: grace) { signalGroup(SIGKILL); return }  // what it started dies with it
        }
        kill()
    }

    /// SIGKILL to the group, as if it crashed, and reaps the child (SIGKILL cannot be caught: this ends at once).
    func kill() {
        signalGroup(SIGKILL)
        waitForExit(within: 10)
    }

    /// How it ended: `.exit` or `.uncaughtSignal` (also while it runs: `.exit`).
    var terminationReason: Process.TerminationReason {
        guard let raw = reaped.withLock({ $0 }) else { return .exit }
        return raw & 0x7f == 0 ? .exit : .uncaughtSignal
    }

    /// The exit status, or the number of the signal that ended it (as `Process` reports it); -1 while it runs.
    var terminationStatus: Int32 {
        guard let raw = reaped.withLock({ $0 }) else { return -1 }
        return raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f
    }
}

extension ChildProcess {
    /// What a program did, as `run` saw it.
    struct Output {
        var status: Int32
        var stdout: Data
        var stderr: Data
        /// True when the process ended by a signal rather than by exiting.
        var killedBySignal: Bool
        /// True when it ran past its time and was ended: SIGTERM, then SIGKILL after the grace period.
        var timedOut: Bool
        var seconds: Double
    }

    /// What the runner keeps of each stream; the rest is read and dropped, so a flood cannot eat the memory.
    static let captureLimit = 16 << 20

    /// Runs a program to its end, reading its stdout and stderr at once (so neither pipe can fill and stall it).
    /// After `timeout` seconds its group gets SIGTERM, after `grace` more SIGKILL. When the program has exited
    /// but something it started keeps its pipes open, that is killed after `grace` seconds. So this returns within
    /// about `timeout + 2 * grace` seconds whatever the program does.
    /// `stdout` and `stderr` may be `.brokenPipe` (or `.null`) instead; what such a stream got is not captured.
    static func run(
        _ arguments: [String], environment: [String: String] = childEnvironment(), directory: String? = nil,
        timeout: Double, grace: Double = 2, stdout: Stream = .pipe, stderr: Stream = .pipe
    ) throws -> Output {
        let start = monotonicSeconds()
        let child = try ChildProcess(
            arguments, environment: environment, directory: directory, stdout: stdout, stderr: stderr)
        var streams: [(fd: Int32, data: Data, open: Bool)] = [
            (child.output ?? -1, Data(), child.output != nil), (child.errors ?? -1, Data(), child.errors != nil)
        ]
        defer { for stream in streams where stream.fd >= 0 { close(stream.fd) } }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var terminatedAt: Double?, killedAt: Double?, exitedAt: Double?
        while true {
            let now = monotonicSeconds()
            let running = child.isRunning
            if !running && !streams.contains(where: \.open) { break }
            if running && terminatedAt == nil && now - start >= timeout {
                child.signalGroup(SIGTERM)
                terminatedAt = now
            }
            if !running && exitedAt == nil { exitedAt = now }
            // Past the grace period: the child ignored SIGTERM, or it exited and something it started holds the pipes.
            let overdue = terminatedAt.map { now - $0 >= grace } == true || exitedAt.map { now - $0 >= grace } == true
            if overdue && killedAt == nil {
                child.signalGroup(SIGKILL)
                killedAt = now
            }
            // SIGKILL ends everything in the group at once; a pipe still open a second later was passed outside it.
            if let killedAt, now - killedAt > 1 { break }
            var polled = streams.filter(\.open).map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            guard !polled.isEmpty else { usleep(10_000); continue }
            guard poll(&polled, nfds_t(polled.count), 50) > 0 else { continue }
            for entry in polled where entry.revents != 0 {
                guard let index = streams.firstIndex(where: { $0.fd == entry.fd }) else { continue }
                let count = read(entry.fd, &chunk, chunk.count)
                if count > 0 {
                    if streams[index].data.count < captureLimit {
                        streams[index].data.append(contentsOf: chunk[0..<count])
                    }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    streams[index].open = false
                }
            }
        }
        if child.isRunning { child.kill() }
        return Output(
            status: child.terminationStatus, stdout: streams[0].data, stderr: streams[1].data,
            killedBySignal: child.terminationReason == .uncaughtSignal, timedOut: terminatedAt != nil,
            seconds: monotonicSeconds() - start)
    }
}

/// glibc's GNU extensions that Swift's Glibc module leaves out (it is not built with _GNU_SOURCE), looked up once.
private enum GNU {
    static let pipe2 = function("pipe2", as: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32).self)
    static let addClosefrom = function(
        "posix_spawn_file_actions_addclosefrom_np",
        as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    static let addChdir = function(
        "posix_spawn_file_actions_addchdir_np",
        as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32).self)

    private static func function<F>(_ name: String, as type: F.Type) -> F {
        guard let symbol = dlsym(nil, name) else { fatalError("glibc has no \(name): glibc 2.34 or later is needed") }
        return unsafeBitCast(symbol, to: type)
    }
}

/// Seconds on the monotonic clock.
func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
