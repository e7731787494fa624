import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceIntegrationSupport
@testable import AmbienceOutput
@testable import AmbienceTestSupport

/// Cork requests from a real sound server: PulseAudio with module-role-cork and a real `phone` stream (pacat), and
/// PipeWire's PulseAudio server, which has no such module and sends none.
extension SoundServerSuites {
    @Suite(
        .timeLimit(.minutes(5)), .serialized,
        .enabled(if: PulseServer.isRunning, "needs the environment of scripts/with-services.sh"))
    struct CorkRequestServerTests {
        static let onPulseAudio = SoundServer.requested == .pulseaudio
        /// How long a test waits for something that must not happen: a phone stream's start and end are processed
        /// by the server within milliseconds, so a request that never came in this time is not on its way.
        static let quietSeconds = 1.5

        let fixtures: Fixtures
        init() throws { fixtures = try Fixtures() }

        /// A call: a stream of role `phone` playing silence until it is killed.
        func call(on address: String) throws -> ChildProcess {
            try ChildProcess(
                ["pacat", "--playback", "--property=media.role=phone", "--client-name=call", "/dev/zero"],
                environment: childEnvironment(["PULSE_SERVER": address]))
        }

        /// A call that `monitor` sees start, lasting `quietSeconds`, then ended, and `quietSeconds` more for any
        /// request it brings.
        func callComesAndGoes(on address: String, seenBy monitor: PulseAudioMonitor) throws {
            let phone = try call(on: address)
            #expect(eventually { monitor.sinkInputs.contains { $0.mediaRole == "phone" } })
            usleep(useconds_t(Self.quietSeconds * 1_000_000))
            phone.kill()
            usleep(useconds_t(Self.quietSeconds * 1_000_000))
        }

        func listener(of monitor: PulseAudioMonitor) -> SinkInput? {
            monitor.corkListenerIndex.flatMap { index in monitor.sinkInputs.first { $0.index == index } }
        }

        func corkEvents(_ events: [PulseEvent]) -> [PulseEvent] {
            events.filter { $0 == .corkRequested || $0 == .uncorkRequested }
        }

        @Test(.enabled(if: onPulseAudio)) func aCallCorksTheListenerAndItsEndUncorksIt() throws {
            let server = try ThrowawayService.soundServer(in: fixtures)
            defer { server.kill() }
            try Fixtures.run(
                "pactl", ["load-module", "module-role-cork", "trigger_roles=phone", "cork_roles=music,video,game"],
                environment: server.environment)
            let monitor = try PulseAudioMonitor(
                appName: "ambience-test", server: server.address, timeout: .seconds(2), corkRole: "game")
            defer { monitor.close() }
            #expect(eventually { listener(of: monitor) != nil }, "the listener's stream is on the server")
            let stream = try #require(listener(of: monitor))
            #expect(stream.isCorked && !stream.isMuted && stream.mediaRole == "game")
            #expect(!monitor.otherAppsPlaying(excludingPID: 0).contains { $0.index == stream.index }, "never playing")
            _ = monitor.drainEvents()

            let phone = try call(on: server.address)
            var events: [PulseEvent] = []
            #expect(
                eventually {
                    events += monitor.drainEvents(); return events.contains(.corkRequested)
                })
            // module-role-cork mutes what it asks to cork; the listener stays corked (it never plays).
            #expect(eventually { listener(of: monitor)?.isMuted == true })
            #expect(listener(of: monitor)?.isCorked == true)

