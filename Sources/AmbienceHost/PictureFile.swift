import CSDLImage
import Glibc

// The only file in AmbienceHost that calls SDL_image.

extension Picture {
    /// Writes the picture as a PNG file, atomically: a temporary file beside `path` renamed into place, so `path`
    /// never holds half a picture.
    public func writePNG(to path: String) throws(HostError) {
        let folder = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let temporary = "\(folder)/.\(name).tmp-\(getpid())"
        let (w, h) = try pixelSize(width, height)  // at most 16384 a side, so a row of 4-byte pixels fits Int32 too
        let status: Int32 = pixels.withUnsafeBytes { raw in
            guard let surface = SDL_CreateRGBSurfaceWithFormatFrom(UnsafeMutableRawPointer(mutating: raw.baseAddress), w, h, 32,
                                                                   w * 4, SDL_PIXELFORMAT_RGBA32.rawValue) else {
                return -1
            }
            defer { SDL_FreeSurface(surface) }
            return IMG_SavePNG(surface, temporary)
        }
        guard status == 0 else {
            let reason = String(cString: SDL_GetError())
            unlink(temporary)
            throw .picture(path: path, reason: reason.isEmpty ? "SDL_image could not encode it" : reason)
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .picture(path: path, reason: reason)
        }
    }
}
