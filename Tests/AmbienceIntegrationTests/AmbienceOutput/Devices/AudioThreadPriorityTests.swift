import AmbiencePlatform
import Foundation
import Glibc
import Synchronization
import Testing

@testable import Ambience
@testable import AmbienceDesktop
@testable import AmbienceIntegrationSupport
@testable import AmbienceOutput
@testable import AmbienceTestSupport

extension SoundServerSuites {
    @Suite(
        .offTheCooperativePool, .timeLimit(.minutes(2)), .serialized,
        .enabled(if: PulseServer.isRunning, "needs the private services of scripts/with-services.sh"))
    struct AudioThreadPriorityTests {
        /// with-services' system bus, when rtkit runs on it (with-services warns when polkitd or rtkit did not start).
        static var systemBus: String? {
            let environment = ProcessInfo.processInfo.environment
            return environment["AMBIENCE_TEST_RTKIT"] == "1" ? environment["DBUS_SYSTEM_BUS_ADDRESS"] : nil
        }
        /// The tests that ask rtkit run only where it runs.
        static let withRtkit = ConditionTrait.enabled(
            if: systemBus != nil, "needs rtkit-daemon on with-services' system bus (see its warning)")

        /// A thread that parks until the test is done with it, and its kernel id.
        final class ParkedThread: Sendable {
            let id = Atomic<Int32>(0)
            let release = Atomic<Bool>(false)
            init() {
                WorkerThread.detached(name: "rt-test") { [self] in
                    id.store(currentKernelThreadID(), ordering: .releasing)
                    while !release.load(ordering: .acquiring) { usleep(2_000) }
                }
            }
            func kernelID() throws -> Int32 {
                #expect(eventually { self.id.load(ordering: .acquiring) != 0 })
                return id.load(ordering: .acquiring)
            }
            deinit { release.store(true, ordering: .releasing) }
        }

        @Test(AudioThreadPriorityTests.withRtkit) func rtkitMakesTheThreadRealtimeAndTheKernelSaysSo() throws {
            let bus = try #require(Self.systemBus)
            let parked = ParkedThread()
            let thread = try parked.kernelID()
            // Out of the watchdog's table before its id is free for another thread (it only sleeps till then).
            defer { RealtimeWatchdog.forget(thread: thread) }
            let obtained = AudioThreadPriority.negotiate(
                thread: thread, policy: .realtime, with: SystemPriorityGrantor(systemBus: bus))
            #expect(obtained == .realtime(priority: 4, via: .rtkit))
            let now = try ThreadScheduling.of(thread: thread)
            #expect(now.isRealtime && now.realtimePriority == 4, "\(now)")
            // rtkit's condition, kept by the process: RLIMIT_RTTIME at most its RTTimeUSecMax.
            let limits = try RealtimeKit(address: bus).limits()
            #expect(try ThreadScheduling.limitRealtimeCPU(toMicroseconds: .max) <= limits.realtimeCPUMicrosecondsMax)
        }

