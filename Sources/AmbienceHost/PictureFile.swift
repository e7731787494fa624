import Ambience
import AmbiencePlatform
import CSDLImage
import Glibc

// The only file in AmbienceHost that calls SDL_image, through the engine's table (SDL2_image is opened at run time).

extension Picture {
    /// Writes the picture as a PNG file, atomically (an `AtomicFile` that SDL_image writes by name), so `path`
    /// never holds half a picture.
    public func writePNG(to path: String) throws(HostError) {
        let (w, h) = try pixelSize(width, height)
        let image: LibSDLImage
        do throws(SharedLibraryError) { image = try MediaItemArtwork.library.functions() } catch {
            throw .picture(path: path, reason: error.description)
        }
        let file: AtomicFile
        do throws(AtomicFileError) { file = try AtomicFile(replacing: path) } catch {
            throw .picture(path: path, reason: error.description)
        }  // at most 16384 a side, so a row of 4-byte pixels fits Int32 too
        let status: Int32 = pixels.withUnsafeBytes { raw in
            guard
                let surface = SDL_CreateRGBSurfaceWithFormatFrom(
                    UnsafeMutableRawPointer(mutating: raw.baseAddress), w, h, 32,
                    w * 4, SDL_PIXELFORMAT_RGBA32.rawValue)
            else {
                return -1
            }
            defer { SDL_FreeSurface(surface) }
            return image.IMG_SavePNG(surface, file.temporaryPath)
        }
        guard status == 0 else {
            let reason = String(cString: SDL_GetError())
            file.discard()
            throw .picture(path: path, reason: reason.isEmpty ? "SDL_image could not encode it" : reason)
        }
        do throws(AtomicFileError) { try file.commit() } catch {
            throw .picture(path: path, reason: error.description)
        }
    }
}
