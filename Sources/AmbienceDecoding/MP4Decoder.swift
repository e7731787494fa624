import AmbienceCore
import AmbiencePlatform
import CFFmpeg
import Glibc

/// AAC or ALAC in an MP4/M4A file, read through FFmpeg's libavformat (the `mov` demuxer) and libavcodec. Owns the
/// format and codec contexts and the descriptor FFmpeg reads through; nothing else in the project touches FFmpeg.
///
/// Gapless, exactly: the encoder delay is skipped as the edit list (or iTunes' `iTunSMPB`) says, which libavformat
/// applies by itself; the end is where `iTunSMPB`'s sample count, or else the media's own duration less that delay,
/// puts it (libavformat rounds the edit list's length to the movie's millisecond timescale, so it is not used).
/// Seeks land on the exact frame: FFmpeg seeks to a packet before the target and the frames before it are decoded
/// and dropped. FFmpeg reads only through this decoder's descriptor (no protocols, no other demuxers), never logs,
/// allocates at most `maximumAllocation` at a time, and gives up on any call that takes more than `timeLimit`.
package final class MP4Decoder: AudioDecoder {
    package let info: AudioInfo
    /// The `covr` picture (FFmpeg's attached picture stream); nil when absent or over 16 MiB.
    package let embeddedPicture: EmbeddedPicture?
    package private(set) var position: Int64 = 0

    private let path: String
    private let file: FileDescriptor  // FFmpeg reads it through `Input`; closed after the decoder is gone
    private let input: Input
    private let codec: UnsafeMutablePointer<AVCodecContext>
    private let packet: UnsafeMutablePointer<AVPacket>
    private let frame: UnsafeMutablePointer<AVFrame>
    private let streamIndex: Int32
    private let timeBase: AVRational
    /// The timestamp of the first packet: before 0 by the encoder delay that the edit list skips.
    private let firstTimestamp: Int64
    /// Decoded, interleaved samples not yet returned; `pendingRead` is the next one to hand out.
    private var pending: [Float] = []
    private var pendingRead = 0
    /// Samples before this frame are dropped as they are decoded (after a seek).
    private var discardBefore: Int64 = 0
    /// Where the next decoded frame starts when FFmpeg gives it no timestamp.
    private var decodedUpTo: Int64 = 0
    private var sentEndOfStream = false

    /// The longest any one FFmpeg call may run before it is interrupted: a malformed file must not hang the engine.
    static let timeLimit: Int64 = 10_000_000_000
    /// The largest single allocation FFmpeg may make (`av_max_alloc`), whatever a box claims: room for a 16 MiB
    /// cover, and for the sample tables of a many-hour audiobook (about 3 MB for every hour of AAC at 48 kHz).
    static let maximumAllocation = 64 << 20

    /// Once per process: no logging from FFmpeg (the engine reports through typed errors), bounded allocations.
    private static let configured: Bool = {
        av_log_set_level(AV_LOG_QUIET)
        av_max_alloc(maximumAllocation)
        return true
    }()

    init(path: String) throws(DecodingError) {
        _ = Self.configured
        let (file, size) = try AudioFile.openRegularFile(path)
        guard size > 0 else { throw .empty(path) }
        let input = try Input(file: file, size: size, path: path, ignoreEditList: false)
        let format = input.format
        let index = av_find_best_stream(format, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        guard index >= 0, let stream = format.pointee.streams[Int(index)] else {
            throw .corrupt(path, reason: "no audio track")
        }
        let parameters = stream.pointee.codecpar.pointee
        guard parameters.codec_id == AV_CODEC_ID_AAC || parameters.codec_id == AV_CODEC_ID_ALAC else {
            let name = avcodec_get_name(parameters.codec_id).map { String(cString: $0) } ?? "unknown"
            throw .corrupt(path, reason: "unsupported codec \(name) (AAC and ALAC are supported)")
        }
        guard let decoder = avcodec_find_decoder(parameters.codec_id) else {
            throw .corrupt(path, reason: "this FFmpeg has no decoder for the track")
        }
        guard let codec = avcodec_alloc_context3(decoder) else { throw .corrupt(path, reason: "out of memory") }
        guard let packet = av_packet_alloc(), let frame = av_frame_alloc() else {
            var unused: UnsafeMutablePointer<AVCodecContext>? = codec
            avcodec_free_context(&unused)
            throw .corrupt(path, reason: "out of memory")
        }
        func release() {
            var codec: UnsafeMutablePointer<AVCodecContext>? = codec
            var packet: UnsafeMutablePointer<AVPacket>? = packet
            var frame: UnsafeMutablePointer<AVFrame>? = frame
            avcodec_free_context(&codec)
            av_packet_free(&packet)
            av_frame_free(&frame)
        }
        let timeBase = stream.pointee.time_base
        let checked: (sampleRate: Int, channels: Int)
        let frames: Int64
        do throws(DecodingError) {
            checked = try AudioInfo.checkedFormat(
                sampleRate: parameters.sample_rate,
                channels: parameters.ch_layout.nb_channels, path: path)
            guard timeBase.num > 0, timeBase.den > 0 else { throw .corrupt(path, reason: "track has no time base") }
            codec.pointee.pkt_timebase = timeBase
            try input.check(avcodec_parameters_to_context(codec, stream.pointee.codecpar), "cannot set up the decoder")
            try input.check(avcodec_open2(codec, decoder, nil), "cannot open the decoder")
            frames = try Self.exactLength(
                input, stream: stream, file: file, size: size, sampleRate: checked.sampleRate,
                path: path)
        } catch {
            release()
            throw error
        }
        var tags = Self.readTags(format)
        let picture = Self.coverPicture(format)
        tags.hasArtwork = picture != nil
        // Nothing throws from here on: once every property is set, a throw would run deinit as well.
        self.path = path
        self.file = file
        self.input = input
        self.codec = codec
        self.packet = packet
        self.frame = frame
        self.streamIndex = index
        self.timeBase = timeBase
        self.firstTimestamp =
            avformat_index_get_entries_count(stream) > 0
            ? min(avformat_index_get_entry(stream, 0)?.pointee.timestamp ?? 0, 0) : 0
        self.embeddedPicture = picture
        self.info = AudioInfo(
            format: .mp4, sampleRate: checked.sampleRate, channels: checked.channels, frames: frames,
            tags: tags)
    }

    deinit {
        var codec: UnsafeMutablePointer<AVCodecContext>? = codec
        var packet: UnsafeMutablePointer<AVPacket>? = packet
        var frame: UnsafeMutablePointer<AVFrame>? = frame
        avcodec_free_context(&codec)
        av_packet_free(&packet)
        av_frame_free(&frame)
    }

    package func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(DecodingError) -> Int {
        let channels = info.channels
        let wanted = Int(min(Int64(max(frames, 0)), max(info.frames - position, 0)))
        var written = 0
        while written < wanted {
            if pendingRead == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingRead = 0
                guard try decodeFrame() else { break }
                continue
            }
            let count = min((pending.count - pendingRead) / channels, wanted - written)
            pending.withUnsafeBufferPointer { samples in
                (buffer + written * channels).update(from: samples.baseAddress! + pendingRead, count: count * channels)
            }
            pendingRead += count * channels
            written += count
        }
        position += Int64(written)
        return written
    }

    package func seek(toFrame frame: Int64) throws(DecodingError) {
        let target = min(max(frame, 0), info.frames)
        // One AAC frame of overlap (up to 2048 samples with SBR) must be decoded before the target sounds right.
        let preroll: Int64 = 4096
        // Near the start, the very first packet: it carries the encoder delay to skip, which a later one does not.
        let start =
            target - preroll <= 0
            ? firstTimestamp
            : av_rescale_q(target - preroll, AVRational(num: 1, den: Int32(info.sampleRate)), timeBase)
        input.startCall()
        let status = av_seek_frame(input.format, streamIndex, start, AVSEEK_FLAG_BACKWARD)
        guard status >= 0 else {
            throw .corrupt(path, reason: "cannot seek to frame \(target): \(Input.describe(status))")
        }
        avcodec_flush_buffers(codec)
        pending.removeAll(keepingCapacity: true)
        pendingRead = 0
        sentEndOfStream = false
        discardBefore = target
        decodedUpTo = 0
        position = target
    }

    // MARK: - Decoding

    /// Decodes one frame into `pending` (dropping what lies before `discardBefore` or past the end); false at the end.
    private func decodeFrame() throws(DecodingError) -> Bool {
        input.startCall()
        while true {
            let received = avcodec_receive_frame(codec, frame)
            if received == 0 {
                defer { av_frame_unref(frame) }
                try append(frame.pointee)
                if !pending.isEmpty { return true }
                continue
            }
            if received == Input.endOfFile { return false }
            guard received == -EAGAIN else {
                throw .corrupt(path, reason: "\(Input.describe(received)) at frame \(position)")
            }
            guard !sentEndOfStream else { return false }
            let status = av_read_frame(input.format, packet)
            if status < 0 {
                guard status == Input.endOfFile else {
                    throw .corrupt(path, reason: "\(input.describeRead(status)) at frame \(position)")
                }
                sentEndOfStream = true
                _ = avcodec_send_packet(codec, nil)
                continue
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            let sent = avcodec_send_packet(codec, packet)
            guard sent >= 0 || sent == -EAGAIN else {
                throw .corrupt(path, reason: "\(Input.describe(sent)) at frame \(position)")
            }
        }
    }

    /// Converts one decoded frame to interleaved float, keeping only the part within `discardBefore..<info.frames`.
    private func append(_ decoded: AVFrame) throws(DecodingError) {
        let channels = info.channels
        guard decoded.ch_layout.nb_channels == Int32(channels), decoded.sample_rate == Int32(info.sampleRate) else {
            throw .corrupt(
                path,
                reason: "format changes mid-stream at frame \(position): \(decoded.sample_rate) Hz, "
                    + "\(decoded.ch_layout.nb_channels) channels after \(info.sampleRate) Hz, \(channels) channels")
        }
        let count = Int(max(decoded.nb_samples, 0))
        var start = decodedUpTo
        if decoded.best_effort_timestamp != Int64.min {
            // A timestamp is the file's claim: held within what a stream may be, so no sum with it can overflow.
            let claimed = av_rescale_q(
                decoded.best_effort_timestamp, timeBase, AVRational(num: 1, den: Int32(info.sampleRate)))
            start = min(max(claimed, -AudioInfo.maximumFrames), AudioInfo.maximumFrames)
        }
        decodedUpTo = start + Int64(count)
        let first = Int(min(max(discardBefore - start, 0), Int64(count)))
        let last = Int(min(max(info.frames - start, 0), Int64(count)))
        guard first < last else { return }
        let sampleFormat = AVSampleFormat(rawValue: decoded.format)
        let planar = av_sample_fmt_is_planar(sampleFormat) != 0
        guard let data = decoded.extended_data else { return }
        let frameCount = last - first
        let base = pending.count
        pending.append(contentsOf: repeatElement(0, count: frameCount * channels))
        /// Copies every channel of the kept frames into `pending`, interleaved, each sample through `toFloat`.
        func copy<Sample>(_: Sample.Type, _ toFloat: (Sample) -> Float) {
            pending.withUnsafeMutableBufferPointer { out in
                for channel in 0..<channels {
                    guard let plane = planar ? data[channel] : data[0] else { continue }
                    let samples = UnsafeRawPointer(plane).assumingMemoryBound(to: Sample.self)
                    let step = planar ? 1 : channels, offset = planar ? 0 : channel
                    for index in 0..<frameCount {
                        let value = toFloat(samples[(first + index) * step + offset])
                        out[base + index * channels + channel] = value.isNaN ? 0 : min(max(value, -1), 1)
                    }
                }
            }
        }
        switch av_get_packed_sample_fmt(sampleFormat) {
        case AV_SAMPLE_FMT_FLT: copy(Float.self) { $0 }
        case AV_SAMPLE_FMT_DBL: copy(Double.self) { Float($0) }
        case AV_SAMPLE_FMT_S16: copy(Int16.self) { Float($0) * (1 / 32768) }
        case AV_SAMPLE_FMT_S32: copy(Int32.self) { Float($0) * (1 / 2_147_483_648) }
        case AV_SAMPLE_FMT_U8: copy(UInt8.self) { (Float($0) - 128) * (1 / 128) }
        default:
            pending.removeLast(frameCount * channels)
            throw .corrupt(path, reason: "decoder gave an unexpected sample format \(decoded.format)")
        }
    }

    // MARK: - Length, tags and cover

    /// The exact frame count: iTunes' `iTunSMPB` says it outright; otherwise the media's full duration (read with
    /// the edit list ignored) less the encoder delay that the edit list skips (the first packet's timestamp before 0).
    private static func exactLength(
        _ input: Input, stream: UnsafeMutablePointer<AVStream>, file: FileDescriptor,
        size: Int64, sampleRate: Int, path: String
    ) throws(DecodingError) -> Int64 {
        let perSample = AVRational(num: 1, den: Int32(sampleRate))
        if let smpb = av_dict_get(input.format.pointee.metadata, "iTunSMPB", nil, 0)?.pointee.value {
            let fields = String(cString: smpb).split(separator: " ").compactMap { UInt64($0, radix: 16) }
            if fields.count >= 4, fields[3] > 0, let frames = Int64(exactly: fields[3]) {
                return try AudioInfo.checkedLength(frames, path: path)
            }
        }
        let timeBase = stream.pointee.time_base
        var delay: Int64 = 0
        if avformat_index_get_entries_count(stream) > 0, let first = avformat_index_get_entry(stream, 0) {
            delay = max(-av_rescale_q(first.pointee.timestamp, timeBase, perSample), 0)
        }
        let raw = try Input(file: file, size: size, path: path, ignoreEditList: true)
        let index = av_find_best_stream(raw.format, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        guard index >= 0, let rawStream = raw.format.pointee.streams[Int(index)], rawStream.pointee.duration > 0 else {
            throw .corrupt(path, reason: "the audio track has no duration")
        }
        let media = av_rescale_q(rawStream.pointee.duration, rawStream.pointee.time_base, perSample)
        return try AudioInfo.checkedLength(media - delay, path: path)
    }

    /// FFmpeg's names for the iTunes atoms: ©nam title, ©ART artist, ©alb album, aART album_artist, ©gen genre,
    /// ©wrt composer, trkn track ("3/12"), disk disc. FFmpeg gives UTF-8.
    private static func readTags(_ format: UnsafeMutablePointer<AVFormatContext>) -> AudioTags {
        func value(_ key: String) -> String? {
            guard let entry = av_dict_get(format.pointee.metadata, key, nil, 0), let text = entry.pointee.value else {
                return nil
            }
            return String(cString: text).trimmingSpaces.nonEmpty
        }
        var tags = AudioTags()
        tags.title = value("title")
        tags.artist = value("artist")
        tags.album = value("album")
        tags.albumArtist = value("album_artist")
        tags.genre = value("genre")
        tags.composer = value("composer")
        tags.trackNumber = value("track").flatMap(leadingNumber)
        tags.discNumber = value("disc").flatMap(leadingNumber)
        // `----:com.apple.iTunes:replaygain_track_gain` and its kin: FFmpeg names a freeform atom by its name.
        let loudnessKeys = [
            "replaygain_track_gain", "replaygain_track_peak", "replaygain_album_gain", "replaygain_album_peak"
        ]
        tags.loudness = LoudnessTags.measurement(
            from: loudnessKeys.compactMap { key in value(key).map { (key: key, value: $0) } })
        return tags
    }

    /// The first `covr` picture: a stream FFmpeg marks as an attached picture, its image in `attached_pic`.
    private static func coverPicture(_ format: UnsafeMutablePointer<AVFormatContext>) -> EmbeddedPicture? {
        for index in 0..<Int(format.pointee.nb_streams) {
            guard let stream = format.pointee.streams[index],
                stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0
            else { continue }
            let picture = stream.pointee.attached_pic
            guard let data = picture.data, picture.size > 0, Int(picture.size) <= EmbeddedPicture.maximumSize else {
                continue
            }
            let bytes = Array(UnsafeBufferPointer(start: data, count: Int(picture.size)))
            return EmbeddedPicture(mimeType: EmbeddedPicture.sniffMIMEType(bytes), data: bytes)
        }
        return nil
    }
}

// MARK: - FFmpeg's input

extension MP4Decoder {
    /// An `AVFormatContext` on the `mov` demuxer, reading the file through a custom `AVIOContext` over our
    /// descriptor (positioned reads, so two inputs can share it), with an interrupt callback that enforces
    /// `timeLimit` on every call.
    final class Input {
        let format: UnsafeMutablePointer<AVFormatContext>
        private let path: String
        private let state: IOState
        private var io: UnsafeMutablePointer<AVIOContext>?

        /// `AVERROR_EOF`: FFERRTAG('E','O','F',' '), a macro Swift cannot import.
        static let endOfFile: Int32 = -0x2046_4F45
        static let bufferSize = 64 * 1024

        init(file: FileDescriptor, size: Int64, path: String, ignoreEditList: Bool) throws(DecodingError) {
            self.path = path
            state = IOState(file: file, size: size)
            guard let buffer = av_malloc(Self.bufferSize)?.assumingMemoryBound(to: UInt8.self) else {
                throw .corrupt(path, reason: "out of memory")
            }
            let opaque = Unmanaged.passUnretained(state).toOpaque()
            guard
                let io = avio_alloc_context(
                    buffer, Int32(Self.bufferSize), 0, opaque,
                    { opaque, buffer, size in
                        guard let opaque, let buffer else { return Input.endOfFile }
                        return Unmanaged<IOState>.fromOpaque(opaque).takeUnretainedValue().read(buffer, Int(size))
                    }, nil,
                    { opaque, offset, whence in
                        guard let opaque else { return -Int64(EINVAL) }
                        return Unmanaged<IOState>.fromOpaque(opaque).takeUnretainedValue().seek(offset, whence)
                    })
            else {
                var buffer: UnsafeMutableRawPointer? = UnsafeMutableRawPointer(buffer)
                av_freep(&buffer)
                throw .corrupt(path, reason: "out of memory")
            }
            self.io = io
            guard var context = avformat_alloc_context() else {
                Self.freeIO(io)
                throw .corrupt(path, reason: "out of memory")
            }
            context.pointee.pb = io
            context.pointee.interrupt_callback = AVIOInterruptCB(
                callback: { opaque in
                    guard let opaque else { return 1 }
                    return Unmanaged<IOState>.fromOpaque(opaque).takeUnretainedValue().pastDeadline ? 1 : 0
                }, opaque: opaque)
            var options: OpaquePointer?
            if ignoreEditList { av_dict_set(&options, "ignore_editlist", "1", 0) }
            state.startCall()
            var optional: UnsafeMutablePointer<AVFormatContext>? = context
            let status = avformat_open_input(&optional, nil, av_find_input_format("mov"), &options)
            av_dict_free(&options)
            guard status >= 0, let opened = optional else {
                // A failed avformat_open_input frees the context but leaves the custom AVIOContext to us.
                Self.freeIO(io)
                throw status == Self.endOfFile || status == -Int32(EINVAL) || status == Self.invalidData
                    ? .corrupt(path, reason: "not a readable MP4 file (\(Self.describe(status)))")
                    : .corrupt(path, reason: Self.describe(status))
            }
            context = opened
            format = context
        }

        deinit {
            var context: UnsafeMutablePointer<AVFormatContext>? = format
            avformat_close_input(&context)
            if let io { Self.freeIO(io) }
        }

        private static func freeIO(_ io: UnsafeMutablePointer<AVIOContext>) {
            var buffer: UnsafeMutableRawPointer? = UnsafeMutableRawPointer(io.pointee.buffer)
            av_freep(&buffer)
            var context: UnsafeMutablePointer<AVIOContext>? = io
            avio_context_free(&context)
        }

        /// Starts the clock for one call into FFmpeg.
        func startCall() { state.startCall() }

        func check(_ status: Int32, _ what: String) throws(DecodingError) {
            guard status >= 0 else { throw .corrupt(path, reason: "\(what): \(Self.describe(status))") }
        }

        /// A read failure, naming a time-out or a failed read of the file for what it is.
        func describeRead(_ status: Int32) -> String {
            if state.pastDeadline {
                return "reading took over \(MP4Decoder.timeLimit / 1_000_000_000) s and was stopped"
            }
            if let readError = state.readError { return "cannot read (\(readError))" }
            return Self.describe(status)
        }

        static func describe(_ status: Int32) -> String {
            var message = [CChar](repeating: 0, count: 128)
            guard av_strerror(status, &message, message.count) == 0 else { return "FFmpeg error \(status)" }
            return String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        /// `AVERROR_INVALIDDATA`: FFERRTAG('I','N','D','A'), a macro too.
        static let invalidData: Int32 = -0x4144_4E49
    }

    /// The read position and clock of one `Input`; FFmpeg's callbacks reach it through their opaque pointer.
    final class IOState {
        let file: FileDescriptor
        let size: Int64
        var offset: Int64 = 0
        var deadline: Int64 = .max
        var readError: Errno?

        init(file: FileDescriptor, size: Int64) {
            self.file = file
            self.size = size
        }

        static func now() -> Int64 { Int64(monotonicNanoseconds()) }

        func startCall() { deadline = Self.now() + MP4Decoder.timeLimit }
        var pastDeadline: Bool { Self.now() > deadline }

        func read(_ buffer: UnsafeMutablePointer<UInt8>, _ count: Int) -> Int32 {
            guard count > 0, !pastDeadline else { return Input.endOfFile }
            let got: Int
            do throws(Errno) { got = try file.readSome(into: buffer, count: count, at: offset) } catch {
                readError = error
                return -error.code
            }
            guard got > 0 else { return Input.endOfFile }
            offset += Int64(got)
            return Int32(got)
        }

        func seek(_ requested: Int64, _ whence: Int32) -> Int64 {
            if whence & AVSEEK_SIZE != 0 { return size }
            let target: Int64
            switch whence & ~AVSEEK_FORCE {
            case SEEK_SET: target = requested
            case SEEK_CUR: target = offset &+ requested
            case SEEK_END: target = size &+ requested
            default: return -Int64(EINVAL)
            }
            guard target >= 0 else { return -Int64(EINVAL) }
            offset = target
            return target
        }
    }
}
