import AmbiencePlatform
import Foundation
import Glibc
import Synchronization

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceTestSupport

/// A running `ambience play --events-json`: its JSON event lines as they arrive, and a stdin for commands.
final class LivePlayer: Sendable {
    let process: ChildProcess
    /// The write end of its stdin, until `stop()` closes it.
    private let input: Lock<Int32?>
    /// Complete lines so far, and the start of the next one.
    private let received = LineBuffer()
    private let markers = Atomic<Int>(0)

    init(files: [String], arguments: [String] = [], environment: [String: String] = [:]) throws {
        // Writing a command to a player that has exited must fail, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
        var overrides = environment
        if environment["SDL_AUDIODRIVER"] == nil { overrides["SDL_AUDIODRIVER"] = "pulseaudio" }
        process = try ChildProcess(
            [ToolRunner.executable, "play"] + files + ["--events-json"] + arguments,
            environment: childEnvironment(overrides), stdin: .pipe, stdout: .pipe)
        input = Lock(process.input)
        // A thread of its own reads stdout to its end (the player's exit closes it), so the pipe never fills.
        let output = process.output!, received = self.received
        Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
                if count > 0 {
                    received.append(Data(buffer[0..<count]))
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            close(output)
        }.start()
    }

    deinit { stop() }

    func send(_ command: String) {
        input.withLock { fd in
            guard let fd else { return }
            let line = Array((command + "\n").utf8)
            _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }  // a whole line: far below PIPE_BUF
        }
    }

    var events: [[String: Any]] {
        received.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Waits for an event matching `predicate`; returns it and how long it took.
    @discardableResult
    func waitFor(timeout: Double = waitBound, after count: Int = 0, _ predicate: ([String: Any]) -> Bool) -> (
        event: [String: Any], seconds: Double
    )? {
        let start = monotonicSeconds()
        while monotonicSeconds() - start < timeout {
            if let hit = events.dropFirst(count).first(where: predicate) { return (hit, monotonicSeconds() - start) }
            usleep(5_000)
        }
        return nil
    }

    func waitFor(
        event name: String, timeout: Double = waitBound, after count: Int = 0,
        _ extra: ([String: Any]) -> Bool = { _ in true }
    ) -> (event: [String: Any], seconds: Double)? {
        waitFor(timeout: timeout, after: count) { $0["event"] as? String == name && extra($0) }
    }

    /// Sends the player two commands it does not know, one after the other, and waits for the note that answers
    /// each: once they are in, so is everything its engine reported in the loop turns before. How a test shows that
    /// something did *not* happen without sleeping. (The loop reports its engine's events, then reads commands: a
    /// command sent on seeing an event is read a turn later; the second marker covers one more turn.)
    func roundTrip(timeout: Double = waitBound) -> Bool {
        for _ in 0..<2 {
            let marker = "marker-\(markers.add(1, ordering: .relaxed).newValue)"
            let seen = events.count
            send(marker)
            guard
                waitFor(
                    event: "note", timeout: timeout, after: seen,
                    { ($0["text"] as? String)?.contains("'\(marker)'") == true }) != nil
            else { return false }
        }
        return true
    }

    /// Asks the player to quit; after 15 s it is terminated (SIGTERM, SIGKILL 2 s later). Safe to call more than once.
    /// (A player that quits exits within a second; 15 s is for a loaded machine, where tests check its exit status.)
    func stop() {
        if process.isRunning {
            send("quit")
            if !process.waitForExit(within: 15) { process.terminate(grace: 2) }
        }
        input.withLock { fd in
            if let fd { close(fd) }
            fd = nil
        }
    }
}

/// Complete lines so far, and the start of the next one.
final class LineBuffer: Sendable {
    private let state = Lock<(lines: [String], partial: String)>(([], ""))

    func append(_ data: Data) {
        state.withLock { state in
            state.partial += String(decoding: data, as: UTF8.self)
            var parts = state.partial.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            state.partial = parts.removeLast()
            state.lines += parts.filter { !$0.isEmpty }
        }
    }

    var lines: [String] { state.withLock { $0.lines } }
}

/// The private PulseAudio server that scripts/with-services.sh starts.
enum PulseServer {
    static var isRunning: Bool { ProcessInfo.processInfo.environment["AMBIENCE_TEST_SERVICES"] == "1" }

    @discardableResult
    static func pactl(_ arguments: String..., on server: [String: String] = [:]) throws -> String {
        try Fixtures.run("pactl", arguments, environment: server)
    }

    /// The sink inputs, as `pactl list sink-inputs` describes them: application name, sink name and corked state.
    /// `server`: the environment of another server (a `ThrowawayService`'s); this one by default.
    static func streams(on server: [String: String] = [:]) throws -> [(application: String, sink: String, corked: Bool)]
    {
        let sinks = Dictionary(
            uniqueKeysWithValues: try pactl("list", "short", "sinks", on: server).split(separator: "\n").compactMap {
                line -> (String, String)? in
                let f = line.split(separator: "\t")
                return f.count > 1 ? (String(f[0]), String(f[1])) : nil
            })
        var result: [(String, String, Bool)] = []
        var sink = "", corked = false
        for line in try pactl("list", "sink-inputs", on: server).split(separator: "\n").map({
            $0.trimmingCharacters(in: .whitespaces)
        }) {
            if line.hasPrefix("Sink: ") { sink = sinks[String(line.dropFirst(6))] ?? "?" }
            if line.hasPrefix("Corked: ") { corked = line.hasSuffix("yes") }
            if line.hasPrefix("application.name = ") {
                result.append(
                    (String(line.dropFirst(19)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")), sink, corked))
            }
        }
        return result
    }

    static func moduleID(ofSink name: String, on server: [String: String] = [:]) throws -> String? {
        try pactl("list", "short", "modules", on: server).split(separator: "\n").first {
            $0.contains("sink_name=\(name)")
        }
        .map { String($0.split(separator: "\t")[0]) }
    }

    /// Puts the server back as with-services.sh made it: speakers (default) and headphones, nothing else.
    static func restore() throws {
        for line in try pactl("list", "short", "modules").split(separator: "\n")
        where line.contains("module-null-sink")
            && !line.contains("sink_name=speakers") && !line.contains("sink_name=headphones")
        {
            try pactl("unload-module", String(line.split(separator: "\t")[0]))
        }
        for name in ["speakers", "headphones"] where try moduleID(ofSink: name) == nil {
            try pactl(
                "load-module", "module-null-sink", "sink_name=\(name)",
                "sink_properties=device.description=\(name.capitalized)")
        }
        try pactl("set-default-sink", "speakers")
        // PipeWire's session manager settles the default a moment after it is asked (wireplumber follows the
        // configured sink once it has seen the new node); a test that starts before then finds headphones default.
        let settled = eventually {
            (try? pactl("get-default-sink").trimmingCharacters(in: .whitespacesAndNewlines)) == "speakers"
                && (try? moduleID(ofSink: "headphones")) != nil
        }
        if !settled { throw FixtureError.toolFailed("pactl: the default sink did not become speakers") }
    }
}
