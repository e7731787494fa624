import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceTestSupport

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct FileStatusTests {
    @Test func aRegularFileHasItsKindSizeAndTime() throws {
        try withScratchFolder("file-status") { folder in
            let path = folder + "/seven"
            try Data(repeating: 1, count: 7).write(to: URL(fileURLWithPath: path))
            var times = [
                timespec(tv_sec: 1_000_000_000, tv_nsec: 5), timespec(tv_sec: 1_000_000_000, tv_nsec: 5)
            ]
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            let status = try FileStatus(path: path)
            #expect(status.kind == .regular && status.isRegularFile && !status.isDirectory)
            #expect(status.size == 7)
            #expect(status.modified == 1_000_000_000_000_000_005)
            #expect(try FileStatus(rawPath: Array(path.utf8)) == status)
        }
    }

    @Test func linksAreFollowedUnlessAskedNotTo() throws {
        try withScratchFolder("file-status") { folder in
            #expect(symlink(folder, folder + "/link") == 0)
            let followed = try FileStatus(path: folder + "/link")
            #expect(followed.isDirectory)
            #expect(followed.identity == (try FileStatus(path: folder)).identity)
            #expect(try FileStatus(path: folder + "/link", followingLinks: false).kind == .symbolicLink)
            #expect(symlink(folder + "/nowhere", folder + "/dangling") == 0)
            #expect(throws: Errno(ENOENT)) { try FileStatus(path: folder + "/dangling") }
            #expect(
                try FileStatus(rawPath: Array((folder + "/dangling").utf8), followingLinks: false).kind
                    == .symbolicLink)
        }
    }

    @Test func otherKindsAreNamed() throws {
        try withScratchFolder("file-status") { folder in
            #expect(mkfifo(folder + "/fifo", 0o600) == 0)
            #expect(try FileStatus(path: folder + "/fifo").kind == .fifo)
            #expect(try FileStatus(path: "/dev/null").kind == .characterDevice)
            let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(listener) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let socketPath = folder + "/socket"
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in socketPath.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            try #require(bound == 0)
            #expect(try FileStatus(path: socketPath).kind == .socket)
        }
    }

    @Test func missingAndImpossiblePathsFailWithTheirErrno() throws {
        try withScratchFolder("file-status") { folder in
            #expect(throws: Errno(ENOENT)) { try FileStatus(path: folder + "/missing") }
            #expect(throws: Errno(ENOENT)) { try FileStatus(path: folder + "\0/etc") }
            #expect(throws: Errno(ENOENT)) { try FileStatus(rawPath: []) }
            #expect(throws: Errno(ENOENT)) { try FileStatus(rawPath: Array(folder.utf8) + [0]) }
            try Data().write(to: URL(fileURLWithPath: folder + "/file"))
            #expect(throws: Errno(ENOTDIR)) { try FileStatus(path: folder + "/file/below") }
            #expect(throws: Errno(ENAMETOOLONG)) {
                try FileStatus(path: folder + "/" + String(repeating: "n", count: 300))
            }
        }
    }

    @Test func aNameThatIsNotUTF8IsFound() throws {
        try withScratchFolder("file-status") { folder in
            let name = Array((folder + "/caf").utf8) + [0xE9]  // Latin-1 "café"
            let file = try FileDescriptor(opening: name, flags: O_WRONLY | O_CREAT)
            try file.close()
            #expect(try FileStatus(rawPath: name).isRegularFile)
        }
    }
}