        @Test(AudioThreadPriorityTests.withRtkit) func rtkitRefusesAboveItsMaximumAndTheThreadStaysAsItWas() throws {
            let bus = try #require(Self.systemBus)
            let parked = ParkedThread()
            let thread = try parked.kernelID()
            let rtkit = try RealtimeKit(address: bus)
            let limits = try rtkit.limits()
            try ThreadScheduling.limitRealtimeCPU(toMicroseconds: limits.realtimeCPUMicrosecondsMax)
            #expect(
                throws: DesktopError.remoteError(
                    name: "org.freedesktop.DBus.Error.AccessDenied", message: "Operation not permitted")
            ) {
                try rtkit.makeRealtime(thread: thread, priority: limits.maxRealtimePriority + 1)
            }
            #expect(throws: DesktopError.self) {
                try rtkit.makeHighPriority(thread: thread, level: limits.minNiceLevel - 1)
            }
            #expect(
                try ThreadScheduling.of(thread: thread)
                    == ThreadScheduling(isRealtime: false, realtimePriority: 0, nice: 0))
            // Thread 1 is another process's (init's, or the container's first): not ours to raise.
            #expect(throws: DesktopError.self) { try rtkit.makeRealtime(thread: 1, priority: 1) }
        }

        /// A real-time thread that runs past RLIMIT_RTTIME's soft limit without blocking is dropped to its nice level
        /// by the SIGXCPU handler, before the hard limit's SIGKILL would end the process (this one).
        @Test(AudioThreadPriorityTests.withRtkit) func aThreadThatNeverBlocksIsDroppedNotKilled() throws {
            let bus = try #require(Self.systemBus)
            let outcome = Lock<(obtained: AudioThreadPriority, after: ThreadScheduling?)>((.pending, nil))
            let done = Atomic<Bool>(false)
            WorkerThread.detached(name: "rt-spin") {
                let me = currentKernelThreadID()
                // As an output's thread does: this one inherits a test thread's mask, which Dispatch's threads make
                // block SIGXCPU, and the signal would wait for a thread that two spinning cores keep from running.
                RealtimeWatchdog.unblockSIGXCPUOnThisThread()
                let obtained = AudioThreadPriority.negotiate(
                    thread: me, policy: .realtime, with: SystemPriorityGrantor(systemBus: bus))
                defer { RealtimeWatchdog.forget(thread: me) }
                // Spins without a blocking call for at most 1 s of wall time, until the handler has dropped it.
                let end = monotonicNanoseconds() + 1_000_000_000
                while monotonicNanoseconds() < end && !RealtimeWatchdog.wasDropped(thread: me) {}
                outcome.withLock { $0 = (obtained, try? ThreadScheduling.of(thread: me)) }
                done.store(true, ordering: .releasing)
            }
            #expect(eventually(within: 10) { done.load(ordering: .acquiring) })
            let (obtained, after) = outcome.withLock { $0 }
            #expect(obtained == .realtime(priority: 4, via: .rtkit))
            #expect(
                after == ThreadScheduling(isRealtime: false, realtimePriority: 0, nice: -15),
                "\(String(describing: after))")
        }

        /// On a bus without rtkit (the session bus) the kernel is asked: as root it grants real time, else it
        /// refuses and the nice level, then nothing, is what is left; either way the answer matches the thread.
        @Test func withoutRtkitTheKernelDecides() throws {
            let session = try #require(ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"])
            let parked = ParkedThread()
            let thread = try parked.kernelID()
            // Out of the watchdog's table before its id is free for another thread (it only sleeps till then).
            defer { RealtimeWatchdog.forget(thread: thread) }
            let obtained = AudioThreadPriority.negotiate(
                thread: thread, policy: .realtime, with: SystemPriorityGrantor(systemBus: session))
            let now = try ThreadScheduling.of(thread: thread)
            switch obtained {
            case .realtime(let priority, .kernel): #expect(now.isRealtime && Int(now.realtimePriority) == priority)
            case .nice(let level, .kernel): #expect(!now.isRealtime && Int(now.nice) == level)
            case .none(let reason): #expect(reason.contains("no rtkit") && !now.isRealtime)
            default: Issue.record("obtained \(obtained) without rtkit")
            }
            if getuid() == 0 { #expect(obtained == .realtime(priority: 4, via: .kernel)) }
        }

        /// The engine asks for both outputs, off the audio path, what its configuration says, and says what the
        /// thread has: real time when asked, rtkit's lowest nice level by default, nothing when unchanged.
        @Test(AudioThreadPriorityTests.withRtkit, arguments: [EngineConfiguration.OutputBackend.libpulse, .sdl])
        func theEngineRaisesItsOutputThread(backend: EngineConfiguration.OutputBackend) throws {
            try #require(AudioThreadPolicy.effective(.raised) == .raised, "AMBIENCE_REALTIME would override each case")
            let expected: [(AudioThreadPolicy?, String)] = [
                (.realtime, "realtime 4 via rtkit"), (nil, "nice -15 via rtkit"),
                (.unchanged, "none: not asked (the configuration)")
            ]
            for (policy, answer) in expected {
                let engine = try Self.engine(on: backend) { if let policy { $0.audioThreadPriority = policy } }
                defer { engine.shutdown() }
                #expect(engine.outputBackend == backend)
                let obtained = engine.outputThreadPriority(waitingUpTo: 10)
                #expect(obtained?.description == answer, "\(String(describing: policy))")
                // The output's thread was raised, not the one that opened it (libpulse's first state callback runs
                // on the caller, inside pa_context_connect).
                #expect(
                    try ThreadScheduling.of(thread: currentKernelThreadID())
                        == ThreadScheduling(isRealtime: false, realtimePriority: 0, nice: 0))
            }
        }

        /// A configuration without a system bus asks no rtkit, even where rtkit runs (with-services' system bus):
        /// the kernel alone decides, and the report says so (as root the kernel grants its nice level).
        @Test(arguments: [EngineConfiguration.OutputBackend.libpulse, .sdl])
        func withoutASystemBusTheKernelAloneIsAsked(backend: EngineConfiguration.OutputBackend) throws {
            try #require(AudioThreadPolicy.effective(.raised) == .raised, "AMBIENCE_REALTIME would override it")
            let engine = try Self.engine(on: backend) { $0.systemBusAddress = nil }
            defer { engine.shutdown() }
            let obtained = try #require(engine.outputThreadPriority(waitingUpTo: 10))
            let thread = try #require(engine.state.withLock { $0.device }?.audioThreadID)
            let now = try ThreadScheduling.of(thread: thread)
            switch obtained {
            case .nice(let level, .kernel): #expect(!now.isRealtime && Int(now.nice) == level)
            case .none(let reason):
                #expect(reason.contains("no rtkit (") && reason.contains("systemBusAddress is nil"), "\(reason)")
                #expect(reason.contains("setpriority: "), "\(reason)")
            default: Issue.record("obtained \(obtained) without a system bus")
            }
            if getuid() == 0 { #expect(obtained == .nice(level: -20, via: .kernel)) }
        }

        /// When real time is asked the output's thread lets SIGXCPU through, so that the watchdog's handler runs on
        /// the thread that ran too long (RealtimeWatchdogTests drops such a thread): libpulse's loop blocks every
        /// signal, and SDL's thread inherits the opener's mask. Read from the kernel's account of the thread's blocked
        /// signals; the raised level leaves libpulse's mask as it was.
        @Test(arguments: [EngineConfiguration.OutputBackend.libpulse, .sdl])
        func theOutputThreadTakesSIGXCPUWhenRealTimeIsAsked(backend: EngineConfiguration.OutputBackend) throws {
            try #require(AudioThreadPolicy.effective(.raised) == .raised, "AMBIENCE_REALTIME would override it")
            for policy in [AudioThreadPolicy.realtime, .raised] {
                let engine = try Self.engine(on: backend) { $0.audioThreadPriority = policy }
                defer { engine.shutdown() }
                #expect(engine.outputBackend == backend)
                _ = engine.outputThreadPriority(waitingUpTo: 10)
                let thread = try #require(engine.state.withLock { $0.device }?.audioThreadID)
                let blocked = try Self.blockedSignals(of: thread)
                func isBlocked(_ signal: Int32) -> Bool { blocked & (1 << UInt64(signal - 1)) != 0 }
                let mask = "\(policy): SigBlk \(String(blocked, radix: 16))"
                if policy == .realtime { #expect(!isBlocked(SIGXCPU), "\(mask)") }
                if backend == .libpulse {
                    #expect(isBlocked(SIGTERM), "libpulse's own mask, \(mask)")
                    if policy == .raised { #expect(isBlocked(SIGXCPU), "\(mask)") }
                }
            }
        }

        /// An engine on a device through `backend`, without desktop integration, its configuration changed by
        /// `change`.
        static func engine(
            on backend: EngineConfiguration.OutputBackend, _ change: (inout EngineConfiguration) -> Void
        ) throws -> AudioEngine {
            var configuration = EngineConfiguration(
                output: .device(), appName: "ambience-realtime-test", desktopIntegration: false)
            configuration.outputBackend = backend
            change(&configuration)
            return try AudioEngine(configuration)
        }

        /// The signals `thread` of this process blocks, as /proc says (`SigBlk`, a hexadecimal mask).
        static func blockedSignals(of thread: Int32) throws -> UInt64 {
            let status = try String(contentsOfFile: "/proc/self/task/\(thread)/status", encoding: .utf8)
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("SigBlk:") })
            return try #require(UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16))
        }
    }
}
