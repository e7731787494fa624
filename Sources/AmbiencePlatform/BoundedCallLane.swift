import Dispatch
import Synchronization

/// A thread for calls into a library that can wait without a bound of its own (SDL's PulseAudio driver on a frozen
/// server, for one), so that their callers wait at most a deadline.
///
/// Such a wait cannot be cut short from outside: a thread blocked in `poll` inside libpulse stays there until the
/// server answers. So the caller gives up instead, and the call is left to the lane: when it finishes after all,
/// `late` receives its result there, to undo what the caller no longer wants (close a device opened too late).
/// Calls run one at a time in the order given, and a later call's deadline counts its wait behind an earlier one: a
/// slow server (a loaded machine) delays it, and it still succeeds. Only a lane stuck in one call for longer than
/// `patience` (a frozen server) refuses later calls at once (nil), instead of each waiting out its own deadline. The
/// patience is longer than any caller's deadline, so the call it is stuck in is one its caller gave up on.
/// One long-lived thread rather than one per call: SDL keeps per-thread data (its error text) that it never frees
/// when a thread it did not make ends.
package final class BoundedCallLane: Sendable {
    private let jobs = Jobs()
    private let worker: WorkerThread
    /// How long one call may run before the lane counts as stuck.
    private let patience: Duration

    package init(name: String, patience: Double = 10) {
        self.patience = .seconds(patience)
        let jobs = self.jobs
        worker = WorkerThread(name: name) { control in
            while !control.isStopRequested {
                let pending = jobs.takeAll()
                for job in pending { jobs.runTimed(job) }
                if pending.isEmpty { control.wait(seconds: 60) }
            }
        }
    }

    private final class Jobs: Sendable {
        private let waiting = Lock<[@Sendable () -> Void]>([])
        /// When the call running now began; nil between calls.
        let runningSince = Lock<ContinuousClock.Instant?>(nil)
        func runTimed(_ job: () -> Void) {
            runningSince.withLock { $0 = .now }
            job()
            runningSince.withLock { $0 = nil }
        }
        func add(_ job: @escaping @Sendable () -> Void) { waiting.withLock { $0.append(job) } }
        func takeAll() -> [@Sendable () -> Void] {
            waiting.withLock { waiting in
                defer { waiting.removeAll() }
                return waiting
            }
        }
    }

    /// Runs `body` on the lane and returns its result, or nil when it has not finished within `seconds`; then `late`
    /// gets the result if it ever comes.
    package func run<Result: Sendable>(
        seconds: Double, _ body: @escaping @Sendable () -> Result, late: @escaping @Sendable (Result) -> Void = { _ in }
    ) -> Result? {
        if isStuck { return nil }
        let call = PendingCall<Result>()
        let jobs = self.jobs
        jobs.add {
            let result = body()
            if call.finish(result) { late(result) }
        }
        worker.wake()
        // DispatchTime is the monotonic clock: a wall-clock jump neither cuts the wait short nor stretches it.
        let nanos = (max(seconds, 0) * 1e9).saturated(Int.self)
        if call.done.wait(timeout: .now() + .nanoseconds(nanos)) == .success { return call.take() }
        return call.abandon()
    }

    /// Whether one call has been running longer than `patience`.
    package var isStuck: Bool {
        guard let since = jobs.runningSince.withLock({ $0 }) else { return false }
        return ContinuousClock.now - since > patience
    }
}

/// One call's result, handed over once: to the waiting caller, or to `late` once the caller has given up.
private final class PendingCall<Result: Sendable>: Sendable {
    let done = DispatchSemaphore(value: 0)
    private let state = Lock<(result: Result?, abandoned: Bool)>((nil, false))

    /// Stores the result for the caller; true when the caller has already given up, so the result is the lane's.
    func finish(_ result: Result) -> Bool {
        let abandoned = state.withLock { state in
            if !state.abandoned { state.result = result }
            return state.abandoned
        }
        if !abandoned { done.signal() }
        return abandoned
    }

    func take() -> Result? { state.withLock { $0.result } }

    /// Gives up, unless the result came in between the timeout and this.
    func abandon() -> Result? {
        state.withLock { state in
            if let result = state.result { return result }
            state.abandoned = true
            return nil
        }
    }
}
