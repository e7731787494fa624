import Ambience
import Foundation
import Synchronization

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
        // Both pipes are drained as they fill, so a child that prints a lot never blocks on a full pipe.
        let collected = Mutex((out: Data(), err: Data()))
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            collected.withLock { $0.out.append(data) }
        }
        errors.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            collected.withLock { $0.err.append(data) }
        }
        do { try process.run() } catch { throw CannotStart(message: "cannot start \(executable): \(error)") }
        let deadline = monotonicNanoseconds() + Int(min(max(timeoutSeconds, 0), 86_400) * 1e9)
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
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        output.fileHandleForReading.readabilityHandler = nil
        errors.fileHandleForReading.readabilityHandler = nil
        let rest = (
            output.fileHandleForReading.readDataToEndOfFile(), errors.fileHandleForReading.readDataToEndOfFile()
        )
        let (out, err) = collected.withLock { ($0.out + rest.0, $0.err + rest.1) }
        return ChildProcess(
            status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
            errors: String(decoding: err, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines),
            timedOut: timedOut)
    }
}
