import AmbienceCore
import AmbienceDecoding
import AmbiencePlatform
import CSDLImage
import Glibc

/// SDL2_image's functions, looked up by the names the C target's header lists (CSDLImage/shim.h).
package typealias LibSDLImage = ambience_sdl_image_functions

/// A size in pixels.
public struct ArtworkSize: Sendable, Hashable {
    /// Pixels across.
    public var width: Int
    /// Pixels down.
    public var height: Int
    /// A size of `width` by `height` pixels.
    public init(width: Int, height: Int) { self.width = width; self.height = height }
}

/// Decoded pixels: `width * height` pixels of 4 bytes each, red, green, blue, alpha, row after row, top row first.
public struct ArtworkImage: Sendable, Hashable {
    /// Pixels across.
    public var width: Int
    /// Pixels down.
    public var height: Int
    /// `width * height * 4` bytes: RGBA, row after row, top row first.
    public var pixels: [UInt8]

    /// The RGBA bytes of the pixel at (x, y).
    public func pixel(x: Int, y: Int) -> (red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8) {
        let at = (y * width + x) * 4
        return (pixels[at], pixels[at + 1], pixels[at + 2], pixels[at + 3])
    }
}

/// Why a picture could not be used. Each case names the file (or the audio file that embeds the picture).
public enum ArtworkError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The picture's file or data is over the 16 MB limit (`bytes` long); it was not read.
    case tooLarge(String, bytes: Int)
    /// The picture's header claims more pixels than `MediaItemArtwork.maximumPixelSide` on a side or
    /// `MediaItemArtwork.maximumPixels` in all; it was not decoded.
    case tooManyPixels(String, width: Int, height: Int)
    /// The picture could not be read (the reason says why: missing, a folder, an I/O error).
    case unreadable(String, reason: String)
    /// The picture's format is not one that is decoded (only PNG and JPEG are), or its bytes are damaged.
    case undecodable(String, reason: String)

    public var description: String {
        switch self {
        case .tooLarge(let path, let bytes): "\(path): image is \(bytes) bytes, over the 16 MB limit; ignored"
        case .tooManyPixels(let path, let width, let height):
            "\(path): image is \(width)×\(height) pixels, over the limit of \(MediaItemArtwork.maximumPixelSide) a side "
                + "and \(MediaItemArtwork.maximumPixels) in all; ignored"
        case .unreadable(let path, let reason): "\(path): \(reason)"
        case .undecodable(let path, let reason): "\(path): cannot decode image (\(reason))"
        }
    }
}

/// An item's cover picture: embedded in the file (ID3v2 APIC, Vorbis METADATA_BLOCK_PICTURE) or a `cover.*` /
/// `folder.*` image (JPEG or PNG) beside it. Decoded with SDL2_image; nothing else in the project calls SDL_image.
///
/// Keeps the encoded image (at most 16 MB) and decodes it on each `image(size:)`. Only PNG and JPEG pictures are
/// decoded (the formats ID3v2 and FLAC name for covers, read by libpng and libjpeg-turbo), and only once their
/// header's width and height are within `maximumPixelSide` and `maximumPixels`: a picture that claims more is skipped
/// with `ArtworkError.tooManyPixels`, never decoded. GIF, BMP and WebP covers are recognised and skipped with
/// `ArtworkError.undecodable`: SDL2_image 2.6's GIF reader crashes on a malformed frame (found by fuzzing), and a
/// cover is user data, so only decoders that hold up under fuzzing see it.
public final class MediaItemArtwork: Sendable {
    /// Where a cover picture comes from.
    public enum Source: Sendable, Hashable {
        /// Embedded in the audio file's tags, with its MIME type.
        case embedded(mimeType: String)
        /// An image file beside the audio file.
        case file(String)
    }

    /// Where this picture comes from.
    public let source: Source
    /// The picture's own size.
    public let bounds: ArtworkSize
    private let data: [UInt8]
    private let name: String

    /// SDL2_image, opened the first time a picture is decoded; SDL2 itself is linked. Without it no item has
    /// artwork: every picture is skipped with `ArtworkError.undecodable`, naming the library and the loader's reason.
    /// AmbienceHost writes its PNG screenshots through the same table.
    package static let library = OptionalLibrary<LibSDLImage>(
        name: "libSDL2_image-2.0.so.0", feature: "artwork (cover pictures)",
        names: String(cString: ambience_sdl_image_function_names()))

