import Glibc

/// The calling thread's CPU time and context switches. Between two readings they tell a call that was preempted
/// (an involuntary switch) from one that waited (a voluntary switch: a lock or I/O) from one that simply ran.
package struct ThreadUsage: Sendable {
    package var cpuNanoseconds: Int
    package var voluntarySwitches: Int
    package var involuntarySwitches: Int

    package static func current() -> ThreadUsage {
        var cpu = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu)
        var usage = rusage()
        getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD, which Glibc's module does not name
        return ThreadUsage(
            cpuNanoseconds: cpu.tv_sec * 1_000_000_000 + cpu.tv_nsec,
            voluntarySwitches: usage.ru_nvcsw, involuntarySwitches: usage.ru_nivcsw)
    }
}
