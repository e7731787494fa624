import AmbiencePlatform
import Foundation
import Glibc
import Synchronization
import Testing

@testable import AmbienceCore
@testable import AmbienceOutput
@testable import AmbienceTestSupport

/// The order in which the audio thread's priority is asked, over replies shaped as rtkit and the kernel give them.
@Suite struct AudioThreadPriorityRuleTests {
    /// rtkit's answers and the kernel's, scripted; every request is recorded.
    final class ScriptedGrantor: PriorityGranting, @unchecked Sendable {
        var limits: Result<ThreadScheduling.Limits, DesktopError> = .success(
            ThreadScheduling.Limits(maxRealtimePriority: 20, minNiceLevel: -15, realtimeCPUMicrosecondsMax: 200_000))
        var rtkitRealtimeRefusal: DesktopError?
        var rtkitNiceRefusal: DesktopError?
        var kernelRealtimeRefusal: Errno?
        var kernelNiceRefusal: Errno?
        /// What the kernel reports after the grant; nil: what was granted.
        var reported: ThreadScheduling?
        private(set) var requests: [String] = []
        /// The thread's scheduling now: normal at first, then what was granted.
        var granted = ThreadScheduling(isRealtime: false, realtimePriority: 0, nice: 0)

        func rtkitLimits() throws(DesktopError) -> ThreadScheduling.Limits { try limits.get() }
        func rtkitRealtime(thread: Int32, priority: Int) throws(DesktopError) {
            requests.append("rtkit realtime \(priority) for \(thread)")
            if let rtkitRealtimeRefusal { throw rtkitRealtimeRefusal }
            granted = ThreadScheduling(isRealtime: true, realtimePriority: Int32(priority), nice: 0)
        }
        func rtkitHighPriority(thread: Int32, level: Int) throws(DesktopError) {
            requests.append("rtkit nice \(level) for \(thread)")
            if let rtkitNiceRefusal { throw rtkitNiceRefusal }
            granted = ThreadScheduling(isRealtime: false, realtimePriority: 0, nice: Int32(level))
        }
        func limitRealtimeCPU(microseconds: Int) throws(Errno) { requests.append("RLIMIT_RTTIME \(microseconds)") }
        func kernelRealtime(thread: Int32, priority: Int) throws(Errno) {
            requests.append("kernel realtime \(priority)")
            if let kernelRealtimeRefusal { throw kernelRealtimeRefusal }
            granted = ThreadScheduling(isRealtime: true, realtimePriority: Int32(priority), nice: 0)
        }
        func kernelNice(thread: Int32, level: Int) throws(Errno) {
            requests.append("kernel nice \(level)")
            if let kernelNiceRefusal { throw kernelNiceRefusal }
            granted = ThreadScheduling(isRealtime: false, realtimePriority: 0, nice: Int32(level))
        }
        func scheduling(of thread: Int32) throws(Errno) -> ThreadScheduling { reported ?? granted }
    }

    /// rtkit's refusal, as it sends it: AccessDenied with strerror(EPERM).
    static let accessDenied = DesktopError.remoteError(
        name: "org.freedesktop.DBus.Error.AccessDenied", message: "Operation not permitted")
    /// The bus's answer when no rtkit runs there.
    static let noRtkit = DesktopError.remoteError(
        name: "org.freedesktop.DBus.Error.ServiceUnknown",
        message: "The name org.freedesktop.RealtimeKit1 was not provided by any .service files")

    @Test func rtkitRealtimeComesFirstAfterTheRealtimeCPULimitItRequires() {
        let grantor = ScriptedGrantor()
        let obtained = AudioThreadPriority.negotiate(thread: 42, policy: .realtime, with: grantor)
        #expect(obtained == .realtime(priority: 4, via: .rtkit))
        #expect(obtained.description == "realtime 4 via rtkit")
        #expect(grantor.requests == ["rtkit nice -15 for 42", "RLIMIT_RTTIME 200000", "rtkit realtime 4 for 42"])
    }

