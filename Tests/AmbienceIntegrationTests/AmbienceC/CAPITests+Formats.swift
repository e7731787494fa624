import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

extension SoundServerSuites.CAPITests {
    /// Tests/CAPI/formats_test.c: a Debian module and MIDI file played from C, as sounds and as music, heard (and
    /// the module's title and the MIDI file's read back); `module_stereo_separation` 0 renders the module in mono; a
    /// `sound_font` that is not there gives AMBIENCE_ERROR_DECODING and a playback error, both naming the Debian
    /// packages, while the module still plays.
    @Test func modulesAndMIDIPlayFromC() throws {
        let folder = try CAPI.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let program = folder + "/formats_test"
        let build = try CAPI.compile("Tests/CAPI/formats_test.c", into: program, linking: ["-lm"])
        try #require(build.status == 0, "cc formats_test.c: \(build.stderr)")
        let midi = "/usr/share/games/openttd/baseset/openmsx/be_sharp_bw_redfarn.mid"
        let result = try CAPI.run([program, MusicFormatFiles.modules[3], midi, MusicFormatFiles.timGM])
        #expect(!result.killedBySignal, "formats_test crashed: \(result.stderr)")
        #expect(result.status == 0, "formats_test: \(result.stdout)\n\(result.stderr)")
        let tally = CAPI.tally(result.stdout)
        #expect(tally != nil && tally!.failed == 0 && tally!.passed >= 40, "\(result.stdout)")
        #expect(result.stdout.contains("MIDI title: Be Sharp Boogie"))
    }
}
