import Foundation
import Synchronization

/// A running `ambience play --events-json`: its JSON event lines as they arrive, and a stdin for commands.
final class LivePlayer: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    /// Complete lines so far, and the start of the next one.
    private let received = LineBuffer()

    init(files: [String], arguments: [String] = [], environment: [String: String] = [:]) throws {
        // Writing a command to a player that has exited must fail, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
        process.executableURL = URL(fileURLWithPath: ToolRunner.executable)
        process.arguments = ["play"] + files + ["--events-json"] + arguments
        var env = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if environment["SDL_AUDIODRIVER"] == nil { env["SDL_AUDIODRIVER"] = "pulseaudio" }
        // Off the shared session bus unless asked: its solo-ambient session would pause the MPRIS suite's mpv.
        if environment["DBUS_SESSION_BUS_ADDRESS"] == nil { env["DBUS_SESSION_BUS_ADDRESS"] = "" }
        process.environment = env
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let received = self.received
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            guard !data.isEmpty else { handle.readabilityHandler = nil; return }
            received.append(data)
        }
        try process.run()
    }

    deinit { stop() }

    func send(_ command: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data((command + "\n").utf8))
    }

    var events: [[String: Any]] {
        received.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Waits for an event matching `predicate`; returns it and how long it took.
    @discardableResult
    func waitFor(timeout: Double = 5, after count: Int = 0, _ predicate: ([String: Any]) -> Bool) -> (event: [String: Any], seconds: Double)? {
        let start = Date()
        while Date().timeIntervalSince(start) < timeout {
            if let hit = events.dropFirst(count).first(where: predicate) { return (hit, Date().timeIntervalSince(start)) }
            usleep(5_000)
        }
        return nil
    }

    func waitFor(event name: String, timeout: Double = 5, after count: Int = 0, _ extra: ([String: Any]) -> Bool = { _ in true }) -> (event: [String: Any], seconds: Double)? {
        waitFor(timeout: timeout, after: count) { $0["event"] as? String == name && extra($0) }
    }

    func stop() {
        guard process.isRunning else { return }
        send("quit")
        let deadline = Date().addingTimeInterval(3)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

/// Complete lines so far, and the start of the next one.
final class LineBuffer: Sendable {
    private let state = Mutex<(lines: [String], partial: String)>(([], ""))

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
    static func pactl(_ arguments: String...) throws -> String { try Fixtures.run("pactl", arguments) }

    /// The sink inputs, as `pactl list sink-inputs` describes them: application name, sink name and corked state.
    static func streams() throws -> [(application: String, sink: String, corked: Bool)] {
        let sinks = Dictionary(uniqueKeysWithValues: try pactl("list", "short", "sinks").split(separator: "\n").compactMap { line -> (String, String)? in
            let f = line.split(separator: "\t")
            return f.count > 1 ? (String(f[0]), String(f[1])) : nil
        })
        var result: [(String, String, Bool)] = []
        var sink = "", corked = false
        for line in try pactl("list", "sink-inputs").split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("Sink: ") { sink = sinks[String(line.dropFirst(6))] ?? "?" }
            if line.hasPrefix("Corked: ") { corked = line.hasSuffix("yes") }
            if line.hasPrefix("application.name = ") {
                result.append((String(line.dropFirst(19)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")), sink, corked))
            }
        }
        return result
    }

    static func moduleID(ofSink name: String) throws -> String? {
        try pactl("list", "short", "modules").split(separator: "\n").first { $0.contains("sink_name=\(name)") }
            .map { String($0.split(separator: "\t")[0]) }
    }

    /// Puts the server back as with-services.sh made it: speakers (default) and headphones, nothing else.
    static func restore() throws {
        for line in try pactl("list", "short", "modules").split(separator: "\n") where line.contains("module-null-sink")
            && !line.contains("sink_name=speakers") && !line.contains("sink_name=headphones") {
            try pactl("unload-module", String(line.split(separator: "\t")[0]))
        }
        for name in ["speakers", "headphones"] where try moduleID(ofSink: name) == nil {
            try pactl("load-module", "module-null-sink", "sink_name=\(name)", "sink_properties=device.description=\(name.capitalized)")
        }
        try pactl("set-default-sink", "speakers")
    }
}
