import CSDLMixerABI

/// The sample formats a program may open the device in, and so the formats `Mix_Chunk.abuf` holds (SDL's AUDIO_*
/// values). A block at a time is converted to and from the engine's 32-bit floats here, allocating nothing (for the
/// stream and audio threads); whole chunks go through SDL's converter (AudioConversion.swift).
enum SampleFormat: UInt16, CaseIterable {
    case u8 = 0x0008
    case s8 = 0x8008
    case u16LSB = 0x0010
    case s16LSB = 0x8010
    case u16MSB = 0x1010
    case s16MSB = 0x9010
    case s32LSB = 0x8020
    case s32MSB = 0x9020
    case f32LSB = 0x8120
    case f32MSB = 0x9120

    /// Bytes per sample.
    var width: Int { Int(rawValue & 0xFF) / 8 }
    private var bigEndian: Bool { rawValue & 0x1000 != 0 }

    /// Decodes `count` samples from `bytes` into `out`, allocating nothing (for the audio and stream threads).
    func decode(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count {
            let at = i * width
            switch self {
            case .u8: out[i] = (Float(bytes[at]) - 128) / 128
            case .s8: out[i] = Float(Int8(bitPattern: bytes[at])) / 128
            case .u16LSB, .u16MSB: out[i] = (Float(word16(bytes, at)) - 32_768) / 32_768
            case .s16LSB, .s16MSB: out[i] = Float(Int16(bitPattern: word16(bytes, at))) / 32_768
            case .s32LSB, .s32MSB: out[i] = Float(Int32(bitPattern: word32(bytes, at))) / 2_147_483_648
            case .f32LSB, .f32MSB:
                let value = Float(bitPattern: word32(bytes, at))
                // A program's NaN or infinity is silence: the engine takes finite samples only.
                out[i] = value.isFinite ? min(max(value, -1), 1) : 0
            }
        }
    }

    /// Encodes `count` floats (clamped to -1...1) into `out` (`count × width` bytes), allocating nothing.
    func encode(_ samples: UnsafePointer<Float>, count: Int, into out: UnsafeMutableRawPointer) {
        let bytes = UnsafeMutableRawBufferPointer(start: out, count: count * width)
        for i in 0..<count {
            let sample = samples[i]
            let value = sample.isFinite ? min(max(sample, -1), 1) : 0
            let at = i * width
            switch self {
            case .u8: bytes[at] = UInt8(clamping: Int((value * 128).rounded()) + 128)
            case .s8: bytes[at] = UInt8(bitPattern: Int8(clamping: Int((value * 128).rounded())))
            case .u16LSB, .u16MSB: put16(bytes, at, UInt16(clamping: Int((value * 32_768).rounded()) + 32_768))
            case .s16LSB, .s16MSB:
                put16(bytes, at, UInt16(bitPattern: Int16(clamping: Int((value * 32_768).rounded()))))
            case .s32LSB, .s32MSB:
                put32(bytes, at, UInt32(bitPattern: Int32(clamping: Int64((Double(value) * 2_147_483_648).rounded()))))
            case .f32LSB, .f32MSB: put32(bytes, at, value.bitPattern)
            }
        }
    }

    /// Fills `frames × channels` samples at `out` with this format's silence (0 encoded: 0x80 for U8).
    func silence(_ out: UnsafeMutableRawPointer, count: Int) {
        var zero: Float = 0
        for i in 0..<count { encode(&zero, count: 1, into: out + i * width) }
    }

    private func word16(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt16 {
        let a = UInt16(bytes[at]), b = UInt16(bytes[at + 1])
        return bigEndian ? a << 8 | b : b << 8 | a
    }

    private func word32(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        let b = (0..<4).map { UInt32(bytes[at + $0]) }
        return bigEndian ? b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3] : b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0]
    }

    private func put16(_ out: UnsafeMutableRawBufferPointer, _ at: Int, _ value: UInt16) {
        let hi = UInt8(value >> 8), lo = UInt8(value & 0xFF)
        out[at] = bigEndian ? hi : lo
        out[at + 1] = bigEndian ? lo : hi
    }

    private func put32(_ out: UnsafeMutableRawBufferPointer, _ at: Int, _ value: UInt32) {
        for k in 0..<4 {
            let byte = UInt8((value >> (8 * UInt32(k))) & 0xFF)
            out[at + (bigEndian ? 3 - k : k)] = byte
        }
    }
}
