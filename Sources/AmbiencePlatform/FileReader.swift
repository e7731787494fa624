import Glibc

/// A file read from a position of its own, with positioned reads (`pread`) through its `FileDescriptor`: what a C
/// library that reads through callbacks (read, seek, tell, end of file) gets instead of a `FILE*`. Two readers may
/// share one descriptor; neither moves the other's position.
///
/// Owned by one thread at a time.
package final class FileReader {
    private let file: FileDescriptor
    /// The file's size when it was opened: where the end is for `seek(to:from:)` with `SEEK_END` and `isAtEnd`.
    package let size: Int64
    /// Where the next read starts; may be past the end (a read there gets nothing).
    package private(set) var position: Int64 = 0

    package init(_ file: FileDescriptor, size: Int64) {
        self.file = file
        self.size = size
    }

    /// Reads up to `count` bytes at the position (one `pread`, as `fread` would make one `read`: fewer may come
    /// before the end) and moves past them; 0 only at the end of the file. On failure `errno` holds the error as
    /// well: libvorbisfile tells a failed read from the end only by `errno` after its callback returned 0.
    package func read(into destination: UnsafeMutableRawPointer, count: Int) throws(Errno) -> Int {
        guard count > 0 else { return 0 }
        do throws(Errno) {
            let got = try file.readSome(into: destination, count: count, at: position)
            position += Int64(got)
            return got
        } catch {
            errno = error.code
            throw error
        }
    }

    /// Moves the position to `offset` from the start (`SEEK_SET`), the position (`SEEK_CUR`) or the end
    /// (`SEEK_END`). False, and the position unchanged, for any other `whence` or a place before the start.
    package func seek(to offset: Int64, from whence: Int32) -> Bool {
        let base: Int64
        switch whence {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = position
        case SEEK_END: base = size
        default: return false
        }
        let (target, overflow) = base.addingReportingOverflow(offset)
        guard !overflow, target >= 0 else { return false }
        position = target
        return true
    }

    /// Whether the position is at or past the end of the file.
    package var isAtEnd: Bool { position >= size }
}
