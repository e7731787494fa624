import Glibc
import Synchronization

/// The engine's part in the process's exit: `exit()` called on any thread, or `main` returning, while other threads
/// may still be rendering, streaming or calling in.
///
/// Why: OpenAL Soft tears its device list down in its library destructor, which runs after the atexit handlers; a
/// thread still inside OpenAL then aborts the process (its `LockLists` assertion). The first engine installs one
/// atexit handler, registered after the libraries' destructors and so run before them. On the thread that exits it:
/// 1. marks the process exiting: a render that starts from now on writes silence and calls nothing (renders are
///    counted in and out with atomics, so the audio thread's path takes no lock);
/// 2. waits at most `renderDrainSeconds` for the renders already in flight;
/// 3. runs the registered exit steps (every live engine's `shutdown()`: the exit rule, its streaming thread joined,
///    its device and mixer closed);
/// 4. seals: from then on any other thread that calls into a mixer stays there until the process is gone, instead of
///    entering OpenAL while it is torn down. The exiting thread itself goes on: a C++ game's global destructors run
///    after this and may still call in, before the libraries' destructors.
@usableFromInline package enum ProcessExit {
    /// How long the exit waits for renders that were in flight when it began.
    package static let renderDrainSeconds = 1.0

    private static let exiting = Atomic<Bool>(false)
    private static let sealed = Atomic<Bool>(false)
    private static let exitingThread = Atomic<UInt>(0)
    private static let rendersInFlight = Atomic<Int>(0)
    private static let participants = Lock<(next: Int, byToken: [Int: Participant])>((1, [:]))

    /// One engine's part: `shutDown` ends it (step 3); `waitOutCallers` takes and gives back its mixer's lock, so a
    /// thread that was inside when the seal came has left, and any that comes later stops at `mustStop`.
    package struct Participant: Sendable {
        package var shutDown: @Sendable () -> Void
        package var waitOutCallers: @Sendable () -> Void

        package init(shutDown: @escaping @Sendable () -> Void, waitOutCallers: @escaping @Sendable () -> Void) {
            self.shutDown = shutDown
            self.waitOutCallers = waitOutCallers
        }
    }

    /// Installs the atexit handler, once per process.
    private static let installed: Bool = {
        installer.store(getpid(), ordering: .releasing)
        atexit { ProcessExit.run() }
        return true
    }()
    /// The process that installed the handler: a forked child inherits the handler and the list, but not the
    /// engines' threads or its parent's bus, so its exit leaves them alone.
    private static let installer = Atomic<pid_t>(0)

    /// Takes part in the exit until `remove`; returns the token `remove` takes. Shut down in the order added.
    package static func add(_ participant: Participant) -> Int {
        _ = installed
        return participants.withLock { participants in
            let token = participants.next
            participants.next += 1
            participants.byToken[token] = participant
            return token
        }
    }

    package static func remove(_ token: Int) {
        _ = participants.withLock { $0.byToken.removeValue(forKey: token) }
    }

    /// Whether a render may go on: false once the process is exiting, and then it must touch nothing and write
    /// silence. Each true is matched by one `endRender()`. Lock-free: safe on the audio thread.
    package static func beginRender() -> Bool {
        rendersInFlight.add(1, ordering: .sequentiallyConsistent)
        guard !exiting.load(ordering: .sequentiallyConsistent) else {
            rendersInFlight.subtract(1, ordering: .sequentiallyConsistent)
            return false
        }
        return true
    }

    package static func endRender() { rendersInFlight.subtract(1, ordering: .sequentiallyConsistent) }

    /// Whether the process's exit has begun and the caller is another thread than the exiting one: entry points that
    /// can refuse (the C API, a new engine) do so at once, so that the thread returns and can be joined.
    package static var mustRefuse: Bool {
        exiting.load(ordering: .acquiring) && exitingThread.load(ordering: .acquiring) != UInt(pthread_self())
    }

    /// Whether the caller must go no further: the exit has sealed the engines and this is not the exiting thread.
    /// Checked before and inside a mixer's lock; a caller that must not go on leaves the lock, then `stopForever()`.
    package static var mustStop: Bool {
        sealed.load(ordering: .acquiring) && exitingThread.load(ordering: .acquiring) != UInt(pthread_self())
    }

    /// Ends the process with `status` (`exit`): the atexit handlers run, the engines' part (`run`) among them, then
    /// the libraries' destructors. For a program's `main`, whose return value Swift does not pass on.
    package static func end(status: Int32) -> Never {
        exit(status)
    }

    /// Sleeps until the process is gone: the place of a thread that called in after the exit sealed the engines.
    @usableFromInline package static func stopForever() -> Never {
        while true { pause() }
    }

    private static func run() {
        guard getpid() == installer.load(ordering: .acquiring) else { return }
        exitingThread.store(UInt(pthread_self()), ordering: .releasing)
        exiting.store(true, ordering: .sequentiallyConsistent)
        let deadline = monotonicDeadline(afterSeconds: renderDrainSeconds)
        while rendersInFlight.load(ordering: .sequentiallyConsistent) > 0 && monotonicNanoseconds() < deadline {
            sleepUntil(monotonicNanoseconds: monotonicNanoseconds() + 1_000_000)
        }
        let present = participants.withLock { participants in
            participants.byToken.sorted { $0.key < $1.key }.map(\.value)
        }
        for participant in present { participant.shutDown() }
        sealed.store(true, ordering: .sequentiallyConsistent)
        for participant in present { participant.waitOutCallers() }
    }
}
