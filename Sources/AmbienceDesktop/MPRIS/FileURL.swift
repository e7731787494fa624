import AmbienceCore

/// `file://` URLs as desktop players give them (`xesam:url`, `mpris:artUrl`): pure parsing, no I/O.
enum FileURL {
    /// The path of a `file://` URL, percent-decoded, as raw bytes (a path need not be UTF-8); nil for any other
    /// scheme, a host other than none or `localhost`, a relative path, a malformed escape or a NUL.
    static func pathBytes(_ url: String) -> [UInt8]? {
        let bytes = Array(url.utf8)
        let scheme = Array("file://".utf8)
        guard bytes.count > scheme.count, bytes[..<scheme.count].map(lowercased) == scheme else { return nil }
        var rest = bytes[scheme.count...]
        let localhost = Array("localhost".utf8)
        if rest.starts(with: localhost) { rest = rest.dropFirst(localhost.count) }
        guard rest.first == UInt8(ascii: "/") else { return nil }
        // A query or fragment is no part of a file's path.
        if let end = rest.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
            rest = rest[..<end]
        }
        var path: [UInt8] = []
        path.reserveCapacity(rest.count)
        var index = rest.startIndex
        while index < rest.endIndex {
            let byte = rest[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < rest.endIndex, let high = hexValue(rest[index + 1]),
                    let low = hexValue(rest[index + 2])
                else { return nil }
                path.append(high << 4 | low)
                index += 3
            } else {
                path.append(byte)
                index += 1
            }
        }
        return path.contains(0) ? nil : path
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension ArtworkLocation {
    /// The location an `mpris:artUrl` names: a `file://` URL as its path, an `http(s)` URL as it is; nil for
    /// anything else (a `data:` URL, a path that is not UTF-8, text that is no URL).
    package init?(mprisArtURL url: String) {
        let lower = url.prefix(8).lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            guard url.utf8.count <= 8192, !url.contains(where: { $0.isWhitespace || $0.isNewline }) else { return nil }
            self = .remote(url)
        } else if let bytes = FileURL.pathBytes(url), let path = String(validating: bytes, as: UTF8.self) {
            self = .file(path)
        } else {
            return nil
        }
    }
}
