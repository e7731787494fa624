import Ambience
import AmbiencePlatform
import Glibc
import Synchronization

/// The command's one writer to stdout, and a checked one: a write that fails (a full disk, `/dev/full`, a closed
/// pipe or a closed stdout) is remembered, nothing more is written, and `Tool.run` ends the command with status 1 and
/// an `ambience: stdout: …` line instead of reporting success. Bytes go out with write(2) at once, unbuffered, so a
/// failure is seen by the command that caused it.
///
/// Text from outside (tags, file names) goes through `TerminalText.shown` where it is put into a text line; JSON
/// lines have their own escaping.
enum Output {
    /// The errno of the first failed write; 0 while every write has succeeded.
    private static let failure = Atomic<Int32>(0)

    /// Whether a write has failed: a long command (`play`) stops.
    static var failed: Bool { failure.load(ordering: .relaxed) != 0 }

    /// Writes `text` and `terminator`, whole, unless an earlier write failed.
    static func print(_ text: String = "", terminator: String = "\n") {
        guard !failed else { return }
        let bytes = Array((text + terminator).utf8)
        var done = 0
        while done < bytes.count {
            let n: Int
            do throws(Errno) {
                n = try bytes.withUnsafeBytes { raw in
                    Result { () throws(Errno) in
                        try StandardStream.output.writeOnce(UnsafeRawBufferPointer(rebasing: raw[done...]))
                    }
                }.get()
            } catch {
                if error.code == EINTR, !Interrupt.requested { continue }
                if error.code == EAGAIN, !Interrupt.requested {
                    // A stdout another program left non-blocking: wait for room as a blocking one would, in short
                    // steps, so that Ctrl-C still ends the wait.
                    StandardStream.output.waitUntilWritable(milliseconds: 100)
                    continue
                }
                _ = failure.compareExchange(expected: 0, desired: error.code, ordering: .relaxed)
                return
            }
            guard n > 0 else {
                // A write that makes no progress counts as a full disk, as FileDescriptor.write counts it.
                _ = failure.compareExchange(expected: 0, desired: ENOSPC, ordering: .relaxed)
                return
            }
            done += n
        }
    }

    /// Writes one line of text that holds text from outside (a tag, a file name, a device's name): shown through
    /// `TerminalText`, so nothing in it acts on the terminal or starts a line of its own.
    static func line(_ text: String) {
        print(TerminalText.shown(text))
    }

    /// Throws the first failed write, as `stdout: REASON`.
    static func check() throws(ToolFailure) {
        let code = failure.load(ordering: .relaxed)
        guard code == 0 else { throw ToolFailure("stdout: \(Errno(code))") }
    }

    /// Whether stdout was closed when the command started, and is only held by a stand-in.
    private static let closedAtStart = Atomic<Bool>(false)

    /// Records that stdout was closed at the start (`Tool.run`, once).
    static func heldClosed(_ closed: Bool) { closedAtStart.store(closed, ordering: .relaxed) }

    /// Whether `path` is the file stdout writes to (`--out /dev/stdout`): a report line there would go into it.
    /// Never for a stdout that was closed: `/dev/stdout` then leads to the stand-in that holds its number, which
    /// nobody reads, so the report line is written, fails, and the command says that stdout is closed.
    static func isStandardOutput(_ path: String) -> Bool {
        guard !closedAtStart.load(ordering: .relaxed) else { return false }
        guard let named = try? FileStatus(path: path), let out = try? StandardStream.output.status() else {
            return false
        }
        return named.identity == out.identity
    }
}
