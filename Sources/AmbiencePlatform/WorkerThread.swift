import Foundation
import Glibc

/// A thread that runs one loop until it is asked to stop, and stops by joining.
///
/// The loop waits through `WorkerThread.Control.wait(seconds:)`, a condition wait on the monotonic clock, so
/// `wake()` gets it going at once and `stop()` requests, wakes and joins it: no polling, no thread left behind.
package final class WorkerThread: @unchecked Sendable {
    /// How the kernel schedules the thread.
    package enum Scheduling: Sendable {
        case normal
        /// SCHED_BATCH: a fair share of the CPU, but waking up never preempts another thread. For work that runs
        /// ahead (decoding music, opening files): waking it must not take the CPU from the game thread, which
        /// `bench --hitches` showed being preempted for 3 ms by a freshly woken streaming thread.
        case batch
        /// Nice -20, the priority SDL gives its own audio thread (`SDL_THREAD_PRIORITY_TIME_CRITICAL`): for a thread
        /// that must feed that one within a few blocks. Below it, a loaded machine starves the feeder while SDL's
        /// thread plays on: the stand-in's panned stereo was heard at half its level at load 11. Refused (no
        /// CAP_SYS_NICE, no RLIMIT_NICE), the thread stays normal; rtkit, as SDL asks it then, is not asked.
        case audio
    }

    /// What the loop sees: whether it should stop, and a wait that `wake()` and `stop()` cut short.
    package final class Control: @unchecked Sendable {
        // pthread objects must not move: they live in allocated memory, guarded by `mutex` itself.
        private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        private var stopRequested = false
        private var woken = false

        fileprivate init() {
            pthread_mutex_init(mutex, nil)
            var attributes = pthread_condattr_t()
            pthread_condattr_init(&attributes)
            pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
            pthread_cond_init(condition, &attributes)
            pthread_condattr_destroy(&attributes)
        }

        deinit {
            pthread_cond_destroy(condition)
            pthread_mutex_destroy(mutex)
            condition.deallocate()
            mutex.deallocate()
        }

        private func locked<R>(_ body: () -> R) -> R {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return body()
        }

        /// Whether `stop()` has been called.
        package var isStopRequested: Bool { locked { stopRequested } }

        /// Waits up to `seconds`, or until `wake()` or `stop()`; a wake that came while the loop was busy ends the
        /// next wait at once, so none is lost.
        package func wait(seconds: Double) {
            var deadline = timespec()
            clock_gettime(CLOCK_MONOTONIC, &deadline)
            // Engine-made and small (the loops' own periods): saturating keeps any value a valid timespec.
            let nanos = (max(seconds, 0) * 1e9).saturated(Int.self) + deadline.tv_nsec
            deadline.tv_sec += nanos / 1_000_000_000
            deadline.tv_nsec = nanos % 1_000_000_000
            locked {
                while !woken && !stopRequested {
                    if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
                }
                woken = false
            }
        }

        fileprivate func signal(stopping: Bool) {
            locked {
                if stopping { stopRequested = true } else { woken = true }
                pthread_cond_signal(condition)
            }
        }
    }

    private let control: Control
    private let thread: pthread_t?
    private let joined = Lock<Bool>(false)

    /// Starts `body` on a new thread named `name` (the system keeps its first 15 bytes). If the system refuses a thread,
    /// `isRunning` is false and `body` never runs.
    package init(name: String, scheduling: Scheduling = .normal, body: @escaping @Sendable (Control) -> Void) {
        let control = Control()
        self.control = control
        thread = Self.start(name: name, scheduling: scheduling) { body(control) }
    }

    /// Runs `body` once on a new thread that nobody joins: for work that must be free to outlive its caller (a close
    /// that may wait for a lock someone else holds, a connect that may hang, a watcher that lives as long as the
    /// process). Returns false, and `body` never runs, when the system refuses a thread.
    @discardableResult
    package static func detached(
        name: String, scheduling: Scheduling = .normal, _ body: @escaping @Sendable () -> Void
    ) -> Bool {
        guard let thread = start(name: name, scheduling: scheduling, body) else { return false }
        pthread_detach(thread)
        return true
    }

    /// The one `pthread_create` of the engine: names the new thread, sets its scheduling and runs `body`.
    private static func start(
        name: String, scheduling: Scheduling, _ body: @escaping @Sendable () -> Void
    ) -> pthread_t? {
        final class Start {
            let name: String
            let scheduling: Scheduling
            let body: @Sendable () -> Void
            init(name: String, scheduling: Scheduling, body: @escaping @Sendable () -> Void) {
                self.name = name
                self.scheduling = scheduling
                self.body = body
            }
        }
        let start = Unmanaged.passRetained(Start(name: name, scheduling: scheduling, body: body))
        var handle = pthread_t()
        let status = pthread_create(
            &handle, nil,
            { context in
                let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
                // Linux refuses a name over 15 bytes outright: cut it, so a long name still tells the thread apart.
                Thread.current.name = String(decoding: start.name.utf8.prefix(15), as: UTF8.self)
                switch start.scheduling {
                case .normal: break
                case .batch:
                    // Pid 0 is the calling thread. SCHED_BATCH (3) is not named by Glibc's module. A refusal leaves the
                    // thread as it was: slower to yield, never wrong.
                    var parameters = sched_param()
                    _ = sched_setscheduler(0, 3, &parameters)
                case .audio: ThreadPriority.raiseCallingThreadForAudio()
                }
                start.body()
                return nil
            }, start.toOpaque())
        guard status == 0 else {
            start.release()
            return nil
        }
        return handle
    }

    deinit { stop() }

    /// Whether the thread was started.
    package var isRunning: Bool { thread != nil && !joined.withLock { $0 } }

    /// Ends the loop's current or next wait at once.
    package func wake() { control.signal(stopping: false) }

    /// Asks the loop to stop, wakes it and waits for it to return. Safe to call more than once. From the worker's
    /// own thread (its owner's last reference went with the loop) it cannot join itself, so it detaches instead.
    package func stop() {
        guard let thread,
            !joined.withLock({ done in
                defer { done = true }; return done
            })
        else { return }
        control.signal(stopping: true)
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }
}

/// The calling thread's scheduling.
package enum ThreadPriority {
    /// Nice −20 for the calling thread, the priority SDL gives its own audio thread (Linux's niceness is per thread:
    /// who 0 is the caller). A refusal leaves it as it was.
    package static func raiseCallingThreadForAudio() {
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, -20)
    }
}
