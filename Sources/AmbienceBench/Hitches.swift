import Ambience
import AmbiencePlatform
import Foundation

/// `ambience bench --hitches`: how long the game's own calls take while the music player skips through long files.
public struct HitchOptions: Sendable {
    /// How long the 60 Hz game loop runs.
    public var seconds: Double
    /// How often the loop skips to the next item.
    public var skipEvery: Double
    /// The files to skip through; empty means long Ogg Vorbis and MP3 files made (once) by `makeLongFiles`.
    public var files: [String]
    /// The length of the files made when `files` is empty.
    public var itemMinutes: Double

    public init(seconds: Double = 30, skipEvery: Double = 0.5, files: [String] = [], itemMinutes: Double = 30) {
        self.seconds = seconds
        self.skipEvery = skipEvery
        self.files = files
        self.itemMinutes = itemMinutes
    }

    /// The options if every number is finite and in range (seconds up to an hour, skips at least one frame apart,
    /// items 3 s to 2 h long), else why not.
    public func validated() throws(InvalidNumber) -> HitchOptions {
        for (value, what, range) in [
            (seconds, "seconds", 1.0 / 60...3_600), (skipEvery, "skipEvery", 1.0 / 60...3_600),
            (itemMinutes, "itemMinutes", 0.05...120)
        ] {
            guard range.contains(try value.finite(what)) else {
                throw InvalidNumber(
                    what, value: "\(value)", expected: "from \(range.lowerBound) to \(range.upperBound)")
            }
        }
        return self
    }
}

/// One timed call: its wall time, and what its thread did meanwhile.
struct TimedCall {
    var nanoseconds: Int
    var cpuNanoseconds: Int
    var preempted: Bool
    var waited: Bool
}

/// The spread of one call's durations, in microseconds, and what the slow ones (over 1 ms) did with their time.
public struct CallTimes: Sendable {
    public var name: String
    public var count: Int
    public var p50: Double
    public var p99: Double
    public var max: Double
    /// Calls over 1 ms; of them, those whose thread was preempted (an involuntary context switch during the call),
    /// and those that waited (a voluntary one: a lock or I/O). The rest ran on the CPU all along.
    public var over1ms = 0
    public var over1msPreempted = 0
    public var over1msWaited = 0
    /// CPU time the slowest call used, in microseconds.
    public var maxCallCPU = 0.0

    init(name: String, calls: [TimedCall]) {
        self.name = name
        let slow = calls.filter { $0.nanoseconds > 1_000_000 }
        over1ms = slow.count
        over1msPreempted = slow.filter(\.preempted).count
        over1msWaited = slow.filter { $0.waited && !$0.preempted }.count
        maxCallCPU = Double(calls.max { $0.nanoseconds < $1.nanoseconds }?.cpuNanoseconds ?? 0) / 1_000
        let sorted = calls.map(\.nanoseconds).sorted()
        count = sorted.count
        func at(_ q: Double) -> Double {
            sorted.isEmpty
                ? 0 : Double(sorted[Swift.min(Int(q * Double(sorted.count - 1) + 0.5), sorted.count - 1)]) / 1_000
        }
        p50 = at(0.5)
        p99 = at(0.99)
        self.max = at(1)
    }
}

public struct HitchReport: Sendable {
    public var calls: [CallTimes] = []
    public var files: [String] = []
    public var frames = 0
    public var skips = 0
    /// Items the player announced as now playing: how far the streaming side kept up with the skips.
    public var itemsStarted = 0
    public var playbackErrors = 0
    public var underruns = 0
    public var outputDriver = ""
    /// Game frames that started more than a frame late (the loop itself was held up).
    public var lateFrames = 0
}

