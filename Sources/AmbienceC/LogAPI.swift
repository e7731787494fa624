// ambience.h: the log level and the log callback.

import Ambience
import CAmbience

private let levels: [(ambience_log_level, LogLevel)] = [
    (AMBIENCE_LOG_ERROR, .error), (AMBIENCE_LOG_WARNING, .warning), (AMBIENCE_LOG_INFO, .info),
    (AMBIENCE_LOG_DEBUG, .debug)
]

private func cLevel(_ level: LogLevel) -> ambience_log_level {
    levels.first { $0.1 == level }?.0 ?? AMBIENCE_LOG_WARNING
}

@_cdecl("ambience_set_log_level")
public func ambience_set_log_level(_ level: ambience_log_level) -> ambience_status {
    api("ambience_set_log_level") {
        // A C enum can hold any number: only the four levels are accepted.
        guard let chosen = levels.first(where: { $0.0 == level })?.1 else {
            throw APIError.invalid("level \(level.rawValue) is not an ambience_log_level")
        }
        AudioEngine.logLevel = chosen
    }
}

@_cdecl("ambience_get_log_level")
public func ambience_get_log_level(_ level: UnsafeMutablePointer<ambience_log_level>?) -> ambience_status {
    api("ambience_get_log_level") {
        try output(level, "level").pointee = cLevel(AudioEngine.logLevel)
    }
}

@_cdecl("ambience_set_log_callback")
public func ambience_set_log_callback(
    _ engine: OpaquePointer?, _ callback: ambience_log_callback?,
    _ userdata: UnsafeMutableRawPointer?
) -> ambience_status {
    api("ambience_set_log_callback") {
        let box = try engineBox(engine)
        guard let callback else { return box.engine.setLogHandler(nil) }
        let target = Callback(function: callback, userdata: userdata)
        // Weak: the engine holds the handler, and the box holds the engine. The handler runs inside
        // box.engine.update(), within ambience_update; a destroyed or shut-down engine's messages are dropped.
        box.engine.setLogHandler { [weak box] message in
            guard let box, !box.isDestroyed.load(ordering: .acquiring), !box.isShutDown.load(ordering: .acquiring)
            else { return }
            message.text.withCString { target.function(target.userdata, cLevel(message.level), $0) }
        }
    }
}
