import Ambience
import AmbiencePlatform
import Foundation

/// `ambience bench --latency`: every system plays clicks at known times while one recorder, the same for all,
/// records the default sink's monitor; the delay from each call to its click's first frame there is the system's
/// trigger-to-sound latency at that period.
///
/// Each system runs in a child process of its own (`ambience bench --latency-client …`): OpenAL Soft reads its
/// configuration once per process, SDL's audio is process-wide, and no system inherits another's threads. The child
/// prints its call times on CLOCK_MONOTONIC, which every process shares.
public enum LatencyBench {
    public static func run(
        _ options: LatencyOptions, progress: (String) -> Void = { _ in },
        isCancelled: () -> Bool = { false }
    ) throws(BenchError) -> LatencyReport {
        guard !options.periods.isEmpty, options.periods.allSatisfy({ (16...16_384).contains($0) }) else {
            throw .latency("periods must be from 16 to 16384 frames")
        }
        guard (1...100_000).contains(options.clicks) else { throw .latency("clicks must be from 1 to 100000") }
        guard options.minimumGapMilliseconds.isFinite, options.maximumGapMilliseconds.isFinite,
            options.minimumGapMilliseconds >= 20, options.maximumGapMilliseconds >= options.minimumGapMilliseconds,
            options.maximumGapMilliseconds <= 10_000
        else {
            throw .latency("gaps must be from 20 ms to 10 s, the shortest first")
        }
        var report = LatencyReport()
        report.server = serverName()
        for (index, period) in options.periods.enumerated() {
            // Each period starts with the next system, so that none always runs first.
            let shift = index % max(options.systems.count, 1)
            let systems = Array(options.systems[shift...] + options.systems[..<shift])
            for system in systems {
                if isCancelled() { report.cancelled = true; return report }
                progress("\(system.title) at \(period) frames")
                var row: LatencyRow
                do {
                    row = try measure(
                        system, period: period, options: options, seed: UInt64(index * 16 + systems.count))
                } catch {
                    row = LatencyRow(system: system, periodFrames: period)
                    row.error = error.description
                }
                report.rows.append(row)
            }
        }
        // Rows in the order asked, whatever order they ran in.
        report.rows.sort { a, b in
            a.periodFrames != b.periodFrames
                ? a.periodFrames < b.periodFrames
                : options.systems.firstIndex(of: a.system)! < options.systems.firstIndex(of: b.system)!
        }
        return report
    }

    static func measure(_ system: LatencySystem, period: Int, options: LatencyOptions, seed: UInt64) throws(BenchError)
        -> LatencyRow
    {
        let expectedSeconds =
            Double(LatencyClient.leadNanoseconds + LatencyClient.tailNanoseconds) / 1e9
            + Double(options.clicks) * options.maximumGapMilliseconds / 1_000
        let recorder = try MonitorRecorder(sampleRate: options.sampleRate, seconds: expectedSeconds + 5)
        recorder.start()
        guard recorder.waitForData(seconds: 10) else {
            throw .pulse("the default sink's monitor sent nothing for 10 s")
        }
        let logStart = options.serverLog.flatMap(fileSize)
        let child: LatencyClientResult
        do {
            defer { recorder.stop() }
            child = try runChild(
                system, period: period, options: options, seed: seed, timeoutSeconds: expectedSeconds + 30)
        }
        let recording = recorder.stop()
        var row = LatencyRow(system: system, periodFrames: period)
        row.driver = child.driver
        row.clicks = child.triggers.count
        row.callbacks = child.callbacks
        row.lateCallbacks = child.lateCallbacks
        if let log = options.serverLog, let start = logStart {
            row.serverUnderflows = underrunLines(in: log, from: start)
        }
        // An onset is a trigger's only within the shortest gap between clicks: a click the server lost is then one
        // miss, not every later trigger paired with the next one's click (a shift of 100–150 ms, seen at start-up).
        let analysis = analyse(
            recording: recording, sampleRate: options.sampleRate, triggers: child.triggers,
            windowNanoseconds: Int(min(options.minimumGapMilliseconds, 1e9) * 1e6))
        row.found = analysis.delays.count
        row.missed = analysis.missed
        row.delaysMilliseconds = analysis.delays.map { Double($0) / 1e6 }
        row.delay = Percentiles(row.delaysMilliseconds)
        return row
    }

