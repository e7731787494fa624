import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceTestSupport

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct FileDescriptorTests {
    @Test func aMissingFileIsENOENT() throws {
        try withScratchFolder("platform") { folder in
            #expect(throws: Errno(ENOENT)) { try FileDescriptor(opening: folder + "/missing", flags: O_RDONLY) }
            #expect(throws: Errno(ENOENT)) { try FileDescriptor.openRegularFile(folder + "/missing") }
            #expect(throws: Errno(ENOENT)) {
                try FileDescriptor(opening: Array((folder + "/missing").utf8), flags: O_RDONLY)
            }
        }
    }

    @Test func aDirectoryIsEISDIR() throws {
        try withScratchFolder("platform") { folder in
            #expect(throws: Errno(EISDIR)) { try FileDescriptor.openRegularFile(folder) }
            // Opened plainly, a directory fails at the first read.
            let directory = try FileDescriptor(opening: folder, flags: O_RDONLY)
            #expect(throws: Errno(EISDIR)) { try directory.readBytes(4) }
        }
    }

    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() throws {
        try withScratchFolder("platform") { folder in
            let path = folder + "/fifo"
            #expect(mkfifo(path, 0o600) == 0)
            #expect(throws: Errno(EINVAL)) { try FileDescriptor.openRegularFile(path) }
        }
    }

    @Test func readsAtAnOffsetAndToTheEnd() throws {
        try withScratchFolder("platform") { folder in
            let path = folder + "/bytes"
            try Data((0..<100).map { UInt8($0) }).write(to: URL(fileURLWithPath: path))
            let (file, size) = try FileDescriptor.openRegularFile(path)
            #expect(size == 100)
            var window = [UInt8](repeating: 0, count: 10)
            let got = try window.withUnsafeMutableBytes { try file.read(into: $0.baseAddress!, count: 10, at: 95) }
            #expect(got == 5)
            #expect(Array(window.prefix(5)) == [95, 96, 97, 98, 99])
            #expect(try file.readBytes(3) == [0, 1, 2])
            #expect(try file.readBytes(1000).count == 97)
            #expect(try file.readBytes(10).isEmpty)
        }
    }

    /// Proved without looking at a freed number, which parallel tests may take at any moment: the close is seen from
    /// the other end of a socket pair (end of file), and the second close is tried while this test holds the freed
    /// number again, taken back near the top of the table, where no `open` (lowest free number first) reaches.
    @Test func closesExactlyOnce() throws {
        var ends: [Int32] = [-1, -1]
        let kind = Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue)
        try #require(socketpair(AF_UNIX, kind, 0, &ends) == 0)
        let peer = FileDescriptor(adopting: ends[1])
        let top = Int32(clamping: sysconf(Int32(_SC_OPEN_MAX))) - 64
        let file = FileDescriptor(adopting: fcntl(ends[0], F_DUPFD_CLOEXEC, top))
        close(ends[0])
        let fd = file.descriptor
        try #require(fd >= top)
        try file.close()
        #expect(file.descriptor == -1)
        // End of file: the wrapped end's only descriptor is closed. A child that a parallel test is starting holds a
        // copy of every descriptor until its exec, so on a loaded machine the end can come a moment later (the
        // non-blocking read says EAGAIN until then).
        #expect(eventually { (try? peer.readBytes(1)) == [] })
        // A second close must not close whatever now has that number: here, this test's own copy of the peer.
        let other = FileDescriptor(adopting: fcntl(peer.descriptor, F_DUPFD_CLOEXEC, fd))
        try #require(other.descriptor == fd)
        try file.close()
        #expect(fcntl(other.descriptor, F_GETFD) != -1)
        #expect(throws: Errno(EBADF)) { try file.status() }
    }

    /// A duplicate is a second owner of the same open file: closing one leaves the other reading.
    @Test func aDuplicateHasAnOwnerOfItsOwn() throws {
        try withScratchFolder("platform") { folder in
            let path = folder + "/file"
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
            let (file, _) = try FileDescriptor.openRegularFile(path)
            let copy = try file.duplicate()
            #expect(copy.descriptor != file.descriptor)
            #expect(fcntl(copy.descriptor, F_GETFD) & FD_CLOEXEC != 0)
            try file.close()
            var byte: UInt8 = 0
            #expect(try copy.read(into: &byte, count: 1, at: 2) == 1 && byte == 3)
        }
    }

    @Test func aNameWithANulNamesNoFile() {
        #expect(throws: Errno(ENOENT)) { try FileDescriptor(opening: "/etc\0/passwd", flags: O_RDONLY) }
        #expect(throws: Errno(ENOENT)) { try FileDescriptor(opening: [UInt8](), flags: O_RDONLY) }
    }
}
