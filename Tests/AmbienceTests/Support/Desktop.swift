import Foundation
import Glibc

/// A real mpv with the MPRIS plugin, playing a file in a loop with no audio output.
final class MPV {
    private let process: Process

    /// `busAddress`: a session bus other than the test run's own.
    init(playing file: String, busAddress: String? = nil) throws {
        let process = Process()
        if let busAddress {
            process.environment = ProcessInfo.processInfo.environment.merging(["DBUS_SESSION_BUS_ADDRESS": busAddress]) { $1 }
        }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mpv")
        process.arguments = ["--no-config", "--script=/usr/lib/mpv-mpris/mpris.so", "--no-terminal", "--no-video",
                             "--ao=null", "--loop-file=inf", file]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
    }

    deinit { kill() }

    var pid: Int { Int(process.processIdentifier) }

    /// Kills mpv and reaps it; safe to call more than once. SIGKILL, because `Process.terminate()`'s SIGTERM does
    /// not reach it: a child started from a test's worker thread inherits a signal mask that blocks SIGTERM, and mpv
    /// with `--no-terminal` installs no handler that would unblock it. The bus drops its names with its socket.
    func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// `playerctl ARGS`: its output, trimmed, or nil when it fails. On the session bus, or on `bus` (an address).
func playerctl(_ arguments: [String], bus: String? = nil) -> String? {
    let environment = bus.map { ["DBUS_SESSION_BUS_ADDRESS": $0] }
    return try? Fixtures.run("playerctl", arguments, environment: environment).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Polls `condition` every 20 ms until it holds or `seconds` pass.
func eventually(within seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}
