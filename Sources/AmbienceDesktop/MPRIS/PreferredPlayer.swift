import Foundation

/// A music player with an MPRIS interface that the engine knows how to start idle, waiting to be told what to play.
package struct MPRISPlayerProgram: Sendable, Equatable {
    /// The executable's file name, as a desktop file's `Exec` or `PATH` names it.
    package var executable: String
    /// The player's MPRIS bus name after `org.mpris.MediaPlayer2.` (a second instance adds `.instance<pid>`).
    package var busName: String
    /// Arguments for starting it with nothing to play; nil: those of its desktop file's `Exec`, without field codes.
    package var arguments: [String]?

    /// The players tried, in this order, when the desktop's default player for audio cannot be used. mpv counts only
    /// with the mpv-mpris plugin (Debian's `mpv-mpris`), which gives it its MPRIS interface.
    package static let known: [MPRISPlayerProgram] = [
        MPRISPlayerProgram(
            executable: "mpv", busName: "mpv",
            // Idle with no window: it waits for the game's queue. mpv-mpris 0.7.1 reports a file loaded from idle as
            // Stopped until `pause` changes, so mpv starts paused (the Play that follows the queue is reported), and
            // keeps its last file open at the end rather than going idle again.
            arguments: ["--idle=yes", "--pause", "--keep-open=yes", "--force-window=no", "--no-video", "--no-terminal"]),
        MPRISPlayerProgram(executable: "vlc", busName: "vlc", arguments: nil),
        MPRISPlayerProgram(executable: "rhythmbox", busName: "rhythmbox", arguments: nil),
        MPRISPlayerProgram(executable: "audacious", busName: "audacious", arguments: nil),
        MPRISPlayerProgram(executable: "strawberry", busName: "strawberry", arguments: nil),
        MPRISPlayerProgram(executable: "clementine", busName: "clementine", arguments: nil),
        MPRISPlayerProgram(executable: "elisa", busName: "elisa", arguments: nil),
        MPRISPlayerProgram(executable: "quodlibet", busName: "quodlibet", arguments: nil)
    ]
}

/// How a player is to be started: the executable found, its arguments, and the name it will have on the bus.
package struct PlayerLaunchPlan: Sendable, Equatable {
    /// The executable's path.
    package var path: String
    package var arguments: [String]
    /// The MPRIS bus name's last part it will take.
    package var busName: String
    /// The desktop file it came from, when it is the desktop's default for audio files; nil for the fallback list.
    package var desktopID: String?

    /// The executable's file name, for messages.
    package var program: String { path.split(separator: "/").last.map(String.init) ?? path }
}

/// Where mpv's MPRIS plugin is, which decides how mpv is started (or whether it can drive it at all).
package enum MPVMPRISPlugin: Sendable, Equatable {
    /// In one of mpv's own script folders, loaded by mpv itself (naming it again would load it twice: two players).
    case loadedByMPV
    /// Installed but not loaded by mpv: named with `--script=`.
    case file(String)
    /// Not installed: mpv has no MPRIS interface.
    case none

    /// The folders mpv loads scripts from itself, and where Debian's package puts the plugin.
    package static func find(environment: [String: String], exists: (String) -> Bool) -> MPVMPRISPlugin {
        let configHome =
            environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"].map { $0 + "/.config" })
        let loaded = ["/etc/mpv/scripts/mpris.so"] + (configHome.map { ["\($0)/mpv/scripts/mpris.so"] } ?? [])
        if loaded.contains(where: exists) { return .loadedByMPV }
        if exists("/usr/lib/mpv-mpris/mpris.so") { return .file("/usr/lib/mpv-mpris/mpris.so") }
        return .none
    }
}

