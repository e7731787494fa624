import Glibc

/// What the process has used so far, for measurements.
package enum ProcessUsage {
    /// CPU time of every thread of the process, in seconds (`CLOCK_PROCESS_CPUTIME_ID`).
    package static var cpuSeconds: Double {
        var ts = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// The largest resident set the process has had, in bytes.
    package static var peakRSSBytes: Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss * 1024
    }

    /// The resident set now, in bytes (`/proc/self/statm`), or 0 when it cannot be read.
    package static var residentBytes: Int {
        guard let text = try? FileDescriptor(opening: "/proc/self/statm", flags: O_RDONLY).readBytes(256) else {
            return 0
        }
        // "size resident shared text lib data dt", in pages.
        let fields = text.split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return 0 }
        return pages * sysconf(Int32(_SC_PAGESIZE))
    }

    /// The resident set after glibc has handed its free memory back to the system (`malloc_trim`): what the
    /// process holds, not what its allocator keeps for later.
    package static var residentBytesAfterTrim: Int {
        typealias Trim = @convention(c) (Int) -> Int32
        if let trim = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
            _ = unsafeBitCast(trim, to: Trim.self)(0)
        }
        return residentBytes
    }

    /// A monotonic clock in nanoseconds.
    package static var monotonicNanoseconds: Int { AmbiencePlatform.monotonicNanoseconds() }
}
