import Glibc

/// A system call's failure: the `errno` it left. Callers turn it into their own typed error, with their path.
package struct Errno: Error, Equatable, Sendable, CustomStringConvertible {
    package let code: Int32

    package init(_ code: Int32) { self.code = code }

    /// The `errno` the last failed call left.
    package static var current: Errno { Errno(errno) }

    package var description: String { String(cString: strerror(code)) }
}

/// An open file descriptor, closed exactly once: by `close()`, by `release()` handing it to C code that closes it,
/// or by `deinit`. C code that may close a descriptor it was lent (libsndfile does, when an open fails) gets a
/// `duplicate()` of its own instead. Every call retries on EINTR and fails with a typed `Errno`.
///
/// Owned by one thread at a time.
package final class FileDescriptor {
    /// -1 once closed or released.
    private var raw: Int32

    /// Opens `path` with `flags` (`O_CLOEXEC` is always added) and `permissions` for a file `O_CREAT` makes.
    package init(opening path: String, flags: Int32, permissions: mode_t = 0o644) throws(Errno) {
        // A Swift string with a NUL in it names no file; C would see only its first part.
        guard !path.utf8.contains(0) else { throw Errno(ENOENT) }
        raw = try path.withCString { Self.open($0, flags, permissions) }.get()
    }

    /// Opens a path given as raw bytes (Linux file names need not be UTF-8).
    package init(opening path: [UInt8], flags: Int32, permissions: mode_t = 0o644) throws(Errno) {
        guard !path.isEmpty, !path.contains(0) else { throw Errno(ENOENT) }
        raw = try (path + [0]).withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { Self.open($0.baseAddress!, flags, permissions) }
        }.get()
    }

    /// Takes ownership of a descriptor another system call made (`inotify_init1`, `pipe2`).
    package init(adopting fd: Int32) { raw = fd }

    /// The descriptor, or the errno taken right after the call (before anything else can change it).
    private static func open(_ path: UnsafePointer<CChar>, _ flags: Int32, _ permissions: mode_t) -> Result<
        Int32, Errno
    > {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, permissions)
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

    /// One `read` of up to `count` bytes: what the file had, 0 at its end.
    package func read(into destination: UnsafeMutableRawPointer, count: Int) throws(Errno) -> Int {
        while true {
            let got = Glibc.read(raw, destination, count)
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

    /// Writes all of `bytes` at the current position. A write that makes no progress counts as a full disk.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(raw, bytes.baseAddress! + done, bytes.count - done)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw n == 0 ? Errno(ENOSPC) : .current }
            done += n
        }
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
    /// program's output instead.
    package static func holdClosedStandardStreams() {
        for stream: Int32 in 0...2 where fcntl(stream, F_GETFD) == -1 && errno == EBADF {
            let held = Glibc.open("/dev/null", O_RDONLY)
            if held >= 0 && held != stream {
                dup2(held, stream)
                Glibc.close(held)
            }
        }
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
