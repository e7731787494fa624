/// Text from outside (a tag, a file name, a library's error) made safe to show in a terminal: one line that cannot
/// move the cursor, set the title, clear the screen, forge a line of its own or reorder what follows it.
///
/// The one sanitizer for everything printed as text (JSON output has its own, exact escaping). What a terminal
/// would act on is shown escaped instead: `\n`, `\r`, `\t`, and `\u{1B}`-style codes for every other C0 or C1
/// control (ESC, CSI, NEL, DEL), the bidirectional embeddings, overrides and isolates (U+202A–U+202E,
/// U+2066–U+2069) and the line and paragraph separators (U+2028, U+2029). Everything else, right-to-left letters
/// and their marks included, is kept.
package enum TerminalText {
    /// `text` as it may be shown on one line of a terminal.
    package static func shown(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar) else {
                out.append(scalar)
                continue
            }
            let escape: String
            switch scalar {
            case "\n": escape = "\\n"
            case "\r": escape = "\\r"
            case "\t": escape = "\\t"
            default: escape = "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
            out.append(contentsOf: escape.unicodeScalars)
        }
        return String(out)
    }

    /// Whether a terminal would act on `scalar` rather than show it: a control character (C0, DEL, C1), a
    /// bidirectional embedding, override or isolate, or a line or paragraph separator.
    package static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029: true
        default: false
        }
    }
}
