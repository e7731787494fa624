import Ambience
import AmbiencePlatform

/// A failed operation: the command prints `ambience: <description>` and exits 1.
struct ToolFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The end of a command that ran another program (`run`): the command exits with that program's status.
struct CommandExit: Error {
    var status: Int32
}

/// Command-line words split into options and positional arguments, consumed as a command reads them.
struct Arguments {
    private var words: [String]
    private(set) var positional: [String] = []

    /// The words after the first `--`: positional however they look (a program's own arguments), or nil.
    private var afterSeparator: [String]?

    init(_ words: [String]) {
        if let separator = words.firstIndex(of: "--") {
            self.words = Array(words[..<separator])
            afterSeparator = Array(words[(separator + 1)...])
        } else {
            self.words = words
        }
    }

    var wantsHelp: Bool { words.contains("--help") || words.contains("-h") }

    /// Whether `name` is among the words left, without taking it.
    func contains(_ name: String) -> Bool { words.contains(name) }

    /// Removes and returns a flag's presence.
    mutating func flag(_ name: String) -> Bool {
        guard let i = words.firstIndex(of: name) else { return false }
        words.remove(at: i)
        return true
    }

    /// Removes and returns the value of the last `--name VALUE` (or `--name=VALUE`).
    mutating func option(_ name: String) throws(UsageError) -> String? { try options(name).last }

    /// Removes and returns every value of a repeatable option, in order.
    mutating func options(_ name: String) throws(UsageError) -> [String] {
        var values: [String] = []
        var i = 0
        while i < words.count {
            if words[i] == name {
                guard i + 1 < words.count else { throw UsageError("\(name) needs a value") }
                values.append(words[i + 1])
                words.removeSubrange(i...(i + 1))
            } else if words[i].hasPrefix(name + "=") {
                values.append(String(words[i].dropFirst(name.count + 1)))
                words.remove(at: i)
            } else {
                i += 1
            }
        }
        return values
    }

    mutating func number(_ name: String) throws(UsageError) -> Double? {
        guard let text = try option(name) else { return nil }
        guard let value = Double(text), value.isFinite else {
            throw UsageError("\(name) needs a number, not '\(text)'")
        }
        return value
    }

    /// A time: seconds (`90`, `0.5`) or clock form (`1:30`, `1:02:03.5`), read by `DurationText.parse`.
    mutating func duration(_ name: String) throws(UsageError) -> Double? {
        guard let text = try option(name) else { return nil }
        guard let value = DurationText.parse(text) else {
            throw UsageError("\(name) needs a time (S, M:SS or H:MM:SS), not '\(text)'")
        }
        return value
    }

    mutating func integer(_ name: String) throws(UsageError) -> Int? {
        guard let text = try option(name) else { return nil }
        guard let value = Int(text) else { throw UsageError("\(name) needs a whole number, not '\(text)'") }
        return value
    }

    /// Removes and returns the words after `--` (nil when there was no `--`), for a command that takes them apart
    /// from its positional arguments.
    mutating func takeAfterSeparator() -> [String]? {
        defer { afterSeparator = nil }
        return afterSeparator
    }

    /// What is left once options are taken: positional arguments, then every word after `--`. Unknown options
    /// (before `--`) are a usage error.
    mutating func finish() throws(UsageError) -> [String] {
        if let unknown = words.first(where: { $0.hasPrefix("-") && $0 != "-" }) {
            throw UsageError("unknown option \(unknown)")
        }
        positional = words + (afterSeparator ?? [])
        words = []
        afterSeparator = nil
        return positional
    }
}
