import Glibc
import Synchronization

/// The kernel's id of the calling thread (`gettid`): what rtkit, `sched_setscheduler` and `setpriority` name a
/// thread by. One system call that takes no lock and never waits; 0 when libc lacks `gettid` (before glibc 2.30).
package func currentKernelThreadID() -> Int32 { kernelThreadIDFunction?() ?? 0 }

/// Whether `currentKernelThreadID` works. The first use looks `gettid` up (`dlsym`, which locks): made off the
/// audio path, it leaves the audio thread a plain call.
package var isKernelThreadIDAvailable: Bool { kernelThreadIDFunction != nil }

/// glibc's `gettid`, looked up because Swift imports neither it nor the variadic `syscall`.
private let kernelThreadIDFunction: (@convention(c) () -> Int32)? = dlsym(nil, "gettid").map {
    unsafeBitCast($0, to: (@convention(c) () -> Int32).self)
}

/// How the kernel schedules a thread of this process, read or set by its kernel id. The engine's audio threads are
/// raised this way from another thread, so the audio path itself makes no such call.
package struct ThreadScheduling: Sendable, Equatable, CustomStringConvertible {
    /// SCHED_RR or SCHED_FIFO: the thread runs before every normal thread.
    package var isRealtime: Bool
    /// The real-time priority (1…99); 0 for a normal thread.
    package var realtimePriority: Int32
    /// The nice level (−20…19): what counts for a normal thread.
    package var nice: Int32

    package init(isRealtime: Bool, realtimePriority: Int32, nice: Int32) {
        self.isRealtime = isRealtime
        self.realtimePriority = realtimePriority
        self.nice = nice
    }

    package var description: String {
        isRealtime ? "realtime \(realtimePriority)" : "nice \(nice)"
    }

    /// What a grantor that raises threads for others gives at most: rtkit's three properties, which the desktop
    /// layer reads and the output's priority request obeys (here, below both, so neither names the other).
    package struct Limits: Sendable, Equatable {
        /// The highest real-time priority it gives (rtkit's `MaxRealtimePriority`, 20 by default).
        package var maxRealtimePriority: Int
        /// The lowest nice level it gives (rtkit's `MinNiceLevel`, −15 by default).
        package var minNiceLevel: Int
        /// The RLIMIT_RTTIME a client must have set, at most (rtkit's `RTTimeUSecMax`, 200,000 µs by default).
        package var realtimeCPUMicrosecondsMax: Int

        package init(maxRealtimePriority: Int, minNiceLevel: Int, realtimeCPUMicrosecondsMax: Int) {
            self.maxRealtimePriority = maxRealtimePriority
            self.minNiceLevel = minNiceLevel
            self.realtimeCPUMicrosecondsMax = realtimeCPUMicrosecondsMax
        }
    }

    /// Linux's SCHED_RESET_ON_FORK, which Glibc's module does not name: a thread or process started by a raised
    /// thread starts normal (rtkit asks for it too). Computed, as `droppedPolicy`: a signal handler reads them.
    private static var resetOnFork: Int32 { 0x4000_0000 }

    /// The policy `RealtimeWatchdog` drops a thread to: SCHED_OTHER keeping reset-on-fork, since the kernel lets
    /// only CAP_SYS_NICE clear that flag (EPERM for every other user, and the hard limit's SIGKILL would follow).
    package static var droppedPolicy: Int32 { SCHED_OTHER | resetOnFork }

    /// The scheduling of thread `thread` (a kernel id) of this process.
    package static func of(thread: Int32) throws(Errno) -> ThreadScheduling {
        let policy = sched_getscheduler(thread)
        guard policy >= 0 else { throw Errno.current }
        var parameters = sched_param()
        guard sched_getparam(thread, &parameters) == 0 else { throw Errno.current }
        errno = 0
        let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(bitPattern: thread))
        // −1 is a valid nice level: only errno tells a failure.
        if nice == -1 && errno != 0 { throw Errno.current }
        let kind = policy & ~resetOnFork
        return ThreadScheduling(
            isRealtime: kind == SCHED_RR || kind == SCHED_FIFO, realtimePriority: parameters.sched_priority, nice: nice)
    }

    /// Makes `thread` real-time (SCHED_RR, reset on fork) at `priority`, clamped to 1…99. Needs CAP_SYS_NICE or an
    /// RLIMIT_RTPRIO that allows it: EPERM otherwise.
    package static func setRealtime(thread: Int32, priority: Int) throws(Errno) {
        var parameters = sched_param(sched_priority: Int32(clamping: min(max(priority, 1), 99)))
        guard sched_setscheduler(thread, SCHED_RR | resetOnFork, &parameters) == 0 else { throw Errno.current }
    }

    /// Gives `thread` the nice level `nice`, clamped to −20…19. Lowering it needs CAP_SYS_NICE or RLIMIT_NICE.
    package static func setNice(thread: Int32, nice: Int) throws(Errno) {
        let level = Int32(clamping: min(max(nice, -20), 19))
        guard setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(bitPattern: thread), level) == 0 else {
            throw Errno.current
        }
    }

    /// Lowers this process's RLIMIT_RTTIME (the CPU time, in µs, a real-time thread may take without blocking: past
    /// the soft limit the kernel sends SIGXCPU, past the hard one SIGKILL) to at most `microseconds` for the hard
    /// limit and half that for the soft one, which `RealtimeWatchdog` answers; lower limits are kept. rtkit refuses
    /// a process whose limit is above its `RTTimeUSecMax`: it is how a runaway real-time thread is stopped instead
    /// of freezing the machine. Returns the hard limit in force.
    @discardableResult
    package static func limitRealtimeCPU(toMicroseconds microseconds: Int) throws(Errno) -> Int {
        let resource = __rlimit_resource_t(15)  // RLIMIT_RTTIME, which Glibc's module does not name
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { throw Errno.current }
        let wanted = rlim_t(max(microseconds, 1))
        // RLIM_INFINITY is the largest value: `min` keeps a lower limit and replaces an unlimited one.
        limit.rlim_max = min(limit.rlim_max, wanted)
        limit.rlim_cur = min(limit.rlim_cur, limit.rlim_max / 2)
        guard setrlimit(resource, &limit) == 0 else { throw Errno.current }
        RealtimeWatchdog.keepSoftLimit(microseconds: limit.rlim_cur)
        return Int(clamping: limit.rlim_max)
    }
}

