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

    /// The `ambience` of the build this test binary belongs to: under the sanitizers, the instrumented one.
    static var executable: String { BuildProducts.folder + "/ambience" }

    /// Runs `ambience ARGUMENTS` with stdin on /dev/null; it is ended after `timeout` seconds (see `ChildProcess.run`).
    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 60) throws -> Result {
        let output = try ChildProcess.run(
            [executable] + arguments, environment: childEnvironment(environment), timeout: timeout)
        return Result(
            status: output.status, stdout: String(decoding: output.stdout, as: UTF8.self),
            stderr: String(decoding: output.stderr, as: UTF8.self), killedBySignal: output.killedBySignal,
            timedOut: output.timedOut)
    }
}

/// Where the products of the build that made this test binary are: the folder that holds the binary itself
/// (`.build/debug`, or `.build/asan/debug` under scripts/sanitizers.sh), so that every command, library and demo a
/// test starts is the one built with the same flags.
enum BuildProducts {
    /// Whether this is scripts/sanitizers.sh's instrumented build (`.build/asan`, `.build/tsan`): a C program linked
    /// against its library, or a preloaded shim, needs the sanitizer's runtime first.
    static var sanitized: Bool { folder.contains("/asan/") || folder.contains("/tsan/") }

    /// Tests/AmbienceTestSupport/ToolRunner.swift → the package root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The game's and the engine's bundled sounds, music and pictures.
    static let assets = root + "/Assets"
    /// The demo game, Gravity Wave.
    static var gravityWave: String { folder + "/gravity-wave" }

    static let folder: String = {
        let fm = FileManager.default
        if let binary = try? fm.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let folder = URL(fileURLWithPath: binary).deletingLastPathComponent().path
            if fm.fileExists(atPath: folder + "/ambience") { return folder }
        }
        return root + "/.build/debug"
    }()
}
