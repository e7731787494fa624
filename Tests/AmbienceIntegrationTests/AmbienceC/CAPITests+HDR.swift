import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

extension SoundServerSuites.CAPITests {
    /// Tests/CAPI/hdr_test.c: HDR mixing from C (docs/HDR.md). Footsteps at 50 dB and an ambience at 40 under a
    /// window 40 dB wide; an explosion that reaches the listener at 85 pushes the footsteps 35 dB down and culls the
    /// ambience, measured band by band in the samples, and both come back after it; a sound's loudness and a bus's
    /// window refuse NaN and infinities, clamp the rest, and refuse NULL.
    @Test func hdrWindowsAndLoudnessWorkFromC() throws {
        let folder = try CAPI.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let program = folder + "/hdr_test"
        let build = try CAPI.compile("Tests/CAPI/hdr_test.c", into: program, linking: ["-lm"])
        try #require(build.status == 0, "cc hdr_test.c: \(build.stderr)")
        let result = try CAPI.run([program])
        #expect(!result.killedBySignal, "hdr_test crashed: \(result.stderr)")
        #expect(result.status == 0, "hdr_test: \(result.stdout)\n\(result.stderr)")
        let tally = CAPI.tally(result.stdout)
        #expect(tally != nil && tally!.failed == 0 && tally!.passed >= 35, "\(result.stdout)")
    }
}
