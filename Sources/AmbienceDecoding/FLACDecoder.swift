import AmbienceCore
import AmbiencePlatform
import CFLAC
import Glibc

/// An open native FLAC stream (`fLaC`), 4 to 32 bits per sample. Owns the libFLAC stream decoder and the file it
/// reads; nothing else in the project touches libFLAC.
///
/// The length is STREAMINFO's exact sample count. When STREAMINFO says 0 (unknown: a stream encoded to a pipe), the
/// file is decoded once when opened to count its samples, up to `AudioInfo.maximumFrames`. A file cut short is
/// found when opened: the last sample STREAMINFO claims must decode. Seeks are libFLAC's sample-exact
/// `seek_absolute`. A frame with a bad CRC or lost sync is an error, not silence: a game would rather hear about a
/// damaged asset when loading it than as a glitch while playing.
package final class FLACDecoder: AudioDecoder {
    package let info: AudioInfo
    /// The front cover (picture type 3) when the file has one, else its first PICTURE block, else a
    /// METADATA_BLOCK_PICTURE or COVERART comment. Nil when absent, malformed or over 16 MiB.
    package let embeddedPicture: EmbeddedPicture?
    private let path: String
    private let decoder: UnsafeMutablePointer<FLAC__StreamDecoder>
    private let stream: FLACStream

    /// The most frames one byte of a FLAC file can decode to: a frame of 65,535 samples of one constant value per
    /// channel still takes a few bytes of header, subframe headers and CRC.
    static let maximumFramesPerByte: Int64 = 8_192

    init(path: String) throws(DecodingError) {
        let opened = try AudioFile.openRegularFile(path)
        let stream = FLACStream(file: FileReader(opened.file, size: opened.size))
        guard let decoder = FLAC__stream_decoder_new() else {
            throw .corrupt(path, reason: "libFLAC could not allocate a decoder (out of memory)")
        }
        FLAC__stream_decoder_set_metadata_respond(decoder, FLAC__METADATA_TYPE_VORBIS_COMMENT)
        FLAC__stream_decoder_set_metadata_respond(decoder, FLAC__METADATA_TYPE_PICTURE)
        let status = FLAC__stream_decoder_init_stream(
            decoder, FLACStream.read, FLACStream.seek, FLACStream.tell, FLACStream.length, FLACStream.endOfFile,
            FLACStream.write, FLACStream.metadata, FLACStream.error, Unmanaged.passUnretained(stream).toOpaque())
        guard status == FLAC__STREAM_DECODER_INIT_STATUS_OK else {
            FLAC__stream_decoder_delete(decoder)
            throw .corrupt(path, reason: "libFLAC cannot start decoding (init status \(status.rawValue))")
        }
        let info: AudioInfo
        do throws(DecodingError) {
            info = try Self.readInfo(decoder, stream, path: path)
        } catch {
            FLAC__stream_decoder_delete(decoder)  // finishes it; the file is the stream's, closed with it
            throw error
        }
        // Nothing throws from here on: once every property is set, a throw would run deinit as well.
        embeddedPicture = stream.frontCover ?? stream.firstPicture ?? VorbisComments.picture(from: stream.comments)
        stream.comments = []
        stream.frontCover = nil
        stream.firstPicture = nil
        self.info = info
        self.path = path
        self.decoder = decoder
        self.stream = stream
    }

    deinit { FLAC__stream_decoder_delete(decoder) }

    package var position: Int64 { stream.position }

    package func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(DecodingError) -> Int {
        let channels = info.channels
        // Never past the stated length, which is what a caller sized its memory for.
        let wanted = Int(min(Int64(max(frames, 0)), max(info.frames - stream.position, 0)))
        var written = 0
        while written < wanted {
            if stream.pendingFrames > 0 {
                let count = min(stream.pendingFrames, wanted - written)
                (buffer + written * channels).update(
                    from: stream.pending + stream.pendingStart * channels,
                    count: count * channels)
                stream.pendingStart += count
                stream.pendingFrames -= count
                stream.position += Int64(count)
                written += count
                continue
            }
            let state = FLAC__stream_decoder_get_state(decoder)
            if state == FLAC__STREAM_DECODER_END_OF_STREAM {
                let at = stream.position
                guard written > 0 || at >= info.frames else {
                    throw .corrupt(path, reason: "cut short while being read: it ends at frame \(at) of \(info.frames)")
                }
                break
            }
            try Self.decodeOneFrame(decoder, stream, path: path, at: stream.position)
        }
        return written
    }

    package func seek(toFrame frame: Int64) throws(DecodingError) {
        let target = min(max(frame, 0), info.frames)
        stream.pendingFrames = 0
        stream.pendingStart = 0
        // libFLAC refuses a seek to the end itself; there is nothing left to read there.
        if target == info.frames && target > 0 {
            try Self.seek(decoder, stream, to: target - 1, path: path)
            stream.pendingFrames = 0
            stream.position = target
            return
        }
        try Self.seek(decoder, stream, to: target, path: path)
    }

    /// Has libFLAC decode one more frame (or metadata block). libFLAC answers true even when it has aborted (a read
    /// error such as a disk pulled mid-read, a frame that changes the channel count) and then makes no progress ever
    /// again, so the decoder's state, not the answer, says whether it went on: any error state is thrown, every time.
    private static func decodeOneFrame(
        _ decoder: UnsafeMutablePointer<FLAC__StreamDecoder>, _ stream: FLACStream,
        path: String, at frame: Int64
    ) throws(DecodingError) {
        let ok = FLAC__stream_decoder_process_single(decoder) != 0
        let state = FLAC__stream_decoder_get_state(decoder)
        if let problem = stream.problem {
            stream.problem = nil
            throw .corrupt(path, reason: "\(problem) at frame \(frame)")
        }
        guard ok, state.rawValue <= FLAC__STREAM_DECODER_END_OF_STREAM.rawValue else {
            throw .corrupt(path, reason: "\(describe(state)) at frame \(frame)")
        }
    }

    // MARK: - Opening

    /// `seek_absolute`, after which the frame libFLAC decoded during the seek starts exactly at `target`; a failed
    /// seek flushes the decoder so that it can seek again.
    private static func seek(
        _ decoder: UnsafeMutablePointer<FLAC__StreamDecoder>, _ stream: FLACStream, to target: Int64,
        path: String
    ) throws(DecodingError) {
        let before = stream.position
        stream.pendingFrames = 0
        stream.pendingStart = 0
        stream.position = target
        guard FLAC__stream_decoder_seek_absolute(decoder, UInt64(clamping: target)) != 0 else {
            let state = FLAC__stream_decoder_get_state(decoder)
            if state == FLAC__STREAM_DECODER_SEEK_ERROR { _ = FLAC__stream_decoder_flush(decoder) }
            // Where reading goes on after a failed seek is not the target; the next read starts a frame afresh.
            stream.position = before
            stream.problem = nil
            throw .corrupt(path, reason: "cannot seek to frame \(target): \(describe(state))")
        }
        // Damage libFLAC met while searching is not the target's: the frame it settled on decoded.
        stream.problem = nil
        stream.position = target
    }

    /// Rate, channels, bit depth and exact length from STREAMINFO, the tags, and the check that the last sample it
    /// claims is there.
    private static func readInfo(
        _ decoder: UnsafeMutablePointer<FLAC__StreamDecoder>, _ stream: FLACStream, path: String
    ) throws(DecodingError) -> AudioInfo {
        guard FLAC__stream_decoder_process_until_end_of_metadata(decoder) != 0, stream.problem == nil,
            let streamInfo = stream.streamInfo
        else {
            if stream.size == 0 { throw .empty(path) }
            if FLAC__stream_decoder_get_state(decoder) == FLAC__STREAM_DECODER_END_OF_STREAM {
                throw .corrupt(path, reason: "truncated: the file ends inside its metadata blocks")
            }
            throw .corrupt(
                path,
                reason: stream.problem
                    ?? "no FLAC stream information (\(describe(FLAC__stream_decoder_get_state(decoder))))")
        }
        let format = try AudioInfo.checkedFormat(
            sampleRate: streamInfo.sampleRate, channels: streamInfo.channels, path: path)
        guard (4...32).contains(streamInfo.bitsPerSample) else {
            throw .corrupt(path, reason: "\(streamInfo.bitsPerSample) bits per sample")
        }
        stream.channels = format.channels
        var frames = Int64(clamping: streamInfo.totalSamples)
        let (possible, overflow) = stream.size.multipliedReportingOverflow(by: maximumFramesPerByte)
        guard overflow || frames <= possible else {
            throw .corrupt(
                path,
                reason: "claims \(frames) frames, more than its \(stream.size) bytes can hold (at most \(possible))")
        }
        if frames == 0 {
            frames = try countFrames(decoder, stream, path: path)
            // Frames number themselves: a claim too, held to the same bound.
            guard overflow || frames <= possible else {
                throw .corrupt(
                    path, reason: "its frames claim \(frames) samples, more than its \(stream.size) bytes can hold")
            }
        } else if frames > 0 {
            // A file cut short decodes only part of what STREAMINFO claims: find out now, with one seek to its end.
            do throws(DecodingError) {
                // libFLAC decodes the frame holding the target during the seek itself.
                try seek(decoder, stream, to: frames - 1, path: path)
                guard stream.pendingFrames >= 1 else {
                    throw DecodingError.corrupt(
                        path,
                        reason: "truncated: its last frame (sample \(frames - 1) of the \(frames) "
                            + "STREAMINFO claims) does not decode")
                }
            } catch {
                if case .corrupt(_, let reason) = error, reason.hasPrefix("truncated") { throw error }
                throw .corrupt(path, reason: "truncated or damaged: \(error.reason)")
            }
            try seek(decoder, stream, to: 0, path: path)
        }
        return AudioInfo(
            format: .flac, sampleRate: format.sampleRate, channels: format.channels,
            frames: try AudioInfo.checkedLength(frames, path: path),
            tags: tags(stream))
    }

    /// Decodes the whole stream once to count its samples, for a STREAMINFO that says 0 (unknown), then rewinds.
    private static func countFrames(
        _ decoder: UnsafeMutablePointer<FLAC__StreamDecoder>, _ stream: FLACStream, path: String
    ) throws(DecodingError) -> Int64 {
        stream.counting = true
        defer { stream.counting = false }
        while FLAC__stream_decoder_get_state(decoder) != FLAC__STREAM_DECODER_END_OF_STREAM {
            try decodeOneFrame(decoder, stream, path: path, at: stream.counted)
            guard stream.counted <= AudioInfo.maximumFrames else {
                throw .corrupt(path, reason: "more than the \(AudioInfo.maximumFrames) frames a stream may have")
            }
        }
        // Back to the start (libFLAC reads the metadata again, which the stream now ignores).
        stream.metadataDone = true
        guard FLAC__stream_decoder_reset(decoder) != 0, FLAC__stream_decoder_process_until_end_of_metadata(decoder) != 0
        else {
            throw .corrupt(
                path, reason: "cannot return to the start: \(describe(FLAC__stream_decoder_get_state(decoder)))")
        }
        stream.pendingFrames = 0
        stream.position = 0
        return stream.counted
    }

    private static func tags(_ stream: FLACStream) -> AudioTags {
        var tags = VorbisComments.tags(from: stream.comments)
        tags.hasArtwork = tags.hasArtwork || stream.pictureCount > 0
        return tags
    }

    // MARK: - Errors

    static func describe(_ state: FLAC__StreamDecoderState) -> String {
        switch state {
        case FLAC__STREAM_DECODER_END_OF_STREAM: "unexpected end of stream"
        case FLAC__STREAM_DECODER_OGG_ERROR: "Ogg layer error"
        case FLAC__STREAM_DECODER_SEEK_ERROR: "seek failed"
        case FLAC__STREAM_DECODER_ABORTED: "decoding aborted"
        case FLAC__STREAM_DECODER_MEMORY_ALLOCATION_ERROR: "out of memory"
        default: "libFLAC decoder state \(state.rawValue)"
        }
    }
}

