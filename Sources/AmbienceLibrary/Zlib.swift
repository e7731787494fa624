import CZlib

// The only file that calls zlib.

/// CRC-32 as zlib, PNG and gzip define it (reflected polynomial 0xEDB88320, initial and final value all ones).
package enum CRC32 {
    package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CZlib.crc32(0, nil, 0)
        var rest = bytes
        // zlib counts in a 32-bit uInt: larger inputs go in pieces.
        while let start = rest.baseAddress, !rest.isEmpty {
            let piece = min(rest.count, Int(UInt32.max))
            crc = CZlib.crc32(crc, start.assumingMemoryBound(to: Bytef.self), uInt(piece))
            rest = UnsafeRawBufferPointer(rebasing: rest[piece...])
        }
        return UInt32(truncatingIfNeeded: crc)
    }

    package static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    package static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
