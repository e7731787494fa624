import Glibc

/// What `stat` (or `lstat`) says of a path, as a value: its kind, size, identity and modification time.
package struct FileStatus: Sendable, Equatable {
    /// The node's type (`st_mode & S_IFMT`).
    package enum Kind: Sendable, Equatable {
        case regular, directory, symbolicLink, socket, fifo, characterDevice, blockDevice, other
    }

    package let kind: Kind
    package let size: Int64
    package let identity: FileIdentity
    /// Nanoseconds since the epoch, saturating at `Int64`'s ends: a file system may store any 64-bit second count (a
    /// file from a card whose clock said the year 2300), and callers only compare it.
    package let modified: Int64

    /// The status of `path`; with `followingLinks` false, of a symbolic link itself. A path with a NUL in it names
    /// no file (ENOENT): C would see only its first part.
    package init(path: String, followingLinks: Bool = true) throws(Errno) {
        guard !path.utf8.contains(0) else { throw Errno(ENOENT) }
        self = try path.withCString { Self.read($0, followingLinks) }.get()
    }

    /// The status of a path given as raw bytes (Linux file names need not be UTF-8).
    package init(rawPath: [UInt8], followingLinks: Bool = true) throws(Errno) {
        guard !rawPath.isEmpty, !rawPath.contains(0) else { throw Errno(ENOENT) }
        self = try (rawPath + [0]).withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { Self.read($0.baseAddress!, followingLinks) }
        }.get()
    }

    package init(_ status: stat) {
        switch status.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFSOCK: kind = .socket
        case S_IFIFO: kind = .fifo
        case S_IFCHR: kind = .characterDevice
        case S_IFBLK: kind = .blockDevice
        default: kind = .other
        }
        size = Int64(status.st_size)
        identity = FileIdentity(status)
        modified = Self.nanoseconds(status.st_mtim)
    }

    package var isDirectory: Bool { kind == .directory }
    package var isRegularFile: Bool { kind == .regular }

    /// The status, or the errno taken right after the call.
    private static func read(_ path: UnsafePointer<CChar>, _ followingLinks: Bool) -> Result<FileStatus, Errno> {
        var status = stat()
        guard (followingLinks ? stat(path, &status) : lstat(path, &status)) == 0 else { return .failure(.current) }
        return .success(FileStatus(status))
    }

    private static func nanoseconds(_ time: timespec) -> Int64 {
        let (seconds, overflow) = Int64(time.tv_sec).multipliedReportingOverflow(by: 1_000_000_000)
        let (total, overflow2) = seconds.addingReportingOverflow(Int64(time.tv_nsec))
        guard overflow || overflow2 else { return total }
        return time.tv_sec < 0 ? .min : .max
    }
}