/// What libFLAC's callbacks read and write: the file, STREAMINFO, tags and pictures as the metadata goes by, and
/// the samples of the last decoded frame as floats. Owned by its `FLACDecoder`; used on that decoder's thread only.
private final class FLACStream {
    struct StreamInfo {
        var sampleRate: UInt32
        var channels: UInt32
        var bitsPerSample: UInt32
        var totalSamples: UInt64
    }

    let file: FileReader
    var size: Int64 { file.size }
    var streamInfo: StreamInfo?
    var comments: [(key: String, value: [UInt8])] = []
    var frontCover: EmbeddedPicture?
    var firstPicture: EmbeddedPicture?
    var pictureCount = 0
    /// Set once the metadata has been read, so that a rewind's second pass over it changes nothing.
    var metadataDone = false
    /// The first error libFLAC reported since it was last taken.
    var problem: String?
    /// The output's channel count, set from STREAMINFO; a frame with another count is damage.
    var channels = 0
    /// While counting the samples of a stream of unknown length: frames are measured, not converted.
    var counting = false
    var counted: Int64 = 0
    /// The frame the next sample handed to the caller has.
    var position: Int64 = 0
    /// One decoded frame, interleaved: `pendingFrames` frames left from `pendingStart`.
    let pending: UnsafeMutablePointer<Float>
    var pendingStart = 0
    var pendingFrames = 0
    /// FLAC's largest block.
    static let maximumBlockFrames = 65_535

