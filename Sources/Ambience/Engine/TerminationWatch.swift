import AmbiencePlatform
import Foundation
import Synchronization

/// The exit rule when the process is asked to end (SIGTERM, SIGINT, SIGHUP): the players the session paused are
/// resumed and the system music the game started is paused, then the process ends as the signal would have ended it.
///
/// The signal handler only writes a byte (`TerminationSignals`). A watcher thread reads it and leaves the work to the
/// game thread, which does it at the top of its next `update()`; a game thread that does not call `update()` within
/// `gameThreadGrace` (stuck in a loading screen, or never calling it) leaves it to the watcher thread. Either way
/// every registered engine is shut down, which carries out the rule, and the signal is raised again with its default
/// disposition. One per process: signals are.
final class TerminationWatch: @unchecked Sendable {
    static let shared = TerminationWatch()
    static let gameThreadGrace = 0.5

    private struct WeakEngine { weak var engine: AudioEngine? }

    /// Guards `engines`, `pendingSignal`, `taken` and `watching`.
    private let condition = NSCondition()
    private var engines: [WeakEngine] = []
    private var pendingSignal: Int32?
    private var taken = false
    private var watching = false
    /// `pendingSignal != nil`, for `update()`'s lock-free check every frame.
    private let hasPending = Atomic<Bool>(false)

    /// Installs the handler (where the program has not installed its own) and watches for `engine`. False when no
    /// signal could be taken: the program handles them itself.
    @discardableResult
    func register(_ engine: AudioEngine) -> Bool {
        guard let taken = try? TerminationSignals.install(), !taken.isEmpty else { return false }
        condition.lock()
        defer { condition.unlock() }
        engines.removeAll { $0.engine == nil }
        engines.append(WeakEngine(engine: engine))
        if !watching {
            // Never joined: it lives as long as the process, blocked in its wait.
            watching = WorkerThread.detached(name: "ambience.signals") { [self] in watch() }
            guard watching else {
                // No thread to carry out the rule: the signals must still end the process, as they did before.
                engines.removeAll()
                TerminationSignals.uninstall()
                return false
            }
        }
        return true
    }

    func unregister(_ engine: AudioEngine) {
        condition.lock()
        engines.removeAll { $0.engine == nil || $0.engine === engine }
        condition.unlock()
    }

    /// Called by `update()`: when a signal is waiting, carries out the rule on this thread and ends the process.
    func finishIfSignalled() {
        guard hasPending.load(ordering: .acquiring) else { return }
        condition.lock()
        guard let signo = pendingSignal, !taken else { condition.unlock(); return }
        taken = true
        condition.unlock()
        finish(signo)
    }

    /// The watcher thread: lives as long as the process, blocked waiting for a signal.
    private func watch() {
        while true {
            guard let signo = TerminationSignals.wait(milliseconds: -1) else { continue }
            condition.lock()
            pendingSignal = signo
            hasPending.store(true, ordering: .releasing)
            let deadline = Date(timeIntervalSinceNow: Self.gameThreadGrace)
            while !taken && condition.wait(until: deadline) {}
            let mine = !taken
            taken = true
            condition.unlock()
            // The game thread took it: it ends the process; this thread only waits for that.
            if mine { finish(signo) }
        }
    }

    private func finish(_ signo: Int32) -> Never {
        condition.lock()
        let all = engines.compactMap(\.engine)
        condition.broadcast()
        condition.unlock()
        Log.info("engine: signal \(signo): carrying out the exit rule, then ending by it")
        for engine in all { engine.shutdown() }
        TerminationSignals.endProcess(as: signo)
    }
}
