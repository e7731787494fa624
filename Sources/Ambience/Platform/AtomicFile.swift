import Glibc
import Synchronization

/// What a path names, where that decides how `AtomicFile` may write to it.
package enum FileKind: Sendable, Equatable, CustomStringConvertible {
    case folder, socket, blockDevice

    package var description: String {
        switch self {
        case .folder: "a folder"
        case .socket: "a socket"
        case .blockDevice: "a block device"
        }
    }
}

/// Why an `AtomicFile` could not be made.
package enum AtomicFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `path`, or `target` that its symbolic links lead to, is a kind of node that is never written.
    case refused(path: String, target: String, kind: FileKind)
    /// `path` is a FIFO that no process reads: opening it would wait for one forever.
    case noReader(String)
    /// A system call failed.
    case failed(Errno)

    /// The `errno` closest to the reason.
    package var code: Int32 {
        switch self {
        case .refused(_, _, let kind): kind == .folder ? EISDIR : EINVAL
        case .noReader: ENXIO
        case .failed(let error): error.code
        }
    }

    package var description: String {
        switch self {
        case .refused(let path, let target, let kind):
            (target == path ? "\(path) is \(kind)" : "\(path) leads to \(target), which is \(kind)")
                + "; only a regular file, a character device or a FIFO is written"
        case .noReader(let path): "\(path) is a FIFO that no process is reading"
        case .failed(let error): error.description
        }
    }
}

