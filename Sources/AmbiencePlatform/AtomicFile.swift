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

/// Why an `AtomicFile` could not be made or committed.
package enum AtomicFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `path`, or `target` that its symbolic links lead to, is a kind of node that is never written.
    case refused(path: String, target: String, kind: FileKind)
    /// `path` is a FIFO that no process reads: opening it would wait for one forever.
    case noReader(String)
    /// What `path` names changed between the check and the write or the rename: another process put something else
    /// there, or moved a link. What is there now is left alone, and the temporary file is removed.
    case changed(String)
    /// A system call failed.
    case failed(Errno)

    /// The `errno` closest to the reason.
    package var code: Int32 {
        switch self {
        case .refused(_, _, let kind): kind == .folder ? EISDIR : EINVAL
        case .noReader: ENXIO
        case .changed: EBUSY
        case .failed(let error): error.code
        }
    }

    package var description: String {
        switch self {
        case .refused(let path, let target, let kind):
            (target == path ? "\(path) is \(kind)" : "\(path) leads to \(target), which is \(kind)")
                + "; only a regular file, a character device or a FIFO is written"
        case .noReader(let path): "\(path) is a FIFO that no process is reading"
        case .changed(let path):
            "\(path) was changed by another process while it was being written; what is there now is left alone"
        case .failed(let error): error.description
        }
    }
}