    @Test func aLowerRtkitMaximumIsAskedForInstead() {
        let grantor = ScriptedGrantor()
        grantor.limits = .success(.init(maxRealtimePriority: 2, minNiceLevel: -15, realtimeCPUMicrosecondsMax: 50_000))
        #expect(
            AudioThreadPriority.negotiate(thread: 7, policy: .realtime, with: grantor)
                == .realtime(priority: 2, via: .rtkit))
        #expect(grantor.requests == ["rtkit nice -15 for 7", "RLIMIT_RTTIME 50000", "rtkit realtime 2 for 7"])
    }

    @Test func rtkitRefusingRealtimeIsAskedForItsLowestNiceLevel() {
        let grantor = ScriptedGrantor()
        grantor.rtkitRealtimeRefusal = Self.accessDenied
        let obtained = AudioThreadPriority.negotiate(thread: 42, policy: .realtime, with: grantor)
        #expect(obtained == .nice(level: -15, via: .rtkit))
        #expect(obtained.description == "nice -15 via rtkit")
        #expect(grantor.requests == ["rtkit nice -15 for 42", "RLIMIT_RTTIME 200000", "rtkit realtime 4 for 42"])
    }

    @Test func withoutRtkitTheKernelIsAskedThenNothingIsLeft() {
        let grantor = ScriptedGrantor()
        grantor.limits = .failure(Self.noRtkit)
        #expect(
            AudioThreadPriority.negotiate(thread: 42, policy: .realtime, with: grantor)
                == .realtime(priority: 4, via: .kernel))
        #expect(grantor.requests == ["kernel nice -20", "RLIMIT_RTTIME 200000", "kernel realtime 4"])

        let refused = ScriptedGrantor()
        refused.limits = .failure(Self.noRtkit)
        refused.kernelRealtimeRefusal = Errno(EPERM)
        #expect(
            AudioThreadPriority.negotiate(thread: 42, policy: .realtime, with: refused)
                == .nice(level: -20, via: .kernel))

        let nothing = ScriptedGrantor()
        nothing.rtkitRealtimeRefusal = Self.accessDenied
        nothing.rtkitNiceRefusal = Self.accessDenied
        nothing.kernelRealtimeRefusal = Errno(EPERM)
        nothing.kernelNiceRefusal = Errno(EACCES)
        let obtained = AudioThreadPriority.negotiate(thread: 42, policy: .realtime, with: nothing)
        guard case .none(let reason) = obtained else {
            Issue.record("obtained \(obtained)")
            return
        }
        // Every way is named with its answer, in the order tried.
        #expect(
            nothing.requests == [
                "rtkit nice -15 for 42", "RLIMIT_RTTIME 200000", "rtkit realtime 4 for 42", "kernel nice -20",
                "RLIMIT_RTTIME 200000", "kernel realtime 4"
            ])
        #expect(reason.contains("rtkit refused realtime 4 (org.freedesktop.DBus.Error.AccessDenied"))
        #expect(reason.contains("rtkit refused nice -15"))
        #expect(reason.contains("sched_setscheduler: \(Errno(EPERM))"))
        #expect(reason.contains("setpriority: \(Errno(EACCES))"))
        #expect(obtained.description.hasPrefix("none: rtkit refused nice -15"))
    }

    @Test func aThreadRealtimeAlreadyAtOurPriorityOrAboveIsLeftAsItIs() {
        let grantor = ScriptedGrantor()
        grantor.granted = ThreadScheduling(isRealtime: true, realtimePriority: 20, nice: 0)
        let obtained = AudioThreadPriority.negotiate(thread: 42, policy: .realtime, with: grantor)
        #expect(obtained == .realtime(priority: 20, via: .alreadySet))
        #expect(obtained.description == "realtime 20, set before the engine asked")
        #expect(grantor.requests.isEmpty)
        // Below ours, it is raised as any other.
        let low = ScriptedGrantor()
        low.granted = ThreadScheduling(isRealtime: true, realtimePriority: 1, nice: 0)
        #expect(
            AudioThreadPriority.negotiate(thread: 42, policy: .realtime, with: low)
                == .realtime(priority: 4, via: .rtkit))
    }

    @Test func theRaisedLevelAsksOnlyForANiceLevelAndNoRealTime() {
        let grantor = ScriptedGrantor()
        let obtained = AudioThreadPriority.negotiate(thread: 42, policy: .raised, with: grantor)
        #expect(obtained == .nice(level: -15, via: .rtkit))
        #expect(obtained.description == "nice -15 via rtkit")
        // No RLIMIT_RTTIME lowered, no real time asked (so no SIGXCPU handler installed: only real time installs it).
        #expect(grantor.requests == ["rtkit nice -15 for 42"])

        let withoutRtkit = ScriptedGrantor()
        withoutRtkit.limits = .failure(Self.noRtkit)
        #expect(
            AudioThreadPriority.negotiate(thread: 42, policy: .raised, with: withoutRtkit)
                == .nice(
                    level: -20, via: .kernel))
        #expect(withoutRtkit.requests == ["kernel nice -20"])

        let refused = ScriptedGrantor()
        refused.rtkitNiceRefusal = Self.accessDenied
        refused.kernelNiceRefusal = Errno(EACCES)
        let none = AudioThreadPriority.negotiate(thread: 42, policy: .raised, with: refused)
        #expect(refused.requests == ["rtkit nice -15 for 42", "kernel nice -20"])
        guard case .none(let reason) = none else {
            Issue.record("obtained \(none)")
            return
        }
        #expect(reason.contains("rtkit refused nice -15") && reason.contains("setpriority: \(Errno(EACCES))"))
        #expect(!reason.contains("realtime") && !reason.contains("sched_setscheduler"), "\(reason)")

        // A thread real time already (PipeWire's) is above any nice level: left as it is, at any priority.
        let pipewire = ScriptedGrantor()
        pipewire.granted = ThreadScheduling(isRealtime: true, realtimePriority: 1, nice: 0)
        #expect(
            AudioThreadPriority.negotiate(thread: 42, policy: .raised, with: pipewire)
                == .realtime(
                    priority: 1, via: .alreadySet))
        #expect(pipewire.requests.isEmpty)
    }

    @Test func unchangedAsksNothing() {
        let grantor = ScriptedGrantor()
        let obtained = AudioThreadPriority.negotiate(thread: 42, policy: .unchanged, with: grantor)
        #expect(obtained == .none(reason: "not asked (unchanged)"))
        #expect(grantor.requests.isEmpty)
    }

    @Test func theEnvironmentOverridesTheConfiguration() {
        let unset: (String) -> String? = { _ in nil }
        for policy in AudioThreadPolicy.allCases {
            #expect(AudioThreadPolicy.effective(policy, environment: unset) == policy)
            #expect(
                AudioThreadPolicy.effective(policy, environment: { $0 == "AMBIENCE_REALTIME" ? "0" : nil })
                    == .unchanged)
            #expect(
                AudioThreadPolicy.effective(policy, environment: { $0 == "AMBIENCE_REALTIME" ? "1" : nil }) == .realtime
            )
            // A value it does not know leaves the configuration's choice.
            #expect(
                AudioThreadPolicy.effective(policy, environment: { $0 == "AMBIENCE_REALTIME" ? "yes" : nil }) == policy)
        }
    }

    @Test func whatTheKernelReportsIsWhatIsSaid() {
        let grantor = ScriptedGrantor()
        grantor.reported = ThreadScheduling(isRealtime: false, realtimePriority: 0, nice: 0)
        let obtained = AudioThreadPriority.negotiate(thread: 42, policy: .realtime, with: grantor)
        #expect(obtained == .none(reason: "granted realtime 4 via rtkit, yet the kernel reports nice 0"))
    }
}
