import AmbienceCore
import AmbienceDecoding
import AmbiencePlatform
import Foundation
import Glibc

// MARK: - Reading one audio file

/// Opens an audio file by content (via `AudioFile`) and returns its cleaned tags, exact duration and artwork flag.
enum LibraryFileReader {
    struct Found {
        var format: AudioFileFormat
        var tags: AudioTags
        var duration: Double
        var hasEmbeddedArtwork: Bool
        var warnings: [String]
    }

    static func read(_ path: [UInt8]) -> Outcome<Found> {
        var warnings: [String] = []
        if !RawPath.isValidUTF8(path) {
            warnings.append("file name is not valid UTF-8; indexed under the exact bytes, shown with U+FFFD")
        }
        let info: AudioInfo, picture: EmbeddedPicture?
        do throws(DecodingError) {
            // Only the information: a MIDI file's from its own bytes, with no synth and no SoundFont.
            var options = DecoderOptions()
            options.infoOnly = true
            options.lengthFromTempoMap = true
            let decoder = try AudioFile.open(fileSystemPath: path, name: RawPath.display(path), options: options)
            info = decoder.info
            switch decoder {
            case let vorbis as VorbisDecoder: picture = decoder.info.tags.hasArtwork ? vorbis.embeddedPicture : nil
            case let mp3 as MP3Decoder: picture = mp3.embeddedPicture
            case let flac as FLACDecoder: picture = flac.embeddedPicture
            case let opus as OpusDecoder: picture = decoder.info.tags.hasArtwork ? opus.embeddedPicture : nil
            case let wav as WAVDecoder: picture = wav.embeddedPicture
            case let mp4 as MP4Decoder: picture = mp4.embeddedPicture
            default: picture = nil
            }
        } catch {
            return .failure(error.reason)
        }
        warnings += info.warnings
        if info.tags.hasArtwork && picture == nil {
            warnings.append("embedded picture is unusable (malformed, or over the 16 MB limit); ignored")
        }
        var tags = AudioTags()
        tags.title = clean(info.tags.title, "title", &warnings)
        tags.artist = clean(info.tags.artist, "artist", &warnings)
        tags.album = clean(info.tags.album, "album", &warnings)
        tags.albumArtist = clean(info.tags.albumArtist, "album artist", &warnings)
        tags.genre = clean(info.tags.genre, "genre", &warnings)
        tags.composer = clean(info.tags.composer, "composer", &warnings)
        tags.trackNumber = info.tags.trackNumber.flatMap { (1...100_000).contains($0) ? $0 : nil }
        tags.discNumber = info.tags.discNumber.flatMap { (1...10_000).contains($0) ? $0 : nil }
        if tags.title == nil {
            // Like any player: an untitled file is shown by its name, without the extension.
            var name = RawPath.name(path)
            if let ext = RawPath.lowercasedExtension(name) { name.removeLast(ext.utf8.count + 1) }
            tags.title = clean(RawPath.display(name), "file name", &warnings)
        }
        tags.hasArtwork = picture != nil
        return .success(
            Found(
                format: info.format, tags: tags, duration: info.duration, hasEmbeddedArtwork: picture != nil,
                warnings: warnings))
    }

    /// A tag as stored: what a terminal would act on (`TerminalText.isUnsafe`: control characters, bidirectional
    /// overrides, line separators) becomes a space, ends trimmed, at most `maximumTagLength` characters.
    /// Text that was not valid in its declared encoding has already had its bad bytes replaced by U+FFFD.
    static func clean(_ value: String?, _ field: String, _ warnings: inout [String]) -> String? {
        guard let value else { return nil }
        var scalars = String.UnicodeScalarView()
        var replaced = false
        for scalar in value.unicodeScalars {
            if scalar == "\u{FFFD}" { replaced = true }
            scalars.append(TerminalText.isUnsafe(scalar) ? " " : scalar)
        }
        if replaced {
            warnings.append("\(field) tag is not valid text in its encoding; undecodable bytes shown as U+FFFD")
        }
        var text = String(scalars).trimmingCharacters(in: .whitespaces)
        if text.utf8.count > MediaLibrary.maximumTagLength {
            let length = text.count
            if length > MediaLibrary.maximumTagLength {
                text = String(text.prefix(MediaLibrary.maximumTagLength))
                warnings.append(
                    "\(field) tag is \(length) characters; cut to the first \(MediaLibrary.maximumTagLength)")
            }
        }
        return text.isEmpty ? nil : text
    }
}

// MARK: - Playlist files

/// Reading a playlist file; the parsing itself is in Playlist.swift.
extension PlaylistFile {
    static func read(_ path: [UInt8], roots: [[UInt8]]) -> Parsed {
        var stem = RawPath.name(path)
        let ext = RawPath.lowercasedExtension(stem)
        if let ext { stem.removeLast(ext.utf8.count + 1) }
        var parsed = Parsed(name: RawPath.display(stem))
        let bytes: [UInt8]
        switch RawPath.readFile(path, limit: MediaLibrary.maximumPlaylistSize) {
        case .success(let read): bytes = read
        case .failure(let reason):
            parsed.warnings.append((0, "playlist not read: \(reason)"))
            return parsed
        }
        parse(bytes, folder: RawPath.parent(path), isUTF8Playlist: ext == "m3u8", roots: roots, into: &parsed)
        return parsed
    }
}

// MARK: - Raw paths

/// A value, or the reason (one readable phrase) there is none.
enum Outcome<Value> {
    case success(Value)
    case failure(String)
}

/// The file-system side of `RawPath` (its text operations are in Playlist.swift).
extension RawPath {
    enum EntryKind { case folder, file, symlink, unknown, other }

    struct Entry {
        var name: [UInt8]
        var kind: EntryKind
    }

    static func withCString<T>(_ path: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
        (path + [0]).withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
        }
    }

    /// The status of `path` (following symlinks unless asked not to), or nil: for callers to whom every failure
    /// means the same. Those that tell a missing file from an unreadable one use `FileStatus(rawPath:)`.
    static func fileStatus(_ path: [UInt8], followSymlinks: Bool = true) -> FileStatus? {
        try? FileStatus(rawPath: path, followingLinks: followSymlinks)
    }

    /// The names in a folder (without `.` and `..`), sorted by bytes.
    static func listFolder(_ path: [UInt8]) -> Result<[Entry], Errno> {
        do throws(Errno) {
            return .success(
                try Directory.entries(rawPath: path).map { entry in
                    let kind: EntryKind =
                        switch entry.kind {
                        case .directory: .folder
                        case .regular: .file
                        case .symbolicLink: .symlink
                        case nil: .unknown
                        default: .other
                        }
                    return Entry(name: entry.name, kind: kind)
                })
        } catch {
            return .failure(error)
        }
    }

    /// A whole regular file of at most `limit` bytes, or a reason.
    static func readFile(_ path: [UInt8], limit: Int) -> Outcome<[UInt8]> {
        do throws(Errno) {
            let file = try FileDescriptor(opening: path, flags: O_RDONLY | O_NONBLOCK)
            let status = try file.status()
            guard status.st_mode & S_IFMT == S_IFREG else { return .failure("not a regular file") }
            guard status.st_size <= limit else {
                return .failure("\(status.st_size) bytes, over the \(limit >> 20) MB limit")
            }
            var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
            let done = try bytes.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) -> Int in
                    guard let start = raw.baseAddress else { return 0 }
                    return try file.read(into: start, count: raw.count, at: 0)
                }
            }.get()
            return .success(Array(bytes.prefix(done)))
        } catch {
            return .failure("cannot read (\(error))")
        }
    }

}
