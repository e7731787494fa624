import Glibc
import Synchronization

/// How much a diagnostic matters. A level lets through itself and everything more serious: `.warning` (the default)
/// passes errors and warnings.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    /// Something failed that the game asked for or relies on.
    case error = 0
    /// Something went wrong and the engine worked around it (a device lost, events dropped, a file skipped).
    case warning = 1
    /// What the engine did of its own accord: a service came or went, the output moved.
    case info = 2
    /// Detail for finding a bug: each decision the session carried out.
    case debug = 3

    /// `"error"`, `"warning"`, `"info"` or `"debug"`: the words `AMBIENCE_LOG` takes.
    public var description: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .info: "info"
        case .debug: "debug"
        }
    }

    /// The level a word of `AMBIENCE_LOG` names (any case, surrounding blanks ignored; `warn` for `warning`), or nil.
    public init?(name: String) {
        let word = name.lowercased().filter { !$0.isWhitespace }
        guard let level = Self.allCases.first(where: { $0.description == word }) ?? (word == "warn" ? .warning : nil)
        else {
            return nil
        }
        self = level
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// One diagnostic from the engine.
public struct LogMessage: Sendable, Equatable, CustomStringConvertible {
    /// How serious it is.
    public let level: LogLevel
    /// One line, naming the thing and the reason: `"output: the device is gone; rendering to nothing"`.
    public let text: String

    /// A message at `level`; line breaks in `text` (a file name, a library's error) become spaces, so every
    /// handler, and C's callback, gets one line.
    public init(level: LogLevel, text: String) {
        self.level = level
        self.text = text.replacingNewlines
    }

    /// `"ambience: warning: …"`: the line written to stderr when no handler took the log over.
    public var description: String { "ambience: \(level): \(text)" }
}

/// The engine's one logger. Every diagnostic goes through it; nothing else in the engine writes to stderr.
///
/// A message below the level (`AMBIENCE_LOG`, default `warning`) is dropped where it is made, before its text is
/// built. While no engine has a log handler, a message goes to stderr at once, one line per `write`. Once one has,
/// messages (from any thread) wait in each handler's bounded queue until that engine's `update()` hands them to it,
/// like every other callback.
package enum Log {
    /// The name of the environment variable read once, at the first message.
    package static let environmentVariable = "AMBIENCE_LOG"
    /// Messages waiting for one handler; past it the newest are dropped and counted.
    package static let queueCapacity = 1024

    private static let threshold = Atomic<Int>(initialLevel().rawValue)
    private static let sinks = Lock<[LogSink]>([])

    /// The level `AMBIENCE_LOG` chooses; `.warning` when it is unset, or not a level (which is itself warned about).
    private static func initialLevel() -> LogLevel {
        guard let raw = getenv(environmentVariable) else { return .warning }
        let value = String(cString: raw)
        if let level = LogLevel(name: value) { return level }
        writeToStandardError(
            LogMessage(
                level: .warning,
                text:
                    "\(environmentVariable)=\(value) is not a level (error, warning, info, debug): using warning"))
        return .warning
    }

    /// The current level: messages at it and above reach the handlers or stderr.
    package static var level: LogLevel {
        get { LogLevel(rawValue: threshold.load(ordering: .relaxed)) ?? .warning }
        set { threshold.store(newValue.rawValue, ordering: .relaxed) }
    }

    package static func isEnabled(_ level: LogLevel) -> Bool { level.rawValue <= threshold.load(ordering: .relaxed) }

    package static func error(_ text: @autoclosure () -> String) { write(.error, text) }
    package static func warning(_ text: @autoclosure () -> String) { write(.warning, text) }
    package static func info(_ text: @autoclosure () -> String) { write(.info, text) }
    package static func debug(_ text: @autoclosure () -> String) { write(.debug, text) }

    private static func write(_ level: LogLevel, _ text: () -> String) {
        guard isEnabled(level) else { return }
        let message = LogMessage(level: level, text: text())
        let delivered = sinks.withLock { sinks in
            for sink in sinks { sink.post(message) }
            return !sinks.isEmpty
        }
        if !delivered { writeToStandardError(message) }
    }

    /// Starts queueing every message for `sink`.
    package static func attach(_ sink: LogSink) {
        sinks.withLock { sinks in if !sinks.contains(where: { $0 === sink }) { sinks.append(sink) } }
    }

    /// Stops queueing for `sink`; with no sink left, messages go to stderr again.
    package static func detach(_ sink: LogSink) {
        sinks.withLock { sinks in sinks.removeAll { $0 === sink } }
    }

    /// One line with one `write`, so lines from two threads never interleave; shown through `TerminalText`, so a file
    /// name in it cannot act on the terminal. A failed write is ignored: there is nowhere left to report it. A stderr
    /// whose reader has gone is EPIPE here, not a SIGPIPE that would end the game (`withBrokenPipeHeld`).
    package static func writeToStandardError(_ message: LogMessage) {
        let line = Array((TerminalText.shown(message.description) + "\n").utf8)
        FileDescriptor.withBrokenPipeHeld {
            line.withUnsafeBytes { bytes in _ = Glibc.write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
        }
    }
}

/// One engine's log handler and the messages waiting for it.
package final class LogSink: Sendable {
    private struct State {
        var handler: (@Sendable (LogMessage) -> Void)?
        var pending = EventQueue<LogMessage>(capacity: Log.queueCapacity, overflow: .dropNewest)
        var droppedReported = 0
        var isClosed = false
    }
    private let state = Lock(State())

    package init() {}

    fileprivate func post(_ message: LogMessage) { state.withLock { _ = $0.pending.push(message) } }

    /// Sets the handler (attaching to the logger) or removes it (detaching: what still waits goes to stderr, so a
    /// message logged just before shutdown is not lost).
    /// Once the sink is closed (its engine shut down) a handler is refused: no `update()` would ever deliver to it,
    /// and holding the log would silence stderr for the rest of the process.
    package func setHandler(_ handler: (@Sendable (LogMessage) -> Void)?) {
        guard !state.withLock({ $0.isClosed }) else { return }
        if handler != nil { Log.attach(self) } else { Log.detach(self) }
        let (orphans, closedMeanwhile) = state.withLock { state in
            state.handler = state.isClosed ? nil : handler
            return (handler == nil ? state.pending.drain() : [], state.isClosed)
        }
        if closedMeanwhile { Log.detach(self) }
        for message in orphans { Log.writeToStandardError(message) }
    }

    /// Detaches for good (the engine's `shutdown()`): what still waits goes to stderr.
    package func close() {
        let orphans = state.withLock { state in
            state.isClosed = true
            state.handler = nil
            return state.pending.drain()
        }
        Log.detach(self)
        for message in orphans { Log.writeToStandardError(message) }
    }

    /// Hands every waiting message to the handler, oldest first, on the calling thread (the one in `update()`),
    /// outside the lock: the handler may log, or set another handler. Messages lost to a full queue are reported
    /// last, as one warning of their own.
    package func deliver() {
        let (handler, messages, dropped) = state.withLock { state in
            let dropped = state.pending.dropped - state.droppedReported
            state.droppedReported = state.pending.dropped
            return (state.handler, state.pending.drain(), dropped)
        }
        guard let handler else { return }
        for message in messages { handler(message) }
        if dropped > 0 {
            handler(
                LogMessage(
                    level: .warning,
                    text: "log: \(dropped) messages were dropped (update() was not called for a long time)"))
        }
    }
}

private extension String {
    /// A message is one line: a newline inside one (from a library's error text) becomes a space.
    var replacingNewlines: String { String(map { $0 == "\n" || $0 == "\r" ? " " : $0 }) }
}
