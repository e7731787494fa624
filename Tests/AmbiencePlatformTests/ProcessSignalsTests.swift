import AmbiencePlatform
import Glibc
import Synchronization
import Testing

@testable import AmbienceTestSupport

private let usr2Count = Atomic<Int>(0)

/// SIGUSR2 only, whose default action would end the test process: each step leaves it ignored or handled.
@Suite(.serialized, .offTheCooperativePool, .timeLimit(.minutes(5))) struct ProcessSignalsTests {
    @Test func handledIgnoredAndSent() throws {
        try ProcessSignals.handle(SIGUSR2) { _ in usr2Count.add(1, ordering: .relaxed) }
        defer { try? ProcessSignals.ignore(SIGUSR2) }
        let before = usr2Count.load(ordering: .relaxed)
        // Dispatch's threads, where the tests run, block signals: this one takes SIGUSR2 while it raises it.
        try withUnblocked(SIGUSR2) { () throws(Errno) in try ProcessSignals.raise(SIGUSR2) }
        #expect(usr2Count.load(ordering: .relaxed) == before + 1)

        // Sent to the process: any thread that does not block it runs the handler, soon.
        try ProcessSignals.send(SIGUSR2, to: ProcessIdentity.current)
        let deadline = monotonicDeadline(afterSeconds: 10)
        while usr2Count.load(ordering: .relaxed) < before + 2 && monotonicNanoseconds() < deadline {
            sleep(milliseconds: 1)
        }
        #expect(usr2Count.load(ordering: .relaxed) == before + 2)

        try ProcessSignals.ignore(SIGUSR2)
        try withUnblocked(SIGUSR2) { () throws(Errno) in try ProcessSignals.raise(SIGUSR2) }
        #expect(usr2Count.load(ordering: .relaxed) == before + 2)
    }

    /// Runs `body` with `signo` unblocked on this thread; a signal it raises is delivered before `raise` returns.
    private func withUnblocked(_ signo: Int32, _ body: () throws(Errno) -> Void) throws(Errno) {
        var set = sigset_t(), previous = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signo)
        pthread_sigmask(SIG_UNBLOCK, &set, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try body()
    }

    @Test func failuresAreTyped() {
        #expect(throws: Errno(EINVAL)) { try ProcessSignals.ignore(SIGKILL) }
        #expect(throws: Errno(EINVAL)) { try ProcessSignals.restoreDefault(0) }
        #expect(throws: Errno(EINVAL)) { try ProcessSignals.send(-1, to: ProcessIdentity.current) }
        // Signal 0 sends nothing and checks that the process is there.
        #expect(throws: Never.self) { try ProcessSignals.send(0, to: ProcessIdentity.current) }
        #expect(throws: Errno(ESRCH)) { try ProcessSignals.send(0, to: Int32.max) }
    }
}
