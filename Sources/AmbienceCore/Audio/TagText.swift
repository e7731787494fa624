// Small text helpers shared by the tag readers.

/// "3", "03", " 3/12 " → 3. Nil for anything that does not start with a positive number.
package func leadingNumber(_ text: String) -> Int? {
    let digits = text.trimmingSpaces.prefix { $0.isASCII && $0.isNumber }
    guard let number = Int(digits), number > 0 else { return nil }
    return number
}

extension String {
    package var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0.isWhitespace || $0 == "\0" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }

    package var nonEmpty: String? { isEmpty ? nil : self }
}
