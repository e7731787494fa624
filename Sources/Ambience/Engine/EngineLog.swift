import AmbiencePlatform

extension AudioEngine {
    /// Takes the engine's diagnostics over from stderr.
    ///
    /// `handler` receives every message at or above `AudioEngine.logLevel`, from any part of the engine and any of
    /// its threads, always inside `update()` and on the thread that calls it, in the order they were made, before
    /// `update()` returns its events: like every other callback, it never runs on the audio or streaming threads.
    /// Up to 1024 messages wait between two updates; past that the newest are dropped and a warning says how many.
    ///
    /// While at least one engine has a handler, messages no longer reach stderr; each engine with a handler gets
    /// every message. `nil` gives them back to stderr, as does `shutdown()`; after `shutdown()` a handler is ignored.
    ///
    /// ```swift
    /// engine.setLogHandler { message in
    ///     console.append("[\(message.level)] \(message.text)")
    /// }
    /// ```
    public func setLogHandler(_ handler: (@Sendable (LogMessage) -> Void)?) {
        logSink.setHandler(handler)
    }

    /// The least serious level that is logged, for every engine in the process. It starts as the environment
    /// variable `AMBIENCE_LOG` says (`error`, `warning`, `info` or `debug`), else `.warning`.
    public static var logLevel: LogLevel {
        get { Log.level }
        set { Log.level = newValue }
    }
}
