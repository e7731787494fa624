import Glibc

/// A RIFF/WAVE (or RF64/BW64) file, parsed by hand and streamed from disk.
///
/// Integer PCM of 8 (unsigned), 16, 24 and 32 bits, IEEE float of 32 and 64 bits, plain or WAVE_FORMAT_EXTENSIBLE,
/// 1 to 8 channels at 1 Hz to 768 kHz (`AudioInfo.sampleRates`, `AudioInfo.maximumChannels`). Every size in the
/// header is a claim: the data chunk's length is cut to the bytes present. Audio is read with `pread` in chunks of
/// at most `chunkBytes`; no allocation depends on a size that the file claims. Owns its file descriptor.
final class WAVDecoder: AudioDecoder {
    let info: AudioInfo
    private(set) var position: Int64 = 0

    private let path: String
    private let file: FileDescriptor
    private let layout: Layout
    /// Raw bytes of one chunk of sample frames, read from the file before conversion.
    private let chunk: UnsafeMutableRawPointer

    /// The most bytes one `pread` asks for.
    static let chunkBytes = 64 * 1024
    /// Chunk headers walked before giving up on finding `fmt ` and `data`: bounds the work on hostile files.
    static let maxChunks = 10_000
    /// The most bytes of a LIST chunk read for tags.
    static let maxListBytes = 64 * 1024

    init(path: String) throws(DecodingError) {
        let (file, size) = try AudioFile.openRegularFile(path)
        guard size > 0 else { throw .empty(path) }
        let layout = try Layout(reading: FileBytes(file: file, path: path, size: size))
        self.path = path
        self.file = file
        self.layout = layout
        chunk = .allocate(byteCount: Self.chunkBytes, alignment: 16)
        info = AudioInfo(format: .wav, sampleRate: layout.sampleRate, channels: layout.channels,
                         frames: layout.frames, tags: layout.tags, warnings: layout.warnings)
    }

    deinit { chunk.deallocate() }

    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(DecodingError) -> Int {
        guard frames > 0, position < layout.frames else { return 0 }
        let wanted = Int(min(Int64(frames), layout.frames - position))
        let blockAlign = layout.blockAlign
        let framesPerChunk = Self.chunkBytes / blockAlign
        let file = FileBytes(file: self.file, path: path, size: .max)
        var done = 0
        while done < wanted {
            let count = min(framesPerChunk, wanted - done)
            let offset = layout.dataOffset + position * Int64(blockAlign)
            let got = try file.read(into: chunk, count: count * blockAlign, at: offset)
            let whole = got / blockAlign
            if whole == 0 {
                // The file shrank since it was opened: what was read is returned, then the next read says so.
                guard done > 0 else {
                    throw .corrupt(path, reason: "cut short while being read: it ends at frame \(position) of \(layout.frames)")
                }
                break
            }
            layout.encoding.convert(chunk, samples: whole * layout.channels, into: buffer + done * layout.channels)
            done += whole
            position += Int64(whole)
            if whole < count { break }
        }
        return done
    }

    func seek(toFrame frame: Int64) throws(DecodingError) {
        position = min(max(frame, 0), layout.frames)
    }
}

// MARK: - Sample encodings

extension WAVDecoder {
    /// How one sample is stored in the data chunk.
    enum SampleEncoding: Equatable {
        case unsigned8, signed16, signed24, signed32, float32, float64

        var bytes: Int {
            switch self {
            case .unsigned8: 1
            case .signed16: 2
            case .signed24: 3
            case .signed32, .float32: 4
            case .float64: 8
            }
        }

        var name: String {
            switch self {
            case .unsigned8: "8-bit"
            case .signed16: "16-bit"
            case .signed24: "24-bit"
            case .signed32: "32-bit"
            case .float32: "32-bit float"
            case .float64: "64-bit float"
            }
        }