/// The real-time threads the engine raised, dropped back to normal scheduling when the kernel warns that one ran too
/// long without blocking (SIGXCPU at RLIMIT_RTTIME's soft limit), before the hard limit's SIGKILL ends the process:
/// PulseAudio does the same for its own threads. The soft limit is half the hard one (`limitRealtimeCPU`).
///
/// The handler is async-signal-safe: it reads the registered thread ids from a fixed table of atomics (made before
/// the handler is installed, written under a lock by ordinary code), calls `sched_setscheduler` for each, and marks
/// them dropped (negated). Then it puts the soft limit back: with each SIGXCPU the kernel raises it by a second,
/// past the hard limit, so the next runaway thread would meet the SIGKILL with no warning.
package enum RealtimeWatchdog {
    private static var capacity: Int { 16 }
    /// Thread ids; 0 is free, a negative id a thread the handler dropped. Made once, for the life of the process:
    /// `watch` touches it before installing the handler, which then finds it made (no `swift_once` lock, no malloc).
    /// One slot more, at `capacity`: the soft limit `limitRealtimeCPU` set, in µs (0: none set).
    nonisolated(unsafe) private static let table: UnsafeMutablePointer<Atomic<Int32>> = {
        let table = UnsafeMutablePointer<Atomic<Int32>>.allocate(capacity: capacity + 1)
        for slot in 0...capacity { (table + slot).initialize(to: Atomic(0)) }
        return table
    }()

    /// The soft limit the handler restores after each SIGXCPU.
    fileprivate static func keepSoftLimit(microseconds: rlim_t) {
        table[capacity].store(Int32(clamping: microseconds), ordering: .releasing)
    }
    private static let writers = Lock<Bool>(false)

    private static func slot(_ index: Int) -> Int32 { table[index].load(ordering: .acquiring) }

    /// Installs the SIGXCPU handler (once) and registers `thread`. Throws, and `thread` must then not be made real
    /// time, when the program handles or ignores SIGXCPU itself (EBUSY: the hard limit's SIGKILL would follow) or
    /// the table is full (EAGAIN).
    package static func watch(thread: Int32) throws(Errno) {
        try writers.withLock { (installed: inout Bool) throws(Errno) in
            if !installed {
                // The lazy statics the handler reads, made here: their first use allocates and locks.
                _ = (table, onSIGXCPU)
                var current = sigaction()
                guard sigaction(SIGXCPU, nil, &current) == 0 else { throw Errno.current }
                // nil is SIG_DFL: anything else is the program's.
                guard current.__sigaction_handler.sa_handler == nil else { throw Errno(EBUSY) }
                var action = sigaction()
                action.__sigaction_handler.sa_handler = onSIGXCPU
                action.sa_flags = SA_RESTART
                sigemptyset(&action.sa_mask)
                guard sigaction(SIGXCPU, &action, nil) == 0 else { throw Errno.current }
                installed = true
            }
            guard let free = (0..<capacity).first(where: { slot($0) == 0 || abs(slot($0)) == thread }) else {
                throw Errno(EAGAIN)
            }
            table[free].store(thread, ordering: .releasing)
        }
    }

    /// Registers `thread`, then has `makeRealtime` make it real time; when that is refused the thread leaves the
    /// table again (the table is for real-time threads). The one way a thread is raised under the watchdog: a
    /// thread must be watched before it is real time, or a SIGXCPU in between would find nothing to drop.
    /// `unwatched` turns `watch`'s refusal into the caller's error; the thread is then not made real time.
    package static func raise<Failure: Error>(
        thread: Int32, unwatched: (Errno) -> Failure, makeRealtime: () throws(Failure) -> Void
    ) throws(Failure) {
        do throws(Errno) { try watch(thread: thread) } catch { throw unwatched(error) }
        do throws(Failure) { try makeRealtime() } catch {
            forget(thread: thread)
            throw error
        }
    }

    /// Lets SIGXCPU reach the calling thread, which may block it: libpulse's loop thread blocks every signal,
    /// Dispatch's threads block SIGXCPU, and a thread inherits the mask of the thread that started it. The kernel
    /// sends RLIMIT_RTTIME's SIGXCPU to the process but gives it to the thread that ran too long when that thread
    /// does not block it, and the handler then runs at once; otherwise another thread takes it, which real-time
    /// threads busy on every core may keep from running until the hard limit's SIGKILL (seen in the tests on two
    /// cores). A thread made real time under the watchdog calls it first. Left blocked when the program handles
    /// SIGXCPU itself: `watch` then refuses, the thread stays as it was, and the program's handler must not start
    /// running on it. Two system calls (`sigaction` to read, `pthread_sigmask`), which neither lock nor wait.
    package static func unblockSIGXCPUOnThisThread() {
        var current = sigaction()
        guard sigaction(SIGXCPU, nil, &current) == 0 else { return }
        let handler = current.__sigaction_handler.sa_handler.map { unsafeBitCast($0, to: UnsafeRawPointer.self) }
        // nil is SIG_DFL, whose action (the end of the process) is the same on any thread.
        guard handler == nil || handler == unsafeBitCast(onSIGXCPU, to: UnsafeRawPointer.self) else { return }
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGXCPU)
        // Fails only for an invalid `how`: nothing to report.
        _ = pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    }

    /// Forgets `thread` (its thread ended, or was not made real time).
    package static func forget(thread: Int32) {
        writers.withLock { _ in
            for index in 0..<capacity where abs(slot(index)) == thread { table[index].store(0, ordering: .releasing) }
        }
    }

    /// Whether `thread` is in the table (watched, or dropped and not yet forgotten).
    package static func isWatched(thread: Int32) -> Bool {
        writers.withLock { _ in (0..<capacity).contains { abs(slot($0)) == thread } }
    }

    /// Whether the handler dropped `thread` from real time.
    package static func wasDropped(thread: Int32) -> Bool {
        writers.withLock { _ in (0..<capacity).contains { slot($0) == -thread } }
    }

    private static let onSIGXCPU: @convention(c) (Int32) -> Void = { _ in
        let saved = errno
        for index in 0..<RealtimeWatchdog.capacity {
            let thread = RealtimeWatchdog.table[index].load(ordering: .acquiring)
            guard thread > 0 else { continue }
            var parameters = sched_param()
            guard sched_setscheduler(thread, ThreadScheduling.droppedPolicy, &parameters) == 0 else { continue }
            // Marked only if the slot still holds it: a `forget` meanwhile wins.
            _ = RealtimeWatchdog.table[index].compareExchange(
                expected: thread, desired: -thread, ordering: .acquiringAndReleasing)
        }
        let soft = RealtimeWatchdog.table[RealtimeWatchdog.capacity].load(ordering: .acquiring)
        var limit = rlimit()
        let resource = __rlimit_resource_t(15)  // RLIMIT_RTTIME
        // getrlimit and setrlimit are system calls of their own (prlimit64), safe here as sched_setscheduler is.
        if soft > 0, getrlimit(resource, &limit) == 0, limit.rlim_cur > rlim_t(soft) {
            limit.rlim_cur = rlim_t(soft)
            _ = setrlimit(resource, &limit)
        }
        errno = saved
    }
}