    /// The largest side `image(size:)` makes: more is a mistake, not a cover.
    public static let maximumImageSide = 8192
    /// The longest side a picture may claim to be decoded at all: 16384 pixels.
    public static let maximumPixelSide = 16384
    /// The most pixels a picture may claim to be decoded at all: 2^25 (32 Mpixel, 128 MiB as RGBA; a large cover
    /// is 3000×3000, 9 Mpixel).
    public static let maximumPixels = 1 << 25

    /// Checks that `data` decodes, and reads its size. `name` says where the picture came from, for errors.
    public init(data: [UInt8], source: Source, name: String) throws(ArtworkError) {
        guard data.count <= MediaLibrary.maximumArtworkSize else { throw .tooLarge(name, bytes: data.count) }
        guard !data.isEmpty else { throw .undecodable(name, reason: "no image data") }
        let size = try Self.withDecodedSurface(data, name: name) { surface in
            ArtworkSize(width: Int(surface.pointee.w), height: Int(surface.pointee.h))
        }
        self.data = data
        self.source = source
        self.name = name
        self.bounds = size
    }

    /// The picture scaled to exactly `size`, as RGBA pixels; nil when the size is not 1…8192 on each side or the
    /// image no longer decodes.
    public func image(size: ArtworkSize) -> ArtworkImage? {
        guard (1...Self.maximumImageSide).contains(size.width), (1...Self.maximumImageSide).contains(size.height) else {
            return nil
        }
        return try? Self.withDecodedSurface(data, name: name) { source -> ArtworkImage? in
            let format = SDL_PIXELFORMAT_RGBA32.rawValue
            guard let target = SDL_CreateRGBSurfaceWithFormat(0, Int32(size.width), Int32(size.height), 32, format)
            else { return nil }
            defer { SDL_FreeSurface(target) }
            // Copy, do not blend: transparent pixels stay transparent.
            SDL_SetSurfaceBlendMode(source, SDL_BLENDMODE_NONE)
            guard SDL_UpperBlitScaled(source, nil, target, nil) == 0 else { return nil }
            return Self.pixels(of: target)
        } ?? nil
    }

    // MARK: Finding an item's artwork

    /// The artwork for an item, and why any picture that was found was not used.
    package struct Lookup: Sendable {
        package var artwork: MediaItemArtwork?
        package var ignored: [ArtworkError]
    }

    /// The embedded picture when there is a usable one, else the first usable `cover.*`, then `folder.*` beside the
    /// file (`.jpg`, `.jpeg`, `.png`, any case).
    package static func lookup(forFileAt path: [UInt8]) -> Lookup {
        var lookup = Lookup(artwork: nil, ignored: [])
        let display = RawPath.display(path)
        let embedded = { () -> Outcome<EmbeddedPicture?> in
            guard let decoder = try? AudioFile.open(fileSystemPath: path, name: display) else { return .success(nil) }
            switch decoder {
            case let vorbis as VorbisDecoder:
                if decoder.info.tags.hasArtwork && vorbis.embeddedPicture == nil {
                    return .failure("embedded picture is malformed or over 16 MB")
                }
                return .success(decoder.info.tags.hasArtwork ? vorbis.embeddedPicture : nil)
            case let mp3 as MP3Decoder:
                if decoder.info.tags.hasArtwork && mp3.embeddedPicture == nil {
                    return .failure("embedded picture is malformed or over 16 MB")
                }
                return .success(mp3.embeddedPicture)
            case let flac as FLACDecoder:
                if decoder.info.tags.hasArtwork && flac.embeddedPicture == nil {
                    return .failure("embedded picture is malformed or over 16 MB")
                }
                return .success(flac.embeddedPicture)
            case let opus as OpusDecoder:
                if decoder.info.tags.hasArtwork && opus.embeddedPicture == nil {
                    return .failure("embedded picture is malformed or over 16 MB")
                }
                return .success(decoder.info.tags.hasArtwork ? opus.embeddedPicture : nil)
            case let wav as WAVDecoder:
                if decoder.info.tags.hasArtwork && wav.embeddedPicture == nil {
                    return .failure("embedded picture is malformed or over 16 MB")
                }
                return .success(wav.embeddedPicture)
            case let mp4 as MP4Decoder:
                return .success(mp4.embeddedPicture)
            default:
                return .success(nil)
            }
        }()
        switch embedded {
        case .success(let picture?):
            do throws(ArtworkError) {
                lookup.artwork = try MediaItemArtwork(
                    data: picture.data, source: .embedded(mimeType: picture.mimeType), name: display)
                return lookup
            } catch {
                lookup.ignored.append(error)
            }
        case .success(nil):
            break
        case .failure(let reason):
            lookup.ignored.append(.unreadable(display, reason: reason))
        }
        for cover in coverFiles(besideFileAt: path) {
            let coverName = RawPath.display(cover)
            if let status = RawPath.fileStatus(cover), status.size > Int64(MediaLibrary.maximumArtworkSize) {
                lookup.ignored.append(.tooLarge(coverName, bytes: Int(status.size)))
                continue
            }
            switch RawPath.readFile(cover, limit: MediaLibrary.maximumArtworkSize) {
            case .failure(let reason):
                lookup.ignored.append(.unreadable(coverName, reason: reason))
            case .success(let data):
                do throws(ArtworkError) {
                    lookup.artwork = try MediaItemArtwork(data: data, source: .file(coverName), name: coverName)
                    return lookup
                } catch {
                    lookup.ignored.append(error)
                }
            }
        }
        return lookup
    }

