import AmbiencePlatform
import Synchronization
import Testing

@testable import AmbienceCore
@testable import AmbienceOutput
@testable import AmbienceTestSupport

/// When an output's audio thread leaves the SIGXCPU watchdog's table: only once the thread has ended (the output
/// joined it), never at `stopAsking`, which comes before the join while the thread may still run real time; and a
/// request that is still under way when the thread ends leaves no entry behind. rtkit's answers are scripted (the
/// thread is not really made real time); the table is the real one.
@Suite(
    .offTheCooperativePool, .timeLimit(.minutes(1)),
    .enabled(if: ProcessEnvironment.value("AMBIENCE_REALTIME") == nil, "AMBIENCE_REALTIME would override the policy"))
struct AudioThreadRaiseTests {
    /// rtkit granting real time, watched as the engine's grantor watches it; `gate` holds the grant until opened.
    final class WatchingGrantor: PriorityGranting, Sendable {
        let entered = Atomic<Bool>(false)
        let gate = Atomic<Bool>(true)
        let granted = Atomic<Bool>(false)

        func rtkitLimits() throws(DesktopError) -> ThreadScheduling.Limits {
            ThreadScheduling.Limits(maxRealtimePriority: 20, minNiceLevel: -15, realtimeCPUMicrosecondsMax: 200_000)
        }
        func rtkitHighPriority(thread: Int32, level: Int) throws(DesktopError) {}
        func rtkitRealtime(thread: Int32, priority: Int) throws(DesktopError) {
            entered.store(true, ordering: .releasing)
            while !gate.load(ordering: .acquiring) { sleep(milliseconds: 1) }
            try RealtimeWatchdog.raise(
                thread: thread, unwatched: { DesktopError.remoteError(name: "watch", message: "\($0)") },
                makeRealtime: { () throws(DesktopError) in granted.store(true, ordering: .releasing) })
        }
        /// The process's own limit stays as it is.
        func limitRealtimeCPU(microseconds: Int) throws(Errno) {}
        func scheduling(of thread: Int32) throws(Errno) -> ThreadScheduling {
            granted.load(ordering: .acquiring)
                ? ThreadScheduling(isRealtime: true, realtimePriority: 4, nice: -15)
                : ThreadScheduling(isRealtime: false, realtimePriority: 0, nice: 0)
        }
    }

    @Test func aRealtimeThreadLeavesTheWatchdogOnlyOnceItHasEnded() throws {
        let grantor = WatchingGrantor()
        let raise = AudioThreadRaise(output: "test", policy: .realtime, grantor: { grantor })
        raise.recordIfNeeded()  // this thread stands for the audio thread
        let thread = try #require(raise.kernelThread)
        #expect(raise.priority(waitingUpTo: 10) == .realtime(priority: 4, via: .rtkit))
        #expect(RealtimeWatchdog.isWatched(thread: thread))
        raise.stopAsking()
        #expect(RealtimeWatchdog.isWatched(thread: thread), "before the join the thread may still run real time")
        raise.threadEnded()
        #expect(!RealtimeWatchdog.isWatched(thread: thread))
    }

    @Test func aThreadThatEndsDuringTheRequestLeavesNoEntry() throws {
        let grantor = WatchingGrantor()
        grantor.gate.store(false, ordering: .releasing)
        let raise = AudioThreadRaise(output: "test", policy: .realtime, grantor: { grantor })
        raise.recordIfNeeded()
        let thread = try #require(raise.kernelThread)
        try #require(eventually(within: 10) { grantor.entered.load(ordering: .acquiring) })
        // Ended while rtkit is still being asked: the table has nothing to forget yet, and the watch comes after.
        raise.stopAsking()
        raise.threadEnded()
        grantor.gate.store(true, ordering: .releasing)
        #expect(eventually(within: 10) { raise.priority != .pending })
        #expect(raise.priority == .none(reason: "the output closed"))
        let grantedAfterTheEnd = grantor.granted.load(ordering: .acquiring)
        #expect(grantedAfterTheEnd, "the grant came after the end")
        #expect(!RealtimeWatchdog.isWatched(thread: thread))
    }
}