    init(file: FileReader) {
        self.file = file
        pending = .allocate(capacity: Self.maximumBlockFrames * AudioInfo.maximumChannels)
    }

    deinit { pending.deallocate() }

    static func of(_ client: UnsafeMutableRawPointer?) -> FLACStream? {
        client.map { Unmanaged<FLACStream>.fromOpaque($0).takeUnretainedValue() }
    }

    // MARK: Reading the file

    static let read: FLAC__StreamDecoderReadCallback = { _, buffer, bytes, client in
        guard let stream = of(client), let buffer, let bytes else { return FLAC__STREAM_DECODER_READ_STATUS_ABORT }
        guard bytes.pointee > 0 else { return FLAC__STREAM_DECODER_READ_STATUS_ABORT }
        let read = Result { () throws(Errno) in try stream.file.read(into: buffer, count: bytes.pointee) }
        guard case .success(let got) = read else {
            bytes.pointee = 0
            return FLAC__STREAM_DECODER_READ_STATUS_ABORT
        }
        bytes.pointee = got
        return got > 0 ? FLAC__STREAM_DECODER_READ_STATUS_CONTINUE : FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM
    }

    static let seek: FLAC__StreamDecoderSeekCallback = { _, offset, client in
        guard let stream = of(client), let to = Int64(exactly: offset), stream.file.seek(to: to, from: SEEK_SET) else {
            return FLAC__STREAM_DECODER_SEEK_STATUS_ERROR
        }
        return FLAC__STREAM_DECODER_SEEK_STATUS_OK
    }

