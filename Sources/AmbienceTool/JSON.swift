import Ambience
import AmbiencePlatform

/// A JSON value with keys kept in the order written, so output is stable and readable.
public indirect enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    public static func == (a: JSON, b: JSON) -> Bool { a.text == b.text }

    public static func optional(_ s: String?) -> JSON { s.map(JSON.string) ?? .null }
    public static func optional(_ i: Int?) -> JSON { i.map(JSON.int) ?? .null }

    /// Compact text, one line.
    public var text: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return d.isFinite ? String(d) : "null"
        case .string(let s): return JSON.quote(s)
        case .array(let items): return "[" + items.map(\.text).joined(separator: ",") + "]"
        case .object(let pairs):
            return "{" + pairs.map { JSON.quote($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }

    /// `s` as a JSON string. Besides the quote and the backslash, everything a terminal or a JavaScript parser
    /// acts on is escaped as `\uXXXX` (`\n`, `\r`, `\t` for those three): every control character (C0, DEL,
    /// C1), the line and paragraph separators and the bidirectional controls (`TerminalText.isUnsafe`). The escapes
    /// are exact, so a parser gets `s` back, while the line itself stays inert when it lands on a terminal.
    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where TerminalText.isUnsafe(scalar):
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: max(4 - hex.count, 0)) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
