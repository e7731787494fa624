import Foundation
import Glibc
import Testing

@testable import AmbiencePlatform
@testable import AmbienceTestSupport

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct WakerTests {
    @Test func aWakeBeforeTheWaitEndsItAtOnce() throws {
        let waker = try Waker()
        waker.wake()
        let started = monotonicNanoseconds()
        let outcome = waker.wait(timeout: .seconds(30))
        #expect(outcome.woken)
        #expect(!outcome.ready)
        #expect(monotonicNanoseconds() - started < 10_000_000_000)
    }

    @Test func oneWaitDrainsEveryWakeBeforeIt() throws {
        let waker = try Waker()
        for _ in 0..<1000 { waker.wake() }
        #expect(waker.wait(timeout: .zero).wakeBytes.count == 1000)
        #expect(!waker.wait(timeout: .milliseconds(20)).woken)
    }

    @Test func aFullPipeNeverBlocksTheWaker() throws {
        let waker = try Waker()
        // A pipe holds 64 KiB by default: far more wakes than that must all return.
        for _ in 0..<200_000 { waker.wake() }
        #expect(waker.wait(timeout: .zero).woken)
        #expect(!waker.wait(timeout: .zero).woken)
    }

    @Test func aWaitWithNothingEndsAtItsTimeout() throws {
        let waker = try Waker()
        let started = monotonicNanoseconds()
        let outcome = waker.wait(timeout: .milliseconds(50))
        #expect(outcome == Waker.Outcome(ready: false, wakeBytes: [], failure: nil))
        #expect(monotonicNanoseconds() - started >= 50_000_000)
    }

    @Test func anotherThreadsWakeEndsAWaitWithoutTimeout() throws {
        let waker = try Waker()
        let woken = Lock(false)
        let waiter = WorkerThread(name: "test-waker") { _ in
            let outcome = waker.wait(timeout: nil)
            woken.withLock { $0 = outcome.woken }
        }
        waker.wake()
        waiter.stop()  // joins: returns only once the wait has ended
        #expect(woken.withLock { $0 })
    }

    @Test func theDescriptorAlongsideIsReported() throws {
        let waker = try Waker()
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { for end in ends { close(end) } }
        #expect(!waker.wait(alongside: ends[0], timeout: .zero).ready)
        var byte: UInt8 = 7
        #expect(write(ends[1], &byte, 1) == 1)
        let outcome = waker.wait(alongside: ends[0], timeout: .seconds(30))
        #expect(outcome.ready)
        #expect(!outcome.woken)
        // Writable at once: POLLOUT is asked for and reported.
        #expect(waker.wait(alongside: ends[1], events: Int16(POLLOUT), timeout: .zero).ready)
    }

    @Test func signalSafeWakesCarryTheirBytesInOrder() throws {
        let waker = try Waker()
        errno = 1234
        Waker.signalSafeWake(waker.signalWriteEnd, byte: 15)
        Waker.signalSafeWake(waker.signalWriteEnd, byte: 2)
        #expect(errno == 1234)  // a handler must leave errno as it found it
        Waker.signalSafeWake(-1, byte: 9)  // no waker yet: nothing happens
        #expect(waker.wait(timeout: .zero).wakeBytes == [15, 2])
    }

    @Test(arguments: [
        (Duration.zero, Int32(0)), (.nanoseconds(1), 1), (.microseconds(1500), 2), (.milliseconds(-5), 0),
        (.seconds(Int64.max / 2), Int32.max), (.seconds(3), 3000)
    ])
    func timeoutsRoundUpToWholeMilliseconds(duration: Duration, milliseconds: Int32) {
        #expect(Waker.milliseconds(duration) == milliseconds)
    }

    @Test func theEndsAreClosedOnExec() throws {
        let waker = try Waker()
        #expect(fcntl(waker.signalWriteEnd, F_GETFD) & FD_CLOEXEC != 0)
        #expect(fcntl(waker.signalWriteEnd, F_GETFL) & O_NONBLOCK != 0)
    }
}
