import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// A write to a pipe whose reader has gone is an error with a name, never a death by SIGPIPE (issue 32, class 6).
///
/// The engine is a library: it leaves the game's signal dispositions alone and holds SIGPIPE back only around its
/// own writes. The demo game is the witness: it keeps SIGPIPE's default action, as most games do, so before the
/// engine held its writes the first one to a dead pipe killed it. The `ambience` command is a program, and ignores
/// SIGPIPE for the whole process.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct BrokenPipeTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    /// How a child ended, as a shell would say it: its exit status, or the signal that ended it.
    static func ending(_ output: ChildProcess.Output) -> String {
        output.killedBySignal ? "killed by signal \(output.status)" : "exit \(output.status)"
    }

    @Test func aGameRecordingIntoAFIFOWhoseReaderLeavesStopsWithAnError() throws {
        let fifo = fixtures.path("record.wav")
        try #require(mkfifo(fifo, 0o644) == 0)
        // The reader is there first, so the game's open does not wait; 20 s of audio do not fit in the pipe, so the
        // game is still writing when the reader leaves.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        try #require(reader >= 0)
        let game = try ChildProcess(
            [
                BuildProducts.gravityWave, "--headless", "--assets", BuildProducts.assets, "--seconds", "20",
                "--record", fifo
            ],
            environment: childEnvironment(["SDL_AUDIODRIVER": "dummy"]), stderr: .pipe)
        defer {
            game.kill()
            close(game.errors!)
        }
        var chunk = [UInt8](repeating: 0, count: 4096)
        var got = 0
        let deadline = monotonicSeconds() + 30
        while got < 4096 && monotonicSeconds() < deadline {
            let n = read(reader, &chunk, chunk.count)
            if n > 0 { got += n } else { usleep(10_000) }
        }
        try #require(got >= 4096, "the game wrote nothing into the FIFO")
        close(reader)
        #expect(game.waitForExit(within: 30))
        let stderr = String(decoding: drain(game.errors!), as: UTF8.self)
        #expect(game.terminationReason == .exit, "the game was killed by signal \(game.terminationStatus)")
        #expect(game.terminationStatus == 1, "\(stderr)")
        #expect(stderr.contains("\(fifo): cannot write (Broken pipe)"), "\(stderr)")
    }

    @Test func theEnginesLogToAStderrWhoseReaderLeftDoesNotKillTheGame() throws {
        // AMBIENCE_LOG=debug: the engine writes lines to stderr from the start; nobody reads them.
        let run = try ChildProcess.run(
            [BuildProducts.gravityWave, "--headless", "--assets", BuildProducts.assets, "--seconds", "1"],
            environment: childEnvironment(["SDL_AUDIODRIVER": "dummy", "AMBIENCE_LOG": "debug"]), timeout: 60,
            stdout: .null, stderr: .brokenPipe)
        #expect(!run.timedOut)
        #expect(Self.ending(run) == "exit 0")
    }

    @Test(arguments: [["info", "tone.wav"], ["info", "tone.wav", "--json"], ["--version"]])
    func aCommandWhoseStdoutReaderLeftSaysSo(arguments: [String]) throws {
        let wav = try fixtures.sineWAV("tone.wav", seconds: 0.2)
        let run = try ChildProcess.run(
            [ToolRunner.executable] + arguments.map { $0 == "tone.wav" ? wav : $0 }, timeout: 60,
            stdout: .brokenPipe)
        #expect(Self.ending(run) == "exit 1")
        #expect(String(decoding: run.stderr, as: UTF8.self) == "ambience: stdout: Broken pipe\n")
    }

    @Test func aRenderIntoAPipeThatHeadClosesSaysSo() throws {
        // `ambience render --out /dev/stdout | head -c1`: 2 MB of WAV into a pipe whose reader leaves after a byte.
        let script = "\"$0\" render --out /dev/stdout --seconds 5 | head -c1 >/dev/null; echo \"${PIPESTATUS[0]}\""
        let run = try ChildProcess.run(["/bin/bash", "-c", script, ToolRunner.executable], timeout: 60)
        let stderr = String(decoding: run.stderr, as: UTF8.self)
        #expect(String(decoding: run.stdout, as: UTF8.self) == "1\n", "\(stderr)")
        #expect(stderr == "ambience: /dev/stdout: cannot write (Broken pipe)\n")
    }

    @Test func aRenderIntoAClosedStdoutSaysSo() throws {
        // A closed stdout is held by a stand-in (so no file takes its number), and /dev/stdout leads to that
        // stand-in: the audio cannot reach anyone, and the command must not call that a success.
        let run = try ChildProcess.run(
            ["/bin/sh", "-c", "exec \"$0\" render --out /dev/stdout --seconds 1 >&-", ToolRunner.executable],
            timeout: 60)
        #expect(Self.ending(run) == "exit 1")
        #expect(String(decoding: run.stderr, as: UTF8.self) == "ambience: stdout: Bad file descriptor\n")
    }

    @Test func aHeldWriteFailsWithEPIPEAndLeavesTheSignalStateAsItWas() throws {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        close(ends[0])
        let writer = FileDescriptor(adopting: ends[1])
        func disposition() -> Int {
            var action = sigaction()
            sigaction(SIGPIPE, nil, &action)
            return unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
        }
        func blocked() -> Bool {
            var mask = sigset_t()
            pthread_sigmask(SIG_BLOCK, nil, &mask)
            return sigismember(&mask, SIGPIPE) == 1
        }
        func pending() -> Bool {
            var set = sigset_t()
            sigpending(&set)
            return sigismember(&set, SIGPIPE) == 1
        }
        let (handler, wasBlocked) = (disposition(), blocked())
        #expect(throws: Errno(EPIPE)) { try Array("x".utf8).withUnsafeBytes { try writer.write($0) } }
        #expect(disposition() == handler)
        #expect(blocked() == wasBlocked)
        #expect(!pending())
    }

    /// Everything left in `fd` until its end (the child has exited, so the end comes).
    func drain(_ fd: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n > 0 { bytes += chunk[..<n] } else if n < 0 && errno == EINTR { continue } else { break }
        }
        return bytes
    }
}