        /// Converts `samples` little-endian samples at `source` to Float in [-1, 1].
        /// Float input is clamped to [-1, 1], and NaN becomes 0.
        func convert(_ source: UnsafeRawPointer, samples: Int, into out: UnsafeMutablePointer<Float>) {
            switch self {
            case .unsigned8:
                for i in 0..<samples {
                    out[i] = (Float(source.load(fromByteOffset: i, as: UInt8.self)) - 128) * (1 / 128)
                }
            case .signed16:
                for i in 0..<samples {
                    let v = Int16(littleEndian: source.loadUnaligned(fromByteOffset: i * 2, as: Int16.self))
                    out[i] = Float(v) * (1 / 32768)
                }
            case .signed24:
                for i in 0..<samples {
                    let b0 = UInt32(source.load(fromByteOffset: i * 3, as: UInt8.self))
                    let b1 = UInt32(source.load(fromByteOffset: i * 3 + 1, as: UInt8.self))
                    let b2 = UInt32(source.load(fromByteOffset: i * 3 + 2, as: UInt8.self))
                    let v = Int32(bitPattern: (b0 << 8) | (b1 << 16) | (b2 << 24)) >> 8
                    out[i] = Float(v) * (1 / 8_388_608)
                }
            case .signed32:
                for i in 0..<samples {
                    let v = Int32(littleEndian: source.loadUnaligned(fromByteOffset: i * 4, as: Int32.self))
                    out[i] = Float(v) * (1 / 2_147_483_648)
                }
            case .float32:
                for i in 0..<samples {
                    let bits = UInt32(littleEndian: source.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))
                    out[i] = Self.clamped(Float(bitPattern: bits))
                }
            case .float64:
                for i in 0..<samples {
                    let bits = UInt64(littleEndian: source.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))
                    out[i] = Self.clamped(Float(Double(bitPattern: bits)))
                }
            }
        }

        private static func clamped(_ x: Float) -> Float {
            x.isNaN ? 0 : min(max(x, -1), 1)
        }
    }
}

// MARK: - Reading the file

extension WAVDecoder {
    /// Positioned reads from an open file, failing with the decoder's error for `path`.
    struct FileBytes {
        let file: FileDescriptor
        let path: String
        let size: Int64

        /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
        func read(into destination: UnsafeMutableRawPointer, count: Int, at offset: Int64) throws(DecodingError) -> Int {
            do throws(Errno) { return try file.read(into: destination, count: count, at: offset) } catch {
                throw .unreadable(path, errno: error.code)
            }
        }

        /// Up to `count` bytes at `offset`, as an array; `count` must be small (it is always bounded by the caller).
        func bytes(_ count: Int, at offset: Int64) throws(DecodingError) -> [UInt8] {
            guard count > 0, offset >= 0, offset < size else { return [] }
            let wanted = Int(min(Int64(count), size - offset))
            var result = [UInt8](repeating: 0, count: wanted)
            // `wanted` > 0, so the array has storage.
            let got = try result.withUnsafeMutableBufferPointer { (storage) throws(DecodingError) -> Int in
                try read(into: UnsafeMutableRawPointer(storage.baseAddress!), count: wanted, at: offset)
            }
            result.removeLast(wanted - got)
            return result
        }
    }
}

// MARK: - Parsing the header

extension WAVDecoder {
    /// Where the audio is and how it is stored, from walking the RIFF chunks.
    struct Layout {
        var encoding: SampleEncoding
        var channels: Int
        var sampleRate: Int
        var blockAlign: Int
        var dataOffset: Int64
        var frames: Int64
        var tags = AudioTags()
        var warnings: [String] = []