    static let tell: FLAC__StreamDecoderTellCallback = { _, offset, client in
        guard let stream = of(client), let offset else { return FLAC__STREAM_DECODER_TELL_STATUS_ERROR }
        offset.pointee = UInt64(stream.file.position)
        return FLAC__STREAM_DECODER_TELL_STATUS_OK
    }

    static let length: FLAC__StreamDecoderLengthCallback = { _, length, client in
        guard let stream = of(client), let length else { return FLAC__STREAM_DECODER_LENGTH_STATUS_ERROR }
        length.pointee = UInt64(max(stream.size, 0))
        return FLAC__STREAM_DECODER_LENGTH_STATUS_OK
    }

    static let endOfFile: FLAC__StreamDecoderEofCallback = { _, client in
        guard let stream = of(client) else { return 1 }
        return stream.file.isAtEnd ? 1 : 0
    }

    // MARK: Decoded frames and metadata

    static let write: FLAC__StreamDecoderWriteCallback = { _, frame, planes, client in
        guard let stream = of(client), let frame, let planes else { return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT }
        let header = frame.pointee.header
        let frames = Int(header.blocksize), channels = Int(header.channels), bits = Int(header.bits_per_sample)
        guard channels == stream.channels, (1...maximumBlockFrames).contains(frames), (1...32).contains(bits) else {
            stream.problem =
                stream.problem ?? "a frame of \(channels) channels, \(frames) samples at \(bits) bits "
                + "in a stream of \(stream.channels) channels"
            return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT
        }
        if stream.counting {
            // libFLAC numbers every frame by its first sample, whether the stream counts frames or samples.
            let end = Int64(clamping: header.number.sample_number).addingReportingOverflow(Int64(frames))
            stream.counted = end.overflow ? .max : max(stream.counted, end.partialValue)
            return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE
        }
        // Samples are signed integers of `bits` bits: full scale is 2^(bits - 1).
        let scale = 1 / Float(sign: .plus, exponent: bits - 1, significand: 1)
        for channel in 0..<channels {
            guard let plane = planes[channel] else { continue }
            var out = stream.pending + channel
            for index in 0..<frames {
                out.pointee = Float(plane[index]) * scale
                out += channels
            }
        }
        stream.pendingStart = 0
        stream.pendingFrames = frames
        return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE
    }

