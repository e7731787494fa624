import Dispatch
import Testing

/// Runs a suite's tests on Dispatch's global threads instead of Swift's cooperative pool. Every suite has it, or
/// `onTheComputeThread` (below) when it computes for seconds.
///
/// The tests block: they wait for programs they started, poll for a condition, sleep. The cooperative pool has one
/// thread per core (two on the project's machines) and adds none while its threads are blocked, so two blocked tests
/// stall every other test case that has started, whose time limits run out meanwhile: under load, AtomicFileTests'
/// one-minute limits ran out after 135 s in which each test needed a few milliseconds of a thread (#32). Dispatch's
/// global threads grow while threads are blocked and keep about one runnable per core, which is what blocking work
/// needs; how many test cases run at once is still Swift Testing's choice.
///
/// A time limit counts from a test's start, including the time its jobs wait for a thread. At the start of a whole
/// run, hundreds of test cases start at once and the blocking ones hold the threads while Dispatch adds more a few at a
/// time: tests that need milliseconds finished after 48 s, in a run where nothing failed. So no time limit is under
/// five minutes. The limits catch hangs; they never measure speed.
struct OffTheCooperativePool: SuiteTrait, TestTrait, TestScoping {
    /// Where the tests' jobs run: `BlockingWorkExecutor` or `ComputeExecutor`.
    let executor: any TaskExecutor
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == OffTheCooperativePool {
    /// See `OffTheCooperativePool`.
    static var offTheCooperativePool: Self { Self(executor: BlockingWorkExecutor.shared) }
    /// For a suite that computes for seconds: see `ComputeExecutor`.
    static var onTheComputeThread: Self { Self(executor: ComputeExecutor.shared) }
}

/// A task executor whose jobs run on Dispatch's global concurrent threads.
final class BlockingWorkExecutor: TaskExecutor {
    static let shared = BlockingWorkExecutor()
    private let queue = DispatchQueue(label: "ambience.tests.blocking", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

/// `onTheComputeThread`: a CPU-bound suite's tests run one job at a time on a thread of their own, outside the
/// threads the other suites share.
///
/// A test that computes for seconds (a module or a MIDI file rendered and compared in the debug build) holds its
/// thread runnable, and Dispatch's shared threads keep about one runnable per core: two such tests held both threads
/// of a two-core machine for 72 s while every other started test, needing milliseconds, waited for one and ran out its
/// time limit. Giving every job a thread instead ran everything at once and broke the tests that measure time. Here
/// the CPU-bound suites queue behind one another on one thread; their time limits allow for the queue.
///
/// Its jobs run one at a time on a serial queue: one thread of Dispatch's overcommitting pool,
/// which the shared threads' count of runnable workers does not include.
final class ComputeExecutor: TaskExecutor {
    static let shared = ComputeExecutor()
    private let queue = DispatchQueue(label: "ambience.tests.compute")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
