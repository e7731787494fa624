import AmbienceCore
import Foundation  // trimmingCharacters(in:) for the #PLAYLIST: name

/// An `.m3u`/`.m3u8` playlist: one entry per line, `#` lines are comments or `#EXT…` directives.
/// Parsing is pure (bytes in, entries and warnings out: no file system, no SQLite), so it is tested and fuzzed
/// on its own (Tests/Fuzz, target `m3u`). `PlaylistFile.read` in MediaLibrary.swift reads the file.
/// It runs in time linear in the input: every step on a line moves a slice's ends, never copies what is left.
enum PlaylistFile {
    struct Entry {
        var line: Int
        var path: [UInt8]
    }

    struct Parsed {
        var name: String
        var entries: [Entry] = []
        /// Problems, by line (0 for the file as a whole).
        var warnings: [(line: Int, text: String)] = []
    }

    static func parse(
        _ bytes: [UInt8], folder: [UInt8], isUTF8Playlist: Bool, roots: [[UInt8]], into parsed: inout Parsed
    ) {
        var text = bytes[...]
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        var lineNumber = 0
        for rawLine in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
            var trimmed = rawLine
            while let last = trimmed.last, last == UInt8(ascii: "\r") || isBlank(last) { trimmed = trimmed.dropLast() }
            while let first = trimmed.first, isBlank(first) { trimmed = trimmed.dropFirst() }
            if trimmed.isEmpty { continue }
            let line = Array(trimmed)
            if line.first == UInt8(ascii: "#") {
                let directive = Array("#PLAYLIST:".utf8)
                if line.starts(with: directive) {
                    let name = String(decoding: line.dropFirst(directive.count), as: UTF8.self).trimmingCharacters(
                        in: .whitespaces)
                    if !name.isEmpty { parsed.name = name }
                }
                continue
            }
            var entry = line
            let shown = String(decoding: line, as: UTF8.self)
            if let url = fileURLPath(entry) {
                entry = url
            } else if hasURLScheme(entry) {
                parsed.warnings.append((lineNumber, "line \(lineNumber): \(shown) is not a local file; skipped"))
                continue
            }
            // A Windows playlist: backslashes separate folders.
            if !entry.contains(UInt8(ascii: "/")) && entry.contains(UInt8(ascii: "\\")) {
                entry = entry.map { $0 == UInt8(ascii: "\\") ? UInt8(ascii: "/") : $0 }
            }
            // An `.m3u` that is not UTF-8 is in the legacy encoding, taken as Latin-1.
            if !isUTF8Playlist && !RawPath.isValidUTF8(entry) {
                entry = Array(String(String.UnicodeScalarView(entry.map { Unicode.Scalar($0) })).utf8)
            }
            let absolute = entry.first == UInt8(ascii: "/") ? entry : RawPath.join(folder, entry)
            let resolved = RawPath.normalized(absolute)
            guard roots.contains(where: { RawPath.isInside(resolved, $0) }) else {
                parsed.warnings.append(
                    (lineNumber, "line \(lineNumber): \(RawPath.display(resolved)) is outside the library; skipped"))
                continue
            }
            parsed.entries.append(Entry(line: lineNumber, path: resolved))
        }
    }

    /// The path of a `file://` URL, percent-decoded; nil when the line is not one.
    private static func fileURLPath(_ line: [UInt8]) -> [UInt8]? {
        let lower = line.prefix(16).map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
        var rest: ArraySlice<UInt8>
        if lower.starts(with: Array("file://localhost/".utf8)) {
            rest = line.dropFirst("file://localhost".count)
        } else if lower.starts(with: Array("file:///".utf8)) {
            rest = line.dropFirst("file://".count)
        } else {
            return nil
        }
        var out: [UInt8] = []
        while let byte = rest.popFirst() {
            if byte == UInt8(ascii: "%"), rest.count >= 2,
                let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16)
            {
                out.append(value)
                rest = rest.dropFirst(2)
            } else {
                out.append(byte)
            }
        }
        return out
    }

    /// `scheme://…` with a scheme of two or more letters (so `C:\…` is not one).
    private static func hasURLScheme(_ line: [UInt8]) -> Bool {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon >= 2,
            line[colon...].starts(with: Array("://".utf8))
        else { return false }
        return line[..<colon].allSatisfy {
            ($0 | 0x20) >= 97 && ($0 | 0x20) <= 122 || ($0 >= 48 && $0 <= 57) || $0 == 43 || $0 == 45 || $0 == 46
        }
    }
}

// MARK: - Raw paths

/// File paths as raw bytes. Linux file names are bytes, not text; keeping them as bytes loses nothing.
/// The text operations are here, with no I/O; the file-system ones are in MediaLibrary.swift.
enum RawPath {
    static func isValidUTF8(_ bytes: [UInt8]) -> Bool { String(validating: bytes, as: UTF8.self) != nil }

    /// Readable text for a path: valid UTF-8 as is, other bytes as U+FFFD.
    static func display(_ path: [UInt8]) -> String { String(decoding: path, as: UTF8.self) }

    static func join(_ folder: [UInt8], _ name: [UInt8]) -> [UInt8] {
        folder.last == UInt8(ascii: "/") ? folder + name : folder + [UInt8(ascii: "/")] + name
    }

    static func parent(_ path: [UInt8]) -> [UInt8] {
        guard let slash = path.lastIndex(of: UInt8(ascii: "/")) else { return [] }
        return slash == 0 ? [UInt8(ascii: "/")] : Array(path[..<slash])
    }

    static func name(_ path: [UInt8]) -> [UInt8] {
        guard let slash = path.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return Array(path[(slash + 1)...])
    }

    /// The extension in lower case (ASCII only), or nil when there is none.
    static func lowercasedExtension(_ name: [UInt8]) -> String? {
        guard let dot = name.lastIndex(of: UInt8(ascii: ".")), dot > 0, dot + 1 < name.count else { return nil }
        let ext = name[(dot + 1)...]
        guard ext.count <= 8, ext.allSatisfy({ $0 < 0x80 }) else { return nil }
        return String(decoding: ext, as: UTF8.self).lowercased()
    }

    /// `.` and `..` resolved by the text alone, repeated slashes collapsed. `..` above the root stays at the root.
    static func normalized(_ path: [UInt8]) -> [UInt8] {
        var parts: [ArraySlice<UInt8>] = []
        for part in path.split(separator: UInt8(ascii: "/")) {
            if part.elementsEqual([UInt8(ascii: ".")]) { continue }
            if part.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) { _ = parts.popLast(); continue }
            parts.append(part)
        }
        var out: [UInt8] = []
        for part in parts { out.append(UInt8(ascii: "/")); out += part }
        return out.isEmpty ? [UInt8(ascii: "/")] : out
    }

    /// Whether `path` is `folder` or inside it (by whole path components).
    static func isInside(_ path: [UInt8], _ folder: [UInt8]) -> Bool {
        if folder == [UInt8(ascii: "/")] { return path.first == UInt8(ascii: "/") }
        guard path.starts(with: folder) else { return false }
        return path.count == folder.count || path[folder.count] == UInt8(ascii: "/")
    }

    /// FNV-1a: the same bytes always give the same ID (equal to `MediaItem.stableID` for UTF-8 paths).
    static func stableID(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }
}
