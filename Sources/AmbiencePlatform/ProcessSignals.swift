import Glibc

/// A program's own signal dispositions, and signals sent: for the `ambience` command, which owns its process (the
/// engine, a library, never changes a disposition: see `FileDescriptor.withBrokenPipeHeld` and
/// `TerminationSignals`, which leaves a handler it did not install).
///
/// Every call is async-signal-safe (`sigaction`, `raise`, `kill`, no allocation), so a handler may use them.
package enum ProcessSignals {
    /// A signal handler: C's, called with the signal's number.
    package typealias Handler = @convention(c) (Int32) -> Void

    /// Ignores `signo` from now on (SIG_IGN).
    package static func ignore(_ signo: Int32) throws(Errno) {
        try setDisposition(signo, SIG_IGN)
    }

    /// Gives `signo` its default action again (SIG_DFL): a signal that ends a process ends it.
    package static func restoreDefault(_ signo: Int32) throws(Errno) {
        try setDisposition(signo, SIG_DFL)
    }

    /// Calls `handler` when `signo` arrives. Interrupted calls restart (`SA_RESTART`), as they do under `signal`.
    package static func handle(_ signo: Int32, with handler: Handler) throws(Errno) {
        try setDisposition(signo, handler)
    }

    /// Sends `signo` to the calling thread (`raise`): with its default action, the process ends as by the signal.
    package static func raise(_ signo: Int32) throws(Errno) {
        guard Glibc.raise(signo) == 0 else { throw .current }
    }

    /// Sends `signo` to the process `pid` (`kill`; a negative `pid` is a process group). ESRCH when it is gone.
    package static func send(_ signo: Int32, to pid: pid_t) throws(Errno) {
        guard kill(pid, signo) == 0 else { throw .current }
    }

    private static func setDisposition(_ signo: Int32, _ handler: Handler?) throws(Errno) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handler
        action.sa_flags = SA_RESTART
        sigemptyset(&action.sa_mask)
        guard sigaction(signo, &action, nil) == 0 else { throw .current }
    }
}
