/// What an encoded picture's header says: its format and its size in pixels, read without decoding any pixel.
///
/// `MediaItemArtwork` reads it before SDL_image sees the picture, so that a cover is measured against the pixel limit
/// by what it claims, before any decoder allocates for that claim. Of the formats read here only PNG and JPEG are
/// decoded, each by its own SDL_image loader: a picture cannot be checked as one format and then decoded as another.
struct ImageHeader: Equatable {
    enum Format: String, Equatable {
        case png = "PNG", jpeg = "JPEG", gif = "GIF", bmp = "BMP", webp = "WebP"
    }

    var format: Format
    /// For a GIF, the larger of the logical screen and the first image, on each side: both are surfaces SDL_image may make.
    var width: Int
    var height: Int

    /// The header of `data`, or why it cannot be read: an unknown format, or a header cut short or malformed.
    static func read(_ data: [UInt8]) -> Result<ImageHeader, Problem> {
        if data.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return png(data) }
        if data.starts(with: [0xFF, 0xD8]) { return jpeg(data) }
        if data.starts(with: Array("GIF87a".utf8)) || data.starts(with: Array("GIF89a".utf8)) { return gif(data) }
        if data.starts(with: Array("BM".utf8)) { return bmp(data) }
        if data.starts(with: Array("RIFF".utf8)) && data.fourCC(8) == "WEBP" { return webp(data) }
        return .failure(Problem("not a PNG, JPEG, GIF, BMP or WebP image"))
    }

    struct Problem: Error, Equatable {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    // MARK: Formats

    /// The IHDR chunk, which must come first: width and height, big-endian 32-bit, at bytes 16 and 20.
    private static func png(_ bytes: [UInt8]) -> Result<ImageHeader, Problem> {
        guard bytes.fourCC(12) == "IHDR", let width = bytes.u32BE(16), let height = bytes.u32BE(20) else {
            return .failure(Problem("PNG header is cut short or does not start with IHDR"))
        }
        return .success(ImageHeader(format: .png, width: Int(width), height: Int(height)))
    }

    /// The first start-of-frame segment (SOF0…SOF15, not DHT, JPG or DAC), walking the segments by their lengths.
    private static func jpeg(_ bytes: [UInt8]) -> Result<ImageHeader, Problem> {
        var at = 2
        while true {
            guard bytes.u8(at) == 0xFF else {
                return .failure(Problem("JPEG has no frame header (bad marker at byte \(at))"))
            }
            // Any number of 0xFF fill bytes may come before a marker.
            while bytes.u8(at + 1) == 0xFF { at += 1 }
            guard let marker = bytes.u8(at + 1) else { break }
            at += 2
            switch marker {
            case 0x01, 0xD0...0xD7:
                continue  // standalone markers: no length
            case 0xD9, 0xDA:
                return .failure(Problem("JPEG has no frame header before its image data"))
            case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
                guard let height = bytes.u16BE(at + 3), let width = bytes.u16BE(at + 5) else { break }
                return .success(ImageHeader(format: .jpeg, width: Int(width), height: Int(height)))
            default:
                guard let length = bytes.u16BE(at), length >= 2 else { break }
                at += Int(length)
                continue
            }
            break
        }
        return .failure(Problem("JPEG header is cut short"))
    }

    /// The logical screen (bytes 6 and 8, little-endian 16-bit) and the first image descriptor, past the colour
    /// table and any extension blocks.
    private static func gif(_ bytes: [UInt8]) -> Result<ImageHeader, Problem> {
        guard let screenWidth = bytes.u16LE(6), let screenHeight = bytes.u16LE(8), let flags = bytes.u8(10) else {
            return .failure(Problem("GIF header is cut short"))
        }
        var at = 13
        if flags & 0x80 != 0 { at += 3 << (Int(flags & 0x07) + 1) }
        while let block = bytes.u8(at) {
            switch block {
            case 0x2C:  // image descriptor: left, top, width, height
                guard let width = bytes.u16LE(at + 5), let height = bytes.u16LE(at + 7) else { break }
                return .success(
                    ImageHeader(
                        format: .gif, width: Int(max(width, screenWidth)),
                        height: Int(max(height, screenHeight))))
            case 0x21:  // extension: a label, then sub-blocks each led by its length, up to an empty one
                at += 2
                while let length = bytes.u8(at), length > 0 { at += 1 + Int(length) }
                at += 1
                continue
            case 0x3B:
                return .failure(Problem("GIF has no image"))
            default:
                return .failure(Problem("GIF block \(block) at byte \(at) is not an image or an extension"))
            }
            break
        }
        return .failure(Problem("GIF header is cut short"))
    }

    /// The DIB header after the 14-byte file header: 16-bit sizes in the OS/2 1.x header (12 bytes), signed 32-bit
    /// ones in every later header (a negative height is a top-down picture).
    private static func bmp(_ bytes: [UInt8]) -> Result<ImageHeader, Problem> {
        guard let headerSize = bytes.u32LE(14) else { return .failure(Problem("BMP header is cut short")) }
        if headerSize == 12 {
            guard let width = bytes.u16LE(18), let height = bytes.u16LE(20) else {
                return .failure(Problem("BMP header is cut short"))
            }
            return .success(ImageHeader(format: .bmp, width: Int(width), height: Int(height)))
        }
        guard headerSize >= 16, let width = bytes.u32LE(18), let height = bytes.u32LE(22) else {
            return .failure(Problem("BMP header is cut short or of unknown size \(headerSize)"))
        }
        return .success(
            ImageHeader(
                format: .bmp, width: Int(Int32(bitPattern: width).magnitude),
                height: Int(Int32(bitPattern: height).magnitude)))
    }

    /// The first chunk: `VP8 ` (lossy: 14-bit sizes after the key frame's start code), `VP8L` (lossless: 14-bit
    /// sizes minus one after its signature) or `VP8X` (extended: the canvas, 24-bit sizes minus one).
    private static func webp(_ bytes: [UInt8]) -> Result<ImageHeader, Problem> {
        switch bytes.fourCC(12) {
        case "VP8 ":
            guard bytes.u8(23) == 0x9D, bytes.u8(24) == 0x01, bytes.u8(25) == 0x2A,
                let width = bytes.u16LE(26), let height = bytes.u16LE(28)
            else { break }
            return .success(ImageHeader(format: .webp, width: Int(width & 0x3FFF), height: Int(height & 0x3FFF)))
        case "VP8L":
            guard bytes.u8(20) == 0x2F, let packed = bytes.u32LE(21) else { break }
            return .success(
                ImageHeader(format: .webp, width: Int(packed & 0x3FFF) + 1, height: Int((packed >> 14) & 0x3FFF) + 1))
        case "VP8X":
            guard let width = bytes.u24LE(24), let height = bytes.u24LE(27) else { break }
            return .success(ImageHeader(format: .webp, width: Int(width) + 1, height: Int(height) + 1))
        default:
            break
        }
        return .failure(Problem("WebP header is cut short or of an unknown kind"))
    }
}