        init(reading file: FileBytes) throws(DecodingError) {
            let path = file.path
            let header = try file.bytes(12, at: 0)
            let magic = header.fourCC(0)
            guard let magic, ["RIFF", "RF64", "BW64"].contains(magic) else { throw .unsupportedFormat(path) }
            guard header.count == 12 else {
                throw .corrupt(path, reason: "file ends inside the RIFF header (\(header.count) bytes)")
            }
            guard header.fourCC(8) == "WAVE" else { throw .unsupportedFormat(path) }
            let isRF64 = magic != "RIFF"

            var fmt: [UInt8]?
            var fmtSize: Int64 = 0
            var dataStart: Int64?
            var dataClaim: Int64 = 0
            var ds64DataSize: Int64?
            var tags = AudioTags()
            var offset: Int64 = 12
            var walked = 0
            while offset <= file.size - 8, walked < WAVDecoder.maxChunks {
                walked += 1
                let chunkHeader = try file.bytes(8, at: offset)
                guard let id = chunkHeader.fourCC(0), let size32 = chunkHeader.u32LE(4) else { break }
                var size = Int64(size32)
                let body = offset + 8
                switch id {
                case "ds64" where isRF64:
                    // riffSize (8), dataSize (8), sampleCount (8), table...
                    let ds64 = try file.bytes(Int(min(size, 24)), at: body)
                    if let claimed = ds64.u64LE(8) { ds64DataSize = Int64(clamping: claimed) }
                case "fmt " where fmt == nil:
                    fmtSize = size
                    fmt = try file.bytes(Int(min(size, 40)), at: body)
                case "data" where dataStart == nil:
                    if isRF64, size32 == .max, let ds64DataSize { size = ds64DataSize }
                    dataStart = body
                    dataClaim = size
                case "LIST":
                    let list = try file.bytes(Int(min(size, Int64(WAVDecoder.maxListBytes))), at: body)
                    if list.fourCC(0) == "INFO" { Layout.readInfo(list, into: &tags) }
                default:
                    break
                }
                let (padded, overflow1) = size.addingReportingOverflow(size & 1)
                let (next, overflow2) = body.addingReportingOverflow(padded)
                if overflow1 || overflow2 { break }
                offset = next
            }

            let gaveUp = walked == WAVDecoder.maxChunks ? " in the first \(walked) chunks" : ""
            guard let fmt else { throw .corrupt(path, reason: "no fmt chunk" + gaveUp) }
            let format = try Layout.readFormat(fmt, claimedSize: fmtSize, path: path)
            guard let dataStart else { throw .corrupt(path, reason: "no data chunk" + gaveUp) }

            encoding = format.encoding
            channels = format.channels
            sampleRate = format.sampleRate
            blockAlign = format.blockAlign
            dataOffset = dataStart
            self.tags = tags
            let present = max(file.size - dataStart, 0)
            var usable = dataClaim
            if dataClaim > present {
                warnings.append("data chunk claims \(dataClaim) bytes but only \(present) are present")
                usable = present
            }
            frames = try AudioInfo.checkedLength(usable / Int64(blockAlign), path: path)
        }

        struct Format {
            var encoding: SampleEncoding
            var channels: Int
            var sampleRate: Int
            var blockAlign: Int
        }

        static let extensible: UInt16 = 0xFFFE
        /// The last 14 bytes of every KSDATAFORMAT_SUBTYPE_* GUID whose first two bytes are a WAVE format tag.
        static let subformatTail: [UInt8] = [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]

