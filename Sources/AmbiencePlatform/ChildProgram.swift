import Glibc

/// Why a program the engine started did not do what was asked.
package enum ChildProgramError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The system would not start it (not found, not executable, out of processes).
    case notStarted(String, Errno)
    /// It ran past its time and was killed.
    case timedOut(String, seconds: Double)
    /// It ended with a status other than 0 (a signal's number is 128 more).
    case failed(String, status: Int32)
    /// The caller called the wait off, and it was killed.
    case cancelled(String)

    package var description: String {
        switch self {
        case .notStarted(let program, let error): "\(program): cannot be started (\(error))"
        case .timedOut(let program, let seconds): "\(program): no answer within \(seconds) s"
        case .failed(let program, let status): "\(program): ended with status \(status)"
        case .cancelled(let program): "\(program): called off"
        }
    }
}

/// The programs the engine starts (a desktop query, a music player): the one place it calls `posix_spawn`.
///
/// Each starts in a session of its own (so the game's terminal and its signals are not its), with the default
/// signal dispositions and no signal blocked (a thread of the game may block some, and a child would inherit the
/// mask), standard input and output on /dev/null unless read, and none of the game's other descriptors.
package enum ChildProgram {
    /// The process's environment, as a child gets it unless told otherwise.
    package static var currentEnvironment: [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return result
    }

    /// Starts `arguments` (the first found on `PATH` unless it holds a slash) and returns its process ID at once.
    /// The caller reaps it (`endStatus(of:)`).
    package static func start(_ arguments: [String], environment: [String: String]) throws(ChildProgramError) -> pid_t {
        try spawn(arguments, environment: environment, output: nil)
    }

    /// Starts `arguments` as the command's own job, the way a shell starts one: it keeps the caller's standard input,
    /// output and error (and so its terminal), in a process group of its own (its ID is the program's process ID), so
    /// that signals for it can be sent to it alone. Returns its process ID at once; the caller reaps it
    /// (`endStatus(of:)`).
    package static func startAttached(_ arguments: [String], environment: [String: String]) throws(ChildProgramError)
        -> pid_t
    {
        try spawn(arguments, environment: environment, output: nil, attached: true)
    }

    /// Runs `arguments` to its end and returns what it wrote to standard output (the first `limit` bytes), waiting
    /// at most `timeout` seconds: past that it is killed, with what it had started, and this throws `timedOut`.
    /// `isCancelled` is asked every 50 ms at most; once it says yes, the program is killed and this throws
    /// `cancelled`.
    package static func output(
        of arguments: [String], environment: [String: String], timeout: Double, limit: Int = 65_536,
        isCancelled: () -> Bool = { false }
    ) throws(ChildProgramError) -> String {
        let program = arguments.first ?? ""
        var ends: [Int32] = [-1, -1]
        // Close-on-exec from the start: a child another thread spawns meanwhile must not hold the write end open.
        guard let pipe2 = Self.pipe2, pipe2(&ends, O_CLOEXEC) == 0 else { throw .notStarted(program, .current) }
        let pid: pid_t
        do {
            pid = try spawn(arguments, environment: environment, output: ends[1])
        } catch {
            close(ends[0])
            close(ends[1])
            throw error
        }
        close(ends[1])
        defer { close(ends[0]) }
        let deadline = monotonicDeadline(afterSeconds: timeout)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var open = true
        while open {
            let left = (deadline - monotonicNanoseconds()) / 1_000_000
            guard left > 0 else { break }
            if isCancelled() {
                end(pid, grace: 0)
                throw .cancelled(program)
            }
            var poller = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left, 50)))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                open = false
            } else if bytes.count < limit {
                bytes += chunk[0..<min(count, limit - bytes.count)]
            }
        }
        while true {
            if let status = endStatus(of: pid) {
                guard status == 0 else { throw .failed(program, status: status) }
                return String(decoding: bytes, as: UTF8.self)
            }
            guard monotonicNanoseconds() < deadline, !isCancelled() else { break }
            sleepUntil(monotonicNanoseconds: min(deadline, monotonicNanoseconds() + 2_000_000))
        }
        end(pid, grace: 0)
        throw .timedOut(program, seconds: timeout)
    }

    /// The exit status of `pid` once it has ended (it is reaped then), else nil. A process that is not ours, or is
    /// gone already, counts as ended with status 0: there is nothing left to wait for.
    package static func endStatus(of pid: pid_t) -> Int32? {
        var raw: Int32 = 0
        let result = waitpid(pid, &raw, WNOHANG)
        if result == 0 { return nil }
        if result < 0 { return errno == EINTR ? nil : 0 }
        let signal = raw & 0x7F
        return signal == 0 ? (raw >> 8) & 0xFF : 128 + signal
    }

    /// Ends `pid` and what it started (its session's group): SIGTERM, then SIGKILL once `grace` seconds passed,
    /// and reaps it. Waits at most `grace` plus the moment a killed process takes.
    package static func end(_ pid: pid_t, grace: Double) {
        guard pid > 0 else { return }
        kill(-pid, SIGTERM)
        let deadline = monotonicDeadline(afterSeconds: grace)
        while endStatus(of: pid) == nil {
            if monotonicNanoseconds() >= deadline {
                kill(-pid, SIGKILL)
                var raw: Int32 = 0
                while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
                return
            }
            sleepUntil(monotonicNanoseconds: monotonicNanoseconds() + 5_000_000)
        }
    }

    /// glibc's flag for a new session (`POSIX_SPAWN_SETSID`), which Swift's Glibc module does not name.
    private static let newSession: Int32 = 0x80
    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34), looked up once: without it the children inherit
    /// only descriptors marked close-on-exec, which the engine's are.
    private static let addCloseFrom:
        (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
            guard let libc = try? SharedLibrary("libc.so.6"),
                let address = try? libc.address(of: "posix_spawn_file_actions_addclosefrom_np")
            else { return nil }
            return unsafeBitCast(
                address,
                to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }()

    /// `pipe2` (which Swift's Glibc module does not declare without _GNU_SOURCE), looked up once.
    static let pipe2: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32)? = {
        guard let libc = try? SharedLibrary("libc.so.6"), let address = try? libc.address(of: "pipe2") else {
            return nil
        }
        return unsafeBitCast(address, to: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32).self)
    }()

    /// `attached`: standard streams inherited and a process group of its own (`startAttached`); otherwise standard
    /// input and error on /dev/null, output on `output` or /dev/null, and a session of its own.
    private static func spawn(
        _ arguments: [String], environment: [String: String], output: Int32?, attached: Bool = false
    ) throws(ChildProgramError) -> pid_t {
        guard let program = arguments.first, !program.isEmpty else { throw .notStarted("", Errno(ENOENT)) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if !attached {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            if let output {
                posix_spawn_file_actions_adddup2(&actions, output, 1)
            } else {
                posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            }
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        _ = addCloseFrom?(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        setPlainSignals(&attributes)
        if attached { posix_spawnattr_setpgroup(&attributes, 0) }
        let grouping = attached ? Int32(POSIX_SPAWN_SETPGROUP) : newSession
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | grouping))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        // posix_spawnp looks along the PATH the child is given, as a shell would for it.
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let status =
            program.contains("/")
            ? posix_spawn(&pid, program, &actions, &attributes, argv, envp)
            : spawnAlongPath(&pid, program, path, &actions, &attributes, argv, envp)
        guard status == 0 else { throw .notStarted(program, Errno(status)) }
        return pid
    }

    /// Gives a child no blocked signal and the default action for those a game or the engine handles (a thread of
    /// the game may block some, and a child would inherit them). The caller adds `POSIX_SPAWN_SETSIGMASK` and
    /// `POSIX_SPAWN_SETSIGDEF` to its flags.
    package static func setPlainSignals(_ attributes: inout posix_spawnattr_t) {
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGCHLD, SIGALRM, SIGUSR1, SIGUSR2] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
    }

    /// Whether this process may read the file at `path`.
    package static func isReadable(_ path: String) -> Bool { access(path, R_OK) == 0 }

    /// The first executable file named `program` in `path`'s folders, or nil.
    package static func executable(_ program: String, path: String) -> String? {
        if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
        for folder in path.split(separator: ":") where !folder.isEmpty {
            let candidate = "\(folder)/\(program)"
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 {
                return candidate
            }
        }
        return nil
    }

    private static func spawnAlongPath(
        _ pid: inout pid_t, _ program: String, _ path: String, _ actions: inout posix_spawn_file_actions_t,
        _ attributes: inout posix_spawnattr_t, _ argv: [UnsafeMutablePointer<CChar>?],
        _ envp: [UnsafeMutablePointer<CChar>?]
    ) -> Int32 {
        guard let found = executable(program, path: path) else { return ENOENT }
        return posix_spawn(&pid, found, &actions, &attributes, argv, envp)
    }
}
