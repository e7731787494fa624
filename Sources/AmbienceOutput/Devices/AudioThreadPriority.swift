import AmbienceCore
import AmbiencePlatform
import Synchronization

/// What the output's audio thread obtained from the system, as read back from the kernel once granted.
package enum AudioThreadPriority: Sendable, Equatable, CustomStringConvertible {
    /// Who granted it.
    package enum Grantor: Sendable, Equatable {
        case rtkit
        /// The kernel itself, to a process allowed to ask (CAP_SYS_NICE, RLIMIT_RTPRIO or RLIMIT_NICE).
        case kernel
        /// Nobody: the thread was real time already, as high or higher (PipeWire raises its own threads).
        case alreadySet
    }
    /// Not asked yet: the audio thread has not run, or the request is under way.
    case pending
    /// SCHED_RR at `priority`.
    case realtime(priority: Int, via: Grantor)
    /// A normal thread at the nice level `level`.
    case nice(level: Int, via: Grantor)
    /// Real time at `priority` was granted, then dropped when the thread ran past RLIMIT_RTTIME's soft limit
    /// without blocking (SIGXCPU, `RealtimeWatchdog`); the thread kept the nice level `level`.
    case dropped(priority: Int, level: Int)
    /// Nothing was obtained; the thread runs as it was. `reason` says what each way answered.
    case none(reason: String)

    package var description: String {
        switch self {
        case .pending: "pending"
        case .realtime(let priority, .alreadySet): "realtime \(priority), set before the engine asked"
        case .realtime(let priority, let via):
            "realtime \(priority) via \(via == .rtkit ? "rtkit" : "sched_setscheduler")"
        case .nice(let level, let via): "nice \(level) via \(via == .rtkit ? "rtkit" : "setpriority")"
        case .dropped(let priority, let level):
            "nice \(level), realtime \(priority) dropped after SIGXCPU (it ran past RLIMIT_RTTIME's soft limit)"
        case .none(let reason): "none: \(reason)"
        }
    }

    /// The real-time priority asked for: below the sound servers' own threads (PulseAudio's is 5, PipeWire's take
    /// rtkit's maximum, 20), so the server that plays our blocks is never kept waiting by our mixing of the next.
    static let realtimePriority = 4
    /// The nice level asked of the kernel: SDL's for its audio thread (`SDL_THREAD_PRIORITY_TIME_CRITICAL`).
    static let niceLevel = -20
    /// RLIMIT_RTTIME set before a real-time request to the kernel, when no rtkit says what it wants: rtkit's default.
    static let realtimeCPUMicroseconds = 200_000
}

/// The ways a thread may be raised, as `AudioThreadPriority.negotiate` uses them: rtkit's calls and the kernel's.
/// The engine's is the facade's `SystemPriorityGrantor` (rtkit over the desktop layer's D-Bus, on the system bus the
/// configuration names), handed down to the outputs so that this layer needs no bus; tests of the order give replies
/// shaped as rtkit's. The kernel's ways have the system's answers by default.
package protocol PriorityGranting {
    /// rtkit's limits, or why rtkit cannot be asked (no system bus, no daemon on it).
    func rtkitLimits() throws(DesktopError) -> ThreadScheduling.Limits
    /// rtkit's `MakeThreadRealtime`, the thread watched by `RealtimeWatchdog` first (`RealtimeWatchdog.raise`).
    func rtkitRealtime(thread: Int32, priority: Int) throws(DesktopError)
    /// rtkit's `MakeThreadHighPriority`.
    func rtkitHighPriority(thread: Int32, level: Int) throws(DesktopError)
    /// Lowers RLIMIT_RTTIME to at most `microseconds`.
    func limitRealtimeCPU(microseconds: Int) throws(Errno)
    /// The kernel's SCHED_RR, the thread watched by `RealtimeWatchdog` first.
    func kernelRealtime(thread: Int32, priority: Int) throws(Errno)
    /// The kernel's nice level.
    func kernelNice(thread: Int32, level: Int) throws(Errno)
    /// The thread's scheduling as the kernel reports it now.
    func scheduling(of thread: Int32) throws(Errno) -> ThreadScheduling
}

