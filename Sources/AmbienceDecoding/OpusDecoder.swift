import AmbienceCore
import AmbiencePlatform
import COpusFile
import Glibc

/// An open Ogg Opus stream. Owns the `OggOpusFile` and the file it reads; nothing else in the project touches
/// libopusfile.
///
/// Output is always 48 kHz, Opus's own rate, whatever rate the encoder was fed. libopusfile trims the pre-skip and
/// the end (from the last page's granule position) exactly, so `info.frames` is the original length.
///
/// Gain: the header's output gain is applied once, here, by libopusfile (its default `OP_HEADER_GAIN`, as `opusdec`
/// does). `R128_TRACK_GAIN` and `R128_ALBUM_GAIN` are relative to that already-applied gain and are not applied here:
/// loudness matching reads them from the tags.
///
/// As with Ogg Vorbis, every page is checked with libogg before libopusfile sees the file (libopusfile resynchronises
/// past damaged pages and takes a cut-off file's last granule as its length): a damaged or truncated file is refused
/// when opened, not heard as a glitch.
package final class OpusDecoder: AudioDecoder {
    package let info: AudioInfo
    private let path: String
    private let file: OpaquePointer
    /// After a seek to the very end, which libopusfile refuses: nothing is left to read.
    private var atEnd = false

    /// Opus's one decoding rate.
    static let sampleRate = 48_000

    init(path: String) throws(DecodingError) {
        let stream = try VorbisDecoder.openRegularFile(path)
        try VorbisDecoder.verifyPages(of: stream, path: path)
        _ = stream.seek(to: 0, from: SEEK_SET)
        var callbacks = OpusFileCallbacks(
            read: Self.readStream, seek: Self.seekStream, tell: Self.tellStream,
            close: Self.closeStream)
        var status: Int32 = 0
        // libopusfile holds the reader (one reference, let go by `closeStream` in `op_free`).
        let source = Unmanaged.passRetained(stream)
        guard let file = op_open_callbacks(source.toOpaque(), &callbacks, nil, 0, &status) else {
            // After a failed op_open_callbacks the reader is still ours.
            source.release()
            throw .corrupt(path, reason: Self.describe(status))
        }
        let info: AudioInfo
        do throws(DecodingError) {
            info = try Self.readInfo(of: file, path: path)
            // The header's output gain, once (see the type's comment); this is libopusfile's default, set to be sure.
            let gain = op_set_gain_offset(file, OP_HEADER_GAIN, 0)
            guard gain == 0 else { throw .corrupt(path, reason: "cannot set the header gain: \(Self.describe(gain))") }
        } catch {
            op_free(file)
            throw error
        }
        // Nothing throws from here on: once every property is set, a throw would run deinit as well.
        self.path = path
        self.file = file
        self.info = info
    }

    deinit { op_free(file) }

    package var position: Int64 { atEnd ? info.frames : max(op_pcm_tell(file), 0) }

    package func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(DecodingError) -> Int {
        let channels = info.channels
        // Never past the stated length, which is what a caller sized its memory for.
        let wanted = Int(min(Int64(max(frames, 0)), max(info.frames - position, 0)))
        var written = 0
        while written < wanted {
            // op_read_float counts its room in samples (all channels); it fills at most that, in whole frames.
            let room = Int32(clamping: (wanted - written) * channels)
            var link: Int32 = 0
            let got = op_read_float(file, buffer + written * channels, room, &link)
            if got == 0 {
                let at = position
                guard written > 0 || at >= info.frames else {
                    throw .corrupt(path, reason: "cut short while being read: it ends at frame \(at) of \(info.frames)")
                }
                break
            }
            guard got > 0 else {
                let at = position
                throw .corrupt(path, reason: "\(Self.describe(got)) at frame \(at)")
            }
            // Every link has the first one's channel count (checked when opened), so `got` frames fill got × channels.
            written += min(Int(got), wanted - written)
        }
        return written
    }

    package func seek(toFrame frame: Int64) throws(DecodingError) {
        let target = min(max(frame, 0), info.frames)
        atEnd = target == info.frames && target > 0
        if atEnd { return }
        let status = op_pcm_seek(file, target)
        guard status == 0 else {
            throw .corrupt(path, reason: "cannot seek to frame \(target): \(Self.describe(status))")
        }
    }

    /// The embedded cover from the first link's OpusTags: a `METADATA_BLOCK_PICTURE` parsed by libopusfile (the front
    /// cover when there are several), else a legacy `COVERART`. Nil when absent, malformed or over 16 MiB.
    package var embeddedPicture: EmbeddedPicture? {
        guard let tags = op_tags(file, 0) else { return nil }
        // base64 takes 4 bytes per 3; a block is its image plus a small header.
        let longestBlockText = (EmbeddedPicture.maximumSize + 64 * 1024) / 3 * 4 + 4
        var best: EmbeddedPicture?
        for index in 0..<Int(max(tags.pointee.comments, 0)) {
            guard let comment = tags.pointee.user_comments?[index],
                opus_tagncompare("METADATA_BLOCK_PICTURE", 22, comment) == 0,
                let length = tags.pointee.comment_lengths?[index], length <= longestBlockText
            else { continue }
            var picture = OpusPictureTag()
            opus_picture_tag_init(&picture)
            defer { opus_picture_tag_clear(&picture) }
            guard opus_picture_tag_parse(&picture, comment) == 0, let data = picture.data,
                picture.data_length > 0, picture.data_length <= UInt32(EmbeddedPicture.maximumSize)
            else { continue }
            let bytes = Array(UnsafeBufferPointer(start: data, count: Int(picture.data_length)))
            var mime = picture.mime_type.map { String(cString: $0) } ?? ""
            if !mime.contains("/") { mime = EmbeddedPicture.sniffMIMEType(bytes) }
            let found = EmbeddedPicture(mimeType: mime, data: bytes)
            if picture.type == Int32(EmbeddedPicture.frontCoverType) { return found }
            if best == nil { best = found }
        }
        return best
            ?? VorbisComments.picture(from: Self.comments(of: file).filter { $0.key != "METADATA_BLOCK_PICTURE" })
    }

    // MARK: - Opening

    /// The most frames one byte of an Opus stream can decode to: a packet is at least one byte (its TOC) and holds
    /// at most 120 ms, 5760 frames at 48 kHz.
    static let maximumFramesPerByte: Int64 = 5_760

    /// Rate, channels, exact length and tags. Chained streams are accepted only when every link has the first link's
    /// channel count, since a decoder's output format is fixed (the rate is always 48 kHz).
    private static func readInfo(of file: OpaquePointer, path: String) throws(DecodingError) -> AudioInfo {
        guard op_seekable(file) != 0 else { throw .corrupt(path, reason: "stream is not seekable") }
        let channels = op_channel_count(file, 0)
        let format = try AudioInfo.checkedFormat(sampleRate: sampleRate, channels: channels, path: path)
        let links = op_link_count(file)
        for link in 1..<max(links, 1) {
            let other = op_channel_count(file, link)
            if other != channels {
                throw .corrupt(
                    path,
                    reason: "chained stream changes format: link \(link + 1) has \(other) channels; "
                        + "link 1 has \(channels)")
            }
        }
        let frames = op_pcm_total(file, -1)
        guard frames >= 0 else {
            throw .corrupt(path, reason: "cannot determine length: \(describe(Int32(clamping: frames)))")
        }
        // The length comes from the last page's granule position: a claim, bounded by what the bytes can hold.
        let size = max(op_raw_total(file, -1), 0)
        let (possible, overflow) = size.multipliedReportingOverflow(by: maximumFramesPerByte)
        guard overflow || frames <= possible else {
            throw .corrupt(
                path, reason: "claims \(frames) frames, more than its \(size) bytes can hold (at most \(possible))")
        }
        return AudioInfo(
            format: .opus, sampleRate: format.sampleRate, channels: format.channels,
            frames: try AudioInfo.checkedLength(frames, path: path),
            tags: VorbisComments.tags(from: comments(of: file)))
    }

    /// The first link's OpusTags as (upper-cased key, raw UTF-8 value) pairs, in file order.
    private static func comments(of file: OpaquePointer) -> [(key: String, value: [UInt8])] {
        guard let tags = op_tags(file, 0) else { return [] }
        return VorbisComments.entries(
            tags.pointee.user_comments, lengths: tags.pointee.comment_lengths,
            count: tags.pointee.comments)
    }

    // MARK: - The file behind libopusfile

    // libopusfile reads through these, on the reader this decoder opened on a checked regular file.
    private static let readStream: op_read_func = { source, bytes, count in
        guard let source, let bytes, count > 0 else { return 0 }
        let stream = Unmanaged<FileReader>.fromOpaque(source).takeUnretainedValue()
        let read = Result { () throws(Errno) in try stream.read(into: bytes, count: Int(count)) }
        guard case .success(let got) = read else { return -1 }
        return Int32(clamping: got)
    }
    private static let seekStream: op_seek_func = { source, offset, whence in
        guard let source else { return -1 }
        return Unmanaged<FileReader>.fromOpaque(source).takeUnretainedValue().seek(to: offset, from: whence) ? 0 : -1
    }
    private static let tellStream: op_tell_func = { source in
        guard let source else { return -1 }
        return Unmanaged<FileReader>.fromOpaque(source).takeUnretainedValue().position
    }
    private static let closeStream: op_close_func = { source in
        if let source { Unmanaged<FileReader>.fromOpaque(source).release() }
        return 0
    }

    // MARK: - Errors

    private static func describe(_ status: Int32) -> String {
        switch status {
        case OP_FALSE: "no data"
        case OP_EOF: "unexpected end of stream"
        case OP_HOLE: "interruption in the data (lost sync)"
        case OP_EREAD: "read error"
        case OP_EFAULT: "internal libopusfile fault (out of memory?)"
        case OP_EIMPL: "unsupported Opus feature"
        case OP_EINVAL: "invalid stream state"
        case OP_ENOTFORMAT: "not an Ogg Opus stream"
        case OP_EBADHEADER: "invalid Opus header"
        case OP_EVERSION: "unsupported Opus version"
        case OP_ENOTAUDIO: "not audio data"
        case OP_EBADPACKET: "invalid packet"
        case OP_EBADLINK: "invalid stream section"
        case OP_ENOSEEK: "stream is not seekable"
        case OP_EBADTIMESTAMP: "invalid timestamp (granule position)"
        default: "libopusfile error \(status)"
        }
    }
}
