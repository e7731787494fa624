import Foundation
import Glibc
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// The test harness itself: whatever a child does, the runner returns within its bound, and nothing it started is
/// left running.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct HarnessTests {
    /// A process that ignores SIGTERM (and so does what it starts), floods stderr and would sleep for 100 s: at the
    /// timeout its group gets SIGTERM, after the grace period SIGKILL, and the runner returns with what it read.
    @Test func aChildThatIgnoresSIGTERMAndFloodsStderrIsKilledAfterTheGracePeriod() throws {
        let output = try ChildProcess.run(
            ["bash", "-c", #"trap "" TERM; yes err >&2 & echo $!; sleep 100"#], timeout: 1, grace: 1)
        #expect(output.timedOut)
        #expect(output.killedBySignal && output.status == SIGKILL)
        // Bound: 1 s to the SIGTERM, 1 s of grace, then the pipes close at once; the rest is slack for a busy machine.
        #expect(output.seconds >= 1.9 && output.seconds < 5, "returned after \(output.seconds) s")
        let flood = try #require(
            pid_t(String(decoding: output.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)),
            "stdout: \(String(decoding: output.stdout, as: UTF8.self))")
        #expect(output.stderr.count > 100_000, "read \(output.stderr.count) bytes of stderr")
        #expect(output.stderr.starts(with: Array("err\nerr\n".utf8)))
        #expect(eventually { !isAlive(flood) }, "the background `yes` survived its group")
    }

    /// More than a pipe's buffer on stderr before a word on stdout: read one after the other, the child would block
    /// writing stderr while the runner waited for the end of stdout.
    @Test func bothPipesAreReadAtOnce() throws {
        let output = try ChildProcess.run(
            ["bash", "-c", #"head -c 1000000 /dev/zero | tr '\0' e >&2; echo done"#], timeout: 30)
        #expect(!output.timedOut && output.status == 0)
        #expect(output.stderr.count == 1_000_000)
        #expect(String(decoding: output.stdout, as: UTF8.self) == "done\n")
        #expect(output.seconds < 10)
    }

    /// The child exits at once, but something it started keeps its stdout open: that is killed after the grace
    /// period, and the child's own exit status is the result.
    @Test func anExitThatLeavesThePipesOpenReturnsAfterTheGracePeriod() throws {
        let output = try ChildProcess.run(["bash", "-c", "sleep 100 & echo $!; exit 3"], timeout: 60, grace: 1)
        #expect(!output.timedOut && !output.killedBySignal && output.status == 3)
        #expect(output.seconds >= 0.9 && output.seconds < 4, "returned after \(output.seconds) s")
        let sleeper = try #require(
            pid_t(String(decoding: output.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(eventually { !isAlive(sleeper) }, "the background `sleep` outlived the run")
    }

    /// A long-running child (a player, a server) that ignores SIGTERM is killed when the grace period is over.
    @Test func terminateEndsAChildThatIgnoresSIGTERM() throws {
        let child = try ChildProcess(["bash", "-c", #"trap "" TERM; sleep 100"#])
        // Wait until the trap is set, so that the SIGTERM reaches a process that ignores it.
        #expect(eventually { ignoresSIGTERM(child.pid) })
        let start = monotonicSeconds()
        child.terminate(grace: 1)
        let seconds = monotonicSeconds() - start
        #expect(!child.isRunning)
        #expect(child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGKILL)
        #expect(seconds >= 0.9 && seconds < 4, "terminate took \(seconds) s")
    }

    /// Children start with no signal blocked, whatever the test thread blocks: SIGTERM ends a child that does not
    /// ask otherwise, well before the grace period.
    @Test func aChildStartedFromAThreadThatBlocksSIGTERMStillGetsIt() throws {
        var blocked = sigset_t(), previous = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let child = try ChildProcess(["sleep", "100"])
        let start = monotonicSeconds()
        child.terminate(grace: 10)
        #expect(child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGTERM)
        #expect(monotonicSeconds() - start < 5)
    }
}

/// True while `pid` exists and is not a zombie (a zombie is dead, waiting for a parent that may never reap it).
/// Its pipes close a moment before its state says so: callers wait for this to turn false.
private func isAlive(_ pid: pid_t) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let end = stat.lastIndex(of: ")")
    else { return false }
    return !stat[stat.index(after: end)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
}

/// True once `pid` ignores SIGTERM (its SigIgn mask in /proc has the bit).
private func ignoresSIGTERM(_ pid: pid_t) -> Bool {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigIgn:") }),
        let mask = UInt64(line.dropFirst("SigIgn:".count).trimmingCharacters(in: .whitespaces), radix: 16)
    else { return false }
    return mask & (1 << (UInt64(SIGTERM) - 1)) != 0
}
