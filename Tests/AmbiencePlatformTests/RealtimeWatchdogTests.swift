import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceTestSupport

/// The SIGXCPU watchdog for a user without CAP_SYS_NICE, as a game runs: the kernel lets such a user lower a thread
/// from real time only if reset-on-fork stays set (rtkit and `setRealtime` set it), so a handler that cleared it
/// failed with EPERM and the hard limit's SIGKILL followed. The child runs as nobody, and this process raises its
/// thread as rtkit does, from outside (the private rtkit's polkit grants nobody nothing without a login session, and
/// the container gives root no CAP_SYS_RESOURCE to hand the child an RLIMIT_RTPRIO).
@Suite(.offTheCooperativePool, .timeLimit(.minutes(1))) struct RealtimeWatchdogTests {
    static let childVariable = "AMBIENCE_TEST_WATCHDOG_CHILD"
    static var isChild: Bool { ProcessInfo.processInfo.environment[childVariable] == "1" }
    static var canStartAsNobody: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    }

    @Test(
        .enabled(
            if: RealtimeWatchdogTests.canStartAsNobody && !RealtimeWatchdogTests.isChild,
            "needs root (to start a child as nobody and raise its thread) and setpriv"))
    func anUnprivilegedThreadThatNeverBlocksIsDroppedNotKilled() throws {
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let child = try ChildProcess(
            [
                "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", binary, "--testing-library",
                "swift-testing", "--filter", "RealtimeWatchdogTests/theChildSpins"
            ], environment: childEnvironment([Self.childVariable: "1"]), stdout: .pipe, stderr: .pipe)
        defer { child.kill() }
        var raised = 0
        let output = try Self.readAll(of: child, seconds: 30) { text in
            // Each of the child's "watched thread N": raised now, SCHED_RR with reset-on-fork, as rtkit would.
            let asks = text.split(separator: "\n").filter { $0.hasPrefix("watched thread ") }
            while raised < asks.count {
                guard let thread = Int32(asks[raised].dropFirst("watched thread ".count)) else { return true }
                try ThreadScheduling.setRealtime(thread: thread, priority: 1)
                raised += 1
            }
            return raised == 2
        }
        #expect(child.waitForExit(within: 5))
        #expect(child.terminationReason == .exit && child.terminationStatus == 0, "\(output)")
        #expect(output.contains("the watchdog dropped uid 65534's thread to nice 0"), "\(output)")
        #expect(output.contains("blocking every signal but SIGXCPU"), "\(output)")
        // The second runaway was warned too: the handler put back the soft limit that the first SIGXCPU raised by a
        // second, past the hard one (without that, the kernel's SIGKILL ended the child here).
        #expect(output.contains("dropped again, soft limit 20000 µs"), "\(output)")
    }

    /// The child's side, run only by the test above: waits to be raised, spins without blocking and is dropped.
    @Test(.enabled(if: RealtimeWatchdogTests.isChild, "the child of the test above: runs only there"))
    func theChildSpins() throws {
        let me = currentKernelThreadID()
        try #require(getuid() != 0)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, nil, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        // As libpulse's loop thread: every signal blocked (Dispatch's threads, this one's ancestors, block SIGXCPU
        // too), then SIGXCPU let through as the output does, so the handler runs here, not on a thread that the
        // spinning cores keep from running until the hard limit.
        var every = sigset_t()
        sigfillset(&every)
        pthread_sigmask(SIG_BLOCK, &every, nil)
        RealtimeWatchdog.unblockSIGXCPUOnThisThread()
        var now = sigset_t()
        pthread_sigmask(SIG_BLOCK, nil, &now)
        try #require(sigismember(&now, SIGXCPU) == 0 && sigismember(&now, SIGTERM) == 1)
        FileHandle.standardOutput.write(Data("blocking every signal but SIGXCPU\n".utf8))
        // Soft limit 20 ms (SIGXCPU, the handler), hard 40 ms (SIGKILL): short, since the spin holds a core from
        // the suites beside it, some of which measure real time.
        try ThreadScheduling.limitRealtimeCPU(toMicroseconds: 40_000)
        let first = try raisedAndSpun(me)
        #expect(first.dropped && !first.after.isRealtime, "\(first.after)")
        guard first.dropped && !first.after.isRealtime else { return }
        FileHandle.standardOutput.write(Data("the watchdog dropped uid \(getuid())'s thread to \(first.after)\n".utf8))
        // Raised and runaway once more: the kernel warns again only if the soft limit is back below the hard one.
        let second = try raisedAndSpun(me)
        #expect(second.dropped && !second.after.isRealtime, "\(second.after)")
        let soft = try #require(Self.realtimeSoftLimit())
        #expect(soft == 20_000)
        if second.dropped { FileHandle.standardOutput.write(Data("dropped again, soft limit \(soft) µs\n".utf8)) }
    }

    /// A program with a SIGXCPU handler of its own (for RLIMIT_CPU, say): the watchdog refuses to watch, so an output
    /// thread that blocks SIGXCPU keeps it blocked, and the program's handler never runs on the audio thread. In a
    /// child: the handler is the process's, and the suites beside this one install the watchdog's.
    @Test(.enabled(if: !RealtimeWatchdogTests.isChild, "the parent of the test below"))
    func aProgramsOwnSIGXCPUHandlerKeepsTheSignalBlocked() throws {
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let child = try ChildProcess(
            [binary, "--testing-library", "swift-testing", "--filter", "RealtimeWatchdogTests/theChildHandlesSIGXCPU"],
            environment: childEnvironment([Self.childVariable: "1"]), stdout: .pipe, stderr: .pipe)
        defer { child.kill() }
        let output = try Self.readAll(of: child, seconds: 30) { _ in true }
        #expect(child.waitForExit(within: 5))
        #expect(child.terminationReason == .exit && child.terminationStatus == 0, "\(output)")
        #expect(output.contains("kept blocked under the program's handler; let through under the default"), "\(output)")
    }

    /// The child's side of the test above.
    @Test(.enabled(if: RealtimeWatchdogTests.isChild, "the child of the test above: runs only there"))
    func theChildHandlesSIGXCPU() throws {
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, nil, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        var xcpu = sigset_t()
        sigemptyset(&xcpu)
        sigaddset(&xcpu, SIGXCPU)
        func isBlocked() -> Bool {
            var now = sigset_t()
            pthread_sigmask(SIG_BLOCK, nil, &now)
            return sigismember(&now, SIGXCPU) == 1
        }
        var own = sigaction()
        own.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&own.sa_mask)
        try #require(sigaction(SIGXCPU, &own, nil) == 0)
        pthread_sigmask(SIG_BLOCK, &xcpu, nil)
        RealtimeWatchdog.unblockSIGXCPUOnThisThread()
        #expect(isBlocked(), "the program's handler would run on this thread")
        #expect(throws: Errno(EBUSY)) { try RealtimeWatchdog.watch(thread: currentKernelThreadID()) }

        var fallback = sigaction()
        fallback.__sigaction_handler.sa_handler = nil  // SIG_DFL
        try #require(sigaction(SIGXCPU, &fallback, nil) == 0)
        RealtimeWatchdog.unblockSIGXCPUOnThisThread()
        #expect(!isBlocked())
        if !isBlocked() {
            FileHandle.standardOutput.write(
                Data("kept blocked under the program's handler; let through under the default\n".utf8))
        }
    }

    /// Watches the thread, asks the parent to raise it, spins until the handler drops it (at most 2 s of wall time:
    /// past the hard limit the kernel kills a thread the handler did not drop), and forgets it.
    private func raisedAndSpun(_ me: Int32) throws -> (dropped: Bool, after: ThreadScheduling) {
        try RealtimeWatchdog.watch(thread: me)
        defer { RealtimeWatchdog.forget(thread: me) }
        FileHandle.standardOutput.write(Data("watched thread \(me)\n".utf8))
        try #require(eventually(within: 10) { (try? ThreadScheduling.of(thread: me))?.isRealtime == true })
        let end = monotonicNanoseconds() + 2_000_000_000
        while monotonicNanoseconds() < end && !RealtimeWatchdog.wasDropped(thread: me) {}
        return (RealtimeWatchdog.wasDropped(thread: me), try ThreadScheduling.of(thread: me))
    }

    /// This process's RLIMIT_RTTIME soft limit, in µs, from /proc (the test's own reading, not Platform's).
    static func realtimeSoftLimit() -> Int? {
        guard let limits = try? String(contentsOfFile: "/proc/self/limits", encoding: .utf8),
            let line = limits.split(separator: "\n").first(where: { $0.hasPrefix("Max realtime timeout") })
        else { return nil }
        return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).first.flatMap { Int($0) }
    }

    /// Reads the child's stdout and stderr until both end or `seconds` pass, calling `onStdout` with the stdout read
    /// so far until it returns true.
    static func readAll(of child: ChildProcess, seconds: Double, onStdout: (String) throws -> Bool) throws -> String {
        var streams = [child.output, child.errors].compactMap { $0 }.map { (fd: $0, data: Data()) }
        defer { streams.forEach { close($0.fd) } }
        var open = Set(streams.map(\.fd))
        var answered = false
        var chunk = [UInt8](repeating: 0, count: 1 << 14)
        let deadline = monotonicSeconds() + seconds
        while !open.isEmpty && monotonicSeconds() < deadline {
            var polled = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&polled, nfds_t(polled.count), 50) > 0 else { continue }
            for entry in polled where entry.revents != 0 {
                let count = read(entry.fd, &chunk, chunk.count)
                guard count > 0, let index = streams.firstIndex(where: { $0.fd == entry.fd }) else {
                    open.remove(entry.fd)
                    continue
                }
                streams[index].data.append(contentsOf: chunk[..<count])
                if index == 0 && !answered { answered = try onStdout(String(decoding: streams[0].data, as: UTF8.self)) }
            }
        }
        return streams.map { String(decoding: $0.data, as: UTF8.self) }.joined()
    }
}
