import Glibc

/// A system call's failure: the `errno` it left. Callers turn it into their own typed error, with their path.
package struct Errno: Error, Equatable, Sendable, CustomStringConvertible {
    package let code: Int32

    package init(_ code: Int32) { self.code = code }

    /// The `errno` the last failed call left.
    package static var current: Errno { Errno(errno) }

    package var description: String { String(cString: strerror(code)) }
}

/// Which file a node is, whatever its names: its device and inode.
package struct FileIdentity: Hashable, Sendable {
    package var device: UInt64
    package var inode: UInt64
}

extension FileIdentity {
    package init(_ status: stat) { self.init(device: UInt64(status.st_dev), inode: UInt64(status.st_ino)) }
}

/// An open file descriptor, closed exactly once: by `close()`, by `release()` handing it to C code that closes it,
/// or by `deinit`. C code that may close a descriptor it was lent (libsndfile does, when an open fails) gets a
/// `duplicate()` of its own instead. Every call retries on EINTR and fails with a typed `Errno`.
///
/// Owned by one thread at a time.
package final class FileDescriptor {
    /// -1 once closed or released.
    private var raw: Int32

    /// `O_PATH` (Linux's value; Swift's Glibc module, built without _GNU_SOURCE, leaves it out): a descriptor that
    /// names a node without opening it. No device is opened, no FIFO waited on and no terminal touched; `fstat` and
    /// the `*at` calls work on it, reading and writing do not.
    package static let pathOnly: Int32 = 0o1000_0000

    /// Opens `path` with `flags` and `permissions` for a file `O_CREAT` makes (the umask applies). `O_CLOEXEC` and
    /// `O_NOCTTY` are always added: no descriptor leaks into a program started later, and a terminal given as a file
    /// never becomes the process's controlling terminal (whose hangup would end it).
    package init(opening path: String, flags: Int32, permissions: mode_t = 0o644) throws(Errno) {
        // A Swift string with a NUL in it names no file; C would see only its first part.
        guard !path.utf8.contains(0) else { throw Errno(ENOENT) }
        raw = try path.withCString { Self.open(AT_FDCWD, $0, flags, permissions) }.get()
    }

    /// Opens a path given as raw bytes (Linux file names need not be UTF-8).
    package init(opening path: [UInt8], flags: Int32, permissions: mode_t = 0o644) throws(Errno) {
        guard !path.isEmpty, !path.contains(0) else { throw Errno(ENOENT) }
        raw = try (path + [0]).withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { Self.open(AT_FDCWD, $0.baseAddress!, flags, permissions) }
        }.get()
    }

    /// Opens `name` inside the folder `folder` is open on (`openat`): whatever happens to the folder's path
    /// meanwhile, the name is looked up in that folder.
    package init(in folder: FileDescriptor, opening name: String, flags: Int32, permissions: mode_t = 0o644)
        throws(Errno)
    {
        guard !name.isEmpty, !name.utf8.contains(0) else { throw Errno(ENOENT) }
        raw = try name.withCString { Self.open(folder.raw, $0, flags, permissions) }.get()
    }

    /// Takes ownership of a descriptor another system call made (`inotify_init1`, `pipe2`).
    package init(adopting fd: Int32) { raw = fd }

    /// The descriptor, or the errno taken right after the call (before anything else can change it).
    private static func open(
        _ folder: Int32, _ path: UnsafePointer<CChar>, _ flags: Int32, _ permissions: mode_t
    ) -> Result<Int32, Errno> {
        while true {
            let fd = openat(folder, path, flags | O_CLOEXEC | O_NOCTTY, permissions)
            if fd >= 0 { return .success(fd) }
            if errno != EINTR { return .failure(.current) }
        }
    }

    /// Opens a regular file for reading, with its size. Non-blocking, so a FIFO fails at the regular-file check
    /// instead of waiting for a writer; a directory is EISDIR, anything else that is not a regular file EINVAL.
    package static func openRegularFile(_ path: String) throws(Errno) -> (file: FileDescriptor, size: Int64) {
        try regular(FileDescriptor(opening: path, flags: O_RDONLY | O_NONBLOCK))
    }

    /// `openRegularFile` for a path given as raw bytes.
    package static func openRegularFile(_ path: [UInt8]) throws(Errno) -> (file: FileDescriptor, size: Int64) {
        try regular(FileDescriptor(opening: path, flags: O_RDONLY | O_NONBLOCK))
    }

    private static func regular(_ file: FileDescriptor) throws(Errno) -> (file: FileDescriptor, size: Int64) {
        let status = try file.status()
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFREG else { throw Errno(kind == S_IFDIR ? EISDIR : EINVAL) }
        return (file, Int64(status.st_size))
    }

    deinit { if raw >= 0 { _ = Glibc.close(raw) } }

    /// The descriptor, for a C library that reads through it but leaves closing to its owner (`mpg123_open_fd`).
    /// -1 once closed.
    package var descriptor: Int32 { raw }

    /// A second descriptor for the same open file (close-on-exec, sharing its offset), with an owner of its own: for
    /// a C library that closes the descriptor it is given, whether it succeeds or fails (`sf_open_fd`). Each side
    /// then closes only its own number, so neither can close a number the other's close freed and another thread
    /// opened since.
    package func duplicate() throws(Errno) -> FileDescriptor {
        let copy = fcntl(raw, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw .current }
        return FileDescriptor(adopting: copy)
    }

    /// Hands the descriptor to code that will close it (`fdopen`); this object no longer does.
    package func release() -> Int32 {
        defer { raw = -1 }
        return raw
    }

    /// Closes the descriptor; later calls do nothing. EINTR is not retried: on Linux the descriptor is gone
    /// either way, and a second close could close another thread's newly opened file.
    package func close() throws(Errno) {
        guard raw >= 0 else { return }
        let fd = raw
        raw = -1
        guard Glibc.close(fd) == 0 || errno == EINTR else { throw .current }
    }

    package func status() throws(Errno) -> stat {
        var status = stat()
        guard fstat(raw, &status) == 0 else { throw .current }
        return status
    }

    // MARK: Names in a folder (this descriptor is open on the folder)

    /// What `name` in this folder is, its symbolic link not followed; nil when there is nothing by that name.
    package func entryStatus(_ name: String) throws(Errno) -> stat? {
        guard !name.utf8.contains(0) else { throw Errno(ENOENT) }
        var status = stat()
        guard fstatat(raw, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { return nil }
            throw .current
        }
        return status
    }

    /// Renames `name` to `newName` in this folder. With `replacing` false, fails with EEXIST when something is
    /// already at `newName`, in the same step (`RENAME_NOREPLACE`); a file system that cannot promise that gets a
    /// plain rename, the caller having checked just before.
    package func renameEntry(_ name: String, to newName: String, replacing: Bool) throws(Errno) {
        guard !name.utf8.contains(0), !newName.utf8.contains(0) else { throw Errno(ENOENT) }
        if !replacing, let renameat2 = Self.renameat2 {
            let noReplace: UInt32 = 1  // RENAME_NOREPLACE
            if renameat2(raw, name, raw, newName, noReplace) == 0 { return }
            guard errno == EINVAL || errno == ENOSYS else { throw .current }
        }
        guard renameat(raw, name, raw, newName) == 0 else { throw .current }
    }

    /// Removes the file `name` from this folder; what it cannot remove is left.
    package func removeEntry(_ name: String) {
        guard !name.utf8.contains(0) else { return }
        _ = unlinkat(raw, name, 0)
    }

    /// Sets the file's permission bits, the umask not applied.
    package func setPermissions(_ mode: mode_t) throws(Errno) {
        guard fchmod(raw, mode) == 0 else { throw .current }
    }

    /// glibc's `renameat2` (2.28), which Swift's Glibc module leaves out; nil where the C library lacks it.
    private static let renameat2:
        (@convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32)? = {
            guard let address = try? SharedLibrary("libc.so.6").address(of: "renameat2") else { return nil }
            return unsafeBitCast(
                address,
                to: (@convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32).self)
        }()

    /// One `read` of up to `count` bytes: what the file had, 0 at its end.
    package func read(into destination: UnsafeMutableRawPointer, count: Int) throws(Errno) -> Int {
        while true {
            let got = Glibc.read(raw, destination, count)
            if got >= 0 { return got }
            if errno != EINTR { throw .current }
        }
    }

    /// One `pread` of up to `count` bytes at `offset`: what the file had there, 0 at its end.
    package func readSome(into destination: UnsafeMutableRawPointer, count: Int, at offset: Int64) throws(Errno) -> Int
    {
        while true {
            let got = pread(raw, destination, count, off_t(offset))
            if got >= 0 { return got }
            if errno != EINTR { throw .current }
        }
    }

    /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
    package func read(into destination: UnsafeMutableRawPointer, count: Int, at offset: Int64) throws(Errno) -> Int {
        var done = 0
        while done < count {
            let got = pread(raw, destination + done, count - done, off_t(offset + Int64(done)))
            if got < 0 {
                if errno == EINTR { continue }
                throw .current
            }
            if got == 0 { break }
            done += got
        }
        return done
    }

    /// Up to `count` bytes from the current position (fewer only at the end of the file).
    package func readBytes(_ count: Int) throws(Errno) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: max(count, 0))
        var done = 0
        while done < bytes.count {
            // Array's closures rethrow untyped: the result carries the typed error out.
            let got = try bytes.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) in try read(into: raw.baseAddress! + done, count: raw.count - done) }
            }.get()
            if got == 0 { break }
            done += got
        }
        return Array(bytes.prefix(done))
    }

    /// Everything from the current position to the end, read in steps (a file in /proc reports a size of 0, which
    /// a reader of that size would believe); at most `limit` bytes.
    package func readToEnd(limit: Int = 64 << 20) throws(Errno) -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count < limit {
            let chunk = try readBytes(min(65_536, limit - bytes.count))
            if chunk.isEmpty { break }
            bytes += chunk
        }
        return bytes
    }

    /// Writes all of `bytes` at the current position. A write that makes no progress counts as a full disk. A pipe,
    /// FIFO or socket whose reader has gone is EPIPE, never SIGPIPE (see `withBrokenPipeHeld`).
    package func write(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
        try Self.withBrokenPipeHeld { () throws(Errno) in
            var done = 0
            while done < bytes.count {
                let n = Glibc.write(raw, bytes.baseAddress! + done, bytes.count - done)
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { throw n == 0 ? Errno(ENOSPC) : .current }
                done += n
            }
        }
    }

    /// Runs `body` with SIGPIPE held back from the calling thread, so that a write in it to a pipe, FIFO or socket
    /// whose reader has gone fails with EPIPE instead of ending the process.
    ///
    /// The engine is a library: the signal's disposition belongs to the game, and is never changed (a game that
    /// keeps SIGPIPE's default still dies of its own writes to a dead pipe, and of no write of the engine's). Only
    /// this thread's signal mask changes, for the length of `body`. A SIGPIPE that `body` raised is taken back before
    /// the mask is restored, so it is never delivered late; one that was pending before is left for its owner.
    package static func withBrokenPipeHeld<Value, Failure: Error>(
        _ body: () throws(Failure) -> Value
    ) throws(Failure) -> Value {
        var brokenPipe = sigset_t()
        sigemptyset(&brokenPipe)
        sigaddset(&brokenPipe, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &brokenPipe, &previous)
        let pendingBefore = isPending(SIGPIPE)
        defer {
            if !pendingBefore && isPending(SIGPIPE) {
                var now = timespec(tv_sec: 0, tv_nsec: 0)
                while sigtimedwait(&brokenPipe, nil, &now) == SIGPIPE {}
            }
            pthread_sigmask(SIG_SETMASK, &previous, nil)
        }
        return try body()
    }

    /// Whether `signal` waits, blocked, for this thread or the process.
    private static func isPending(_ signal: Int32) -> Bool {
        var pending = sigset_t()
        return sigpending(&pending) == 0 && sigismember(&pending, signal) == 1
    }

    /// Writes all of `bytes` at `offset`, leaving the current position alone.
    package func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(Errno) {
        var done = 0
        while done < bytes.count {
            let n = pwrite(raw, bytes.baseAddress! + done, bytes.count - done, off_t(offset + Int64(done)))
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw n == 0 ? Errno(EIO) : .current }
            done += n
        }
    }

    /// Puts a read-only `/dev/null` on each of descriptors 0, 1 and 2 that is closed. A write to stdout or stderr then
    /// fails (EBADF) as it would on the closed one, but no file opened later can take the number and receive the
    /// program's output instead. Returns the streams that were closed: `/dev/stdout` leads to the stand-in, which a
    /// program that writes there by name must not take for a reader.
    @discardableResult
    package static func holdClosedStandardStreams() -> Set<Int32> {
        var held: Set<Int32> = []
        for stream: Int32 in 0...2 where fcntl(stream, F_GETFD) == -1 && errno == EBADF {
            held.insert(stream)
            let standIn = Glibc.open("/dev/null", O_RDONLY)
            if standIn >= 0 && standIn != stream {
                dup2(standIn, stream)
                Glibc.close(standIn)
            }
        }
        return held
    }

    /// Clears `O_NONBLOCK`, so that writes wait for room instead of failing with EAGAIN.
    package func setBlocking() throws(Errno) {
        let flags = fcntl(raw, F_GETFL)
        guard flags >= 0, fcntl(raw, F_SETFL, flags & ~O_NONBLOCK) == 0 else { throw .current }
    }

    /// Flushes the file's data and size to the disk.
    package func sync() throws(Errno) {
        while fsync(raw) != 0 {
            if errno != EINTR { throw .current }
        }
    }
}
