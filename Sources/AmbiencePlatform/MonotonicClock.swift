import Glibc

/// Nanoseconds on the monotonic clock: the one clock the engine measures time by (render cost, deadlines, paces).
package func monotonicNanoseconds() -> Int {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// Sleeps until `deadline` on the monotonic clock (nanoseconds, as `monotonicNanoseconds()` counts them), resuming
/// through signals: for loops paced by a schedule (a command's frame loop, a benchmark's poll). A thread that must
/// stop on request waits on its `WorkerThread` instead. A deadline already past returns at once.
package func sleepUntil(monotonicNanoseconds deadline: Int) {
    guard deadline > 0 else { return }
    var time = timespec(tv_sec: deadline / 1_000_000_000, tv_nsec: deadline % 1_000_000_000)
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
}

/// The monotonic time `seconds` from now, in nanoseconds: a negative or NaN wait is now, and a huge one saturates at
/// about a century rather than trapping (`Int(seconds * 1e9)` would, and so would the addition).
package func monotonicDeadline(afterSeconds seconds: Double) -> Int {
    let wait = seconds.isNaN ? 0 : min(max(seconds, 0), 3.15e9)
    return monotonicNanoseconds() + (wait * 1e9).saturated(Int.self)
}

/// Sleeps `milliseconds` on the monotonic clock (a negative count does not sleep): for a short pause between retries.
/// A thread that must stop on request waits on its `WorkerThread` instead.
package func sleep(milliseconds: Int) {
    guard milliseconds > 0 else { return }
    let (nanoseconds, overflow) = milliseconds.multipliedReportingOverflow(by: 1_000_000)
    let (deadline, overflow2) = monotonicNanoseconds().addingReportingOverflow(overflow ? .max : nanoseconds)
    sleepUntil(monotonicNanoseconds: overflow2 ? .max : deadline)
}

/// Sleeps for `duration` on the monotonic clock, resuming through signals (a negative one does not sleep): for a loop
/// paced by `Duration`s (the game host's frames). Past about a century it saturates rather than trapping.
package func sleep(for duration: Duration) {
    let (seconds, attoseconds) = duration.components
    guard seconds > 0 || (seconds == 0 && attoseconds > 0) else { return }
    let (whole, overflow) = Int(clamping: seconds).multipliedReportingOverflow(by: 1_000_000_000)
    let (sum, overflowAgain) = whole.addingReportingOverflow(Int(attoseconds / 1_000_000_000))
    let nanoseconds = overflow || overflowAgain ? Int.max : sum
    let (deadline, overflow2) = monotonicNanoseconds().addingReportingOverflow(max(nanoseconds, 0))
    sleepUntil(monotonicNanoseconds: overflow2 ? .max : deadline)
}
