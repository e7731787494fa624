import AmbiencePlatform

/// What the game remembers between runs, in `$XDG_CONFIG_HOME/ambience/gravity-wave.conf` (or `~/.config/…`):
/// `key = value` lines; unknown keys and bad values are ignored.
public struct GameSettings: Sendable, Equatable {
    public var player = PlayerChoice.application
    /// The game's player repeats its queue (off by default, as the seed sets it: the music ends).
    public var repeatMusic = false
    /// Bus gains, 0…1, by bus name: master, music, sfx, ui.
    public var volumes: [String: Float] = ["master": 1, "music": 0.8, "sfx": 1, "ui": 1]

    public static let busNames = ["master", "music", "sfx", "ui"]

    public init() {}

    /// `$XDG_CONFIG_HOME/ambience/gravity-wave.conf`, falling back to `~/.config` when XDG_CONFIG_HOME is unset,
    /// empty or not absolute (as the XDG spec says).
    public static func defaultPath(environment: [String: String]) -> String {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return "\(config)/ambience/gravity-wave.conf"
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return "\(home)/.config/ambience/gravity-wave.conf"
    }

    /// The settings in `path`; defaults for anything missing (or when the file is missing or unreadable).
    public static func load(from path: String) -> GameSettings {
        var settings = GameSettings()
        guard let text = readText(path) else { return settings }
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingWhitespace()
            guard !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { continue }
            let key = trimmed[..<equals].trimmingWhitespace(),
                value = trimmed[trimmed.index(after: equals)...].trimmingWhitespace()
            if key == "player", let choice = PlayerChoice(rawValue: String(value)) {
                settings.player = choice
            } else if key == "repeat", value == "on" || value == "off" {
                settings.repeatMusic = value == "on"
            } else if key.hasPrefix("volume."), let gain = Float(value), gain.isFinite {
                let bus = String(key.dropFirst("volume.".count))
                if busNames.contains(bus) { settings.volumes[bus] = max(0, min(1, gain)) }
            }
        }
        return settings
    }

    public var text: String {
        var lines = [
            "# Gravity Wave settings (written by the game)", "player = \(player.rawValue)",
            "repeat = \(repeatMusic ? "on" : "off")"
        ]
        for bus in Self.busNames { lines.append("volume.\(bus) = \(Self.format(volumes[bus] ?? 1))") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes atomically (`AtomicFile`): a temporary file in the same folder, synced, then renamed over `path`; a
    /// new file is 0644 less the umask, a replaced one keeps its permission bits. Creates the folder.
    public func save(to path: String) throws(SettingsError) {
        guard path.contains("/") else { throw .cannotWrite(path, reason: "not an absolute path") }
        if let problem = makeParentFolders(of: path) { throw .cannotWrite(path, reason: problem) }
        do throws(AtomicFileError) {
            try AtomicFile.write(Array(text.utf8), to: path, permissions: 0o644)
        } catch {
            throw .cannotWrite(path, reason: error.description)
        }
    }

    /// The file's first 64 KiB as text; nil when it is missing, unreadable or not a regular file.
    private static func readText(_ path: String) -> String? {
        do throws(Errno) {
            let (file, _) = try FileDescriptor.openRegularFile(path)
            return String(decoding: try file.readToEnd(limit: 1 << 16), as: UTF8.self)
        } catch {
            return nil
        }
    }

    static func format(_ gain: Float) -> String {
        let hundredths = Int((gain * 100).rounded())
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }
}

/// Creates the folders above `path` that do not exist yet (like `mkdir -p`); returns why it could not, or nil.
func makeParentFolders(of path: String) -> String? {
    guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return nil }
    var partial = path.hasPrefix("/") ? "" : "."
    for part in path[..<slash].split(separator: "/") {
        partial += "/\(part)"
        do throws(Errno) { try FilePaths.makeFolder(partial) } catch { return "\(partial): \(error)" }
    }
    return nil
}

public enum SettingsError: Error, CustomStringConvertible, Equatable {
    case cannotWrite(String, reason: String)
    public var description: String {
        switch self {
        case .cannotWrite(let path, let reason): "\(path): cannot save settings (\(reason))"
        }
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> Substring {
        let s = Substring(self)
        guard let first = s.firstIndex(where: { !$0.isWhitespace }) else { return "" }
        let last = s.lastIndex(where: { !$0.isWhitespace })!
        return s[first...last]
    }
}
