import Foundation
import Glibc

@testable import AmbienceAudioTestSupport
@testable import AmbienceTestSupport

/// A real mpv with the MPRIS plugin, playing a file in a loop, with no audio output unless given a sink.
final class MPV {
    private let process: ChildProcess

    /// `busAddress`: a session bus other than the test run's own. `sink`: plays on that PulseAudio sink of the server
    /// `soundServer` (a `ThrowawayService`'s environment) names, instead of no output.
    init(
        playing file: String, busAddress: String? = nil, sink: String? = nil, soundServer: [String: String] = [:]
    ) throws {
        let output = sink.map { ["--ao=pulse", "--audio-device=pulse/\($0)"] } ?? ["--ao=null"]
        process = try ChildProcess(
            [
                "/usr/bin/mpv", "--no-config", "--script=/usr/lib/mpv-mpris/mpris.so", "--no-terminal",
                "--no-video"
            ] + output + ["--loop-file=inf", file],
            environment: childEnvironment(
                soundServer.merging(["DBUS_SESSION_BUS_ADDRESS": busAddress ?? sharedSessionBus]) { $1 }))
    }

    deinit { kill() }

    var pid: Int { Int(process.pid) }

    /// Kills mpv and reaps it, as if it crashed; safe to call more than once. The bus drops its names with its socket.
    func kill() { process.kill() }
}

/// `playerctl ARGS`: its output, trimmed, or nil when it fails. On the session bus, or on `bus` (an address).
func playerctl(_ arguments: [String], bus: String? = nil) -> String? {
    let environment = ["DBUS_SESSION_BUS_ADDRESS": bus ?? sharedSessionBus]
    return try? Fixtures.run("playerctl", arguments, environment: environment, timeout: 10).trimmingCharacters(
        in: .whitespacesAndNewlines)
}
