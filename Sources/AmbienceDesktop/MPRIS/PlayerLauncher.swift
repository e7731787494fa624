import AmbiencePlatform
import Glibc
import Synchronization

/// Why no music player could be started for the system music player.
package enum PlayerLaunchError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The game reaches no session bus, so a player would be out of its reach.
    case noSessionBus
    /// None of the players the engine can drive over MPRIS is installed (`MPRISPlayerProgram.known`).
    case noPlayerInstalled
    /// Each player tried, and what went wrong with it.
    case noneStarted([Attempt])
    /// The launch was called off before a player appeared.
    case cancelled

    /// One player tried.
    package struct Attempt: Equatable, Sendable {
        package var program: String
        package var reason: String
    }

    package var description: String {
        switch self {
        case .noSessionBus: "no session bus"
        case .noPlayerInstalled:
            "no music player with MPRIS is installed (looked for "
                + MPRISPlayerProgram.known.map(\.executable).joined(separator: ", ") + ")"
        case .noneStarted(let attempts): attempts.map { "\($0.program): \($0.reason)" }.joined(separator: "; ")
        case .cancelled: "cancelled"
        }
    }
}

/// Starts the user's music player when the game wants the system music player and none is on the bus: the
/// desktop's default for audio files (`xdg-mime`, else `gio`) when the engine can drive it, else the first installed
/// of `MPRISPlayerProgram.known` (`PreferredPlayer` decides). Each is given at most `patience` to appear on the bus;
/// one that does not is ended, and the next is tried.
///
/// All of it runs on a thread of its own, so the game thread never waits on the desktop, the disk or a child: it
/// reads `outcome` each frame. The player is started in a session of its own and outlives the game; it is the user's.
package final class PlayerLauncher: Sendable {
    /// How it ended: the player's bus name and process, or why none could be started.
    package enum Outcome: Sendable, Equatable {
        case started(busName: String, program: String, processID: pid_t)
        case failed(PlayerLaunchError)
    }

    /// Shared with the thread, which must not hold the launcher itself (its deinit calls the launch off).
    private final class Result: Sendable {
        let outcome = Lock<Outcome?>(nil)
    }
    private let result = Result()
    private let worker = Lock<WorkerThread?>(nil)

    /// Starts looking for a player and starting it, at once, for `systemPlayer` (whose bus shows when it is there).
    /// `busAddress` is the session bus the engine uses, handed to the player; `environment` is what the desktop
    /// queries and the player see (the process's own, by default).
    package init(
        for systemPlayer: SystemMusicPlayer, busAddress: String?, patience: Double = 10,
        environment: [String: String] = ChildProgram.currentEnvironment
    ) {
        guard let busAddress, !busAddress.isEmpty, systemPlayer.isAvailable else {
            result.outcome.withLock { $0 = .failed(.noSessionBus) }
            return
        }
        var environment = environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        let child = environment
        let thread = WorkerThread(name: "ambience-launch") { [result] control in
            let outcome = Self.launch(for: systemPlayer, environment: child, patience: patience, control: control)
            result.outcome.withLock { $0 = outcome }
            // The player is the user's and outlives the game, but while the game runs it is this process's child:
            // reap it when the user quits it, so that it never lingers as a zombie.
            if case .started(_, _, let pid) = outcome {
                while !control.isStopRequested && ChildProgram.endStatus(of: pid) == nil { control.wait(seconds: 0.5) }
            }
        }
        if thread.isRunning {
            worker.withLock { $0 = thread }
        } else {
            result.outcome.withLock {
                $0 = .failed(.noneStarted([.init(program: "launcher", reason: "the system gave no thread")]))
            }
        }
    }

    deinit { cancel() }

    /// How the launch ended; nil while it goes on.
    package var outcome: Outcome? { result.outcome.withLock { $0 } }

    /// Calls the launch off: a player still on its way is ended. Returns once the thread has stopped (within a poll,
    /// or a desktop query's bounded wait).
    package func cancel() {
        let thread = worker.withLock { thread -> WorkerThread? in
            defer { thread = nil }
            return thread
        }
        thread?.stop()
        result.outcome.withLock { if $0 == nil { $0 = .failed(.cancelled) } }
    }

    // MARK: On the launcher's thread

    /// How long a desktop query (`xdg-mime`, `gio`) may take.
    static let queryTimeout = 2.0

    /// The players to try, from the desktop's answers.
    static func plans(environment: [String: String], isCancelled: () -> Bool = { false }) -> [PlayerLaunchPlan] {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let locate = { (name: String) in ChildProgram.executable(name, path: path) }
        // Their messages in English, whatever the user's language: the output is parsed, not shown.
        var queryEnvironment = environment
        queryEnvironment["LC_ALL"] = "C.UTF-8"
        queryEnvironment["LANGUAGE"] = nil
        var desktopID: String?
        if let xdgMime = locate("xdg-mime") {
            desktopID =
                (try? ChildProgram.output(
                    of: [xdgMime, "query", "default", PreferredPlayer.audioType], environment: queryEnvironment,
                    timeout: queryTimeout, isCancelled: isCancelled)).flatMap(PreferredPlayer.desktopID(xdgMimeOutput:))
        }
        if desktopID == nil, let gio = locate("gio") {
            desktopID =
                (try? ChildProgram.output(
                    of: [gio, "mime", PreferredPlayer.audioType], environment: queryEnvironment, timeout: queryTimeout,
                    isCancelled: isCancelled))
                .flatMap(PreferredPlayer.desktopID(gioMimeOutput:))
        }
        let entry = desktopID.flatMap { id in
            PreferredPlayer.desktopFilePaths(for: id, environment: environment).lazy.compactMap(readSmallFile).first
        }
        let plugin = MPVMPRISPlugin.find(environment: environment, exists: ChildProgram.isReadable)
        return PreferredPlayer.plans(desktopID: desktopID, desktopEntry: entry, mpvPlugin: plugin, locate: locate)
    }

    /// A desktop file's text: at most 256 KiB, else nil (it is not one).
    private static func readSmallFile(_ path: String) -> String? {
        guard let (file, size) = try? FileDescriptor.openRegularFile(path), size <= 262_144,
            let bytes = try? file.readBytes(Int(size))
        else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func launch(
        for systemPlayer: SystemMusicPlayer, environment: [String: String], patience: Double,
        control: WorkerThread.Control
    ) -> Outcome {
        let plans = plans(environment: environment) { control.isStopRequested }
        guard !plans.isEmpty else { return .failed(.noPlayerInstalled) }
        var attempts: [PlayerLaunchError.Attempt] = []
        for plan in plans {
            if control.isStopRequested { return .failed(.cancelled) }
            let pid: pid_t
            do {
                pid = try ChildProgram.start([plan.path] + plan.arguments, environment: environment)
            } catch {
                attempts.append(.init(program: plan.program, reason: error.description))
                continue
            }
            let deadline = monotonicDeadline(afterSeconds: patience)
            var failure: String?
            while failure == nil {
                if let player = systemPlayer.players.first(where: { plan.matches($0, processID: pid) }) {
                    return .started(busName: player.name, program: plan.program, processID: pid)
                }
                if let status = ChildProgram.endStatus(of: pid) {
                    failure = "ended with status \(status) before it appeared on the session bus"
                } else if control.isStopRequested {
                    ChildProgram.end(pid, grace: 0)
                    return .failed(.cancelled)
                } else if monotonicNanoseconds() >= deadline {
                    // A player that never shows up is of no use to the game, and nobody asked for it otherwise.
                    ChildProgram.end(pid, grace: 1)
                    failure = "did not appear on the session bus within \(patience) s"
                } else {
                    control.wait(seconds: 0.05)
                }
            }
            attempts.append(.init(program: plan.program, reason: failure ?? ""))
        }
        return .failed(.noneStarted(attempts))
    }
}

extension PlayerLaunchPlan {
    /// Whether `player` is the one this plan started (`processID`): by its process, or by the bus name it takes
    /// (a player that hands over to a process of its own still takes its name).
    func matches(_ player: MPRISPlayerInfo, processID: pid_t) -> Bool {
        if let process = player.processID, process == Int(processID) { return true }
        return player.shortName == busName || player.shortName.hasPrefix(busName + ".instance")
    }
}
