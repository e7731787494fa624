import Glibc
import Synchronization

/// SIGTERM, SIGINT and SIGHUP turned into wakes of a `Waker`, so that the process can finish what it must (the exit
/// rule) on an ordinary thread before it ends the way it was asked to.
///
/// The handler does only async-signal-safe work: `Waker.signalSafeWake` writes the signal's number to the waker's
/// non-blocking pipe (saving and restoring `errno`). Everything else happens on the thread that waits on it.
package enum TerminationSignals {
    /// The signals that ask a process to end and can be caught.
    package static let handled: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    /// The waker's write end; -1 until `install()` made it. Read by the handler, so an atomic, not a lock.
    private static let writeEnd = Atomic<Int32>(-1)
    /// The waker, made once and kept for the life of the process (the handler may write to it at any time), and the
    /// signals a wait drained beyond the one it returned.
    private static let state = Lock<(waker: Waker?, pending: [Int32])>((nil, []))

    /// Makes the waker (once) and installs the handler for every handled signal whose disposition is still the
    /// default: a handler the program installed itself (or an ignored signal) is left alone. Returns the signals
    /// taken now or earlier.
    package static func install() throws(Errno) -> [Int32] {
        try state.withLock { (state: inout (waker: Waker?, pending: [Int32])) throws(Errno) -> [Int32] in
            if state.waker == nil {
                // A flood of signals never blocks the handler: a full pipe drops the byte (one is enough).
                let waker = try Waker()
                writeEnd.store(waker.signalWriteEnd, ordering: .sequentiallyConsistent)
                state.waker = waker
            }
            var taken: [Int32] = []
            for signo in handled {
                var current = sigaction()
                guard sigaction(signo, nil, &current) == 0 else { throw Errno.current }
                // nil is SIG_DFL; ours from an earlier engine counts as taken; anything else is the program's.
                if let handler = current.__sigaction_handler.sa_handler {
                    if unsafeBitCast(handler, to: Int.self) == unsafeBitCast(onSignal, to: Int.self) {
                        taken.append(signo)
                    }
                    continue
                }
                var action = sigaction()
                action.__sigaction_handler.sa_handler = onSignal
                action.sa_flags = SA_RESTART
                sigemptyset(&action.sa_mask)
                guard sigaction(signo, &action, nil) == 0 else { throw Errno.current }
                taken.append(signo)
            }
            return taken
        }
    }

    /// Puts the default disposition back for every handled signal whose handler is ours: for when nothing could be
    /// started to wait on them, so that they end the process as before instead of waking nobody.
    package static func uninstall() {
        for signo in handled {
            var current = sigaction()
            guard sigaction(signo, nil, &current) == 0, let handler = current.__sigaction_handler.sa_handler,
                unsafeBitCast(handler, to: Int.self) == unsafeBitCast(onSignal, to: Int.self)
            else { continue }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = nil  // SIG_DFL
            sigemptyset(&action.sa_mask)
            _ = sigaction(signo, &action, nil)
        }
    }

    /// Waits up to `milliseconds` (-1: for ever) for a signal; returns its number, or nil. Signals that came
    /// together are returned one per call, in order.
    package static func wait(milliseconds: Int32) -> Int32? {
        let (queued, waker) = state.withLock { state -> (Int32?, Waker?) in
            state.pending.isEmpty ? (nil, state.waker) : (state.pending.removeFirst(), nil)
        }
        if let queued { return queued }
        guard let waker else { return nil }
        let timeout: Duration? = milliseconds < 0 ? nil : .milliseconds(milliseconds)
        let signals = waker.wait(timeout: timeout).wakeBytes.map(Int32.init)
        guard let first = signals.first else { return nil }
        state.withLock { $0.pending += signals.dropFirst() }
        return first
    }

    /// Ends the process as `signo` would have with its default disposition, so the parent sees the usual status
    /// (a shell shows 128 + signo). Falls back to `_exit(128 + signo)` should the signal not end it.
    package static func endProcess(as signo: Int32) -> Never {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = nil  // SIG_DFL
        sigemptyset(&action.sa_mask)
        _ = sigaction(signo, &action, nil)
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, signo)
        _ = pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        _ = raise(signo)
        _exit(128 + signo)
    }

    /// The handler: one wake, with the signal's number. Async-signal-safe: an atomic load, `write`, and `errno` put back.
    private static let onSignal: @convention(c) (Int32) -> Void = { signo in
        Waker.signalSafeWake(
            TerminationSignals.writeEnd.load(ordering: .relaxed), byte: UInt8(truncatingIfNeeded: signo))
    }
}
