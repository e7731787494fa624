import Glibc
import Synchronization

/// SIGTERM, SIGINT and SIGHUP turned into bytes on a pipe, so that the process can finish what it must (the exit
/// rule) on an ordinary thread before it ends the way it was asked to.
///
/// The handler does only async-signal-safe work: it writes the signal's number to a non-blocking pipe (saving and
/// restoring `errno`). Everything else happens on the thread that reads the pipe.
package enum TerminationSignals {
    /// The signals that ask a process to end and can be caught.
    package static let handled: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    /// The pipe's ends; -1 until `install()` made it. Read by the handler, so atomics, not a lock.
    private static let writeEnd = Atomic<Int32>(-1)
    private static let readEnd = Atomic<Int32>(-1)
    private static let setUp = Mutex<Bool>(false)

    /// Makes the pipe (once) and installs the handler for every handled signal whose disposition is still the
    /// default: a handler the program installed itself (or an ignored signal) is left alone. Returns the signals
    /// taken now or earlier.
    package static func install() throws(Errno) -> [Int32] {
        try setUp.withLock { (made: inout Bool) throws(Errno) -> [Int32] in
            if !made {
                var ends: [Int32] = [-1, -1]
                guard pipe(&ends) == 0 else { throw Errno.current }
                for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
                // A flood of signals must never block the handler: a full pipe drops the byte (one is enough).
                _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
                readEnd.store(ends[0], ordering: .sequentiallyConsistent)
                writeEnd.store(ends[1], ordering: .sequentiallyConsistent)
                made = true
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

    /// Waits up to `milliseconds` (-1: for ever) for a signal; returns its number, or nil.
    package static func wait(milliseconds: Int32) -> Int32? {
        let fd = readEnd.load(ordering: .sequentiallyConsistent)
        guard fd >= 0 else { return nil }
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, milliseconds)
        guard ready > 0 else { return nil }
        var byte: UInt8 = 0
        let count = read(fd, &byte, 1)
        return count == 1 ? Int32(byte) : nil
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

    /// The handler: one byte on the pipe. Async-signal-safe: an atomic load, `write`, and `errno` put back.
    private static let onSignal: @convention(c) (Int32) -> Void = { signo in
        let saved = errno
        var byte = UInt8(truncatingIfNeeded: signo)
        _ = write(TerminationSignals.writeEnd.load(ordering: .relaxed), &byte, 1)
        errno = saved
    }
}
