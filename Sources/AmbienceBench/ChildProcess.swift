import Ambience
import AmbiencePlatform
import Foundation

/// A child process of a benchmark, usually this executable again, run to its end or to a deadline. Benchmarks run a
/// system in a child when it must not share the process with another: OpenAL Soft reads its configuration once per
/// process, SDL's audio is process-wide, and a peak resident size covers a process's whole life.
struct ChildProcess {
    /// The exit status, or the signal's number for a child that was killed.
    var status: Int32
    var output: String
    /// Standard error, trimmed.
    var errors: String
    /// It ran past the deadline and was ended: terminated, and killed 5 s later if still running.
    var timedOut: Bool

    /// Why a child could not be started.
    struct CannotStart: Error { var message: String }

    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, timeoutSeconds: Double
    ) throws(CannotStart) -> ChildProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { throw CannotStart(message: "cannot start \(executable): \(error)") }
        // Each pipe is read to its end on a thread of its own, so a child that prints a lot never blocks on a full
        // pipe, and nothing it printed is lost: both threads are joined before the output is read.
        let out = PipeReader(output.fileHandleForReading), err = PipeReader(errors.fileHandleForReading)
        let seconds = timeoutSeconds.isFinite ? min(max(timeoutSeconds, 0), 86_400) : 0
        let deadline = monotonicNanoseconds() + (seconds * 1e9).saturated(Int.self)
        while process.isRunning, monotonicNanoseconds() < deadline {
            sleepUntil(monotonicNanoseconds: monotonicNanoseconds() + 20_000_000)
        }
        let timedOut = process.isRunning
        if timedOut {
            process.terminate()
            let killAt = monotonicNanoseconds() + 5_000_000_000
            while process.isRunning, monotonicNanoseconds() < killAt {
                sleepUntil(monotonicNanoseconds: monotonicNanoseconds() + 20_000_000)
            }
            if process.isRunning { try? ProcessSignals.send(SIGKILL, to: process.processIdentifier) }
        }
        process.waitUntilExit()
        return ChildProcess(
            status: process.terminationStatus, output: String(decoding: out.joined(), as: UTF8.self),
            errors: String(decoding: err.joined(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines),
            timedOut: timedOut)
    }

    /// What `timedOut` and a non-zero status mean, for a report: nil for a child that exited with 0.
    func failure(_ what: String, timeoutSeconds: Double) -> String? {
        if timedOut { return "\(what) ran past \(timeoutSeconds.saturated(Int.self)) s and was ended" }
        return status == 0 ? nil : "\(what) failed (status \(status)): \(errors)"
    }
}

/// Reads a pipe to its end on a thread of its own.
private final class PipeReader: @unchecked Sendable {
    // Written by the reading thread before it signals `done`; read only after `joined()` has waited for it.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    /// Waits for the end of the pipe (the child and whatever inherited its end have exited) and returns all of it.
    func joined() -> Data {
        done.wait()
        return data
    }
}