/// Which music player to start for the system music player when none is running: the desktop's default for audio
/// files when it is a player the engine can drive over MPRIS, then the first installed of `MPRISPlayerProgram.known`.
/// Pure: the desktop's answers (xdg-mime's or gio's output, a desktop file's text, what is installed) come in as data.
package enum PreferredPlayer {
    /// The MIME type whose default application is the user's music player.
    package static let audioType = "audio/mpeg"

    /// The desktop file ID in `xdg-mime query default audio/mpeg`'s output (one line, `vlc.desktop`), if any.
    package static func desktopID(xdgMimeOutput output: String) -> String? {
        let line = output.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) }
        return line.flatMap(validDesktopID)
    }

    /// The desktop file ID in `gio mime audio/mpeg`'s output (`Default application for “audio/mpeg”: vlc.desktop`,
    /// with quotes that depend on the locale), if it names a default.
    package static func desktopID(gioMimeOutput output: String) -> String? {
        for line in output.split(whereSeparator: \.isNewline) where line.hasPrefix("Default application for ") {
            guard let colon = line.range(of: ": ", options: .backwards) else { return nil }
            return validDesktopID(line[colon.upperBound...].trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    private static func validDesktopID(_ text: String) -> String? {
        text.hasSuffix(".desktop") && text.count > 8 && !text.contains("/") && !text.contains(where: \.isWhitespace)
            ? text : nil
    }

    /// Where the desktop file `id` may be, in the order the XDG specification searches: the user's data folder, then
    /// `XDG_DATA_DIRS`; in each, `applications/<id>`, and for `vendor-name.desktop` also `applications/vendor/name.desktop`.
    package static func desktopFilePaths(for id: String, environment: [String: String]) -> [String] {
        let dataHome =
            environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? environment["HOME"].map { $0 + "/.local/share" }
        let dataDirs = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
            .split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        var names = [id]
        if let dash = id.firstIndex(of: "-") {
            names.append(id[..<dash] + "/" + id[id.index(after: dash)...])
        }
        return ([dataHome].compactMap { $0 } + dataDirs).flatMap { folder in
            names.map { "\(folder)/applications/\($0)" }
        }
    }

    /// The command line of a desktop file's `Exec` key in its `[Desktop Entry]` group, unquoted as the Desktop Entry
    /// specification says, with its field codes (`%U`, `%f`, …) left out; nil when it has none or is `Hidden`.
    package static func execArguments(desktopEntry text: String) -> [String]? {
        var inEntry = false
        var exec: String?
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") {
                inEntry = line == "[Desktop Entry]"
                continue
            }
            guard inEntry, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if key == "Hidden" && value == "true" { return nil }
            if key == "Exec" && exec == nil { exec = value }
        }
        guard let exec, let arguments = splitExec(unescapeString(exec)), !arguments.isEmpty else { return nil }
        return arguments
    }

    /// The players to try, in order: the desktop's default (`desktopID`, its file's text in `desktopEntry`) when it
    /// is one the engine can drive, then the known ones that `locate` finds, each once.
    package static func plans(
        desktopID: String?, desktopEntry: String?, mpvPlugin: MPVMPRISPlugin, locate: (String) -> String?
    ) -> [PlayerLaunchPlan] {
        var plans: [PlayerLaunchPlan] = []
        if let desktopID, let exec = desktopEntry.flatMap(execArguments), let path = locate(exec[0]) {
            let name = path.split(separator: "/").last.map(String.init) ?? path
            if let program = MPRISPlayerProgram.known.first(where: { $0.executable == name }),
                let plan = plan(program, path: path, exec: Array(exec.dropFirst()), mpvPlugin: mpvPlugin)
            {
                plans.append(
                    PlayerLaunchPlan(
                        path: plan.path, arguments: plan.arguments, busName: plan.busName, desktopID: desktopID))
            }
        }
        for program in MPRISPlayerProgram.known where !plans.contains(where: { $0.busName == program.busName }) {
            if let path = locate(program.executable),
                let plan = plan(program, path: path, exec: [], mpvPlugin: mpvPlugin)
            {
                plans.append(plan)
            }
        }
        return plans
    }

    private static func plan(_ program: MPRISPlayerProgram, path: String, exec: [String], mpvPlugin: MPVMPRISPlugin)
        -> PlayerLaunchPlan?
    {
        var arguments = program.arguments ?? exec
        if program.executable == "mpv" {
            switch mpvPlugin {
            case .none: return nil
            case .loadedByMPV: break
            case .file(let plugin): arguments.append("--script=\(plugin)")
            }
        }
        return PlayerLaunchPlan(path: path, arguments: arguments, busName: program.busName, desktopID: nil)
    }

    // MARK: The Desktop Entry specification's quoting

    /// A value's escapes: `\s`, `\n`, `\t`, `\r`, `\\`; any other backslash stays.
    static func unescapeString(_ value: String) -> String {
        var result = ""
        var escaped = false
        for character in value {
            if escaped {
                switch character {
                case "s": result.append(" ")
                case "n": result.append("\n")
                case "t": result.append("\t")
                case "r": result.append("\r")
                case "\\": result.append("\\")
                // Not a string escape: left for Exec's own quoting (`\"` inside quotes).
                default: result += "\\\(character)"
                }
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// `Exec`'s words: split at spaces, "double quotes" group (with `\"`, `` \` ``, `\$`, `\\` inside them), `%%` is
    /// a percent sign, and a field code (`%f`, `%U`, …) is left out, with a word made of only one. Nil when a quote
    /// is left open.
    static func splitExec(_ command: String) -> [String]? {
        var words: [String] = []
        var word = ""
        var hasWord = false, quoted = false, escaped = false, percent = false, onlyFieldCode = false
        func finish() {
            if hasWord && !(onlyFieldCode && word.isEmpty) { words.append(word) }
            word = ""
            hasWord = false
            onlyFieldCode = false
        }
        for character in command {
            if escaped {
                word.append(character)
                escaped = false
            } else if percent {
                percent = false
                if character == "%" { word.append("%") } else { onlyFieldCode = word.isEmpty }
            } else if quoted {
                if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    quoted = false
                } else {
                    word.append(character)
                }
            } else if character == "\"" {
                quoted = true
                hasWord = true
            } else if character == " " || character == "\t" {
                finish()
            } else if character == "%" {
                percent = true
                hasWord = true
            } else {
                word.append(character)
                hasWord = true
            }
        }
        guard !quoted && !escaped else { return nil }
        finish()
        return words
    }
}