/// A file that appears at its path whole or not at all, or a stream written straight through.
///
/// The rule for what may be replaced looks at the node the path leads to, its symbolic links followed, through a
/// descriptor that names it without opening it (`O_PATH`), so that looking opens no device and waits on no FIFO:
/// - a regular file, or nothing: bytes go to a hidden temporary file in the target's folder (`.NAME.tmp-PID-N`,
///   created `O_EXCL`, so the rename never crosses a file system); `commit()` syncs it, renames it over the target
///   and syncs the folder. Until then an existing file is left as it was. A link is kept: the file it leads to is
///   what is replaced. The new file has the replaced one's permission bits, or a new one 0666 less the umask.
/// - a character device or a FIFO (`/dev/null`, `/dev/stdout` on a terminal or a pipe): written straight through,
///   opened without `O_CREAT` or `O_TRUNC`, and never replaced. A FIFO that no process reads is refused at once
///   rather than waited on. Such a stream cannot be sought, so `isStream` tells a writer to patch nothing.
/// - a folder, a socket or a block device: refused, with the path and what it is.
///
/// Another process may swap the node between that look and the write. The target's folder is held open, and the
/// temporary file made and renamed inside it, by name, whatever happens to the folder's path. Just before the
/// rename, the target's name in that folder, and `path` through its links, must still be the very file looked at
/// (device and inode), or still nothing, in which case the rename itself refuses to replace what appeared
/// (`RENAME_NOREPLACE`). A stream's open descriptor must be the node looked at. Otherwise `AtomicFileError.changed`.
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
    /// Where a file that is not a stream goes: nil for a stream.
    private let placement: Placement?

    /// The target's folder, held open; the target's and the temporary file's names in it; and what the target was
    /// when it was looked at (nil: nothing), held open too: while a descriptor refers to it, its inode number cannot
    /// pass to a file made in its place, so the same device and inode mean the same file.
    private struct Placement {
        let folder: FileDescriptor
        let name: String
        let temporaryName: String
        let replacing: FileIdentity?
        let held: FileDescriptor?
    }

    private static let sequence = Atomic<Int>(0)
    /// Links followed before giving up, as the kernel does (ELOOP).
    private static let maximumLinks = 40

    /// Opens `path` for writing by the rule above. A `path` that ends in `/` is EISDIR. `permissions` are a new
    /// file's, before the umask.
    package init(replacing path: String, permissions: mode_t = 0o666) throws(AtomicFileError) {
        guard !path.isEmpty, !path.hasSuffix("/") else { throw .failed(Errno(path.isEmpty ? ENOENT : EISDIR)) }
        guard !path.utf8.contains(0) else { throw .failed(Errno(ENOENT)) }
        self.path = path
        // The node the path leads to, every link followed (/proc/self/fd/N's too), looked at through a descriptor
        // that is kept while it is compared with what is there later (so its inode number is not reused meanwhile).
        let looked: FileDescriptor?
        let node: stat?
        do throws(Errno) {
            let descriptor = try FileDescriptor(opening: path, flags: FileDescriptor.pathOnly)
            (looked, node) = (descriptor, try descriptor.status())
        } catch {
            guard error.code == ENOENT else { throw .failed(error) }
            (looked, node) = (nil, nil)
        }
        let kind = node.map { $0.st_mode & S_IFMT } ?? S_IFREG
        switch kind {
        case S_IFREG:
            isStream = false
            let (placement, file, temporaryPath) = try Self.temporaryFile(
                for: path, replacing: node, held: looked, permissions: permissions)
            self.placement = placement
            self.file = file
            self.temporaryPath = temporaryPath
        case S_IFCHR, S_IFIFO:
            isStream = true
            placement = nil
            temporaryPath = path
            let stream: FileDescriptor
            do throws(Errno) {
                // Non-blocking only to open: a FIFO without a reader fails (ENXIO) instead of waiting for one.
                stream = try FileDescriptor(opening: path, flags: O_WRONLY | O_NONBLOCK)
            } catch {
                throw error.code == ENXIO && kind == S_IFIFO ? .noReader(path) : .failed(error)
            }
            // What was opened must be the node looked at, not one swapped in between.
            let opened: stat
            do throws(Errno) { opened = try stream.status() } catch { throw .failed(error) }
            guard let node, FileIdentity(opened) == FileIdentity(node) else { throw .changed(path) }
            withExtendedLifetime(looked) {}
            do throws(Errno) { try stream.setBlocking() } catch { throw .failed(error) }
            file = stream
        default:
            let kind: FileKind = kind == S_IFDIR ? .folder : kind == S_IFSOCK ? .socket : .blockDevice
            throw .refused(path: path, target: (try? Self.followingLinks(path)) ?? path, kind: kind)
        }
    }

    /// The temporary file beside the file `path`'s links lead to, which is `node` (nil: nothing yet) open as `held`:
    /// its folder held open, created `O_EXCL` under a name no one has, with `node`'s permission bits or
    /// `permissions`.
    private static func temporaryFile(
        for path: String, replacing node: stat?, held: FileDescriptor?, permissions: mode_t
    ) throws(AtomicFileError) -> (Placement, FileDescriptor, String) {
        let target = try followingLinks(path)
        let (folderPath, name) = split(target)
        let folder: FileDescriptor
        let existing: stat?
        do throws(Errno) {
            folder = try FileDescriptor(
                opening: folderPath.isEmpty ? "." : folderPath, flags: FileDescriptor.pathOnly | O_DIRECTORY)
            existing = try folder.entryStatus(name)
        } catch {
            throw .failed(error)
        }
        // The name the links led to must be the node looked at (or still nothing): a link moved meanwhile is not.
        let replacing = node.map(FileIdentity.init)
        guard existing.map(FileIdentity.init) == replacing, existing.map({ $0.st_mode & S_IFMT == S_IFREG }) != false
        else {
            throw .changed(path)
        }
        var failure = Errno(EEXIST)
        for _ in 0..<100 {
            let n = sequence.wrappingAdd(1, ordering: .relaxed).oldValue
            let temporaryName = ".\(name).tmp-\(getpid())-\(n)"
            do throws(Errno) {
                let file = try FileDescriptor(
                    in: folder, opening: temporaryName, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW,
                    permissions: node == nil ? permissions : 0o600)
                if let node {
                    // The replaced file's permission bits, not its set-user-ID, set-group-ID or sticky bits. A file
                    // system that has no modes (FAT) keeps its own.
                    do throws(Errno) { try file.setPermissions(node.st_mode & 0o777) } catch {
                        if error.code != EPERM {
                            folder.removeEntry(temporaryName)
                            throw error
                        }
                    }
                }
                return (
                    Placement(
                        folder: folder, name: name, temporaryName: temporaryName, replacing: replacing, held: held),
                    file,
                    folderPath + temporaryName
                )
            } catch {
                failure = error
                if error.code != EEXIST { break }
            }
        }
        throw .failed(failure)
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

    /// Syncs the temporary file, closes it and renames it over the target, once the target is checked to be still
    /// what was looked at (`AtomicFileError.changed` if not); then syncs the folder so the rename lasts, as far as
    /// the folder lets itself be synced (the file itself already is). On failure the temporary file is removed and
    /// the target is as it was. A stream is only closed.
    package func commit() throws(AtomicFileError) {
        let file: FileDescriptor
        do throws(Errno) { file = try open() } catch { throw .failed(error) }
        guard let placement else {
            self.file = nil
            do throws(Errno) { try file.close() } catch { throw .failed(error) }
            return
        }
        do throws(AtomicFileError) {
            do throws(Errno) {
                try file.sync()
                try file.close()
            } catch {
                throw .failed(error)
            }
            try checkUnchanged(placement)
            do throws(Errno) {
                try placement.folder.renameEntry(
                    placement.temporaryName, to: placement.name, replacing: placement.replacing != nil)
            } catch {
                // Nothing was there at the check, and something is now: it stays.
                throw error.code == EEXIST && placement.replacing == nil ? .changed(path) : .failed(error)
            }
        } catch {
            discard()
            throw error
        }
        self.file = nil
        try? placement.held?.close()  // the replaced file: its space is freed now, not when this object goes
        if let directory = try? FileDescriptor(in: placement.folder, opening: ".", flags: O_RDONLY | O_DIRECTORY) {
            try? directory.sync()
        }
    }

    /// Whether the target's name in its folder, and `path` through its links, still lead to the file looked at,
    /// or still to nothing.
    private func checkUnchanged(_ placement: Placement) throws(AtomicFileError) {
        let atName: stat?
        do throws(Errno) { atName = try placement.folder.entryStatus(placement.name) } catch { throw .failed(error) }
        var followed = stat()
        let throughPath: FileIdentity?
        if stat(path, &followed) == 0 {
            throughPath = FileIdentity(followed)
        } else if errno == ENOENT {
            throughPath = nil
        } else {
            throw .failed(.current)
        }
        guard atName.map(FileIdentity.init) == placement.replacing, throughPath == placement.replacing,
            atName.map({ $0.st_mode & S_IFMT == S_IFREG }) != false
        else {
            throw .changed(path)
        }
    }

    /// Closes and removes the temporary file; the target is untouched. Does nothing once committed or discarded.
    package func discard() {
        guard let file else { return }
        try? file.close()
        self.file = nil
        if let placement { placement.folder.removeEntry(placement.temporaryName) }
    }

    /// Writes `bytes` to `path` whole.
    package static func write(_ bytes: [UInt8], to path: String, permissions: mode_t = 0o666) throws(AtomicFileError) {
        let file = try AtomicFile(replacing: path, permissions: permissions)
        do throws(Errno) {
            try bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try file.write(raw) } }.get()
        } catch {
            throw .failed(error)
        }
        try file.commit()
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