    /// `cover.*` then `folder.*` images in the file's folder, best first.
    static func coverFiles(besideFileAt path: [UInt8]) -> [[UInt8]] {
        let folder = RawPath.parent(path)
        guard case .success(let entries) = RawPath.listFolder(folder.isEmpty ? [UInt8(ascii: ".")] : folder) else {
            return []
        }
        return entries.compactMap { entry -> (rank: Int, path: [UInt8])? in
            guard let rank = LibraryWalk.coverRank(entry.name, ext: RawPath.lowercasedExtension(entry.name)) else {
                return nil
            }
            return (rank, folder.isEmpty ? entry.name : RawPath.join(folder, entry.name))
        }
        .sorted { $0.rank != $1.rank ? $0.rank < $1.rank : $0.path.lexicographicallyPrecedes($1.path) }
        .map(\.path)
    }

    // MARK: SDL

    /// The picture's header, refused unless its size is within the pixel limits. Reads no pixel.
    static func checkedHeader(_ data: [UInt8], name: String) throws(ArtworkError) -> ImageHeader {
        let header: ImageHeader
        switch ImageHeader.read(data) {
        case .success(let read): header = read
        case .failure(let problem): throw .undecodable(name, reason: problem.reason)
        }
        guard header.width > 0, header.height > 0 else { throw .undecodable(name, reason: "image has no pixels") }
        let (pixels, overflow) = header.width.multipliedReportingOverflow(by: header.height)
        guard header.width <= maximumPixelSide, header.height <= maximumPixelSide, !overflow, pixels <= maximumPixels
        else {
            throw .tooManyPixels(name, width: header.width, height: header.height)
        }
        return header
    }

    /// Decodes `data` with SDL2_image, converts it to RGBA32 and calls `body` with the surface (freed afterwards).
    /// The header is checked first, and the decoder is the one for the format the header was read as (PNG or JPEG).
    private static func withDecodedSurface<T>(
        _ data: [UInt8], name: String,
        _ body: (UnsafeMutablePointer<SDL_Surface>) -> T
    ) throws(ArtworkError) -> T {
        let header = try checkedHeader(data, name: name)
        guard header.format == .png || header.format == .jpeg else {
            throw .undecodable(name, reason: "\(header.format.rawValue) covers are not decoded, only PNG and JPEG")
        }
        if let problem = pngProblem(data) { throw .undecodable(name, reason: problem) }
        let image: LibSDLImage
        do throws(SharedLibraryError) { image = try library.functions() } catch {
            throw .undecodable(name, reason: error.description)
        }
        let size: Int32
        do { size = try data.count.exactly(Int32.self, "image bytes") } catch {
            throw .tooLarge(name, bytes: data.count)
        }
        let decoded = data.withUnsafeBytes { raw -> Result<UnsafeMutablePointer<SDL_Surface>, ArtworkError> in
            guard let stream = SDL_RWFromConstMem(raw.baseAddress, size) else {
                return .failure(.undecodable(name, reason: sdlError()))
            }
            defer { SDL_RWclose(stream) }
            let loaded: UnsafeMutablePointer<SDL_Surface>? =
                switch header.format {
                case .png: image.IMG_LoadPNG_RW(stream)
                case .jpeg: image.IMG_LoadJPG_RW(stream)
                case .gif, .bmp, .webp: nil  // refused above
                }
            guard let surface = loaded else { return .failure(.undecodable(name, reason: sdlError())) }
            defer { SDL_FreeSurface(surface) }
            let width = Int(surface.pointee.w), height = Int(surface.pointee.h)
            guard width > 0, height > 0 else { return .failure(.undecodable(name, reason: "image has no pixels")) }
            // A decoder that made more than the header said is not trusted with the rest.
            guard width <= header.width, height <= header.height else {
                return .failure(
                    .undecodable(
                        name,
                        reason:
                            "decoded to \(width)×\(height) pixels, over the \(header.width)×\(header.height) its header states"
                    ))
            }
            guard let rgba = SDL_ConvertSurfaceFormat(surface, SDL_PIXELFORMAT_RGBA32.rawValue, 0) else {
                return .failure(.undecodable(name, reason: sdlError()))
            }
            return .success(rgba)
        }
        switch decoded {
        case .failure(let error): throw error
        case .success(let surface):
            defer { SDL_FreeSurface(surface) }
            return body(surface)
        }
    }