            phone.kill()
            events = []
            #expect(
                eventually {
                    events += monitor.drainEvents(); return events.contains(.uncorkRequested)
                })
            #expect(eventually { listener(of: monitor)?.isMuted == false })
            #expect(corkEvents(events) == [.uncorkRequested])
        }

        /// The listener claims `game`: module-role-cork's own defaults (cork_roles music and video) leave games
        /// alone, and so does the engine.
        @Test(.enabled(if: onPulseAudio)) func theDefaultCorkRolesLeaveAGameAlone() throws {
            let server = try ThrowawayService.soundServer(in: fixtures)
            defer { server.kill() }
            try Fixtures.run("pactl", ["load-module", "module-role-cork"], environment: server.environment)
            let monitor = try PulseAudioMonitor(
                appName: "ambience-test", server: server.address, timeout: .seconds(2), corkRole: "game")
            defer { monitor.close() }
            #expect(eventually { listener(of: monitor) != nil })
            try callComesAndGoes(on: server.address, seenBy: monitor)
            #expect(corkEvents(monitor.drainEvents()).isEmpty)
            #expect(listener(of: monitor)?.isMuted == false)
        }

        /// PipeWire 0.3's PulseAudio server has no module-role-cork (nor any module that sends stream events): loading
        /// it fails, and a call goes by without a word to the listener, which the server still lists, corked.
        @Test(.enabled(if: !onPulseAudio)) func pipeWireHasNoRoleCorkAndSendsNothing() throws {
            let server = try ThrowawayService.soundServer(in: fixtures)
            defer { server.kill() }
            #expect(throws: FixtureError.self) {
                try Fixtures.run("pactl", ["load-module", "module-role-cork"], environment: server.environment)
            }
            let monitor = try PulseAudioMonitor(
                appName: "ambience-test", server: server.address, timeout: .seconds(2), corkRole: "game")
            defer { monitor.close() }
            #expect(eventually { listener(of: monitor) != nil }, "the listener's stream is on the server")
            try callComesAndGoes(on: server.address, seenBy: monitor)
            #expect(corkEvents(monitor.drainEvents()).isEmpty)
            let stream = try #require(listener(of: monitor))
            #expect(stream.isCorked && !stream.isMuted)
        }

        /// The whole way, on the shared server the engine's route monitor watches: a call interrupts the playing game
        /// and its end resumes it (PulseAudio with module-role-cork); on PipeWire the call changes nothing.
        @Test func aCallInterruptsTheEngineWhereTheServerAsks() throws {
            let module =
                Self.onPulseAudio
                ? try PulseServer.pactl("load-module", "module-role-cork", "cork_roles=music,video,game")
                    .trimmingCharacters(in: .whitespacesAndNewlines) : nil
            defer { if let module { _ = try? PulseServer.pactl("unload-module", module) } }
            let engine = try AudioEngine(
                EngineConfiguration(output: .device(), appName: "ambience-cork-test", desktopIntegration: false))
            defer { engine.shutdown() }
            engine.session.setActive(true)
            engine.play(try engine.makeSound(tone(hz: 440, seconds: 1), name: "tone"), PlayOptions(loop: true))
            let monitor = try PulseAudioMonitor(appName: "ambience-test", timeout: .seconds(2))
            defer { monitor.close() }
            #expect(eventually { monitor.sinkInputs.contains { $0.applicationName == "ambience-cork-test-monitor" } })
            _ = engine.update()

            let address = try #require(ProcessInfo.processInfo.environment["PULSE_SERVER"])
            let phone = try call(on: address)
            defer { phone.kill() }
            var events: [AudioEvent] = []
            guard Self.onPulseAudio else {
                let deadline = monotonicSeconds() + Self.quietSeconds * 2
                while monotonicSeconds() < deadline {
                    events += engine.update()
                    usleep(20_000)
                }
                #expect(!events.contains { if case .session(.interruption) = $0 { true } else { false } })
                #expect(!engine.session.isInterrupted)
                return
            }
            #expect(
                eventually {
                    events += engine.update(); return events.contains(.session(.interruption(.began)))
                })
            #expect(engine.session.isInterrupted)
            phone.kill()
            events = []
            #expect(
                eventually {
                    events += engine.update()
                    return events.contains(.session(.interruption(.ended(shouldResume: true))))
                })
            #expect(!engine.session.isInterrupted)
        }
    }
}