    static let metadata: FLAC__StreamDecoderMetadataCallback = { _, block, client in
        guard let stream = of(client), let block, !stream.metadataDone else { return }
        let data = block.pointee.data
        switch block.pointee.type {
        case FLAC__METADATA_TYPE_STREAMINFO:
            let info = data.stream_info
            stream.streamInfo = StreamInfo(
                sampleRate: info.sample_rate, channels: info.channels,
                bitsPerSample: info.bits_per_sample, totalSamples: info.total_samples)
        case FLAC__METADATA_TYPE_VORBIS_COMMENT:
            let comment = data.vorbis_comment
            guard let entries = comment.comments else { return }
            for index in 0..<Int(comment.num_comments) {
                guard let text = entries[index].entry else { continue }
                let bytes = UnsafeRawBufferPointer(start: text, count: Int(entries[index].length))
                if let parsed = VorbisComments.entry(bytes) { stream.comments.append(parsed) }
            }
        case FLAC__METADATA_TYPE_PICTURE:
            let picture = data.picture
            stream.pictureCount += 1
            let isFront = picture.type.rawValue == UInt32(EmbeddedPicture.frontCoverType)
            guard isFront ? stream.frontCover == nil : stream.firstPicture == nil,
                let bytes = picture.data, picture.data_length > 0,
                picture.data_length <= UInt32(EmbeddedPicture.maximumSize)
            else { return }
            let image = Array(UnsafeBufferPointer(start: bytes, count: Int(picture.data_length)))
            var mime = picture.mime_type.map { String(cString: $0) } ?? ""
            if !mime.contains("/") { mime = EmbeddedPicture.sniffMIMEType(image) }
            if isFront {
                stream.frontCover = EmbeddedPicture(mimeType: mime, data: image)
            } else {
                stream.firstPicture = EmbeddedPicture(mimeType: mime, data: image)
            }
        default:
            return
        }
    }

    static let error: FLAC__StreamDecoderErrorCallback = { _, status, client in
        guard let stream = of(client), stream.problem == nil else { return }
        stream.problem =
            switch status {
            case FLAC__STREAM_DECODER_ERROR_STATUS_LOST_SYNC: "lost sync (damaged or missing data)"
            case FLAC__STREAM_DECODER_ERROR_STATUS_BAD_HEADER: "damaged frame header"
            case FLAC__STREAM_DECODER_ERROR_STATUS_FRAME_CRC_MISMATCH: "frame checksum mismatch"
            case FLAC__STREAM_DECODER_ERROR_STATUS_UNPARSEABLE_STREAM: "unparseable FLAC stream"
            case FLAC__STREAM_DECODER_ERROR_STATUS_BAD_METADATA: "damaged metadata block"
            default: "libFLAC error \(status.rawValue)"
            }
    }
}
