import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceDecoding
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// What `ambience render --out` may do to the node it is pointed at (issue 32, class 1): a regular file is replaced
/// whole, through its links; a character device or a FIFO is written straight through and stays what it was; a
/// folder, a socket or a block device is refused by name. Real nodes, the built command as a child process.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct OutputTargetTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    /// `render` of `seconds` of silence at 48 kHz: a 58-byte float WAV header and 8 bytes a frame.
    func render(to out: String, seconds: Double = 0.1) throws -> ToolRunner.Result {
        try ToolRunner.run(["render", "--out", out, "--seconds", "\(seconds)"], timeout: 60)
    }
    static let bytesFor100ms = 58 + 4_800 * 8

    func node(_ path: String) -> stat? {
        var status = stat()
        return lstat(path, &status) == 0 ? status : nil
    }
    func kind(_ path: String) -> mode_t? { node(path).map { $0.st_mode & S_IFMT } }

    @Test func aCharacterDeviceIsWrittenThroughAndNeverReplaced() throws {
        // A private null device first (root can make one): the old code replaced it, harmlessly. Only once it is
        // known to be kept does the test point the command at the system's own /dev/null.
        let privateNull = fixtures.path("null")
        let system = try #require(node("/dev/null"))
        if mknod(privateNull, S_IFCHR | 0o666, system.st_rdev) == 0 {
            let before = try #require(node(privateNull))
            let result = try render(to: privateNull)
            #expect(result.status == 0, "\(result.stderr)")
            let after = try #require(node(privateNull))
            #expect(after.st_mode & S_IFMT == S_IFCHR)
            #expect(after.st_rdev == before.st_rdev && after.st_ino == before.st_ino)
            try #require(after.st_mode & S_IFMT == S_IFCHR, "a device node was replaced; /dev/null is not tried")
        }
        let before = try #require(node("/dev/null"))
        let result = try render(to: "/dev/null")
        #expect(result.status == 0, "\(result.stderr)")
        let after = try #require(node("/dev/null"))
        #expect(after.st_mode & S_IFMT == S_IFCHR)
        #expect(after.st_rdev == before.st_rdev && after.st_ino == before.st_ino)
        #expect(try FileManager.default.contentsOfDirectory(atPath: "/dev").filter { $0.contains(".tmp-") }.isEmpty)
    }

    @Test func aFIFOIsStreamedToItsReaderAndStaysAFIFO() throws {
        let fifo = fixtures.path("pipe.wav")
        try #require(mkfifo(fifo, 0o644) == 0)
        // The reader is there before the writer; 38 kB fit in the pipe, so the command never waits on it.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        try #require(reader >= 0)
        defer { close(reader) }
        let result = try render(to: fifo)
        #expect(result.status == 0, "\(result.stderr)")
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = read(reader, &chunk, chunk.count)
            guard n > 0 else { break }
            bytes += chunk[..<n]
        }
        #expect(bytes.count == Self.bytesFor100ms)
        #expect(bytes.starts(with: Array("RIFF".utf8)))
        // A stream's sizes cannot be patched afterwards: they say "unknown", as streaming tools write them.
        #expect(bytes.count > 8 && bytes[4..<8].allSatisfy { $0 == 0xFF })
        #expect(kind(fifo) == S_IFIFO)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixtures.directory.path) == ["pipe.wav"])
    }

    @Test func aFIFOWithoutAReaderIsRefusedAtOnce() throws {
        let fifo = fixtures.path("nobody.wav")
        try #require(mkfifo(fifo, 0o644) == 0)
        let result = try render(to: fifo)
        #expect(result.status == 1)
        #expect(!result.timedOut)
        #expect(result.stderrLines == ["ambience: \(fifo) is a FIFO that no process is reading"])
        #expect(kind(fifo) == S_IFIFO)
    }

    @Test func stdoutNamedThroughProcIsTheStreamItself() throws {
        // /proc/self/fd/1 is the pipe the runner reads: the WAV comes out there, and no report line goes into it.
        let result = try render(to: "/proc/self/fd/1")
        #expect(result.status == 0, "\(result.stderr)")
        let bytes = Array(result.stdout.utf8)
        #expect(bytes.starts(with: Array("RIFF".utf8)))
        #expect(!result.stdout.contains("rendered"))
    }

    @Test func aLinkToAFileIsKeptAndTheFileItLeadsToIsReplaced() throws {
        try FileManager.default.createDirectory(atPath: fixtures.path("real"), withIntermediateDirectories: true)
        let target = fixtures.path("real/mix.wav")
        try Data("old".utf8).write(to: URL(fileURLWithPath: target))
        let link = fixtures.path("mix.wav")
        try #require(symlink("real/mix.wav", link) == 0)
        let result = try render(to: link)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(kind(link) == S_IFLNK)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "real/mix.wav")
        #expect(try AudioFile.info(target).frames == 4_800)
        // The temporary file went beside the target, and is gone.
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixtures.path("real")) == ["mix.wav"])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: fixtures.directory.path).sorted() == ["mix.wav", "real"]
        )

        // A dangling link: the file is made where it points, and the link stays a link.
        let dangling = fixtures.path("later.wav")
        try #require(symlink("real/later.wav", dangling) == 0)
        #expect(try render(to: dangling).status == 0)
        #expect(kind(dangling) == S_IFLNK)
        #expect(kind(fixtures.path("real/later.wav")) == S_IFREG)
    }

    @Test func aLinkToADeviceWritesThroughToTheDevice() throws {
        let link = fixtures.path("null.wav")
        try #require(symlink("/dev/null", link) == 0)
        let before = try #require(node("/dev/null"))
        let result = try render(to: link)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(kind(link) == S_IFLNK)
        let after = try #require(node("/dev/null"))
        #expect(after.st_mode & S_IFMT == S_IFCHR && after.st_rdev == before.st_rdev)
    }

    @Test func aSocketIsRefusedByNameAndKept() throws {
        let socketPath = fixtures.path("s.wav")
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in socketPath.utf8.enumerated() where i < raw.count - 1 { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0)
        let result = try render(to: socketPath)
        #expect(result.status == 1)
        #expect(
            result.stderrLines == [
                "ambience: \(socketPath) is a socket; only a regular file, a character device or a FIFO is written"
            ])
        #expect(kind(socketPath) == S_IFSOCK)

        // Through a link, the message names both.
        let link = fixtures.path("link.wav")
        try #require(symlink(socketPath, link) == 0)
        let linked = try render(to: link)
        #expect(linked.status == 1)
        #expect(linked.stderr.contains("\(link) leads to \(socketPath), which is a socket"))
        #expect(kind(link) == S_IFLNK && kind(socketPath) == S_IFSOCK)
    }

    @Test func aBlockDeviceIsRefusedByNameAndKept() throws {
        // Root can make the node (the first loop device's numbers); it is never opened, only looked at.
        let node = fixtures.path("disk.wav")
        guard mknod(node, S_IFBLK | 0o600, dev_t((7 << 8) | 0)) == 0 else { return }
        let result = try render(to: node)
        #expect(result.status == 1)
        #expect(
            result.stderrLines == [
                "ambience: \(node) is a block device; only a regular file, a character device or a FIFO is written"
            ])
        #expect(kind(node) == S_IFBLK)
    }

    @Test func aFolderIsRefusedByName() throws {
        let folder = fixtures.path("album")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let result = try render(to: folder)
        #expect(result.status == 1)
        #expect(
            result.stderrLines == [
                "ambience: \(folder) is a folder; only a regular file, a character device or a FIFO is written"
            ])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }
}
