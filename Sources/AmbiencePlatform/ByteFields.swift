/// Fields of a header held in memory (a WAV chunk, a picture's first bytes), every read checked against the end:
/// past it, or before the start, a read is nil.
extension Array where Element == UInt8 {
    package func u8(_ at: Int) -> UInt8? { at >= 0 && at < count ? self[at] : nil }

    package func u16LE(_ at: Int) -> UInt16? {
        guard let lo = u8(at), let hi = u8(at + 1) else { return nil }
        return UInt16(lo) | UInt16(hi) << 8
    }

    package func u16BE(_ at: Int) -> UInt16? {
        guard let hi = u8(at), let lo = u8(at + 1) else { return nil }
        return UInt16(hi) << 8 | UInt16(lo)
    }

    package func u24LE(_ at: Int) -> UInt32? {
        guard let lo = u16LE(at), let hi = u8(at + 2) else { return nil }
        return UInt32(lo) | UInt32(hi) << 16
    }

    package func u32LE(_ at: Int) -> UInt32? {
        guard let lo = u16LE(at), let hi = u16LE(at + 2) else { return nil }
        return UInt32(lo) | UInt32(hi) << 16
    }

    package func u32BE(_ at: Int) -> UInt32? {
        guard let hi = u16BE(at), let lo = u16BE(at + 2) else { return nil }
        return UInt32(hi) << 16 | UInt32(lo)
    }

    package func u64LE(_ at: Int) -> UInt64? {
        guard let lo = u32LE(at), let hi = u32LE(at + 4) else { return nil }
        return UInt64(lo) | UInt64(hi) << 32
    }

    /// Four bytes as ASCII (a RIFF chunk id, a PNG chunk type).
    package func fourCC(_ at: Int) -> String? {
        guard at >= 0, at <= count - 4 else { return nil }
        return String(decoding: self[at..<(at + 4)], as: Unicode.ASCII.self)
    }
}

/// Fields read one after another from bytes in memory (a FLAC picture block), refusing (nil or false) instead of
/// running past the end; a refused read leaves the cursor where it was.
package struct ByteCursor {
    private let bytes: [UInt8]
    package private(set) var offset = 0

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package var remaining: Int { bytes.count - offset }

    package mutating func u32BE() -> UInt32? {
        guard let value = bytes.u32BE(offset) else { return nil }
        offset += 4
        return value
    }

    package mutating func bytes(_ count: Int) -> [UInt8]? {
        guard count >= 0, count <= remaining else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    package mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, count <= remaining else { return false }
        offset += count
        return true
    }
}