/// A file that appears at its path whole or not at all, or a stream written straight through.
///
/// The rule for what may be replaced looks at the node the path leads to, its symbolic links followed:
/// - a regular file, or nothing: bytes go to a hidden temporary file in the target's folder (`.NAME.tmp-PID-N`, so the
///   rename never crosses a file system); `commit()` syncs it, renames it over the target and syncs the folder. Until
///   then an existing file is left as it was. A link is kept: the file it leads to is what is replaced.
/// - a character device or a FIFO (`/dev/null`, `/dev/stdout` on a terminal or a pipe): written straight through,
///   opened without `O_CREAT` or `O_TRUNC`, and never replaced. A FIFO that no process reads is refused at once
///   rather than waited on. Such a stream cannot be sought, so `isStream` tells a writer to patch nothing.
/// - a folder, a socket or a block device: refused, with the path and what it is.
///
/// A file that fails to commit, is discarded or is released uncommitted removes its temporary file. Owned by one
/// thread at a time.
package final class AtomicFile {
    package let path: String
    /// Where the bytes are until `commit()`; a library that writes files by name (SDL_image) may write here. For a
    /// stream, the path itself.
    package let temporaryPath: String
    /// Written straight through (a character device or a FIFO): no temporary file, no rename, no seeking.
    package let isStream: Bool
    /// nil once committed or discarded.
    private var file: FileDescriptor?
    /// The file the rename replaces: `path` with its links followed.
    private let target: String

    private static let sequence = Atomic<Int>(0)
    /// Links followed before giving up, as the kernel does (ELOOP).
    private static let maximumLinks = 40

    /// Opens `path` for writing by the rule above. A `path` that ends in `/` is EISDIR.
    package init(replacing path: String, permissions: mode_t = 0o644) throws(AtomicFileError) {
        guard !path.isEmpty, !path.hasSuffix("/") else { throw .failed(Errno(path.isEmpty ? ENOENT : EISDIR)) }
        guard !path.utf8.contains(0) else { throw .failed(Errno(ENOENT)) }
        self.path = path
        var node = stat()
        let exists = stat(path, &node) == 0  // follows every link, /proc/self/fd/N's too
        if !exists && errno != ENOENT { throw .failed(Errno.current) }
        let kind = exists ? node.st_mode & S_IFMT : S_IFREG
        switch kind {
        case S_IFREG:
            target = try Self.followingLinks(path)
            isStream = false
            var failure = Errno(EEXIST)
            let (folder, name) = Self.split(target)
            for _ in 0..<100 {
                let n = Self.sequence.wrappingAdd(1, ordering: .relaxed).oldValue
                let temporary = "\(folder).\(name).tmp-\(getpid())-\(n)"
                do throws(Errno) {
                    file = try FileDescriptor(
                        opening: temporary, flags: O_WRONLY | O_CREAT | O_EXCL, permissions: permissions)
                    temporaryPath = temporary
                    return
                } catch {
                    failure = error
                    if error.code != EEXIST { break }
                }
            }
            throw .failed(failure)
        case S_IFCHR, S_IFIFO:
            target = path
            isStream = true
            temporaryPath = path
            do throws(Errno) {
                // Non-blocking only to open: a FIFO without a reader fails (ENXIO) instead of waiting for one.
                let stream = try FileDescriptor(opening: path, flags: O_WRONLY | O_NONBLOCK)
                try stream.setBlocking()
                file = stream
            } catch {
                throw error.code == ENXIO && kind == S_IFIFO ? .noReader(path) : .failed(error)
            }
        default:
            let kind: FileKind = kind == S_IFDIR ? .folder : kind == S_IFSOCK ? .socket : .blockDevice
            throw .refused(path: path, target: (try? Self.followingLinks(path)) ?? path, kind: kind)
        }
    }

    deinit { discard() }

    /// Appends `bytes`.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
        try open().write(bytes)
    }

    /// Writes `bytes` at `offset` (a header patched once the sizes are known). A stream is ESPIPE.
    package func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(Errno) {
        guard !isStream else { throw Errno(ESPIPE) }
        try open().write(bytes, at: offset)
    }

    /// Syncs the temporary file, closes it and renames it over the target; then syncs the folder so the rename
    /// lasts, as far as the folder lets itself be synced (the file itself already is). On failure the temporary file
    /// is removed and the target is as it was. A stream is only closed.
    package func commit() throws(Errno) {
        let file = try open()
        if isStream {
            self.file = nil
            try file.close()
            return
        }
        do throws(Errno) {
            try file.sync()
            try file.close()
            guard rename(temporaryPath, target) == 0 else { throw Errno.current }
        } catch {
            discard()
            throw error
        }
        self.file = nil
        let folder = Self.split(target).folder
        if let directory = try? FileDescriptor(opening: folder.isEmpty ? "." : folder, flags: O_RDONLY | O_DIRECTORY) {
            try? directory.sync()
        }
    }

    /// Closes and removes the temporary file; the target is untouched. Does nothing once committed or discarded.
    package func discard() {
        guard let file else { return }
        try? file.close()
        self.file = nil
        if !isStream { unlink(temporaryPath) }
    }

    /// Writes `bytes` to `path` whole.
    package static func write(_ bytes: [UInt8], to path: String, permissions: mode_t = 0o644) throws(AtomicFileError) {
        let file = try AtomicFile(replacing: path, permissions: permissions)
        do throws(Errno) {
            try bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try file.write(raw) } }.get()
            try file.commit()
        } catch {
            throw .failed(error)
        }
    }

    private func open() throws(Errno) -> FileDescriptor {
        guard let file else { throw Errno(EBADF) }
        return file
    }

    /// `path` with its symbolic links followed, to the first name that is not a link (or does not exist yet).
    private static func followingLinks(_ path: String) throws(AtomicFileError) -> String {
        var current = path
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        for _ in 0...maximumLinks {
            let length = buffer.withUnsafeMutableBufferPointer { readlink(current, $0.baseAddress!, $0.count - 1) }
            if length < 0 {
                // Not a link (EINVAL), or nothing there yet (ENOENT): this is the name to write.
                if errno == EINVAL || errno == ENOENT { return current }
                throw .failed(Errno.current)
            }
            let link = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = link.hasPrefix("/") ? link : split(current).folder + link
        }
        throw .failed(Errno(ELOOP))
    }

    /// `"a/b/c"` → `("a/b/", "c")`; a name without a slash has the folder `""`.
    private static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return ("", path) }
        return (String(path[...slash]), String(path[path.index(after: slash)...]))
    }
}
