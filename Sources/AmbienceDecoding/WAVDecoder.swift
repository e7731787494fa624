import AmbienceCore
import AmbiencePlatform
import CSndFile
import Glibc

/// A RIFF/WAVE, RF64 or BW64 file, read through libsndfile. Owns the `SNDFILE` and the descriptor it reads;
/// nothing else in the project touches libsndfile.
///
/// Every codec libsndfile reads in a WAV: integer PCM of 8 to 32 bits, IEEE float of 32 and 64 bits, Microsoft and
/// IMA ADPCM, A-law, µ-law, GSM 6.10, plain or WAVE_FORMAT_EXTENSIBLE. Tags come from LIST/INFO (`sf_get_string`)
/// and, when the file has one, from the ID3v2 tag in its `id3 ` chunk: libsndfile finds the chunk, libmpg123 reads
/// the tag (`MP3Decoder.id3v2Tags`), so no RIFF walking or tag parsing is done here.
package final class WAVDecoder: AudioDecoder {
    package let info: AudioInfo
    /// The ID3v2 picture of the `id3 ` chunk: the front cover when there are several; nil when absent.
    package let embeddedPicture: EmbeddedPicture?
    package private(set) var position: Int64 = 0

    private let path: String
    private let sound: OpaquePointer  // SNDFILE *, which owns the descriptor it reads (see `init(file:size:path:)`)

    /// The largest `id3 ` chunk read: a cover at `EmbeddedPicture.maximumSize` plus room for the text frames.
    static let maximumID3Bytes = EmbeddedPicture.maximumSize + (1 << 20)

    convenience init(path: String) throws(DecodingError) {
        let (file, size) = try AudioFile.openRegularFile(path)
        try self.init(file: file, size: size, path: path)
    }

    /// Reads the WAV open at `file` (`size` bytes, named `path` in errors). `file` stays its owner's, open, whatever
    /// happens: libsndfile reads a `duplicate()` of it. libsndfile closes the descriptor it is given when an open
    /// fails, even when told not to (`close_desc` 0, libsndfile 1.2.0), and the owner would then close that number a
    /// second time, after another thread may have opened a file under it. So libsndfile gets a copy of its own with
    /// `close_desc` 1: closed by libsndfile alone, on a failed open or in `sf_close`.
    init(file: FileDescriptor, size: Int64, path: String) throws(DecodingError) {
        guard size > 0 else { throw .empty(path) }
        let copy: FileDescriptor
        do throws(Errno) { copy = try file.duplicate() } catch { throw .unreadable(path, errno: error.code) }
        let descriptor = copy.release()
        // libsndfile reports a failed open through one process-wide error (`sf_error(NULL)`): opens are serialised
        // so that the reason read is this file's, not another thread's.
        let attempt = Self.openLock.withLock { _ -> OpenAttempt in
            var format = SF_INFO()
            guard let sound = sf_open_fd(descriptor, Int32(SFM_READ), &format, 1) else {
                return OpenAttempt(
                    sound: nil, format: format, code: sf_error(nil), message: String(cString: sf_strerror(nil)))
            }
            return OpenAttempt(sound: sound, format: format, code: 0, message: "")
        }
        let format = attempt.format
        guard let sound = attempt.sound else {
            throw Self.openFailure(path: path, file: file, code: attempt.code, message: attempt.message)
        }
        let opened: (info: AudioInfo, picture: EmbeddedPicture?)
        do throws(DecodingError) {
            opened = try Self.readInfo(sound, format: format, path: path)
        } catch {
            sf_close(sound)
            throw error
        }
        // Nothing throws from here on: once every property is set, a throw would run deinit as well.
        self.path = path
        self.sound = sound
        self.info = opened.info
        self.embeddedPicture = opened.picture
    }

    deinit { sf_close(sound) }

    package func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(DecodingError) -> Int {
        let wanted = Int(min(Int64(max(frames, 0)), max(info.frames - position, 0)))
        guard wanted > 0 else { return 0 }
        let got = Int(sf_readf_float(sound, buffer, sf_count_t(wanted)))
        guard got > 0 else {
            // libsndfile counted these frames when it opened the file: the file shrank or a block is unreadable.
            let detail = String(cString: sf_strerror(sound))
            throw .corrupt(
                path,
                reason: "cut short while being read: it ends at frame \(position) of \(info.frames)"
                    + (sf_error(sound) == 0 ? "" : " (\(detail))"))
        }
        // Float files carry any value: the engine's samples are finite and within [-1, 1].
        for index in 0..<(got * info.channels) {
            let sample = buffer[index]
            buffer[index] = sample.isNaN ? 0 : min(max(sample, -1), 1)
        }
        position += Int64(got)
        return got
    }

    package func seek(toFrame frame: Int64) throws(DecodingError) {
        let target = min(max(frame, 0), info.frames)
        let reached = sf_seek(sound, sf_count_t(target), SEEK_SET)
        guard reached == target else {
            throw .corrupt(path, reason: "cannot seek to frame \(target): \(String(cString: sf_strerror(sound)))")
        }
        position = target
    }

    // MARK: - Opening

    private static let openLock = Lock(())

    /// What one `sf_open_fd` gave: the handle, or libsndfile's error code and message.
    private struct OpenAttempt: @unchecked Sendable {  // the handle is handed from the lock to this thread only
        var sound: OpaquePointer?
        var format: SF_INFO
        var code: Int32
        var message: String
    }

    /// Why `sf_open_fd` refused the file: not a WAV at all, or what libsndfile found wrong with it.
    private static func openFailure(path: String, file: FileDescriptor, code: Int32, message: String) -> DecodingError {
        if code == Int32(SF_ERR_UNRECOGNISED_FORMAT) { return .unsupportedFormat(path) }
        if code == Int32(SF_ERR_SYSTEM) {
            // libsndfile keeps errno only in its message; a read error is an unreadable file, not a corrupt one.
            var byte: UInt8 = 0
            do throws(Errno) { _ = try file.read(into: &byte, count: 1, at: 0) } catch {
                return .unreadable(path, errno: error.code)
            }
        }
        // libsndfile's own words, except where the engine's usual phrasing says the same thing more plainly.
        switch message {
        case "Channel count is zero.": return .corrupt(path, reason: "0 channels")
        case "Internal error : SF_INFO struct incomplete.":
            // For a WAV this means a sample rate of 0 (the channel count and length are checked before it).
            return .corrupt(path, reason: "sample rate 0 Hz is out of range")
        default: return .corrupt(path, reason: message)
        }
    }

    private static func readInfo(
        _ sound: OpaquePointer, format: SF_INFO,
        path: String
    ) throws(DecodingError) -> (info: AudioInfo, picture: EmbeddedPicture?) {
        let container = format.format & Int32(SF_FORMAT_TYPEMASK)
        let wave = [SF_FORMAT_WAV, SF_FORMAT_RF64, SF_FORMAT_WAVEX].map { Int32($0) }
        // sf_open_fd reads AIFF, AU, CAF and more; this decoder is only asked about files that said RIFF/RF64 WAVE.
        guard wave.contains(container) else { throw .unsupportedFormat(path) }
        let checked = try AudioInfo.checkedFormat(sampleRate: format.samplerate, channels: format.channels, path: path)
        var frames = try AudioInfo.checkedLength(Int64(format.frames), path: path)
        // ADPCM comes in whole blocks, and libsndfile (like sox) counts every frame of the last one; the `fact`
        // chunk says how many were encoded (as ffmpeg reads it). Without the cut, a loop or a gapless join would
        // have up to a block of silence in it.
        let codec = format.format & Int32(SF_FORMAT_SUBMASK)
        if [SF_FORMAT_MS_ADPCM, SF_FORMAT_IMA_ADPCM].map({ Int32($0) }).contains(codec),
            let fact = chunk(sound, id: "fact", limit: 64), let encoded = fact.u32LE(0), encoded > 0,
            Int64(encoded) < frames
        {
            frames = Int64(encoded)
        }
        // Normalised float (libsndfile's default, asked for explicitly): integer PCM lands in [-1, 1).
        sf_command(sound, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_TRUE))

        var tags = AudioTags()
        tags.title = string(sound, Int32(SF_STR_TITLE))
        tags.artist = string(sound, Int32(SF_STR_ARTIST))
        tags.album = string(sound, Int32(SF_STR_ALBUM))
        tags.genre = string(sound, Int32(SF_STR_GENRE))
        tags.trackNumber = string(sound, Int32(SF_STR_TRACKNUMBER)).flatMap(leadingNumber)
        var picture: EmbeddedPicture?
        if let id3 = chunk(sound, id: "id3 ", limit: maximumID3Bytes)
            ?? chunk(sound, id: "ID3 ", limit: maximumID3Bytes)
        {
            let found = MP3Decoder.id3v2Tags(id3)
            // ID3v2 is the richer tag: it wins where both have a field, LIST/INFO fills the rest.
            tags.title = found.tags.title ?? tags.title
            tags.artist = found.tags.artist ?? tags.artist
            tags.album = found.tags.album ?? tags.album
            tags.albumArtist = found.tags.albumArtist
            tags.genre = found.tags.genre ?? tags.genre
            tags.composer = found.tags.composer
            tags.trackNumber = found.tags.trackNumber ?? tags.trackNumber
            tags.discNumber = found.tags.discNumber
            tags.hasArtwork = found.tags.hasArtwork
            tags.loudness = found.tags.loudness
            picture = found.picture
        }
        let info = AudioInfo(
            format: .wav, sampleRate: checked.sampleRate, channels: checked.channels, frames: frames,
            tags: tags, warnings: warnings(sound))
        return (info, picture)
    }

    /// A LIST/INFO string (libsndfile gives UTF-8 or Latin-1 bytes as written), trimmed; nil when empty.
    private static func string(_ sound: OpaquePointer, _ type: Int32) -> String? {
        guard let text = sf_get_string(sound, type) else { return nil }
        let bytes = UnsafeBufferPointer(
            start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text))
        let decoded =
            String(validating: bytes, as: UTF8.self)
            ?? String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        return decoded.trimmingSpaces.nonEmpty
    }

    /// The body of the first chunk with this id, when libsndfile saw one no larger than `limit` bytes.
    private static func chunk(_ sound: OpaquePointer, id: String, limit: Int) -> [UInt8]? {
        var wanted = SF_CHUNK_INFO()
        let idBytes = Array(id.utf8)
        withUnsafeMutableBytes(of: &wanted.id) { storage in
            for (index, byte) in idBytes.prefix(storage.count - 1).enumerated() { storage[index] = byte }
        }
        wanted.id_size = UInt32(idBytes.count)
        guard let iterator = sf_get_chunk_iterator(sound, &wanted) else { return nil }
        var found = SF_CHUNK_INFO()
        guard sf_get_chunk_size(iterator, &found) == 0, found.datalen > 0,
            Int(found.datalen) <= limit
        else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(found.datalen))
        let status = bytes.withUnsafeMutableBytes { storage -> Int32 in
            found.data = storage.baseAddress
            return sf_get_chunk_data(iterator, &found)
        }
        return status == 0 ? bytes : nil
    }

    /// What libsndfile worked around, from its header log: a data chunk longer than the file is cut to the bytes
    /// present, and libsndfile notes it as `data : 96000 (should be 2001)`.
    private static func warnings(_ sound: OpaquePointer) -> [String] {
        var log = [CChar](repeating: 0, count: 16 * 1024)
        let length = Int(sf_command(sound, Int32(SFC_GET_LOG_INFO), &log, Int32(log.count)))
        let text = String(
            decoding: log.prefix(max(0, min(length, log.count))).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var warnings: [String] = []
        for line in text.split(separator: "\n") where line.hasPrefix("data : ") && line.contains("(should be ") {
            let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int64($0) }
            if numbers.count == 2 {
                warnings.append("data chunk claims \(numbers[0]) bytes but only \(numbers[1]) are present")
            }
        }
        return warnings
    }
}