        static func readFormat(_ fmt: [UInt8], claimedSize: Int64, path: String) throws(DecodingError) -> Format {
            guard fmt.count >= 16, let tag = fmt.u16LE(0), let channels16 = fmt.u16LE(2), let rate32 = fmt.u32LE(4),
                  let blockAlign16 = fmt.u16LE(12), let bits16 = fmt.u16LE(14) else {
                throw .corrupt(path, reason: "fmt chunk is \(claimedSize) bytes, too short (need 16)")
            }
            let (rate, channels) = try AudioInfo.checkedFormat(sampleRate: rate32, channels: channels16, path: path)
            let blockAlign = Int(blockAlign16), bits = Int(bits16)

            var codec = tag
            var codecName = "format tag \(hex(tag)) (\(tagName(tag)))"
            if tag == extensible {
                guard fmt.count >= 40, let subtag = fmt.u16LE(24) else {
                    throw .corrupt(path, reason: "WAVE_FORMAT_EXTENSIBLE fmt chunk is \(claimedSize) bytes, too short (need 40)")
                }
                guard Array(fmt[26..<40]) == subformatTail else {
                    throw .corrupt(path, reason: "unsupported encoding: WAVE_FORMAT_EXTENSIBLE subformat \(guid(fmt[24..<40]))")
                }
                codec = subtag
                codecName = "WAVE_FORMAT_EXTENSIBLE subformat \(hex(subtag)) (\(tagName(subtag)))"
            }

            let encoding: SampleEncoding
            switch (codec, bits) {
            case (1, 8): encoding = .unsigned8
            case (1, 9...16): encoding = .signed16  // fewer valid bits are stored left-justified in the container
            case (1, 17...24): encoding = .signed24
            case (1, 25...32): encoding = .signed32
            case (1, _): throw .corrupt(path, reason: "unsupported encoding: \(bits)-bit PCM")
            case (3, 32): encoding = .float32
            case (3, 64): encoding = .float64
            case (3, _): throw .corrupt(path, reason: "unsupported encoding: \(bits)-bit IEEE float")
            default: throw .corrupt(path, reason: "unsupported encoding: \(codecName)")
            }
            let expected = channels * encoding.bytes
            guard blockAlign == expected else {
                throw .corrupt(path, reason: "block align \(blockAlign) does not match \(channels) channel\(channels == 1 ? "" : "s") of \(encoding.name) samples (expected \(expected))")
            }
            return Format(encoding: encoding, channels: channels, sampleRate: rate, blockAlign: blockAlign)
        }

        static func hex(_ tag: UInt16) -> String {
            let digits = String(tag, radix: 16, uppercase: true)
            return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }

        static func tagName(_ tag: UInt16) -> String {
            switch tag {
            case 0x0001: "PCM"
            case 0x0002: "Microsoft ADPCM"
            case 0x0003: "IEEE float"
            case 0x0006: "A-law"
            case 0x0007: "µ-law"
            case 0x0011: "IMA ADPCM"
            case 0x0031: "GSM 6.10"
            case 0x0050: "MPEG"
            case 0x0055: "MPEG Layer III"
            case 0x0161, 0x0162, 0x0163: "Windows Media Audio"
            case 0x00FF, 0x1610: "AAC"
            case 0x2000: "AC-3"
            case 0xF1AC: "FLAC"
            case extensible: "WAVE_FORMAT_EXTENSIBLE"
            default: "unknown"
            }
        }

        static func guid(_ bytes: ArraySlice<UInt8>) -> String {
            bytes.map { byte in
                let digits = String(byte, radix: 16, uppercase: true)
                return digits.count == 1 ? "0" + digits : digits
            }.joined()
        }

        /// Reads the sub-chunks of a LIST/INFO chunk (already bounded in size) into `tags`.
        static func readInfo(_ list: [UInt8], into tags: inout AudioTags) {
            var at = 4
            while let id = list.fourCC(at), let size32 = list.u32LE(at + 4) {
                let size = Int(size32)
                let start = at + 8
                let end = min(start + size, list.count)
                guard start <= end else { break }
                let text = string(list[start..<end])
                switch id {
                case "INAM": tags.title = text ?? tags.title
                case "IART": tags.artist = text ?? tags.artist
                case "IPRD": tags.album = text ?? tags.album
                case "IGNR": tags.genre = text ?? tags.genre
                case "ITRK", "IPRT": if tags.trackNumber == nil { tags.trackNumber = text.flatMap(leadingNumber) }
                default: break
                }
                at = start + size + (size & 1)
            }
        }

        /// A tag's text: UTF-8 when valid, otherwise Latin-1; without the NUL padding; nil when empty.
        static func string(_ bytes: ArraySlice<UInt8>) -> String? {
            let text = bytes.prefix { $0 != 0 }
            let decoded = String(validating: text, as: UTF8.self)
                ?? String(String.UnicodeScalarView(text.map { Unicode.Scalar($0) }))
            let trimmed = decoded.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed()
            return trimmed.isEmpty ? nil : String(trimmed)
        }

    }
}
