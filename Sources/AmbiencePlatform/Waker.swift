import Glibc

/// The one self-pipe: a descriptor that a thread waiting in `poll` watches beside the one it waits on, so that
/// another thread, or a signal handler, can end the wait at once.
///
/// Both ends are non-blocking and close-on-exec, and are closed with the waker. A wake never blocks: when the pipe
/// is full, the waiting thread has bytes enough to wake on. `wait` drains what is there, so one wait answers every
/// wake that came before it.
package final class Waker: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32

    /// What ended a `wait`.
    package struct Outcome: Sendable, Equatable {
        /// The descriptor waited on alongside the waker has one of the events asked for, or an error or a hangup
        /// (its own next call says which).
        package var ready: Bool
        /// The bytes written since the last wait (by `wake`, or a signal handler's `signalSafeWake`), oldest first;
        /// empty when the waker was not woken.
        package var wakeBytes: [UInt8]
        /// `poll` failed for a reason other than a signal (EINTR counts as a wait that ended early, with nothing).
        package var failure: Errno?

        /// Whether the waker was woken.
        package var woken: Bool { !wakeBytes.isEmpty }
    }

    /// Makes the pipe.
    package init() throws(Errno) {
        var ends: [Int32] = [-1, -1]
        if let pipe2 = ChildProgram.pipe2 {
            guard pipe2(&ends, O_CLOEXEC | O_NONBLOCK) == 0 else { throw .current }
        } else {
            guard pipe(&ends) == 0 else { throw .current }
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            }
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        _ = Glibc.close(readEnd)
        _ = Glibc.close(writeEnd)
    }

    /// Ends the current or next `wait`. Any thread; never blocks, takes no lock.
    package func wake() { Self.signalSafeWake(writeEnd) }

    /// The write end, for a signal handler that cannot reach this object (it keeps the number in an atomic). Valid as
    /// long as the waker lives.
    package var signalWriteEnd: Int32 { writeEnd }

    /// The wake a signal handler may make: one `write` of `byte` to `writeEnd`, with `errno` put back, and nothing
    /// else (async-signal-safe). A negative `writeEnd` (no waker yet) does nothing.
    package static func signalSafeWake(_ writeEnd: Int32, byte: UInt8 = 1) {
        guard writeEnd >= 0 else { return }
        let saved = errno
        var byte = byte
        _ = Glibc.write(writeEnd, &byte, 1)
        errno = saved
    }

    /// Waits until `descriptor` has one of `events` (`POLLIN`, `POLLOUT`), the waker is woken, or `timeout` passes
    /// (nil: no limit); then drains the waker. With no descriptor it waits for a wake alone. A timeout is rounded up
    /// to whole milliseconds: rounded down, the last fraction of a millisecond before a deadline would be a busy loop
    /// of waits that end at once.
    package func wait(alongside descriptor: Int32? = nil, events: Int16 = Int16(POLLIN), timeout: Duration?) -> Outcome
    {
        var entries = [pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)]
        if let descriptor { entries.append(pollfd(fd: descriptor, events: events, revents: 0)) }
        let count = poll(&entries, nfds_t(entries.count), timeout.map(Self.milliseconds) ?? -1)
        if count < 0 {
            let failure = Errno.current
            return Outcome(ready: false, wakeBytes: [], failure: failure.code == EINTR ? nil : failure)
        }
        let ready = entries.count > 1 && entries[1].revents != 0
        return Outcome(ready: ready, wakeBytes: entries[0].revents != 0 ? drain() : [], failure: nil)
    }

    /// Reads every byte waiting (none when another thread drained them first).
    private func drain() -> [UInt8] {
        var drained: [UInt8] = []
        var bytes = [UInt8](repeating: 0, count: 64)
        while true {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(readEnd, $0.baseAddress, $0.count) }
            if got > 0 {
                drained += bytes.prefix(got)
                continue
            }
            if got < 0 && errno == EINTR { continue }
            return drained
        }
    }

    /// `poll`'s timeout for `duration`: whole milliseconds rounded up, 0 for a negative one, clamped to `Int32`.
    package static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0, seconds < Int64(Int32.max) / 1_000 else {
            return seconds < 0 || attoseconds < 0 ? 0 : Int32.max
        }
        let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
        let ms = seconds * 1_000 + (attoseconds + attosecondsPerMillisecond - 1) / attosecondsPerMillisecond
        return Int32(clamping: ms)
    }
}