    /// The onsets in a recording, put on the monotonic clock and paired with the calls.
    static func analyse(recording: MonitorRecording, sampleRate: Int, triggers: [Int], windowNanoseconds: Int)
        -> (delays: [Int], missed: Int)
    {
        let detector = ClickDetector(threshold: 0.05, refractoryFrames: sampleRate / 50)
        let clock = RecordingClock(reads: recording.reads, sampleRate: sampleRate)
        let onsets = detector.onsets(in: recording.samples).compactMap { clock.nanoseconds(atFrame: $0) }
        return ClickMatcher.delays(triggers: triggers, onsets: onsets, windowNanoseconds: windowNanoseconds)
    }

    /// Runs `ambience bench --latency-client SYSTEM …` and reads what it printed.
    static func runChild(
        _ system: LatencySystem, period: Int, options: LatencyOptions, seed: UInt64,
        timeoutSeconds: Double
    ) throws(BenchError) -> LatencyClientResult {
        let folder = NSTemporaryDirectory() + "ambience-latency-\(ProcessIdentity.current)"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // OpenAL Soft's PulseAudio backend with the period under test: two periods of `period` frames.
        let configuration = folder + "/alsoft.conf"
        let text =
            "[general]\ndrivers = pulse\nfrequency = \(options.sampleRate)\nperiod_size = \(period)\nperiods = 2\n"
        guard FileManager.default.createFile(atPath: configuration, contents: Data(text.utf8)) else {
            throw .latency("cannot write \(configuration)")
        }
        var environment = ProcessInfo.processInfo.environment
        environment["ALSOFT_CONF"] = configuration
        environment["SDL_AUDIODRIVER"] = "pulseaudio"
        let arguments = [
            "bench", "--latency-client", system.rawValue, "--period", "\(period)", "--clicks", "\(options.clicks)",
            "--gap", "\(options.minimumGapMilliseconds),\(options.maximumGapMilliseconds)",
            "--rate", "\(options.sampleRate)", "--seed", "\(seed)"
        ]
        let child: ChildProcess
        do {
            child = try ChildProcess.run(
                options.executable, arguments, environment: environment, timeoutSeconds: timeoutSeconds)
        } catch {
            throw .latency(error.message)
        }
        if let failure = child.failure("the \(system.title) client", timeoutSeconds: timeoutSeconds) {
            throw .latency(failure)
        }
        // What the child logged (`AMBIENCE_LOG=info`: the output's buffer as granted, its requests as traced) goes
        // on to ours, marked with the system and period.
        if Log.isEnabled(.info) && !child.errors.isEmpty {
            Log.info("\(system.rawValue) at \(period):\n" + child.errors)
        }
        guard let result = LatencyClientResult(lines: child.output) else {
            throw .latency("the \(system.title) client printed something unexpected")
        }
        return result
    }

    static func fileSize(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    }

    /// Lines after byte `start` of the server's log that report a playback stream's underrun.
    static func underrunLines(in path: String, from start: Int) -> Int? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: UInt64(start))) != nil, let data = try? handle.readToEnd() else { return 0 }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").filter(isUnderrunLine).count
    }

    /// PulseAudio's debug log says "Implicit underrun of '<stream>'" each time a playback stream runs dry (its start
    /// before the first write and its close can each add one).
    static func isUnderrunLine(_ line: Substring) -> Bool { line.contains("underrun of '") }

    /// The server's name and version, as libpulse clients see it (`pactl info`), or "" when it cannot be asked.
    static func serverName() -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["pactl", "info"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return "" }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        func field(_ name: String) -> String? {
            text.split(separator: "\n").first { $0.hasPrefix(name + ": ") }.map { String($0.dropFirst(name.count + 2)) }
        }
        return [field("Server Name"), field("Server Version")].compactMap { $0 }.joined(separator: " ")
    }
}
