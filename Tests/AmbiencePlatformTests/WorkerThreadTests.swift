import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceTestSupport

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct WorkerThreadTests {
    @Test func aDetachedThreadRunsItsBodyOnceOnAThreadOfItsOwn() throws {
        let caller = currentThreadIdentity()
        let seen = Lock<[UInt]>([])
        let waker = try Waker()
        #expect(
            WorkerThread.detached(name: "test-detached") {
                seen.withLock { $0.append(currentThreadIdentity()) }
                waker.wake()
            })
        #expect(waker.wait(timeout: .seconds(waitBound)).woken)
        let threads = seen.withLock { $0 }
        #expect(threads.count == 1)
        #expect(threads.first != caller)
    }

    @Test func aDetachedThreadOutlivesItsCallerAndCarriesItsName() throws {
        let name = Lock<String?>(nil)
        let waker = try Waker()
        let release = try Waker()
        WorkerThread.detached(name: "test-named") {
            _ = release.wait(timeout: .seconds(waitBound))
            name.withLock { $0 = Thread.current.name }
            waker.wake()
        }
        // The caller goes on while the thread waits; then lets it finish.
        release.wake()
        #expect(waker.wait(timeout: .seconds(waitBound)).woken)
        #expect(name.withLock { $0 } == "test-named")
    }

    /// Linux takes at most 15 bytes of a thread's name: a longer one is cut, not refused (which left it unnamed).
    @Test func aLongNameIsCutToWhatLinuxTakes() throws {
        let name = Lock<String?>(nil)
        let waker = try Waker()
        WorkerThread.detached(name: "ambience.library-watcher") {
            let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
            name.withLock { $0 = comm?.trimmingCharacters(in: .newlines) }
            waker.wake()
        }
        #expect(waker.wait(timeout: .seconds(waitBound)).woken)
        #expect(name.withLock { $0 } == "ambience.librar")
    }

    @Test func sleepingForMillisecondsWaitsAtLeastThatLong() {
        let started = monotonicNanoseconds()
        sleep(milliseconds: 30)
        #expect(monotonicNanoseconds() - started >= 30_000_000)
        let again = monotonicNanoseconds()
        sleep(milliseconds: -5)
        sleep(milliseconds: 0)
        #expect(monotonicNanoseconds() - again < 1_000_000_000)
    }
}
