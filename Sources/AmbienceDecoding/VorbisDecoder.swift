import AmbienceCore
import AmbiencePlatform
import CVorbisFile
import Glibc

/// An open Ogg Vorbis stream. Owns the `OggVorbis_File` and the file it reads; nothing else in the engine touches
/// libvorbisfile or libogg (the benchmark's floor, `MixerFloor`, has its own use, as it has of OpenAL Soft).
///
/// Before libvorbisfile sees the file, every Ogg page is checked with libogg: libvorbisfile resynchronises past
/// damaged pages, and a game would rather hear about a damaged asset when loading it than as a glitch while playing.
package final class VorbisDecoder: AudioDecoder {
    package let info: AudioInfo
    private let path: String
    /// Points into itself: allocated once, never copied. `ov_clear` lets go of the reader it was opened with.
    private let file: UnsafeMutablePointer<OggVorbis_File>

    init(path: String) throws(DecodingError) {
        let stream = try Self.openRegularFile(path)
        try Self.verifyPages(of: stream, path: path)
        _ = stream.seek(to: 0, from: SEEK_SET)

        let file = UnsafeMutablePointer<OggVorbis_File>.allocate(capacity: 1)
        // libvorbisfile holds the reader (one reference, let go by `closeStream` in `ov_clear`).
        let source = Unmanaged.passRetained(stream)
        let status = ov_open_callbacks(source.toOpaque(), file, nil, 0, Self.callbacks)
        guard status == 0 else {
            // After a failed open the reader is still ours, and the OggVorbis_File holds nothing to clear.
            source.release()
            file.deallocate()
            throw .corrupt(path, reason: Self.describe(status))
        }
        let info: AudioInfo
        do throws(DecodingError) {
            info = try Self.readInfo(of: file, path: path)
            // libvorbisfile 1.3.7 leaves a chained file positioned at the start of its last link: rewind.
            if ov_pcm_tell(file) != 0 {
                let rewound = ov_pcm_seek(file, 0)
                guard rewound == 0 else {
                    throw .corrupt(path, reason: "cannot seek to the start: \(Self.describe(rewound))")
                }
            }
        } catch {
            ov_clear(file)
            file.deallocate()
            throw error
        }
        // Nothing throws from here on: once every property is set, a throw would run deinit as well.
        self.path = path
        self.file = file
        self.info = info
    }

    deinit {
        ov_clear(file)
        file.deallocate()
    }

    package var position: Int64 { max(ov_pcm_tell(file), 0) }

    package func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(DecodingError) -> Int {
        let channels = info.channels
        // Never past the stated length, which is what a caller sized its memory for: a stream whose pages claim
        // less than its packets decode to ends where the claim does.
        let wanted = Int(min(Int64(max(frames, 0)), max(info.frames - position, 0)))
        var written = 0
        while written < wanted {
            var planes: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?
            var link: Int32 = 0
            let got = ov_read_float(file, &planes, Int32(clamping: wanted - written), &link)
            if got == 0 {
                // The end of the stream before its last frame: the file shrank since it was opened. What was read
                // is returned, then the next read says so.
                let at = position
                guard written > 0 || at >= info.frames else {
                    throw .corrupt(path, reason: "cut short while being read: it ends at frame \(at) of \(info.frames)")
                }
                break
            }
            guard got > 0, let planes else {
                let at = position
                throw .corrupt(path, reason: "\(Self.describe(Int32(clamping: got))) at frame \(at)")
            }
            // libvorbisfile never returns more than asked; kept in bounds anyway
            let count = min(Int(got), wanted - written)
            let out = buffer + written * channels
            if channels == 2, let left = planes[0], let right = planes[1] {
                // The music stream's case: one pass writing whole frames.
                for frame in 0..<count {
                    out[frame * 2] = left[frame]
                    out[frame * 2 + 1] = right[frame]
                }
            } else {
                for channel in 0..<channels {
                    guard let plane = planes[channel] else { continue }
                    for frame in 0..<count { out[frame * channels + channel] = plane[frame] }
                }
            }
            written += count
        }
        return written
    }

    package func seek(toFrame frame: Int64) throws(DecodingError) {
        let target = min(max(frame, 0), info.frames)
        let status = ov_pcm_seek(file, target)
        guard status == 0 else {
            throw .corrupt(path, reason: "cannot seek to frame \(target): \(Self.describe(status))")
        }
    }

    /// The embedded cover (see `VorbisComments.picture`). Decoded from the comments on each access.
    package var embeddedPicture: EmbeddedPicture? { VorbisComments.picture(from: comments(link: 0)) }

    // MARK: - Opening

    /// A reader on a regular file (see `AudioFile.openRegularFile`).
    static func openRegularFile(_ path: String) throws(DecodingError) -> FileReader {
        let opened = try AudioFile.openRegularFile(path)
        return FileReader(opened.file, size: opened.size)
    }

    /// libvorbisfile reads through these, on the reader this decoder opened on a checked regular file. A failed
    /// read returns 0 with `errno` set (`FileReader.read` sets it), which is how libvorbisfile tells it from the end.
    private static var callbacks: ov_callbacks {
        ov_callbacks(
            read_func: { bytes, size, count, source in
                guard let bytes, let source, size > 0 else { return 0 }
                let stream = Unmanaged<FileReader>.fromOpaque(source).takeUnretainedValue()
                let wanted = size.multipliedReportingOverflow(by: count)
                guard !wanted.overflow else { return 0 }
                let read = Result { () throws(Errno) in try stream.read(into: bytes, count: wanted.partialValue) }
                guard case .success(let got) = read else { return 0 }
                return got / size
            },
            seek_func: { source, offset, whence in
                guard let source else { return -1 }
                return Unmanaged<FileReader>.fromOpaque(source).takeUnretainedValue().seek(to: offset, from: whence)
                    ? 0 : -1
            },
            close_func: { source in
                if let source { Unmanaged<FileReader>.fromOpaque(source).release() }
                return 0
            },
            tell_func: { source in
                guard let source else { return -1 }
                return Int(Unmanaged<FileReader>.fromOpaque(source).takeUnretainedValue().position)
            })
    }

    /// Walks every Ogg page with libogg (OpusDecoder checks its files the same way). A page is found only when its CRC matches, so any skipped byte means a
    /// damaged page or bytes that are no page at all; a stream that stops before a page with the end-of-stream
    /// flag was cut short.
    static func verifyPages(of stream: FileReader, path: String) throws(DecodingError) {
        var sync = ogg_sync_state()
        ogg_sync_init(&sync)
        defer { ogg_sync_clear(&sync) }
        var page = ogg_page()
        let chunk = 64 * 1024
        var fileSize = 0
        var offset = 0  // file offset of the next byte ogg_sync_pageseek will look at
        var lastPageEndsStream = false

        while true {
            guard let buffer = ogg_sync_buffer(&sync, chunk) else {
                throw .corrupt(path, reason: "out of memory while checking Ogg pages")
            }
            let got: Int
            do throws(Errno) { got = try stream.read(into: buffer, count: chunk) } catch {
                throw .unreadable(path, errno: error.code)
            }
            if got == 0 { break }
            ogg_sync_wrote(&sync, got)
            fileSize += got

            while true {
                let step = ogg_sync_pageseek(&sync, &page)
                if step == 0 { break }  // needs more bytes
                if step < 0 {
                    // The skipped bytes start where the sync layer stood; they are still in its buffer.
                    let start = Int(sync.returned) + step
                    let capture = Array("OggS".utf8)
                    let hasCapture =
                        start + 4 <= Int(sync.fill)
                        && (0..<4).allSatisfy { sync.data[start + $0] == capture[$0] }
                    throw .corrupt(
                        path,
                        reason: hasCapture
                            ? "page checksum mismatch at byte \(offset)"
                            : "damaged Ogg page or garbage at byte \(offset) (no page capture pattern)")
                }
                offset += step
                lastPageEndsStream = ogg_page_eos(&page) != 0
            }
        }
        if fileSize == 0 { throw .empty(path) }
        if offset < fileSize || !lastPageEndsStream {
            throw .corrupt(path, reason: "truncated: stream ends at byte \(fileSize) without its last page")
        }
    }

    /// The most frames one byte of a Vorbis stream can decode to: a packet is at least one byte and gives at most
    /// half of the largest block size the specification allows (8192).
    static let maximumFramesPerByte: Int64 = 4096

    /// Rate, channels, exact length and tags. Chained streams are accepted only when every link has the first
    /// link's rate and channel count, since a decoder's output format is fixed.
    private static func readInfo(of file: UnsafeMutablePointer<OggVorbis_File>, path: String) throws(DecodingError)
        -> AudioInfo
    {
        guard ov_seekable(file) != 0 else { throw .corrupt(path, reason: "stream is not seekable") }
        guard let first = ov_info(file, 0) else { throw .corrupt(path, reason: "no Vorbis stream information") }
        let rate = first.pointee.rate, channels = first.pointee.channels
        let format = try AudioInfo.checkedFormat(sampleRate: rate, channels: channels, path: path)
        let links = ov_streams(file)
        for link in 1..<max(links, 1) {
            guard let other = ov_info(file, Int32(clamping: link)) else { continue }
            if other.pointee.rate != rate || other.pointee.channels != channels {
                throw .corrupt(
                    path,
                    reason: "chained stream changes format: link \(link + 1) is "
                        + "\(other.pointee.rate) Hz, \(other.pointee.channels) channels; link 1 is \(rate) Hz, \(channels) channels"
                )
            }
        }
        let frames = ov_pcm_total(file, -1)
        guard frames >= 0 else {
            throw .corrupt(path, reason: "cannot determine length: \(describe(Int32(clamping: frames)))")
        }
        // The length comes from the last page's granule position: a claim. One Vorbis packet takes at least a byte
        // and gives at most half the largest block (4096 frames), so a file cannot hold more than that per byte.
        let size = Int64(max(ov_raw_total(file, -1), 0))
        let (possible, overflow) = size.multipliedReportingOverflow(by: maximumFramesPerByte)
        guard overflow || frames <= possible else {
            throw .corrupt(
                path, reason: "claims \(frames) frames, more than its \(size) bytes can hold (at most \(possible))")
        }
        return AudioInfo(
            format: .ogg, sampleRate: format.sampleRate, channels: format.channels,
            frames: try AudioInfo.checkedLength(frames, path: path),
            tags: VorbisComments.tags(from: comments(of: file, link: 0)))
    }

    // MARK: - Comments

    /// The Vorbis comments of one link as (upper-cased key, raw UTF-8 value) pairs, in file order.
    private func comments(link: Int32) -> [(key: String, value: [UInt8])] {
        Self.comments(of: file, link: link)
    }

    private static func comments(of file: UnsafeMutablePointer<OggVorbis_File>, link: Int32) -> [(
        key: String, value: [UInt8]
    )] {
        guard let comment = ov_comment(file, link) else { return [] }
        return VorbisComments.entries(
            comment.pointee.user_comments, lengths: comment.pointee.comment_lengths,
            count: comment.pointee.comments)
    }

    /// Standard base64 (padding optional, no whitespace), or nil when malformed or when it would decode to more
    /// than `limit` bytes.
    static func decodeBase64(_ text: [UInt8], limit: Int) -> [UInt8]? {
        var end = text.count
        while end > 0 && text[end - 1] == UInt8(ascii: "=") { end -= 1 }
        guard text.count - end <= 2, end % 4 != 1, end / 4 * 3 <= limit else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(end / 4 * 3 + 2)
        var accumulator: UInt32 = 0, bits = 0
        for index in 0..<end {
            let c = text[index]
            let value: UInt8
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = c - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = c - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = c - UInt8(ascii: "0") + 52
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            default: return nil
            }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return out
    }

    // MARK: - Errors

    private static func describe(_ status: Int32) -> String {
        switch status {
        case OV_EREAD: "read error"
        case OV_ENOTVORBIS: "not an Ogg Vorbis stream"
        case OV_EVERSION: "unsupported Vorbis version"
        case OV_EBADHEADER: "invalid Vorbis header"
        case OV_EFAULT: "internal libvorbis fault"
        case OV_HOLE: "interruption in the data (lost sync)"
        case OV_EBADLINK: "invalid stream section"
        case OV_ENOSEEK: "stream is not seekable"
        case OV_EINVAL: "invalid stream state"
        case OV_EIMPL: "unsupported Vorbis feature"
        case OV_ENOTAUDIO: "not audio data"
        case OV_EBADPACKET: "invalid packet"
        case OV_EOF: "unexpected end of stream"
        case OV_FALSE: "no data"
        default: "libvorbisfile error \(status)"
        }
    }
}

/// The checksum of an Ogg page the project writes itself (the bench's re-tagged copies, test fixtures), stamped by
/// libogg so that it is the one the decoder checks.
package enum OggPageChecksum {
    /// Computes the checksum of the page in `bytes[page]` (header and body, nothing more) and stores it in the
    /// header's CRC field. False, with nothing changed, when the range is not one whole page's length.
    @discardableResult
    package static func stamp(_ bytes: inout [UInt8], page: Range<Int>) -> Bool {
        guard page.lowerBound >= 0, page.upperBound <= bytes.count, page.count >= 27 else { return false }
        let headerLength = 27 + Int(bytes[page.lowerBound + 26])
        guard headerLength <= page.count,
            bytes[(page.lowerBound + 27)..<(page.lowerBound + headerLength)].reduce(0, { $0 + Int($1) })
                == page.count - headerLength
        else { return false }
        bytes.withUnsafeMutableBufferPointer { storage in
            let start = storage.baseAddress! + page.lowerBound
            var view = ogg_page(
                header: start, header_len: headerLength, body: start + headerLength,
                body_len: page.count - headerLength)
            ogg_page_checksum_set(&view)
        }
        return true
    }
}
