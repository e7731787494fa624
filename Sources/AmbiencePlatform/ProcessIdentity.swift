import Glibc

/// Who this process is to the system.
package enum ProcessIdentity {
    /// The process id (`getpid`): what PulseAudio records as a stream's `application.process.id`.
    package static var current: Int32 { getpid() }
}
