import Glibc

/// The process's standard input, output and error, as the descriptors 0, 1 and 2 it was started with: for a program
/// (the `ambience` command, the stand-in's one line of stderr), which writes them straight, not through stdio.
package enum StandardStream: Int32, Sendable {
    case input = 0
    case output = 1
    case error = 2

    /// Whether the stream is a terminal (`isatty`).
    package var isTerminal: Bool { isatty(rawValue) == 1 }

    /// What the stream is open on (`fstat`).
    package func status() throws(Errno) -> FileStatus {
        var status = stat()
        guard fstat(rawValue, &status) == 0 else { throw .current }
        return FileStatus(status)
    }

    /// One `write` of `bytes`: how many were written, not retried. EINTR and EAGAIN come back as they are, for a
    /// caller that decides between retrying and stopping (a Ctrl-C may have asked it to stop).
    package func writeOnce(_ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        guard let start = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        let written = write(rawValue, start, bytes.count)
        guard written >= 0 else { throw .current }
        return written
    }

    /// Writes `text` (the caller's line, with its newline) in one `write`, ignoring failure: a line on stderr that has
    /// nowhere else to go. One call keeps the line whole among other threads' and processes' lines.
    package func writeWhole(_ text: String) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { _ = try? writeOnce($0) }
    }

    /// Waits at most `milliseconds` for room to write (`poll` for POLLOUT): for a stream another program left
    /// non-blocking.
    package func waitUntilWritable(milliseconds: Int32) {
        var ready = pollfd(fd: rawValue, events: Int16(POLLOUT), revents: 0)
        _ = poll(&ready, 1, max(milliseconds, 0))
    }

    /// One `read` of what is there, up to `count` bytes, on a stream made non-blocking (`KeyboardInput`): nil at the
    /// end of the input, empty when nothing is waiting (EAGAIN, EINTR) or on another failure.
    package func readAvailable(upTo count: Int) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: max(count, 1))
        let got = buffer.withUnsafeMutableBytes { read(rawValue, $0.baseAddress, $0.count) }
        if got == 0 { return nil }
        return got > 0 ? Array(buffer[0..<got]) : []
    }

    /// Sets or clears `O_NONBLOCK` on the open file (shared with every process that holds it).
    package func setNonBlocking(_ nonBlocking: Bool) {
        let flags = fcntl(rawValue, F_GETFL)
        guard flags >= 0 else { return }
        _ = fcntl(rawValue, F_SETFL, nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK)
    }

    /// Flushes every stdio stream of the process (`fflush(NULL)`): what C libraries printed through stdio is written
    /// before what the program writes next.
    package static func flushBuffered() {
        fflush(nil)
    }
}

/// Standard input read key by key without waiting: a terminal's keys as they are typed (no line editing, no echo),
/// or a pipe's bytes as they come. The terminal's mode and the stream's blocking are put back by `deinit`.
///
/// Owned by one thread at a time.
package final class KeyboardInput {
    /// Whether standard input is a terminal, whose keys come one by one.
    package let isTerminal = StandardStream.input.isTerminal
    private var saved = termios()

    package init() {
        StandardStream.input.setNonBlocking(true)
        if isTerminal {
            tcgetattr(STDIN_FILENO, &saved)
            var raw = saved
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        }
    }

    deinit {
        if isTerminal { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
        StandardStream.input.setNonBlocking(false)
    }

    /// What was typed or piped in since the last call (at most 256 bytes); nil at the end of the input.
    package func read() -> [UInt8]? {
        StandardStream.input.readAvailable(upTo: 256)
    }
}