extension PriorityGranting {
    package func limitRealtimeCPU(microseconds: Int) throws(Errno) {
        try ThreadScheduling.limitRealtimeCPU(toMicroseconds: microseconds)
    }
    package func kernelRealtime(thread: Int32, priority: Int) throws(Errno) {
        try RealtimeWatchdog.raise(
            thread: thread, unwatched: { $0 },
            makeRealtime: { () throws(Errno) in try ThreadScheduling.setRealtime(thread: thread, priority: priority) })
    }
    package func kernelNice(thread: Int32, level: Int) throws(Errno) {
        try ThreadScheduling.setNice(thread: thread, nice: level)
    }
    package func scheduling(of thread: Int32) throws(Errno) -> ThreadScheduling {
        try ThreadScheduling.of(thread: thread)
    }
}

extension AudioThreadPriority {
    /// Raises `thread` as `policy` says, the first way that works. `.raised`: rtkit's lowest nice level, else the
    /// kernel's nice −20. `.realtime`: rtkit real time (SCHED_RR at a low priority) over rtkit's lowest nice level,
    /// else that nice level alone; the kernel's real time over nice −20, else nice −20 alone. Else nothing, with
    /// every refusal in the reason. What was granted is read back from the kernel: the report says what the thread
    /// has. `.unchanged` asks nothing.
    static func negotiate(
        thread: Int32, policy: AudioThreadPolicy, with grantor: some PriorityGranting
    ) -> AudioThreadPriority {
        if policy == .unchanged { return .none(reason: "not asked (unchanged)") }
        let asksRealtime = policy == .realtime
        // A thread raised already (SDL's pipewire driver calls back on PipeWire's thread, which PipeWire's module-rt
        // raises) is not lowered to ours; any real time is above a nice level.
        if let before = try? grantor.scheduling(of: thread), before.isRealtime,
            !asksRealtime || before.realtimePriority >= realtimePriority
        {
            return .realtime(priority: Int(before.realtimePriority), via: .alreadySet)
        }
        var refusals: [String] = []
        func readBack(_ claimed: AudioThreadPriority) -> AudioThreadPriority {
            guard let now = try? grantor.scheduling(of: thread) else { return claimed }
            switch claimed {
            case .realtime(_, let via) where now.isRealtime:
                return .realtime(priority: Int(now.realtimePriority), via: via)
            case .nice(_, let via) where !now.isRealtime: return .nice(level: Int(now.nice), via: via)
            default: return .none(reason: "granted \(claimed), yet the kernel reports \(now)")
            }
        }
        // The nice level is asked first, then real time on top: a thread dropped from real time (RealtimeWatchdog)
        // keeps the nice level, which SCHED_RR leaves untouched.
        do throws(DesktopError) {
            let limits = try grantor.rtkitLimits()
            let level = max(limits.minNiceLevel, niceLevel)
            var niceGranted = false
            if level < 0 {
                do throws(DesktopError) {
                    try grantor.rtkitHighPriority(thread: thread, level: level)
                    niceGranted = true
                } catch { refusals.append("rtkit refused nice \(level) (\(error))") }
            }
            let priority = min(realtimePriority, limits.maxRealtimePriority)
            if asksRealtime && priority >= 1 {
                do throws(Errno) {
                    try grantor.limitRealtimeCPU(microseconds: limits.realtimeCPUMicrosecondsMax)
                    do throws(DesktopError) {
                        try grantor.rtkitRealtime(thread: thread, priority: priority)
                        return readBack(.realtime(priority: priority, via: .rtkit))
                    } catch { refusals.append("rtkit refused realtime \(priority) (\(error))") }
                } catch { refusals.append("RLIMIT_RTTIME not lowered for rtkit (\(error))") }
            }
            if niceGranted { return readBack(.nice(level: level, via: .rtkit)) }
        } catch { refusals.append("no rtkit (\(error))") }
        var kernelNiceGranted = false
        do throws(Errno) {
            try grantor.kernelNice(thread: thread, level: niceLevel)
            kernelNiceGranted = true
        } catch { refusals.append("setpriority: \(error)") }
        if asksRealtime {
            do throws(Errno) {
                try grantor.limitRealtimeCPU(microseconds: realtimeCPUMicroseconds)
                try grantor.kernelRealtime(thread: thread, priority: realtimePriority)
                return readBack(.realtime(priority: realtimePriority, via: .kernel))
            } catch { refusals.append("sched_setscheduler: \(error)") }
        }
        if kernelNiceGranted { return readBack(.nice(level: niceLevel, via: .kernel)) }
        return .none(reason: refusals.joined(separator: "; "))
    }
}

