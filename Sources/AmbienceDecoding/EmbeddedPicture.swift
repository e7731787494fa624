import AmbiencePlatform

/// A picture embedded in an audio file's tags, usually the front cover.
package struct EmbeddedPicture: Sendable, Equatable {
    /// For example `image/png` or `image/jpeg`.
    package var mimeType: String
    /// The encoded image file, exactly as embedded.
    package var data: [UInt8]

    package init(mimeType: String, data: [UInt8]) {
        self.mimeType = mimeType
        self.data = data
    }

    /// Pictures larger than this are ignored: no cover needs it, and a damaged length field must not allocate gigabytes.
    static let maximumSize = 16 << 20

    /// The picture type that FLAC and ID3v2 give the front cover; preferred when a file embeds several pictures.
    static let frontCoverType = 3

    /// Parses a FLAC `METADATA_BLOCK_PICTURE` body (also what Vorbis comments carry, base64-encoded):
    /// type, MIME type, description, width, height, depth, colour count and the image data, all lengths big-endian 32-bit.
    /// Returns nil when a length runs past the end, the image is empty or larger than `maximumSize`.
    init?(flacPictureBlock block: [UInt8]) {
        guard let parsed = Self.parseFLACPictureBlock(block) else { return nil }
        self = parsed.picture
    }

    /// The picture and its FLAC/ID3v2 picture type (3 is the front cover).
    static func parseFLACPictureBlock(_ block: [UInt8]) -> (picture: EmbeddedPicture, type: Int)? {
        var reader = ByteCursor(block)
        guard let type = reader.u32BE(),
            let mimeLength = reader.u32BE(), let mime = reader.bytes(Int(mimeLength)),
            let descriptionLength = reader.u32BE(), reader.skip(Int(descriptionLength)),
            reader.skip(16),  // width, height, colour depth, indexed colour count
            let dataLength = reader.u32BE(), dataLength > 0, Int(dataLength) <= maximumSize,
            let data = reader.bytes(Int(dataLength))
        else { return nil }
        // The MIME type is printable ASCII by the FLAC specification; anything else is replaced, not trusted.
        var mimeType = String(decoding: mime, as: UTF8.self)
        if mimeType.isEmpty || !mimeType.contains("/") { mimeType = sniffMIMEType(data) }
        return (EmbeddedPicture(mimeType: mimeType, data: data), Int(type))
    }

    /// The MIME type an image's first bytes announce (PNG, JPEG, GIF, WebP, BMP), or `application/octet-stream`.
    static func sniffMIMEType(_ data: [UInt8]) -> String {
        if data.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if data.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if data.starts(with: Array("GIF8".utf8)) { return "image/gif" }
        if data.count >= 12 && data.starts(with: Array("RIFF".utf8)) && Array(data[8..<12]) == Array("WEBP".utf8) {
            return "image/webp"
        }
        if data.starts(with: Array("BM".utf8)) { return "image/bmp" }
        return "application/octet-stream"
    }
}