    /// The pixels of an RGBA32 surface, rows packed without the surface's padding.
    private static func pixels(of surface: UnsafeMutablePointer<SDL_Surface>) -> ArtworkImage? {
        let width = Int(surface.pointee.w), height = Int(surface.pointee.h), pitch = Int(surface.pointee.pitch)
        guard SDL_LockSurface(surface) == 0 else { return nil }
        defer { SDL_UnlockSurface(surface) }
        guard let base = surface.pointee.pixels else { return nil }
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        pixels.withUnsafeMutableBytes { out in
            for row in 0..<height {
                out.baseAddress!.advanced(by: row * width * 4).copyMemory(
                    from: base.advanced(by: row * pitch), byteCount: width * 4)
            }
        }
        return ArtworkImage(width: width, height: height, pixels: pixels)
    }

    private static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// What is structurally wrong with a PNG: chunk lengths, CRCs, IHDR first, IEND present. nil when nothing is, or
    /// when the data is not a PNG. SDL2_image leaves libpng's default error handler in place, which prints on
    /// stderr; a damaged PNG is refused here, with a clearer reason, before libpng sees it.
    static func pngProblem(_ data: [UInt8]) -> String? {
        guard data.starts(with: pngSignature) else { return nil }
        var at = pngSignature.count
        var isFirst = true
        // The loop's bound keeps the length field in the data; the length check keeps the CRC field in it.
        while at + 12 <= data.count, let length = data.u32BE(at).map(Int.init) {
            let type = String(decoding: data[(at + 4)..<(at + 8)], as: UTF8.self)
            guard length <= data.count - at - 12 else {
                return "PNG chunk \(type) at byte \(at) runs past the end of the data"
            }
            if isFirst && type != "IHDR" { return "PNG does not start with an IHDR chunk" }
            isFirst = false
            guard CRC32.checksum(data[(at + 4)..<(at + 8 + length)]) == data.u32BE(at + 8 + length) else {
                return "PNG chunk \(type) at byte \(at) fails its CRC check"
            }
            if type == "IEND" { return nil }
            at += 12 + length
        }
        return "PNG is truncated (no IEND chunk)"
    }

    private static func sdlError() -> String {
        guard let message = SDL_GetError() else { return "unknown SDL_image error" }
        let text = String(cString: message)
        return text.isEmpty ? "unknown SDL_image error" : text
    }
}

extension MediaItem {
    /// The item's cover picture, read from disk on each access: the picture file a desktop player named
    /// (`artworkLocation`, `.file`), else the one embedded in the item's file, else `cover.*`/`folder.*` beside it;
    /// nil when there is none. `MediaItemArtwork.lookup(forFileAt:)` also says why a picture was ignored.
    public var artwork: MediaItemArtwork? {
        if case .file(let path)? = artworkLocation, let named = MediaItemArtwork.picture(atPath: path) { return named }
        return url.isEmpty && pathBytes == nil ? nil : MediaItemArtwork.lookup(forFileAt: fileSystemPath).artwork
    }
}

extension MediaItemArtwork {
    /// The picture in the file at `path`, within the library's size limit; nil when it cannot be read or decoded.
    static func picture(atPath path: String) -> MediaItemArtwork? {
        let bytes = Array(path.utf8)
        if let status = RawPath.fileStatus(bytes), status.size > Int64(MediaLibrary.maximumArtworkSize) { return nil }
        guard case .success(let data) = RawPath.readFile(bytes, limit: MediaLibrary.maximumArtworkSize) else {
            return nil
        }
        return try? MediaItemArtwork(data: data, source: .file(path), name: path)
    }
}
