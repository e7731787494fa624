import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceOutput
@testable import AmbienceTestSupport

/// The run is on the server it asked for (`AMBIENCE_SOUND_SERVER`, through scripts/with-services.sh): a PipeWire
/// pass that fell back to PulseAudio, or the reverse, fails here rather than passing on the wrong server. In the
/// serialized suites: no other suite unloads the shared server's sinks meanwhile.
extension SoundServerSuites {
    @Suite(
        .offTheCooperativePool,
        .timeLimit(.minutes(5)),
        .enabled(if: PulseServer.isRunning, "needs the private sound server of scripts/with-services.sh"))
    struct SoundServerChoiceTests {
        @Test func theSharedServerIsTheOneAskedFor() throws {
            let requested = try #require(
                ProcessInfo.processInfo.environment["AMBIENCE_SOUND_SERVER"],
                "scripts/with-services.sh exports the server it started")
            #expect(SoundServer(rawValue: requested) == SoundServer.requested)
            let name = try #require(try SoundServer.name(), "pactl info names no server")
            #expect(SoundServer.requested.isNamed(by: name), "asked for \(requested), running on \"\(name)\"")
            for other in SoundServer.allCases where other != SoundServer.requested {
                #expect(!other.isNamed(by: name), "\"\(name)\" is \(other) too")
            }
            // The engine's own monitor finds that server (through PULSE_SERVER) and sees its two sinks.
            let monitor = try PulseAudioMonitor(appName: "ambience-test", timeout: .seconds(2))
            defer { monitor.close() }
            #expect(Set(monitor.sinks.map(\.name)).isSuperset(of: ["speakers", "headphones"]))
        }

        @Test func aThrowawayServerIsOfTheSameKind() throws {
            let fixtures = try Fixtures()
            let server = try ThrowawayService.soundServer(in: fixtures, sinks: ["speakers", "headphones"])
            defer { server.kill() }
            let name = try #require(try SoundServer.name(at: server.address))
            #expect(
                SoundServer.requested.isNamed(by: name), "asked for \(SoundServer.requested), running on \"\(name)\"")
            let monitor = try PulseAudioMonitor(appName: "ambience-test", server: server.address, timeout: .seconds(2))
            defer { monitor.close() }
            #expect(monitor.sinks.map(\.name).sorted() == ["headphones", "speakers"])
            #expect(monitor.defaultSinkName == "speakers")
        }
    }
}
