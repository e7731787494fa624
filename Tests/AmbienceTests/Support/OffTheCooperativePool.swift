import Dispatch
import Testing

/// Runs a suite's tests on Dispatch's global threads instead of Swift's cooperative pool. Every suite has it.
///
/// The tests block: they wait for programs they started, poll for a condition, sleep. The cooperative pool has one
/// thread per core (two on the project's machines) and adds none while its threads are blocked, so two blocked tests
/// stall every other test case that has started, whose time limits run out meanwhile: under load, AtomicFileTests'
/// one-minute limits ran out after 135 s in which each test needed a few milliseconds of a thread (#32). Dispatch's
/// global threads grow while threads are blocked and keep about one runnable per core, which is what blocking work
/// needs; how many test cases run at once is still Swift Testing's choice.
struct OffTheCooperativePool: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(BlockingWorkExecutor.shared) { try await function() }
    }
}

extension Trait where Self == OffTheCooperativePool {
    /// See `OffTheCooperativePool`.
    static var offTheCooperativePool: Self { Self() }
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
