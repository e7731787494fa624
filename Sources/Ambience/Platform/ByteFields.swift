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
