import Glibc

/// Changes to the process's environment that libraries read when they start.
package enum ProcessEnvironment {
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
