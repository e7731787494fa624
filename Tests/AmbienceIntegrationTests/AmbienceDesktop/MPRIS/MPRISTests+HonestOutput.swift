import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

extension MPRISTests {
    /// Another player's tags reach `ambience session` over the bus: shown escaped, one line each.
    @Test func sessionShowsAHostilePlayersTitleEscaped() throws {
        let hostile = HonestOutputTests.hostile
        let song = try fixtures.sineOgg("hostile.ogg", seconds: 3, tags: ["TITLE=\(hostile)", "ARTIST=A\nambience: B"])
        let mpv = try MPV(playing: song)
        defer { mpv.kill() }
        let client = try client()
        defer { client.close() }
        #expect(eventually { client.refresh().contains { $0.processID == mpv.pid && $0.title == hostile } })
        let result = try ToolRunner.run(
            ["session"], environment: ["SDL_AUDIODRIVER": "dummy", "DBUS_SESSION_BUS_ADDRESS": sharedSessionBus])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(": \(TerminalText.shown(hostile)) by A\\nambience: B"), "\(result.stdout)")
        let unsafe = result.stdout.unicodeScalars.filter { TerminalText.isUnsafe($0) && $0 != "\n" }
        #expect(unsafe.isEmpty)
        #expect(!result.stdout.split(separator: "\n").contains { $0.hasPrefix("ambience:") })
    }
}
