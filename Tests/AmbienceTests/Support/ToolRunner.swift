import Foundation

/// Runs the built `ambience` command as a black box, the way a user or a script would.
enum ToolRunner {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// True when the process ended by a signal rather than by exiting.
        var killedBySignal: Bool
        /// True when it ran past its timeout and was ended (SIGTERM, then SIGKILL).
        var timedOut: Bool
        var stderrLines: [Substring] { stderr.split(separator: "\n") }
    }

    static var executable: String {
        // Tests/AmbienceTests/Support/ToolRunner.swift → the package root.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/ambience").path
    }

    /// Runs `ambience ARGUMENTS` with stdin on /dev/null; it is ended after `timeout` seconds (see `ChildProcess.run`).
    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 60) throws -> Result {
        let output = try ChildProcess.run([executable] + arguments, environment: childEnvironment(environment), timeout: timeout)
        return Result(status: output.status, stdout: String(decoding: output.stdout, as: UTF8.self),
                      stderr: String(decoding: output.stderr, as: UTF8.self), killedBySignal: output.killedBySignal,
                      timedOut: output.timedOut)
    }
}
