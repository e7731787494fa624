import Glibc

/// The calling thread's CPU time and context switches. Between two readings they tell a call that was preempted
/// (an involuntary switch) from one that waited (a voluntary switch: a lock or I/O) from one that simply ran.
package struct ThreadUsage: Sendable {
    package var cpuNanoseconds: Int
    package var voluntarySwitches: Int
    package var involuntarySwitches: Int

    /// The calling thread's CPU time so far, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`).
    package static var cpuNanoseconds: Int {
        var cpu = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu)
        return cpu.tv_sec * 1_000_000_000 + cpu.tv_nsec
    }

    package static func current() -> ThreadUsage {
        let cpu = cpuNanoseconds
        var usage = rusage()
        getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD, which Glibc's module does not name
        return ThreadUsage(
            cpuNanoseconds: cpu,
            voluntarySwitches: usage.ru_nvcsw, involuntarySwitches: usage.ru_nivcsw)
    }
}
