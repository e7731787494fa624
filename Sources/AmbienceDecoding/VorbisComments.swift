import AmbienceCore

/// Vorbis comments (`KEY=value`, UTF-8), the tag format of Ogg Vorbis, Ogg Opus (OpusTags) and FLAC alike. Each
/// library hands over the raw entries; the mapping to `AudioTags` and the choice of cover are the same for all three.
enum VorbisComments {
    /// One entry of a C comment list as (upper-cased key, raw UTF-8 value), or nil when it has no `=`.
    static func entry(_ bytes: UnsafeRawBufferPointer) -> (key: String, value: [UInt8])? {
        guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else { return nil }
        let key = String(decoding: bytes[..<equals], as: UTF8.self).uppercased()
        return (key, Array(bytes[(equals + 1)...]))
    }

    /// The entries of a libvorbis/libopusfile comment list (`user_comments`, `comment_lengths`, `comments`).
    static func entries(
        _ list: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, lengths: UnsafeMutablePointer<Int32>?,
        count: Int32
    ) -> [(key: String, value: [UInt8])] {
        guard let list, let lengths else { return [] }
        var result: [(key: String, value: [UInt8])] = []
        for index in 0..<Int(max(count, 0)) {
            guard let text = list[index] else { continue }
            if let parsed = entry(UnsafeRawBufferPointer(start: text, count: Int(max(lengths[index], 0)))) {
                result.append(parsed)
            }
        }
        return result
    }

    /// The fields the library keeps; the first non-empty value of a key wins. `hasArtwork` is set by a picture comment.
    static func tags(from comments: [(key: String, value: [UInt8])]) -> AudioTags {
        var tags = AudioTags()
        var loudness: [(key: String, value: String)] = []
        for (key, raw) in comments {
            let value = String(decoding: raw, as: UTF8.self).trimmingSpaces
            switch key {
            case "TITLE": tags.title = tags.title ?? value.nonEmpty
            case "ARTIST": tags.artist = tags.artist ?? value.nonEmpty
            case "ALBUM": tags.album = tags.album ?? value.nonEmpty
            case "ALBUMARTIST", "ALBUM ARTIST": tags.albumArtist = tags.albumArtist ?? value.nonEmpty
            case "GENRE": tags.genre = tags.genre ?? value.nonEmpty
            case "COMPOSER": tags.composer = tags.composer ?? value.nonEmpty
            case "TRACKNUMBER": tags.trackNumber = tags.trackNumber ?? leadingNumber(value)
            case "DISCNUMBER": tags.discNumber = tags.discNumber ?? leadingNumber(value)
            case "METADATA_BLOCK_PICTURE", "COVERART": tags.hasArtwork = true
            case _ where key.hasPrefix("REPLAYGAIN_") || key.hasPrefix("R128_"): loudness.append((key, value))
            default: break
            }
        }
        tags.loudness = LoudnessTags.measurement(from: loudness)
        return tags
    }

    /// The embedded cover: a base64 `METADATA_BLOCK_PICTURE` (the front cover when there are several), else a legacy
    /// `COVERART`. Nil when absent, malformed or over `EmbeddedPicture.maximumSize`.
    static func picture(from comments: [(key: String, value: [UInt8])]) -> EmbeddedPicture? {
        var best: EmbeddedPicture?
        var coverArt: [UInt8]?
        var coverArtMIME: String?
        for (key, value) in comments {
            switch key {
            case "METADATA_BLOCK_PICTURE":
                guard let block = VorbisDecoder.decodeBase64(value, limit: EmbeddedPicture.maximumSize + 64 * 1024),
                    let parsed = EmbeddedPicture.parseFLACPictureBlock(block)
                else { continue }
                if parsed.type == EmbeddedPicture.frontCoverType { return parsed.picture }
                if best == nil { best = parsed.picture }
            case "COVERART":
                if coverArt == nil { coverArt = VorbisDecoder.decodeBase64(value, limit: EmbeddedPicture.maximumSize) }
            case "COVERARTMIME":
                if coverArtMIME == nil { coverArtMIME = String(decoding: value, as: UTF8.self) }
            default:
                continue
            }
        }
        if let best { return best }
        guard let coverArt, !coverArt.isEmpty else { return nil }
        let mime = coverArtMIME.flatMap { $0.contains("/") ? $0 : nil } ?? EmbeddedPicture.sniffMIMEType(coverArt)
        return EmbeddedPicture(mimeType: mime, data: coverArt)
    }
}