/// An output's audio thread, and the priority asked for it off the audio path.
///
/// The thread's kernel id is recorded on that thread once (`recordIfNeeded`: an atomic load per block, and one
/// `gettid` at the first, a call that neither locks nor waits), and a thread of the engine's own then asks rtkit
/// and the kernel (`AudioThreadPriority.negotiate`, through the grantor the engine handed down), which takes D-Bus
/// round trips the audio thread must not wait for. What is asked is the configuration's `AudioThreadPolicy`, as
/// `AMBIENCE_REALTIME` may override it (`0` asks for nothing: a debugger stopping a real-time thread past
/// RLIMIT_RTTIME would have the kernel end the process).
///
/// The output closes it in two steps: `stopAsking` before it joins its audio thread, `threadEnded` after. A thread
/// made real time stays in the watchdog's table until it has ended: until the join it may still run.
final class AudioThreadRaise: Sendable {
    /// How long the request waits for the audio thread's first block before giving up.
    static let firstBlockSeconds = 5.0
    private let threadID = Atomic<Int32>(0)
    private let obtained = Lock<AudioThreadPriority>(.pending)
    /// Set under `obtained`'s lock: the output is closing (`stopAsking`), and its thread has ended (`threadEnded`).
    private let closed = Atomic<Bool>(false)
    private let ended = Atomic<Bool>(false)
    /// Whether a request was started: `recordIfNeeded` records nothing otherwise.
    private let asks: Bool
    /// Whether real time is asked, so that SIGXCPU must reach the thread (`recordIfNeeded`).
    private let asksRealtime: Bool

    /// Starts the request `policy` (as `AMBIENCE_REALTIME` leaves it) makes on a thread of its own, which waits for
    /// `recordIfNeeded` (or `stopAsking`) and then asks through the grantor `grantor` makes there (a connection to
    /// the system bus, made off the game's thread).
    init(
        output: String, policy chosen: AudioThreadPolicy,
        grantor: @escaping @Sendable () -> any PriorityGranting
    ) {
        // `isKernelThreadIDAvailable`'s first use (swift_once and dlsym, which lock) is made here, off the audio
        // thread, whatever the path.
        let threadIDWorks = isKernelThreadIDAvailable
        let policy = AudioThreadPolicy.effective(chosen)
        asks = policy != .unchanged && threadIDWorks
        asksRealtime = asks && policy == .realtime
        guard policy != .unchanged else {
            let why = chosen == .unchanged ? "the configuration" : "AMBIENCE_REALTIME=0"
            obtained.withLock { $0 = .none(reason: "not asked (\(why))") }
            return
        }
        guard threadIDWorks else {
            obtained.withLock { $0 = .none(reason: "this libc has no gettid") }
            return
        }
        let started = WorkerThread.detached(name: "ambience-priority") { [self] in
            let deadline = monotonicDeadline(afterSeconds: Self.firstBlockSeconds)
            var thread: Int32 = 0
            while thread == 0 && !closed.load(ordering: .acquiring) && monotonicNanoseconds() < deadline {
                sleep(milliseconds: 5)
                thread = threadID.load(ordering: .acquiring)
            }
            guard !closed.load(ordering: .acquiring) else {
                return obtained.withLock { $0 = .none(reason: "the output closed") }
            }
            guard thread != 0 else {
                return obtained.withLock { $0 = .none(reason: "the audio thread did not run") }
            }
            let result = AudioThreadPriority.negotiate(thread: thread, policy: policy, with: grantor())
            // Under the lock `stopAsking` takes to say it closed, so no line comes after the close (a program's last).
            obtained.withLock { answer in
                // A refusal for a thread that is gone is no refusal: nothing to warn of.
                guard !closed.load(ordering: .acquiring) else {
                    answer = .none(reason: "the output closed")
                    // `threadEnded` came while `negotiate` ran, and may have cleared the table before the watchdog
                    // took the thread: the entry is for a thread that is gone. Before the end, `threadEnded` clears it.
                    if ended.load(ordering: .acquiring) { RealtimeWatchdog.forget(thread: thread) }
                    return
                }
                answer = result
                if case .none = result {
                    Log.warning("output: \(output)'s audio thread keeps its priority: \(result)")
                } else {
                    Log.info("output: \(output)'s audio thread runs at \(result)")
                }
            }
        }
        if !started { obtained.withLock { $0 = .none(reason: "no thread to ask from") } }
    }

