import Glibc

/// Bytes in memory as a file the decoders can open by path, with nothing written to disk: an anonymous file
/// (`memfd_create`), named `/proc/self/fd/N`. Opening that path opens the same file anew, at its start, as a
/// regular file of the bytes' size, so every decoder (libvorbisfile, libFLAC, libsndfile, FFmpeg ...) reads it as it
/// reads any file. The file lives as long as this object: `path` names it only until then.
package final class MemoryFile {
    private let file: FileDescriptor

    /// `memfd_create` from the C library. Swift's Glibc module is built without `_GNU_SOURCE`, which hides its
    /// declaration, so it is looked up by name (glibc has had it since 2.27).
    private typealias MemfdCreate = @convention(c) (UnsafePointer<CChar>, UInt32) -> Int32
    private static let memfdCreate: Result<MemfdCreate, Errno> = {
        do throws(SharedLibraryError) {
            let address = try SharedLibrary("libc.so.6").address(of: "memfd_create")
            return .success(unsafeBitCast(address, to: MemfdCreate.self))
        } catch {
            return .failure(Errno(ENOSYS))
        }
    }()
    /// MFD_CLOEXEC: no program started later inherits the file.
    private static let closeOnExec: UInt32 = 1

    /// A file holding `bytes`; `name` shows in `/proc/self/fd` links (for people, not unique). Fails with the
    /// errno of `memfd_create` or of the write (ENOMEM, EMFILE ...).
    package init(_ bytes: [UInt8], name: String) throws(Errno) {
        let create = try Self.memfdCreate.get()
        let label = name.utf8.contains(0) ? "ambience" : "ambience:" + String(name.prefix(200))
        let fd = label.withCString { create($0, Self.closeOnExec) }
        guard fd >= 0 else { throw .current }
        file = FileDescriptor(adopting: fd)
        // withUnsafeBytes rethrows untyped errors: the write's outcome comes back as a value.
        let written = bytes.withUnsafeBytes { raw -> Result<Void, Errno> in
            do throws(Errno) { return .success(try file.write(raw)) } catch { return .failure(error) }
        }
        try written.get()
    }

    /// The path that opens the file (valid while this object lives).
    package var path: String { "/proc/self/fd/\(file.descriptor)" }
}