public enum Hitches {
    /// Runs a 60 Hz game loop on a device engine: every frame `update()`, `currentPlaybackTime` and one sound
    /// effect's `play()`; every `skipEvery` seconds `skipToNextItem()`, and every 20th skip a pause and `play()` of
    /// the music player. Each call is timed on the game thread.
    public static func run(_ options: HitchOptions, isCancelled: () -> Bool = { false }) throws -> HitchReport {
        let options = try options.validated()
        let files = options.files.isEmpty ? try makeLongFiles(minutes: options.itemMinutes) : options.files
        var configuration = EngineConfiguration()
        configuration.desktopIntegration = false
        let engine: AudioEngine
        do { engine = try AudioEngine(configuration) } catch { throw BenchError.engine(error) }
        defer { engine.shutdown() }
        let click = try tone(engine)
        let player = engine.musicPlayer
        do { try player.setQueue(paths: files) } catch { throw BenchError.engine(error) }
        player.repeatMode = .all
        player.beginGeneratingPlaybackNotifications()
        player.play()

        var update: [TimedCall] = [], time: [TimedCall] = [], play: [TimedCall] = [], skip: [TimedCall] = [],
            musicPlay: [TimedCall] = []
        var report = HitchReport(files: files, outputDriver: engine.outputDriver)
        let clock = ContinuousClock()
        func nanoseconds(_ d: Duration) -> Int {
            Int(d.components.seconds) * 1_000_000_000 + Int(d.components.attoseconds / 1_000_000_000)
        }
        func timed(_ into: inout [TimedCall], _ body: () -> Void) {
            let before = ThreadUsage.current()
            let start = clock.now
            body()
            let spent = nanoseconds(clock.now - start)
            let after = ThreadUsage.current()
            into.append(
                TimedCall(
                    nanoseconds: spent, cpuNanoseconds: after.cpuNanoseconds - before.cpuNanoseconds,
                    preempted: after.involuntarySwitches > before.involuntarySwitches,
                    waited: after.voluntarySwitches > before.voluntarySwitches))
        }
        let frame = Duration.nanoseconds(16_666_667)
        let frames = Int((options.seconds * 60).rounded())
        let skipFrames = Swift.max(Int((options.skipEvery * 60).rounded()), 1)
        let start = clock.now
        for n in 0..<frames where !isCancelled() {
            timed(&update) {
                for event in engine.update() {
                    if case .music(.nowPlayingItemDidChange(.some)) = event { report.itemsStarted += 1 }
                    if case .music(.playbackError) = event { report.playbackErrors += 1 }
                }
            }
            timed(&time) { _ = player.currentPlaybackTime }
            timed(&play) { _ = engine.play(click, PlayOptions(gain: 0.2)) }
            if n > 0 && n % skipFrames == 0 {
                timed(&skip) { player.skipToNextItem() }
                report.skips += 1
                if report.skips % 20 == 0 {
                    player.pause()
                    timed(&musicPlay) { player.play() }
                }
            }
            let due = start + frame * (n + 1)
            let now = clock.now
            if now > due + frame { report.lateFrames += 1 }
            if now < due { Thread.sleep(forTimeInterval: Double(nanoseconds(due - now)) / 1e9) }
        }
        report.frames = update.count
        report.underruns = engine.stats.underruns
        report.calls = [
            CallTimes(name: "update()", calls: update),
            CallTimes(name: "skipToNextItem()", calls: skip),
            CallTimes(name: "currentPlaybackTime", calls: time),
            CallTimes(name: "play() (a sound effect)", calls: play),
            CallTimes(name: "musicPlayer.play()", calls: musicPlay)
        ]
        return report
    }

    /// A 50 ms click, made in memory.
    static func tone(_ engine: AudioEngine) throws -> Sound {
        let samples = (0..<2_400).map { Float(sin(Double($0) * 2 * .pi * 880 / 48_000) * 0.3) }
        do {
            return try engine.makeSound(PCMBuffer(sampleRate: 48_000, channels: 1, samples: samples), name: "click")
        } catch { throw BenchError.engine(error) }
    }

    /// An Ogg Vorbis and an MP3 file of `minutes` of music-like sound (a sweep under noise), made once with sox,
    /// oggenc and lame into `$XDG_CACHE_HOME/ambience/bench` and kept there.
    public static func makeLongFiles(minutes: Double) throws -> [String] {
        let environment = ProcessInfo.processInfo.environment
        let cache =
            environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSTemporaryDirectory()) + "/.cache"
        let folder = cache + "/ambience/bench"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let seconds = String(format: "%.1f", Swift.max(minutes * 60, 1))
        let source = "sox -q -n -r 44100 -c 2 -b 16 -t wav - synth \(seconds) sine 110-1760 pinknoise vol 0.3"
        var made: [String] = []
        for (format, encoder) in [("ogg", "oggenc -Q -q 2 -o \"$1\" -"), ("mp3", "lame --quiet -b 128 - \"$1\"")] {
            let path = "\(folder)/long-\(seconds)s.\(format)"
            made.append(path)
            if FileManager.default.fileExists(atPath: path) { continue }
            // The encoder writes the atomic file's temporary file by name; a failed or interrupted one leaves nothing.
            guard let partial = try? AtomicFile(replacing: path) else {
                throw HitchError.cannotMakeFile(path, tools: "a writable folder")
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", "set -o pipefail; \(source) | \(encoder)", "bash", partial.temporaryPath]
            do { try process.run() } catch { throw HitchError.cannotMakeFile(path, tools: "bash") }
            process.waitUntilExit()
            guard process.terminationStatus == 0, (try? partial.commit()) != nil else {
                partial.discard()
                throw HitchError.cannotMakeFile(path, tools: "sox, oggenc and lame")
            }
        }
        return made
    }
}

public enum HitchError: Error, CustomStringConvertible {
    case cannotMakeFile(String, tools: String)

    public var description: String {
        switch self {
        case .cannotMakeFile(let path, let tools):
            "\(path): could not be made (it needs \(tools) on PATH; or pass --files)"
        }
    }
}
