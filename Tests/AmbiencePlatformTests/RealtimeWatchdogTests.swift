import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceTestSupport

/// The SIGXCPU watchdog for a user without CAP_SYS_NICE, as a game runs: the kernel lets such a user lower a thread
/// from real time only if reset-on-fork stays set (rtkit and `setRealtime` set it), so a handler that cleared it
/// failed with EPERM and the hard limit's SIGKILL followed. The child runs as nobody with an RLIMIT_RTPRIO that lets
/// it raise itself (the private rtkit's polkit grants nobody nothing without a login session).
@Suite(.offTheCooperativePool, .timeLimit(.minutes(1))) struct RealtimeWatchdogTests {
    static let childVariable = "AMBIENCE_TEST_WATCHDOG_CHILD"
    static var isChild: Bool { ProcessInfo.processInfo.environment[childVariable] == "1" }
    static var canStartAsNobody: Bool {
        getuid() == 0
            && ["/usr/bin/setpriv", "/usr/bin/prlimit"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test(
        .enabled(
            if: RealtimeWatchdogTests.canStartAsNobody && !RealtimeWatchdogTests.isChild,
            "needs root (to start a child as nobody), setpriv and prlimit"))
    func anUnprivilegedThreadThatNeverBlocksIsDroppedNotKilled() throws {
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let run = try ChildProcess.run(
            [
                "prlimit", "--rtprio=1", "--", "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", binary,
                "--testing-library", "swift-testing", "--filter", "RealtimeWatchdogTests/theChildSpins"
            ], environment: childEnvironment([Self.childVariable: "1"]), timeout: 30)
        let output = String(decoding: run.stdout + run.stderr, as: UTF8.self)
        #expect(!run.killedBySignal && run.status == 0, "\(output)")
        #expect(output.contains("the watchdog dropped uid 65534's thread to nice 0"), "\(output)")
    }

    /// The child's side, run only by the test above: raises its own thread, spins without blocking and is dropped.
    @Test(.enabled(if: RealtimeWatchdogTests.isChild, "the child of the test above: runs only there"))
    func theChildSpins() throws {
        let me = currentKernelThreadID()
        try #require(getuid() != 0)
        // Soft limit 100 ms (SIGXCPU, the handler), hard 200 ms (SIGKILL).
        try ThreadScheduling.limitRealtimeCPU(toMicroseconds: 200_000)
        try RealtimeWatchdog.watch(thread: me)
        defer { RealtimeWatchdog.forget(thread: me) }
        try ThreadScheduling.setRealtime(thread: me, priority: 1)
        #expect(try ThreadScheduling.of(thread: me).isRealtime)
        // At most 2 s of wall time: past 200 ms of CPU the kernel kills a thread the handler did not drop.
        let end = monotonicNanoseconds() + 2_000_000_000
        while monotonicNanoseconds() < end && !RealtimeWatchdog.wasDropped(thread: me) {}
        let after = try ThreadScheduling.of(thread: me)
        #expect(RealtimeWatchdog.wasDropped(thread: me) && !after.isRealtime, "\(after)")
        if RealtimeWatchdog.wasDropped(thread: me) && !after.isRealtime {
            print("the watchdog dropped uid \(getuid())'s thread to \(after)")
        }
    }
}
