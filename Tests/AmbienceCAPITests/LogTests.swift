import AmbienceC
import AmbiencePlatform
import CAmbience
import Foundation
import Glibc
import Synchronization
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// The engine's one logger: levels and `AMBIENCE_LOG`, stderr before anyone takes the log over, and the Swift
/// handler and the C callback, both called inside `update()` on its thread.
///
/// The logger is the process's: other suites' engines log into it at the same time, so every check here looks only at
/// messages carrying its own token, and the level is put back after each test.
@Suite(.offTheCooperativePool, .serialized) struct LogTests {
    /// What a handler saw: level, text and the thread it ran on.
    final class Seen: Sendable {
        let entries = Mutex<[(level: LogLevel, text: String, thread: pthread_t)]>([])
        func add(_ level: LogLevel, _ text: String) { entries.withLock { $0.append((level, text, pthread_self())) } }
        func texts(containing token: String) -> [String] {
            entries.withLock { $0.map(\.text).filter { $0.contains(token) } }
        }
    }

    /// Runs `body` on a thread of its own and waits for it; returns that thread's id.
    @discardableResult
    static func onThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
        final class ThreadID: Sendable { let value = Mutex<pthread_t>(0) }
        let done = DispatchSemaphore(value: 0)
        let id = ThreadID()
        let thread = Thread {
            id.value.withLock { $0 = pthread_self() }
            body()
            done.signal()
        }
        thread.start()
        done.wait()
        return id.value.withLock { $0 }
    }

    static func withLevel<T>(_ level: LogLevel, _ body: () throws -> T) rethrows -> T {
        let saved = AudioEngine.logLevel
        AudioEngine.logLevel = level
        defer { AudioEngine.logLevel = saved }
        return try body()
    }

    @Test(arguments: [
        ("error", LogLevel.error), ("WARNING", .warning), (" info\n", .info), ("debug", .debug), ("warn", .warning)
    ])
    func theEnvironmentsWordsNameLevels(word: String, level: LogLevel) {
        #expect(LogLevel(name: word) == level)
        #expect(LogLevel(name: level.description) == level)
    }

    @Test func otherWordsAreNotLevels() {
        for word in ["", "verbose", "3", "errors", "warning!", "none"] {
            #expect(LogLevel(name: word) == nil, "\(word)")
        }
    }

    @Test func theHandlerGetsWhatPassesTheLevelOnlyInUpdateOnItsThread() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let token = UUID().uuidString
        let seen = Seen()
        engine.setLogHandler { seen.add($0.level, $0.text) }
        Self.withLevel(.info) {
            // Made on another thread (as the desktop and streaming threads do).
            Self.onThread {
                Log.warning("warning \(token)")
                Log.debug("debug \(token)")
                Log.info("info \(token)")
                Log.error("error \(token)")
            }
            #expect(seen.texts(containing: token).isEmpty, "a message reached the handler before update()")
            let game = Self.onThread { _ = engine.update() }
            #expect(seen.texts(containing: token) == ["warning \(token)", "info \(token)", "error \(token)"])
            let threads = seen.entries.withLock { $0.filter { $0.text.contains(token) }.map(\.thread) }
            #expect(
                threads.allSatisfy { pthread_equal($0, game) != 0 }, "not called on the thread that called update()")
            // (The poster's id cannot be told from the game thread's: a finished thread's id is reused. The handler
            // did not run before update(), so it did not run on the poster.)
            #expect(pthread_equal(pthread_self(), game) == 0)
            #expect(seen.entries.withLock { $0.first { $0.text.contains(token) }?.level } == .warning)
            // Raised to error: warnings stop at the source.
            AudioEngine.logLevel = .error
            Log.warning("late warning \(token)")
            engine.update()
            #expect(!seen.texts(containing: token).contains("late warning \(token)"))
            #expect(Log.isEnabled(.error) && !Log.isEnabled(.warning))
        }
        // Removed: nothing more reaches it.
        engine.setLogHandler(nil)
        Log.error("after removal \(token)")
        engine.update()
        #expect(!seen.texts(containing: token).contains("after removal \(token)"))
    }

    /// A file the music player skips is logged once, as a warning naming it, whether it was the first of a start
    /// (`startFailed`) or met while feeding on (`publish`); both log after leaving the player's lock.
    @Test func aSkippedQueuedFileIsLoggedOnceEachWay() throws {
        let fixtures = try Fixtures()
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let seen = Seen()
        engine.setLogHandler { seen.add($0.level, $0.text) }
        let token = UUID().uuidString
        let first = try fixtures.write("first-\(token).ogg", bytes: Array(repeating: 0x55, count: 3_000))
        let good = try fixtures.sineWAV("good.wav", hz: 440, seconds: 0.3)
        let later = try fixtures.write("later-\(token).mp3", bytes: [])
        let next = try fixtures.sineWAV("next.wav", hz: 660, seconds: 5)
        try engine.musicPlayer.setQueue(paths: [first, good, later, next])
        engine.musicPlayer.play()
        for _ in 0..<20 {
            _ = try engine.render(frames: 4_800)
            engine.update()
        }
        let skipped = seen.texts(containing: token)
        #expect(skipped.count == 2, "\(skipped)")
        #expect(skipped.allSatisfy { $0.hasPrefix("music: skipped a queued file: ") })
        #expect(
            skipped.contains { $0.contains("first-\(token)") } && skipped.contains { $0.contains("later-\(token)") })
        #expect(seen.entries.withLock { $0.filter { $0.text.contains(token) }.allSatisfy { $0.level == .warning } })
        #expect(engine.musicPlayer.nowPlayingItem?.url == next)
    }

    @Test func aFullQueueDropsTheNewestAndSaysHowMany() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let token = UUID().uuidString
        let seen = Seen()
        engine.setLogHandler { seen.add($0.level, $0.text) }
        for n in 0..<(Log.queueCapacity + 100) { Log.error("\(n) \(token)") }
        engine.update()
        let all = seen.entries.withLock { $0.map(\.text) }
        let notice = all.last { $0.hasPrefix("log: ") && $0.contains("messages were dropped") }
        #expect(notice != nil, "no warning about the dropped messages")
        let dropped = notice.flatMap { Int($0.dropFirst(5).split(separator: " ").first ?? "") } ?? 0
        #expect(all.count - 1 == Log.queueCapacity, "the queue held \(all.count - 1)")
        #expect(dropped >= 100)
        #expect(all.contains("0 \(token)") && !all.contains("\(Log.queueCapacity + 99) \(token)"))
    }

    /// The C API: ambience_set_log_callback's callback is called inside ambience_update, on its thread, with the
    /// level and the text; ambience_set_log_level takes only the four levels.
    @Test func theCCallbackIsCalledInAmbienceUpdate() throws {
        var config = ambience_engine_config()
        _ = AmbienceC.ambience_engine_config_init(&config)
        config.output = AMBIENCE_OUTPUT_OFFLINE
        var created: OpaquePointer?
        let createStatus = AmbienceC.ambience_engine_create(&config, &created)
        #expect(createStatus == AMBIENCE_OK)
        let engine = try #require(created)
        defer { _ = AmbienceC.ambience_engine_destroy(engine) }
        let token = UUID().uuidString
        let seen = Seen()
        let callback: ambience_log_callback = { userdata, level, message in
            guard let userdata, let message else { return }
            let seen = Unmanaged<Seen>.fromOpaque(userdata).takeUnretainedValue()
            // The C levels have LogLevel's raw values (error 0 ... debug 3).
            seen.add(LogLevel(rawValue: Int(level.rawValue)) ?? .debug, String(cString: message))
        }
        let setCallbackStatus = AmbienceC.ambience_set_log_callback(
            engine, callback, Unmanaged.passUnretained(seen).toOpaque())
        #expect(setCallbackStatus == AMBIENCE_OK)
        var saved = AMBIENCE_LOG_WARNING
        let getLevelStatus = AmbienceC.ambience_get_log_level(&saved)
        #expect(getLevelStatus == AMBIENCE_OK)
        defer { _ = AmbienceC.ambience_set_log_level(saved) }
        let setLevelStatus = AmbienceC.ambience_set_log_level(AMBIENCE_LOG_INFO)
        #expect(setLevelStatus == AMBIENCE_OK)
        var level = AMBIENCE_LOG_ERROR
        let readBackStatus = AmbienceC.ambience_get_log_level(&level)
        #expect(readBackStatus == AMBIENCE_OK && level == AMBIENCE_LOG_INFO)
        let badLevelStatus = AmbienceC.ambience_set_log_level(ambience_log_level(rawValue: 7))
        #expect(badLevelStatus == AMBIENCE_ERROR_INVALID_ARGUMENT)
        #expect(String(cString: AmbienceC.ambience_last_error()).contains("not an ambience_log_level"))

        Self.onThread {
            Log.info("info \(token)")
            Log.debug("debug \(token)")
        }
        #expect(seen.texts(containing: token).isEmpty)
        let address = UInt(bitPattern: engine)  // an OpaquePointer is not Sendable; its address is
        let game = Self.onThread { _ = AmbienceC.ambience_update(OpaquePointer(bitPattern: address)) }
        #expect(seen.texts(containing: token) == ["info \(token)"])
        #expect(
            seen.entries.withLock {
                $0.filter { $0.text.contains(token) }.allSatisfy {
                    $0.level == .info && pthread_equal($0.thread, game) != 0
                }
            })
        // NULL gives the log back (and a destroyed engine's callback is never called again).
        let clearCallbackStatus = AmbienceC.ambience_set_log_callback(engine, nil, nil)
        #expect(clearCallbackStatus == AMBIENCE_OK)
        Log.warning("after \(token)")
        _ = AmbienceC.ambience_update(engine)
        #expect(seen.texts(containing: token) == ["info \(token)"])
    }

    /// AMBIENCE_LOG in a real process (the command): stderr carries `ambience: LEVEL: …` lines at the level it names,
    /// nothing below it, and nothing at all at the default level when all is well.
    @Test func theEnvironmentVariableChoosesWhatReachesStderr() throws {
        let folder = try CAPI.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func render(_ level: String) throws -> ToolRunner.Result {
            let result = try ToolRunner.run(
                ["render", "--out", folder + "/out.wav", "--seconds", "0.1"],
                environment: ["AMBIENCE_LOG": level])
            #expect(result.status == 0, "AMBIENCE_LOG=\(level): \(result.stderr)")
            return result
        }
        let started = "ambience: info: engine: offline output at 48000 Hz"
        #expect(try render("warning").stderr == "")
        #expect(try render("error").stderr == "")
        let info = try render("info")
        #expect(info.stderrLines.contains { $0.hasPrefix(started) }, "\(info.stderr)")
        #expect(info.stderrLines.allSatisfy { $0.hasPrefix("ambience: info: ") || $0.hasPrefix("ambience: warning: ") })
        let debug = try render("DEBUG")
        #expect(debug.stderrLines.contains { $0.hasPrefix(started) }, "\(debug.stderr)")
        let wrong = try render("loud")
        #expect(
            wrong.stderr
                == "ambience: warning: AMBIENCE_LOG=loud is not a level (error, warning, info, debug): using warning\n")
    }
}