    /// The thread's id once recorded; 0 before.
    private var recordedThread: Int32 { threadID.load(ordering: .acquiring) }
    /// The thread's kernel id once recorded; nil before.
    var kernelThread: Int32? { recordedThread == 0 ? nil : recordedThread }

    /// On the audio thread: records its id the first time. When real time is asked it first lets SIGXCPU through
    /// (`RealtimeWatchdog.unblockSIGXCPUOnThisThread`, one system call that neither locks nor waits), so that the
    /// watchdog's handler runs on the thread that ran too long: libpulse's loop blocks every signal, and SDL's thread
    /// inherits the mask of the thread that opened it (Dispatch's threads block SIGXCPU). Elsewhere the signal waits
    /// for another thread, which the real-time thread may keep from running until the hard limit's SIGKILL.
    func recordIfNeeded() {
        guard asks, threadID.load(ordering: .relaxed) == 0 else { return }
        if asksRealtime { RealtimeWatchdog.unblockSIGXCPUOnThisThread() }
        threadID.store(currentKernelThreadID(), ordering: .releasing)
    }

    /// The output is closing, before it joins its audio thread: a request still waiting for the first block stops
    /// waiting, and one under way logs nothing (its answer is `.none(reason: "the output closed")`).
    func stopAsking() {
        obtained.withLock { _ in closed.store(true, ordering: .releasing) }
    }

    /// The output's audio thread has ended (joined, or it never ran): it leaves the watchdog's table. Not before the
    /// join: a real-time thread that leaves the table while it still runs would not be dropped at SIGXCPU, and the
    /// hard limit's SIGKILL would end the process. Stops the request too, if `stopAsking` did not.
    func threadEnded() {
        obtained.withLock { _ in
            closed.store(true, ordering: .releasing)
            ended.store(true, ordering: .releasing)
        }
        if recordedThread != 0 { RealtimeWatchdog.forget(thread: recordedThread) }
    }

    /// What the thread obtained; `.pending` until the request is answered. A thread the kernel warned about (it ran
    /// half RLIMIT_RTTIME without blocking) was dropped to normal scheduling, and says so.
    var priority: AudioThreadPriority {
        let answer = obtained.withLock { $0 }
        guard case .realtime(let priority, let via) = answer, via != .alreadySet, recordedThread != 0,
            RealtimeWatchdog.wasDropped(thread: recordedThread)
        else { return answer }
        return .dropped(priority: priority, level: Int((try? ThreadScheduling.of(thread: recordedThread))?.nice ?? 0))
    }

    /// What the thread obtained, waiting up to `seconds` for the answer.
    func priority(waitingUpTo seconds: Double) -> AudioThreadPriority {
        let deadline = monotonicDeadline(afterSeconds: seconds)
        while priority == .pending && monotonicNanoseconds() < deadline { sleep(milliseconds: 5) }
        return priority
    }
}
