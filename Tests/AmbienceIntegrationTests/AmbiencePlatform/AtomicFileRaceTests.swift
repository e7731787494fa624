import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// What `AtomicFile` does when the node it checked is swapped for another between the check and the rename
/// (issue 32, class 1): it refuses (`AtomicFileError.changed`), removes its temporary file and leaves whatever is
/// there now alone. Also the temporary file's mode, and a terminal given where a file is expected.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct AtomicFileRaceTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    func node(_ path: String) -> stat? {
        var status = stat()
        return lstat(path, &status) == 0 ? status : nil
    }
    func kind(_ path: String) -> mode_t? { node(path).map { $0.st_mode & S_IFMT } }
    func contents(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }
    var leftovers: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: fixtures.directory.path)) ?? []).filter {
            $0.contains(".tmp-")
        }
    }

    /// Opens `target` for replacing, writes "new", lets `swap` change what is at the path, then commits: the error
    /// the commit threw, or nil.
    func commit(_ target: String, after swap: () throws -> Void) throws -> (any Error)? {
        let file = try AtomicFile(replacing: target)
        try Array("new".utf8).withUnsafeBytes { try file.write($0) }
        try swap()
        do {
            try file.commit()
            return nil
        } catch {
            return error
        }
    }

    func isChanged(_ error: (any Error)?, _ path: String) -> Bool { (error as? AtomicFileError) == .changed(path) }

    /// What the swap may put at the path: each is left as it is.
    enum Swap: String, CaseIterable { case fifo, symlinkToAFile, anotherFile, characterDevice }

    /// Puts `swap` at `path`; `reusing`: the inode number of the file that was there.
    func put(_ swap: Swap, at path: String, reusing: ino_t? = nil) throws {
        switch swap {
        case .fifo: try #require(mkfifo(path, 0o644) == 0)
        case .symlinkToAFile: try #require(symlink(fixtures.path("victim.txt"), path) == 0)
        case .anotherFile:
            // With the inode number of the file that was there, when the file system gives it out again (ext4 does
            // within a few files, unless the old file is still held open): device and inode alone would then take
            // the newcomer for the file that was looked at.
            var candidates: [String] = []
            defer { for candidate in candidates { unlink(candidate) } }
            for n in 0..<(reusing == nil ? 0 : 1000) {
                let candidate = fixtures.path("candidate-\(n)")
                candidates.append(candidate)
                try Data("theirs".utf8).write(to: URL(fileURLWithPath: candidate))
                if node(candidate)?.st_ino == reusing {
                    try #require(rename(candidate, path) == 0)
                    return
                }
            }
            try Data("theirs".utf8).write(to: URL(fileURLWithPath: path))
        case .characterDevice:
            let null = try #require(node("/dev/null"))
            try #require(mknod(path, S_IFCHR | 0o666, null.st_rdev) == 0, "mknod needs root")
        }
    }

    func expectLeftAlone(_ swap: Swap, at path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        switch swap {
        case .fifo: #expect(kind(path) == S_IFIFO, sourceLocation: sourceLocation)
        case .symlinkToAFile:
            #expect(kind(path) == S_IFLNK, sourceLocation: sourceLocation)
            #expect(contents(fixtures.path("victim.txt")) == "keep", sourceLocation: sourceLocation)
        case .anotherFile: #expect(contents(path) == "theirs", sourceLocation: sourceLocation)
        case .characterDevice: #expect(kind(path) == S_IFCHR, sourceLocation: sourceLocation)
        }
        #expect(leftovers.isEmpty, "\(leftovers)", sourceLocation: sourceLocation)
    }

    @Test(arguments: Swap.allCases)
    func aFileSwappedBeforeTheRenameIsLeftAlone(swap: Swap) throws {
        try Data("keep".utf8).write(to: URL(fileURLWithPath: fixtures.path("victim.txt")))
        let target = fixtures.path("mix.wav")
        try Data("old".utf8).write(to: URL(fileURLWithPath: target))
        let error = try commit(target) {
            let inode = node(target)?.st_ino
            try #require(unlink(target) == 0)
            try put(swap, at: target, reusing: inode)
        }
        #expect(isChanged(error, target), "\(String(describing: error))")
        expectLeftAlone(swap, at: target)
    }

    @Test(arguments: Swap.allCases)
    func somethingThatAppearsWhereNothingWasIsLeftAlone(swap: Swap) throws {
        try Data("keep".utf8).write(to: URL(fileURLWithPath: fixtures.path("victim.txt")))
        let target = fixtures.path("mix.wav")
        let error = try commit(target) { try put(swap, at: target) }
        #expect(isChanged(error, target), "\(String(describing: error))")
        expectLeftAlone(swap, at: target)
    }

    @Test func aLinkRetargetedBeforeTheRenameIsLeftAlone() throws {
        // The file the link led to when it was checked is not what the path names any more.
        try Data("keep".utf8).write(to: URL(fileURLWithPath: fixtures.path("victim.txt")))
        try Data("old".utf8).write(to: URL(fileURLWithPath: fixtures.path("mine.wav")))
        let link = fixtures.path("mix.wav")
        try #require(symlink("mine.wav", link) == 0)
        let error = try commit(link) {
            try #require(unlink(link) == 0)
            try #require(symlink("victim.txt", link) == 0)
        }
        #expect(isChanged(error, link), "\(String(describing: error))")
        #expect(contents(fixtures.path("victim.txt")) == "keep")
        #expect(contents(fixtures.path("mine.wav")) == "old")
        #expect(leftovers.isEmpty)
    }

    @Test func nothingSwappedIsReplacedAsBefore() throws {
        let target = fixtures.path("mix.wav")
        try Data("old".utf8).write(to: URL(fileURLWithPath: target))
        #expect(try commit(target) {} == nil)
        #expect(contents(target) == "new")
        #expect(leftovers.isEmpty)
    }

    // MARK: The temporary file's mode

    @Test func aReplacedFileKeepsItsMode() throws {
        let target = fixtures.path("private.wav")
        try Data("old".utf8).write(to: URL(fileURLWithPath: target))
        try #require(chmod(target, 0o600) == 0)
        #expect(try commit(target) {} == nil)
        #expect(try #require(node(target)).st_mode & 0o7777 == 0o600)
        try #require(chmod(target, 0o664) == 0)
        #expect(try commit(target) {} == nil)
        #expect(try #require(node(target)).st_mode & 0o7777 == 0o664)
    }

    @Test func aNewFileHasTheModeTheUmaskLeaves() throws {
        // `ambience render` with umask 002 (a shared group's folder): 0666 & ~002.
        let out = fixtures.path("shared.wav")
        let run = try ChildProcess.run(
            [
                "/bin/sh", "-c", "umask 002; exec \"$0\" render --out \"$1\" --seconds 0.1", ToolRunner.executable,
                out
            ], timeout: 60)
        #expect(run.status == 0, "\(String(decoding: run.stderr, as: UTF8.self))")
        #expect(try #require(node(out)).st_mode & 0o7777 == 0o664)
    }

    // MARK: A terminal as the output

    @Test func aTerminalGivenAsAFileDoesNotBecomeTheControllingTerminal() throws {
        // A session leader without a controlling terminal (a daemon, a game started as a service) that opens a
        // terminal for reading without O_NOCTTY makes it its controlling terminal, and that terminal's hangup then
        // kills it. Python makes a pseudo-terminal and such a leader: `info` of the terminal, with a stderr pipe that
        // is already full, so that the command stops at its error line, after the open, while the test looks.
        let leader = """
            import os, sys
            master, slave = os.openpty()
            name = os.ttyname(slave)
            os.close(slave)
            r, w = os.pipe()
            os.set_blocking(w, False)
            try:
                while True:
                    os.write(w, b"x")
            except BlockingIOError:
                pass
            os.set_blocking(w, True)
            pid = os.fork()
            if pid == 0:
                os.setsid()
                os.dup2(w, 2)
                os.execv(sys.argv[1], sys.argv[1:] + [name])
            os.close(w)
            print(pid, name, flush=True)
            sys.stdin.readline()
            while os.read(r, 65536):
                pass
            print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
            """
        let wrapper = try ChildProcess(
            ["/usr/bin/python3", "-c", leader, ToolRunner.executable, "info"], stdin: .pipe, stdout: .pipe)
        defer {
            wrapper.kill()
            close(wrapper.input!)
            close(wrapper.output!)
        }
        let lines = PolledLineReader(wrapper.output!)
        let started = try #require(lines.next(within: 20)).split(separator: " ")
        let pid = try #require(started.first.flatMap { pid_t($0) })
        defer { Glibc.kill(pid, SIGKILL) }
        // Blocked in write(2, …): the open is behind it.
        let blocked = eventually(within: 20) {
            (try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8))?.hasPrefix("1 0x2 ") == true
        }
        try #require(blocked)
        // /proc/PID/stat's seventh field: the controlling terminal's device number, 0 for none.
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
        #expect(fields.count > 4 && fields[4] == "0", "controlling terminal \(fields.count > 4 ? fields[4] : "?")")
        _ = Array("go on\n".utf8).withUnsafeBytes { write(wrapper.input!, $0.baseAddress, $0.count) }
        #expect(lines.next(within: 30) == "1")
    }
}

/// Lines from a child's pipe, each waited for with a bound.
private final class PolledLineReader {
    private let fd: Int32
    private var buffer: [UInt8] = []
    init(_ fd: Int32) { self.fd = fd }

    func next(within seconds: Double) -> String? {
        let deadline = monotonicSeconds() + seconds
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                defer { buffer.removeFirst(newline + 1) }
                return String(decoding: buffer[..<newline], as: UTF8.self)
            }
            let left = deadline - monotonicSeconds()
            guard left > 0 else { return nil }
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, Int32(min(left, 1) * 1000)) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = read(fd, &chunk, chunk.count)
            guard n > 0 else { return nil }
            buffer += chunk[..<n]
        }
    }
}
