import Glibc

/// The terminal's foreground process group, handed to a program the process runs as its job and taken back when the
/// job ends, as a shell does: while the program holds it, the keys the terminal turns into signals (Ctrl-C, Ctrl-\)
/// reach the program alone, and it may read the terminal. Nothing happens when standard input is not a terminal, or
/// when this process does not hold the terminal's foreground (it was started in the background).
package enum ForegroundTerminal {
    /// Gives the terminal on standard input to `group` when this process's group is its foreground now. Returns
    /// whether it did, and so whether `takeBack()` is owed.
    package static func hand(to group: pid_t) -> Bool {
        guard isatty(STDIN_FILENO) == 1, tcgetpgrp(STDIN_FILENO) == getpgrp() else { return false }
        return withBackgroundWritesAllowed { tcsetpgrp(STDIN_FILENO, group) == 0 }
    }

    /// Makes this process's group the terminal's foreground again.
    package static func takeBack() {
        _ = withBackgroundWritesAllowed { tcsetpgrp(STDIN_FILENO, getpgrp()) }
    }

    /// Runs `body` with SIGTTOU blocked on this thread: a process in the background that sets the terminal's
    /// foreground is otherwise stopped by it (the very case of taking the terminal back).
    private static func withBackgroundWritesAllowed<T>(_ body: () -> T) -> T {
        var blocked = sigset_t(), previous = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTTOU)
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        return body()
    }
}
