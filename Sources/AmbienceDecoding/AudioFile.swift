import AmbienceCore
import AmbiencePlatform
import Glibc

/// Opens audio files by what their bytes say they are, never by their names.
package enum AudioFile {
    /// Opens a decoder for `path`, choosing WAV, Ogg Vorbis, Ogg Opus, FLAC, MP3, MP4 (AAC, ALAC), a tracker module
    /// or MIDI from the first bytes. `options` says how modules and MIDI are rendered; the others ignore it.
    package static func open(_ path: String, options: DecoderOptions = DecoderOptions()) throws(DecodingError)
        -> any AudioDecoder
    {
        switch try detectFormat(path) {
        case .wav: try WAVDecoder(path: path)
        case .ogg: try VorbisDecoder(path: path)
        case .mp3: try MP3Decoder(path: path)
        case .flac: try FLACDecoder(path: path)
        case .opus: try OpusDecoder(path: path)
        case .mp4: try MP4Decoder(path: path)
        case .module: try ModuleDecoder(path: path, options: options)
        case .midi: try MIDIDecoder(path: path, options: options)
        }
    }

    /// Opens a decoder for a file named by raw bytes: Linux file names need not be UTF-8, which a Swift `String`
    /// cannot hold. `name` is how errors show the file.
    package static func open(
        fileSystemPath bytes: [UInt8], name: String, options: DecoderOptions = DecoderOptions()
    ) throws(DecodingError) -> any AudioDecoder {
        if let text = String(validating: bytes, as: UTF8.self), !bytes.contains(0) {
            return try open(text, options: options)
        }
        guard !bytes.isEmpty, !bytes.contains(0) else { throw .unreadable(name, errno: ENOENT) }
        let file: FileDescriptor
        do throws(Errno) { file = try FileDescriptor(opening: bytes, flags: O_RDONLY | O_NONBLOCK) } catch {
            throw .unreadable(name, errno: error.code)
        }
        // The decoder opens its own descriptor through this one's /proc entry, so this one may close after it.
        return try withExtendedLifetime(file) { () throws(DecodingError) -> any AudioDecoder in
            do throws(DecodingError) {
                return try open("/proc/self/fd/\(file.descriptor)", options: options)
            } catch {
                throw error.naming(name)
            }
        }
    }

    /// Reads the stream information and tags without decoding the audio.
    package static func info(_ path: String, options: DecoderOptions = DecoderOptions()) throws(DecodingError)
        -> AudioInfo
    {
        var options = options
        options.infoOnly = true
        return try open(path, options: options).info
    }

    /// The most bytes of decoded audio one whole sound may take (`PCMBuffer.maximumDecodedBytes`).
    package static let maximumDecodedBytes = PCMBuffer.maximumDecodedBytes

    /// Decodes a whole file into memory. Before any audio is decoded, its decoded size (`AudioInfo.decodedBytes`)
    /// is checked against `limit`, at most `maximumDecodedBytes`: a larger file is `DecodingError.tooLarge`.
    package static func decode(
        _ path: String, limit: Int64 = maximumDecodedBytes, options: DecoderOptions = DecoderOptions()
    ) throws(DecodingError) -> PCMBuffer {
        let decoder = try open(path, options: options)
        return try PCMBuffer(decodingAllOf: decoder, limit: limit, name: path)
    }

    /// The format the file's first bytes announce.
    package static func detectFormat(_ path: String) throws(DecodingError) -> AudioFileFormat {
        let header = try readPrefix(path, count: 12)
        if header.isEmpty { throw .empty(path) }
        if header.starts(with: Array("RIFF".utf8)) || header.starts(with: Array("RF64".utf8)) {
            if header.count >= 12 && Array(header[8..<12]) == Array("WAVE".utf8) { return .wav }
            throw .unsupportedFormat(path)
        }
        if try isFLAC(path, header) { return .flac }
        if header.starts(with: Array("OggS".utf8)) { return try isOggOpus(path) ? .opus : .ogg }
        if header.count >= 8 && Array(header[4..<8]) == Array("ftyp".utf8) { return .mp4 }
        if header.starts(with: Array("ID3".utf8)) { return .mp3 }
        if header.starts(with: Array("MThd".utf8)) { return .midi }
        if header.count >= 4 && isMPEGAudioFrameHeader(header[0], header[1], header[2]) { return .mp3 }
        if try isModule(path) { return .module }
        throw .unsupportedFormat(path)
    }

    /// Whether libopenmpt opens the file, by its content (MOD has no signature at its start, and libopenmpt reads
    /// dozens of formats). Without libopenmpt, a file with the signature of MOD, XM, S3M or IT is still named a
    /// module, so that opening it says the library is missing rather than that the format is unknown.
    static func isModule(_ path: String) throws(DecodingError) -> Bool {
        let (file, size) = try openRegularFile(path)
        let header: [UInt8]
        do throws(Errno) { header = try file.readBytes(ModuleDecoder.probeSize) } catch {
            throw .unreadable(path, errno: error.code)
        }
        return ModuleDecoder.probe(header, fileSize: size) ?? ModuleDecoder.hasCommonSignature(header)
    }

    /// Whether an Ogg file's first packet is an Opus identification header (`OpusHead`). Anything else, Vorbis's
    /// `\u{1}vorbis` included, goes to the Vorbis decoder, which refuses what it cannot play.
    static func isOggOpus(_ path: String) throws(DecodingError) -> Bool {
        // The first page: a 27-byte header, then its segment table (its length in byte 26), then the first packet.
        let page = try readPrefix(path, count: 27 + 255 + 8)
        guard page.count > 27 else { return false }
        let packet = 27 + Int(page[26])
        return page.count >= packet + 8 && Array(page[packet..<(packet + 8)]) == Array("OpusHead".utf8)
    }

    /// Whether the file starts with FLAC's `fLaC`, or with an ID3v2 tag (which some taggers put first, and libFLAC
    /// skips) followed by `fLaC`.
    static func isFLAC(_ path: String, _ header: [UInt8]) throws(DecodingError) -> Bool {
        if header.starts(with: Array("fLaC".utf8)) { return true }
        guard header.count >= 10, header.starts(with: Array("ID3".utf8)),
            header[6..<10].allSatisfy({ $0 < 0x80 })
        else { return false }
        // The tag's size: four 7-bit bytes, then 10 more for a footer when flag 0x10 says there is one.
        let size = header[6..<10].reduce(0) { $0 << 7 | Int($1) } + (header[5] & 0x10 != 0 ? 20 : 10)
        let file = try openRegularFile(path).file
        let magic = UnsafeMutableRawBufferPointer.allocate(byteCount: 4, alignment: 1)
        defer { magic.deallocate() }
        let got: Int
        do throws(Errno) { got = try file.read(into: magic.baseAddress!, count: 4, at: Int64(size)) } catch {
            throw .unreadable(path, errno: error.code)
        }
        return got == 4 && Array(magic) == Array("fLaC".utf8)
    }

    /// A plausible MPEG audio frame header: 11 sync bits, a valid version, layer, bitrate and rate index.
    static func isMPEGAudioFrameHeader(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8) -> Bool {
        guard b0 == 0xFF, b1 & 0xE0 == 0xE0 else { return false }
        let version = (b1 >> 3) & 0x3, layer = (b1 >> 1) & 0x3
        let bitrate = b2 >> 4, rate = (b2 >> 2) & 0x3
        return version != 1 && layer != 0 && bitrate != 0xF && bitrate != 0 && rate != 3
    }

    /// Opens a regular file for reading (see `FileDescriptor.openRegularFile`), with its size.
    static func openRegularFile(_ path: String) throws(DecodingError) -> (file: FileDescriptor, size: Int64) {
        do throws(Errno) { return try FileDescriptor.openRegularFile(path) } catch {
            throw .unreadable(path, errno: error.code)
        }
    }

    /// The first `count` bytes of a regular file (fewer if it is shorter).
    static func readPrefix(_ path: String, count: Int) throws(DecodingError) -> [UInt8] {
        let file = try openRegularFile(path).file
        do throws(Errno) { return try file.readBytes(count) } catch {
            throw .unreadable(path, errno: error.code)
        }
    }
}
