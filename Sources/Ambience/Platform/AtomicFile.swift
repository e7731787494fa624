import Glibc
import Synchronization

/// A file that appears at its path whole or not at all.
///
/// Bytes go to a hidden temporary file in the same folder (`.NAME.tmp-PID-N`, so the rename never crosses a file
/// system); `commit()` syncs it, renames it over `path` and syncs the folder. Until then an existing file at `path`
/// is left as it was. A file that fails to commit, is discarded or is released uncommitted removes its temporary
/// file. Owned by one thread at a time.
package final class AtomicFile {
    package let path: String
    /// Where the bytes are until `commit()`; a library that writes files by name (SDL_image) may write here.
    package let temporaryPath: String
    /// nil once committed or discarded.
    private var file: FileDescriptor?

    private static let sequence = Atomic<Int>(0)

    /// Creates the temporary file beside `path`. A `path` that ends in `/` or names a folder is EISDIR.
    package init(replacing path: String, permissions: mode_t = 0o644) throws(Errno) {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard !name.isEmpty else { throw Errno(EISDIR) }
        var existing = stat()
        if stat(path, &existing) == 0, existing.st_mode & S_IFMT == S_IFDIR { throw Errno(EISDIR) }
        var failure = Errno(EEXIST)
        for _ in 0..<100 {
            let n = Self.sequence.wrappingAdd(1, ordering: .relaxed).oldValue
            let temporary = "\(folder).\(name).tmp-\(getpid())-\(n)"
            do throws(Errno) {
                file = try FileDescriptor(
                    opening: temporary, flags: O_WRONLY | O_CREAT | O_EXCL, permissions: permissions)
                self.path = path
                temporaryPath = temporary
                return
            } catch {
                failure = error
                if error.code != EEXIST { break }
            }
        }
        throw failure
    }

    deinit { discard() }

    /// Appends `bytes`.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
        try open().write(bytes)
    }

    /// Writes `bytes` at `offset` (a header patched once the sizes are known).
    package func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(Errno) {
        try open().write(bytes, at: offset)
    }

    /// Syncs the temporary file, closes it and renames it over `path`; then syncs the folder so the rename lasts,
    /// as far as the folder lets itself be synced (the file itself already is). On failure the temporary file is
    /// removed and `path` is as it was.
    package func commit() throws(Errno) {
        let file = try open()
        do throws(Errno) {
            try file.sync()
            try file.close()
            guard rename(temporaryPath, path) == 0 else { throw Errno.current }
        } catch {
            discard()
            throw error
        }
        self.file = nil
        let folder = path.lastIndex(of: "/").map { String(path[...$0]) } ?? "."
        if let directory = try? FileDescriptor(opening: folder, flags: O_RDONLY | O_DIRECTORY) { try? directory.sync() }
    }

    /// Closes and removes the temporary file; `path` is untouched. Does nothing once committed or discarded.
    package func discard() {
        guard let file else { return }
        try? file.close()
        self.file = nil
        unlink(temporaryPath)
    }

    /// Writes `bytes` to `path` whole.
    package static func write(_ bytes: [UInt8], to path: String, permissions: mode_t = 0o644) throws(Errno) {
        let file = try AtomicFile(replacing: path, permissions: permissions)
        try bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try file.write(raw) } }.get()
        try file.commit()
    }

    private func open() throws(Errno) -> FileDescriptor {
        guard let file else { throw Errno(EBADF) }
        return file
    }
}
