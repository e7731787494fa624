import Foundation
import Glibc
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceTestSupport

/// The bytes of a WAV file, built field by field so that a test can get any one of them wrong on purpose.
struct WAVBytes {
    var magic = "RIFF"
    var formatTag: UInt16 = 1
    var channels: UInt16 = 1
    var sampleRate: UInt32 = 48_000
    var bitsPerSample: UInt16 = 16
    /// Defaults to `channels * bitsPerSample / 8`.
    var blockAlign: UInt16?
    /// When set, the fmt chunk is WAVE_FORMAT_EXTENSIBLE with this subformat (first two GUID bytes).
    var subformat: UInt16?
    var subformatTail: [UInt8] = [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
    var validBits: UInt16?
    /// Defaults to the real length of `data`.
    var dataClaim: UInt32?
    var data: [UInt8] = []
    var includeFmt = true
    var includeData = true
    /// Whole chunks (use `chunk`) placed before fmt, between fmt and data, and after data.
    var beforeFmt: [UInt8] = []
    var beforeData: [UInt8] = []
    var afterData: [UInt8] = []

    static func chunk(_ id: String, _ body: [UInt8], claim: UInt32? = nil) -> [UInt8] {
        Array(id.utf8) + le32(claim ?? UInt32(body.count)) + body + (body.count % 2 == 1 ? [0] : [])
    }

    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func le32(_ v: UInt32) -> [UInt8] { le16(UInt16(v & 0xFFFF)) + le16(UInt16(v >> 16)) }
    static func le64(_ v: UInt64) -> [UInt8] { le32(UInt32(v & 0xFFFF_FFFF)) + le32(UInt32(v >> 32)) }

    var fmtBody: [UInt8] {
        let align = blockAlign ?? UInt16(truncatingIfNeeded: Int(channels) * Int(bitsPerSample) / 8)
        var body = Self.le16(subformat == nil ? formatTag : 0xFFFE) + Self.le16(channels) + Self.le32(sampleRate)
        body += Self.le32(sampleRate &* UInt32(align)) + Self.le16(align) + Self.le16(bitsPerSample)
        if let subformat {
            body +=
                Self.le16(22) + Self.le16(validBits ?? bitsPerSample) + Self.le32(0) + Self.le16(subformat)
                + subformatTail
        }
        return body
    }

    var bytes: [UInt8] {
        var chunks = beforeFmt
        if includeFmt { chunks += Self.chunk("fmt ", fmtBody) }
        chunks += beforeData
        if includeData { chunks += Self.chunk("data", data, claim: dataClaim) }
        chunks += afterData
        return Array(magic.utf8) + Self.le32(UInt32(4 + chunks.count)) + Array("WAVE".utf8) + chunks
    }
}

/// A WAV file decoded whole by `WAVDecoder`.
func decodeAll(_ path: String) throws -> (info: AudioInfo, signal: Signal) {
    try decodeAll(WAVDecoder(path: path))
}

func corruptReason(_ path: String) -> String? {
    do {
        _ = try WAVDecoder(path: path)
        return nil
    } catch {
        switch error {
        case .corrupt, .tooManyChannels: return error.reason
        default: return "not .corrupt: \(error)"
        }
    }
}
