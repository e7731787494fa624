import Glibc

/// The process's environment: what it says, and changes to it that libraries read when they start.
package enum ProcessEnvironment {
    /// The variable `name`, or nil when it is not set (an empty value is returned as it is).
    package static func value(_ name: String) -> String? {
        guard !name.utf8.contains(0) else { return nil }
        return getenv(name).map { String(cString: $0) }
    }

    /// The user's home folder from the password database (`getpwuid`), for when `HOME` is not set; nil when the
    /// database has no entry for this user.
    package static var homeFolderOfUser: String? {
        guard let entry = getpwuid(getuid()), let folder = entry.pointee.pw_dir else { return nil }
        return String(cString: folder)
    }

    /// Adds `key=value` to `PULSE_PROP`, which libpulse reads into every client's properties (and so into every
    /// stream's) when the client connects, unless the variable already names `key`: the program's own word stands.
    /// Call before the library connects (SDL's pulseaudio driver connects when SDL's audio starts).
    package static func addPulseProperty(_ key: String, _ value: String) {
        let current = getenv("PULSE_PROP").map { String(cString: $0) } ?? ""
        guard !current.split(separator: " ").contains(where: { $0.hasPrefix(key + "=") }) else { return }
        let updated = current.isEmpty ? "\(key)=\(value)" : "\(current) \(key)=\(value)"
        setenv("PULSE_PROP", updated, 1)
    }
}

extension ProcessEnvironment {
    /// Sets the variable `name` to `value` (`setenv`, replacing it), or unsets it when `value` is nil. A name that
    /// is empty or holds `=` or a NUL, or a value that holds a NUL, is refused (EINVAL): C would see another name.
    /// Not safe while another thread reads the environment: call at the start, or before what reads it starts.
    package static func set(_ name: String, to value: String?) throws(Errno) {
        guard !name.isEmpty, !name.utf8.contains(0), !name.contains("="), !(value?.utf8.contains(0) ?? false) else {
            throw Errno(EINVAL)
        }
        guard (value.map { setenv(name, $0, 1) } ?? unsetenv(name)) == 0 else { throw .current }
    }

    /// Runs `body` with `name` set to `value`, then puts the variable back as it was (unset, or its old value), so
    /// only what `body` starts reads it: child processes and later library starts see the program's own environment.
    package static func withVariable<T>(_ name: String, setTo value: String, _ body: () throws -> T) rethrows -> T {
        let previous = getenv(name).map { String(cString: $0) }
        setenv(name, value, 1)
        defer {
            if let previous { setenv(name, previous, 1) } else { unsetenv(name) }
        }
        return try body()
    }
}
