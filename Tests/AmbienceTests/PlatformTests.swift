import Foundation
import Glibc
import Testing
@testable import Ambience

/// A fresh folder under the temporary directory, removed by `body`'s end.
private func withScratchFolder<R>(_ body: (String) throws -> R) throws -> R {
    let folder = NSTemporaryDirectory() + "ambience-platform-\(getpid())-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    return try body(folder)
}

@Suite(.timeLimit(.minutes(1))) struct FileDescriptorTests {
    @Test func aMissingFileIsENOENT() throws {
        try withScratchFolder { folder in
            #expect(throws: Errno(ENOENT)) { try FileDescriptor(opening: folder + "/missing", flags: O_RDONLY) }
            #expect(throws: Errno(ENOENT)) { try FileDescriptor.openRegularFile(folder + "/missing") }
            #expect(throws: Errno(ENOENT)) { try FileDescriptor(opening: Array((folder + "/missing").utf8), flags: O_RDONLY) }
        }
    }

    @Test func aDirectoryIsEISDIR() throws {
        try withScratchFolder { folder in
            #expect(throws: Errno(EISDIR)) { try FileDescriptor.openRegularFile(folder) }
            // Opened plainly, a directory fails at the first read.
            let directory = try FileDescriptor(opening: folder, flags: O_RDONLY)
            #expect(throws: Errno(EISDIR)) { try directory.readBytes(4) }
        }
    }

    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() throws {
        try withScratchFolder { folder in
            let path = folder + "/fifo"
            #expect(mkfifo(path, 0o600) == 0)
            #expect(throws: Errno(EINVAL)) { try FileDescriptor.openRegularFile(path) }
        }
    }

    @Test func readsAtAnOffsetAndToTheEnd() throws {
        try withScratchFolder { folder in
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

    @Test func closesExactlyOnce() throws {
        try withScratchFolder { folder in
            let path = folder + "/file"
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
            let file = try FileDescriptor(opening: path, flags: O_RDONLY)
            let fd = file.descriptor
            #expect(fd >= 0)
            try file.close()
            #expect(file.descriptor == -1)
            #expect(fcntl(fd, F_GETFD) == -1 && errno == EBADF)
            // A second close must not close whatever now has that number.
            let other = try FileDescriptor(opening: path, flags: O_RDONLY)
            try file.close()
            #expect(fcntl(other.descriptor, F_GETFD) != -1)
            #expect(throws: Errno(EBADF)) { try file.status() }
        }
    }

    @Test func aNameWithANulNamesNoFile() {
        #expect(throws: Errno(ENOENT)) { try FileDescriptor(opening: "/etc\0/passwd", flags: O_RDONLY) }
        #expect(throws: Errno(ENOENT)) { try FileDescriptor(opening: [UInt8](), flags: O_RDONLY) }
    }
}
