import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

extension SoundServerSuites.CAPITests {
    /// Tests/CAPI/stream_test.c: a stream voice fed by a C callback is heard at its frequency and level, stops for
    /// good, and ends when the callback returns short (the voice-finished callback names it); a post-mix observer
    /// negates and silences the render and is removed with NULL; NULL engines, NULL callbacks and bad formats are
    /// refused with a status and a message.
    @Test func streamVoicesAndThePostMixFromC() throws {
        let folder = try CAPI.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let program = folder + "/stream_test"
        let build = try CAPI.compile("Tests/CAPI/stream_test.c", into: program, linking: ["-lm"])
        try #require(build.status == 0, "cc stream_test.c: \(build.stderr)")
        let result = try CAPI.run([program])
        #expect(!result.killedBySignal, "stream_test crashed: \(result.stderr)")
        #expect(result.status == 0, "stream_test: \(result.stdout)\n\(result.stderr)")
        let tally = CAPI.tally(result.stdout)
        #expect(tally != nil && tally!.failed == 0 && tally!.passed >= 30, "\(result.stdout)")
    }
}
