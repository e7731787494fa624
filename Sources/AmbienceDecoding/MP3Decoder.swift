import AmbienceCore
import AmbiencePlatform
import CMPG123
import Glibc

/// An open MP3 stream. Owns the `mpg123_handle` and the file descriptor it reads; nothing else in the project
/// touches libmpg123.
///
/// Decoding is gapless: with the LAME/Xing header, the encoder delay and padding are trimmed, so a lame-encoded
/// file decodes to exactly the frames that were encoded. Output is always 32-bit float in the file's own rate.
package final class MP3Decoder: AudioDecoder {
    package let info: AudioInfo
    /// The ID3v2 picture (APIC): the front cover when there are several; nil when absent or over 16 MiB.
    /// Copied when the file is opened, since libmpg123 may replace its tag storage on any later call.
    package let embeddedPicture: EmbeddedPicture?
    package private(set) var position: Int64 = 0
    private let path: String
    private let handle: OpaquePointer  // mpg123_handle *
    private let file: FileDescriptor  // mpg123_close leaves a descriptor from mpg123_open_fd open

    /// `mpg123_init` once per process: a no-op since libmpg123 1.27 (API 46), kept for older libraries that need it.
    private static let libraryStatus: Int32 = mpg123_init()

    init(path: String) throws(DecodingError) {
        let initStatus = Self.libraryStatus
        guard initStatus == MPG123_OK.rawValue else {
            throw .corrupt(path, reason: "libmpg123 failed to initialise: \(Self.describe(initStatus))")
        }
        let (file, size) = try AudioFile.openRegularFile(path)
        guard size > 0 else { throw .empty(path) }
        var error: Int32 = 0
        guard let handle = mpg123_new(nil, &error) else {
            throw .corrupt(path, reason: "libmpg123 cannot create a decoder: \(Self.describe(error))")
        }
        let opened: (info: AudioInfo, picture: EmbeddedPicture?)
        do throws(DecodingError) {
            opened = try Self.open(handle, file: file, path: path)
        } catch {
            mpg123_close(handle)
            mpg123_delete(handle)
            throw error
        }
        // Nothing throws from here on: once every property is set, a throw would run deinit as well.
        self.path = path
        self.handle = handle
        self.file = file
        self.info = opened.info
        self.embeddedPicture = opened.picture
    }

    deinit {
        mpg123_close(handle)
        mpg123_delete(handle)
    }

    package func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(DecodingError) -> Int {
        let channels = info.channels
        let bytesPerFrame = channels * MemoryLayout<Float>.size
        // Never past the scanned length: bytes after the last real frame (an APE or Lyrics3 tag, garbage) can
        // look like frames in another format, or make the resync fail. That is the end of the audio, not damage.
        let wanted = Int(min(Int64(max(frames, 0)), max(info.frames - position, 0)))
        var written = 0
        reading: while written < wanted {
            var done = 0
            let status = mpg123_read(handle, buffer + written * channels, (wanted - written) * bytesPerFrame, &done)
            written += done / bytesPerFrame
            switch status {
            case MPG123_OK.rawValue:
                continue
            case MPG123_DONE.rawValue:
                break reading
            case _ where written >= wanted:
                break reading
            case MPG123_NEW_FORMAT.rawValue:
                var rate = 0, count: Int32 = 0, encoding: Int32 = 0
                mpg123_getformat(handle, &rate, &count, &encoding)
                if rate != info.sampleRate || Int(count) != channels {
                    throw .corrupt(
                        path,
                        reason: "format changes mid-stream at frame \(position + Int64(written)): "
                            + "\(rate) Hz, \(count) channels after \(info.sampleRate) Hz, \(channels) channels")
                }
            default:
                throw .corrupt(path, reason: "\(failure(status)) at frame \(position + Int64(written))")
            }
        }
        position += Int64(written)
        return written
    }

    package func seek(toFrame frame: Int64) throws(DecodingError) {
        let target = min(max(frame, 0), info.frames)
        let reached = mpg123_seek(handle, Int(target), SEEK_SET)
        guard reached >= 0 else {
            throw .corrupt(path, reason: "cannot seek to frame \(target): \(failure(Int32(clamping: reached)))")
        }
        position = Int64(reached)
    }

    // MARK: - Opening

    /// Configures float output and gapless decoding, opens the stream, scans it for its exact length and copies
    /// the tags.
    private static func open(_ handle: OpaquePointer, file: FileDescriptor, path: String) throws(DecodingError) -> (
        info: AudioInfo, picture: EmbeddedPicture?
    ) {
        func check(_ status: Int32, _ what: String) throws(DecodingError) {
            guard status == MPG123_OK.rawValue else {
                throw .corrupt(path, reason: "\(what): \(describe(handle, status))")
            }
        }
        // Keep ID3v2 parsing on (no MPG123_SKIP_ID3V2): the tags are wanted. QUIET: nothing here writes to stderr.
        let flags = MPG123_GAPLESS.rawValue | MPG123_PICTURE.rawValue | MPG123_QUIET.rawValue
        try check(mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), Int(flags), 0), "cannot set decoder flags")
        // Only 32-bit float, at every rate libmpg123 knows, mono or stereo as the file is: no conversion, no resampling.
        try check(mpg123_format_none(handle), "cannot reset output formats")
        var rates: UnsafePointer<Int>?
        var rateCount = 0
        mpg123_rates(&rates, &rateCount)
        for index in 0..<rateCount {
            guard let rate = rates?[index] else { continue }
            try check(
                mpg123_format(
                    handle, rate, Int32(MPG123_MONO.rawValue | MPG123_STEREO.rawValue),
                    Int32(MPG123_ENC_FLOAT_32.rawValue)), "cannot select float output at \(rate) Hz")
        }
        try check(mpg123_open_fd(handle, file.descriptor), "cannot open the stream")

        var rate = 0, channels: Int32 = 0, encoding: Int32 = 0
        guard mpg123_getformat(handle, &rate, &channels, &encoding) == MPG123_OK.rawValue else {
            try explainMissingFormat(handle, file: file, path: path)
        }
        guard encoding == Int32(MPG123_ENC_FLOAT_32.rawValue) else {
            throw .corrupt(
                path, reason: "unexpected output format: \(rate) Hz, \(channels) channels, encoding \(encoding)")
        }
        let format = try AudioInfo.checkedFormat(sampleRate: rate, channels: channels, path: path)
        // The whole-file scan counts every MPEG frame; with the LAME header's delay and padding that makes the
        // length exact. It returns to the start afterwards.
        try check(mpg123_scan(handle), "cannot scan the stream")
        let length = mpg123_length(handle)
        guard length > 0 else { throw .corrupt(path, reason: "no MPEG audio frames") }

        let (tags, picture) = readTags(handle)
        return (
            AudioInfo(
                format: .mp3, sampleRate: format.sampleRate, channels: format.channels,
                frames: try AudioInfo.checkedLength(Int64(length), path: path), tags: tags), picture
        )
    }

    /// Why `mpg123_getformat` found nothing. libmpg123 reports a file that ends before any MPEG frame (for
    /// example one holding only an ID3 tag) as a reader error, so a reader error counts as a real one only when the
    /// file's last byte cannot be read either.
    private static func explainMissingFormat(_ handle: OpaquePointer, file: FileDescriptor, path: String)
        throws(DecodingError) -> Never
    {
        let code = mpg123_errcode(handle)
        if code == MPG123_ERR_READER.rawValue || code == MPG123_LSEEK_FAILED.rawValue
            || code == MPG123_BAD_FILE.rawValue
        {
            var byte: UInt8 = 0
            do throws(Errno) {
                let size = Int64(try file.status().st_size)
                _ = try file.read(into: &byte, count: 1, at: max(size - 1, 0))
            } catch {
                throw .unreadable(path, errno: error.code)
            }
        }
        throw .corrupt(path, reason: "no MPEG audio frames")
    }

    // MARK: - Tags

    /// The tags and picture of an ID3v2 tag held in memory (a WAV file's `id3 ` chunk), read by libmpg123 in feed
    /// mode: the tag is fed as if it began an MP3 stream, and parsed before any audio is looked for.
    static func id3v2Tags(_ tag: [UInt8]) -> (tags: AudioTags, picture: EmbeddedPicture?) {
        guard libraryStatus == MPG123_OK.rawValue, tag.starts(with: Array("ID3".utf8)),
            let handle = mpg123_new(nil, nil)
        else { return (AudioTags(), nil) }
        defer {
            mpg123_close(handle)
            mpg123_delete(handle)
        }
        let flags = MPG123_PICTURE.rawValue | MPG123_QUIET.rawValue
        guard mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), Int(flags), 0) == MPG123_OK.rawValue,
            mpg123_open_feed(handle) == MPG123_OK.rawValue,
            tag.withUnsafeBufferPointer({ mpg123_feed(handle, $0.baseAddress, $0.count) }) == MPG123_OK.rawValue
        else { return (AudioTags(), nil) }
        // No audio follows, so this read only parses the tag and then asks for more input.
        var done = 0
        var sink: UInt8 = 0
        _ = mpg123_read(handle, &sink, 0, &done)
        return readTags(handle)
    }

    /// ID3v2 first (libmpg123 has already converted its text to UTF-8), each missing field filled from ID3v1.
    private static func readTags(_ handle: OpaquePointer) -> (AudioTags, EmbeddedPicture?) {
        _ = mpg123_meta_check(handle)
        var v1: UnsafeMutablePointer<mpg123_id3v1>?
        var v2: UnsafeMutablePointer<mpg123_id3v2>?
        guard mpg123_id3(handle, &v1, &v2) == MPG123_OK.rawValue else { return (AudioTags(), nil) }
        var tags = AudioTags()
        var picture: EmbeddedPicture?
        if let id3 = v2?.pointee {
            tags.title = text(id3.title)
            tags.artist = text(id3.artist)
            tags.album = text(id3.album)
            tags.genre = text(id3.genre).flatMap(genreName(id3v2:))
            for index in 0..<id3.texts {
                guard let field = id3.text?[index] else { continue }
                switch frameID(field.id) {
                case "TPE2": tags.albumArtist = tags.albumArtist ?? text(field.text)
                case "TCOM": tags.composer = tags.composer ?? text(field.text)
                case "TRCK": tags.trackNumber = tags.trackNumber ?? text(field.text).flatMap(leadingNumber)
                case "TPOS": tags.discNumber = tags.discNumber ?? text(field.text).flatMap(leadingNumber)
                default: break
                }
            }
            // ReplayGain in `TXXX` frames, named by their description (foobar2000 and mp3gain write lower case).
            var loudness: [(key: String, value: String)] = []
            for index in 0..<id3.extras {
                guard let field = id3.extra?[index], let key = text(field.description), let value = text(field.text)
                else { continue }
                loudness.append((key, value))
            }
            tags.loudness = LoudnessTags.measurement(from: loudness)
            tags.hasArtwork = id3.pictures > 0
            picture = coverPicture(id3)
        }
        if let id3 = v1?.pointee, latin1(id3.tag) == "TAG" {
            tags.title = tags.title ?? latin1(id3.title)
            tags.artist = tags.artist ?? latin1(id3.artist)
            tags.album = tags.album ?? latin1(id3.album)
            tags.genre = tags.genre ?? (Int(id3.genre) < id3v1Genres.count ? id3v1Genres[Int(id3.genre)] : nil)
            // ID3v1.1: a zero at comment[28] and the track number in comment[29].
            let comment = withUnsafeBytes(of: id3.comment) { Array($0) }
            if tags.trackNumber == nil && comment[28] == 0 && comment[29] != 0 { tags.trackNumber = Int(comment[29]) }
        }
        return (tags, picture)
    }

    /// The front cover if there is one, else the first picture; pictures over 16 MiB are skipped.
    private static func coverPicture(_ id3: mpg123_id3v2) -> EmbeddedPicture? {
        guard let pictures = id3.picture else { return nil }
        var first: EmbeddedPicture?
        for index in 0..<id3.pictures {
            let apic = pictures[index]
            guard let data = apic.data, apic.size > 0, apic.size <= EmbeddedPicture.maximumSize else { continue }
            let bytes = Array(UnsafeBufferPointer(start: data, count: apic.size))
            // ID3v2.2 gives "PNG"/"JPG", and "-->" marks a link rather than an image: trust the bytes then.
            var mime = text(apic.mime_type) ?? ""
            if !mime.contains("/") { mime = EmbeddedPicture.sniffMIMEType(bytes) }
            let picture = EmbeddedPicture(mimeType: mime.lowercased(), data: bytes)
            if Int(UInt8(bitPattern: apic.type)) == EmbeddedPicture.frontCoverType { return picture }
            if first == nil { first = picture }
        }
        return first
    }

    /// The first string of an `mpg123_string` (its `fill` counts the terminating NUL; frames may hold several
    /// NUL-separated strings), trimmed; nil when empty.
    private static func text(_ string: UnsafeMutablePointer<mpg123_string>?) -> String? {
        guard let string else { return nil }
        return text(string.pointee)
    }

    private static func text(_ string: mpg123_string) -> String? {
        guard let start = string.p, string.fill > 0 else { return nil }
        let bytes = UnsafeRawBufferPointer(start: start, count: min(string.fill, string.size))
        let end = bytes.firstIndex(of: 0) ?? bytes.count
        return String(decoding: bytes[..<end], as: UTF8.self).trimmingSpaces.nonEmpty
    }

    private static func frameID(_ id: (CChar, CChar, CChar, CChar)) -> String {
        withUnsafeBytes(of: id) { String(decoding: $0, as: UTF8.self) }
    }

    /// An ID3v1 fixed-size field: up to the first NUL, trailing spaces dropped, ISO-8859-1 converted to Unicode
    /// (every byte is the code point of the same value).
    private static func latin1<Field>(_ field: Field) -> String? {
        withUnsafeBytes(of: field) { raw in
            var result = ""
            result.unicodeScalars.append(contentsOf: raw.prefix { $0 != 0 }.map { Unicode.Scalar($0) })
            return result.trimmingSpaces.nonEmpty
        }
    }

    /// ID3v2.3 writes genres as "(17)", "(17)Rock", "17", "(RX)" or "(CR)"; ID3v2.4 as "17" or a name.
    /// Refinement text wins over a number; a number becomes its ID3v1 name.
    static func genreName(id3v2 raw: String) -> String? {
        func named(_ code: Substring) -> String? {
            if code == "RX" { return "Remix" }
            if code == "CR" { return "Cover" }
            guard let number = Int(code), number >= 0, number < id3v1Genres.count else { return nil }
            return id3v1Genres[number]
        }
        var rest = Substring(raw.trimmingSpaces)
        if let name = named(rest) { return name }
        var fromCode: String?
        while rest.hasPrefix("("), !rest.hasPrefix("(("), let close = rest.firstIndex(of: ")") {
            fromCode = fromCode ?? named(rest[rest.index(after: rest.startIndex)..<close])
            rest = rest[rest.index(after: close)...]
        }
        if rest.hasPrefix("((") { rest = rest.dropFirst() }
        return String(rest).trimmingSpaces.nonEmpty ?? fromCode
    }

    /// The ID3v1 genres with the Winamp extensions, by index (as `lame --genre-list` prints them).
    static let id3v1Genres: [String] = [
        "Blues", "Classic Rock", "Country", "Dance", "Disco", "Funk", "Grunge", "Hip-Hop", "Jazz", "Metal",
        "New Age", "Oldies", "Other", "Pop", "R&B", "Rap", "Reggae", "Rock", "Techno", "Industrial",
        "Alternative", "Ska", "Death Metal", "Pranks", "Soundtrack", "Euro-Techno", "Ambient", "Trip-Hop", "Vocal",
        "Jazz+Funk",
        "Fusion", "Trance", "Classical", "Instrumental", "Acid", "House", "Game", "Sound Clip", "Gospel", "Noise",
        "Alternative Rock", "Bass", "Soul", "Punk", "Space", "Meditative", "Instrumental Pop", "Instrumental Rock",
        "Ethnic", "Gothic",
        "Darkwave", "Techno-Industrial", "Electronic", "Pop-Folk", "Eurodance", "Dream", "Southern Rock", "Comedy",
        "Cult", "Gangsta",
        "Top 40", "Christian Rap", "Pop/Funk", "Jungle", "Native US", "Cabaret", "New Wave", "Psychedelic", "Rave",
        "Showtunes",
        "Trailer", "Lo-Fi", "Tribal", "Acid Punk", "Acid Jazz", "Polka", "Retro", "Musical", "Rock & Roll", "Hard Rock",
        "Folk", "Folk-Rock", "National Folk", "Swing", "Fast Fusion", "Bebob", "Latin", "Revival", "Celtic",
        "Bluegrass",
        "Avantgarde", "Gothic Rock", "Progressive Rock", "Psychedelic Rock", "Symphonic Rock", "Slow Rock", "Big Band",
        "Chorus", "Easy Listening", "Acoustic",
        "Humour", "Speech", "Chanson", "Opera", "Chamber Music", "Sonata", "Symphony", "Booty Bass", "Primus",
        "Porn Groove",
        "Satire", "Slow Jam", "Club", "Tango", "Samba", "Folklore", "Ballad", "Power Ballad", "Rhythmic Soul",
        "Freestyle",
        "Duet", "Punk Rock", "Drum Solo", "A Cappella", "Euro-House", "Dance Hall", "Goa", "Drum & Bass", "Club-House",
        "Hardcore",
        "Terror", "Indie", "BritPop", "Negerpunk", "Polsk Punk", "Beat", "Christian Gangsta", "Heavy Metal",
        "Black Metal", "Crossover",
        "Contemporary Christian", "Christian Rock", "Merengue", "Salsa", "Thrash Metal", "Anime", "JPop", "SynthPop"
    ]

    // MARK: - Errors

    /// A status from a handle call: the handle's own error code when the status is the generic `MPG123_ERR`.
    private func failure(_ status: Int32) -> String { Self.describe(handle, status) }

    private static func describe(_ handle: OpaquePointer, _ status: Int32) -> String {
        describe(status == MPG123_ERR.rawValue ? mpg123_errcode(handle) : status)
    }

    private static func describe(_ code: Int32) -> String {
        guard let message = mpg123_plain_strerror(code) else { return "libmpg123 error \(code)" }
        return String(cString: message)
    }
}
