import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceBench
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// The stress scene's HDR variant (`stress --hdr`): the crowd under a window that loud events lift.
extension StressBenchTests {
    @Test func theHDRSceneCullsMostOfTheCrowdUnderALoudEventAndKeepsItsSize() throws {
        let scene = StressScene(voices: 300)
        let report = try scene.run(StressOptions(seconds: 2.5, realVoices: 16, music: nil, hdr: true))
        let hdr = try #require(report.hdr)
        // Events at 1 s and every 2 s after: one in 2.5 s. Counts ten times a second, the first at 0.
        #expect(hdr.loudEvents == 1)
        #expect(hdr.samples == 25)
        // Calm, the window rests at 0 and its bottom (-40 dB) is under every voice within 71 m (1/d at most 37 dB
        // down); the event lifts the top to 24 dB, and every voice further than 6.3 m falls under the bottom.
        #expect(hdr.culledMax > 200 && hdr.culledMax <= 300, "\(hdr)")
        #expect(hdr.culledMean > 0 && hdr.culledMean < Double(hdr.culledMax), "\(hdr)")
        // Culled voices are virtual and keep their place: the crowd is whole, nothing stolen.
        #expect(report.realVoices + report.virtualVoices == 300 && report.stolen == 0)
        #expect(try #require(report.outputRMS) > 0.001)

        let plain = try scene.run(StressOptions(seconds: 0.5, realVoices: 16, music: nil))
        #expect(plain.hdr == nil)
    }

    @Test func stressCommandReportsTheVoicesItsWindowCulled() throws {
        let result = try ToolRunner.run([
            "stress", "--voices", "2000", "--seconds", "1.8", "--real", "256", "--hdr", "--json"
        ])
        // The loud event plays from 1 s to 1.5 s: at 1.8 s it has ended, and only the crowd is live (at 1.5 s its
        // end fell on the run's last block, seen or not by the order of that block's checks).
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let hdr = try #require(json["hdr"] as? [String: Any])
        #expect(hdr["loudEvents"] as? Int == 1)
        #expect(hdr["counts"] as? Int == 18)
        let most = try #require(hdr["culledMax"] as? Int)
        #expect(most > 1000 && most <= 2000)
        #expect((hdr["culledMean"] as? Double ?? 0) > 0)
        #expect(json["stolen"] as? Int == 0)
        #expect((json["realVoices"] as? Int ?? 0) + (json["virtualVoices"] as? Int ?? 0) == 2000)

        let table = try ToolRunner.run(["stress", "--voices", "500", "--seconds", "1.2", "--hdr"])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.contains("HDR culled   mean "), "\(table.stdout)")
        let refused = try ToolRunner.run(["stress", "--voices", "50", "--seconds", "1", "--hdr", "--realtime"])
        #expect(refused.status == 2 && refused.stderr.contains("--hdr renders offline"), "\(refused.stderr)")
    }
}

extension StressBenchTests {
    /// The crowd under a window beside the same crowd without one, in one run: the voices culled, both costs and
    /// their paired ratio. Whether the window saves is the bench's figure (README), not a threshold here.
    @Test func benchRunsTheCrowdUnderAWindowBesideItWithoutOne() throws {
        let (scene, systems) = try benchScene(
            "--voices", "1024", "--seconds", "1.5", "--runs", "2", "--systems", "ambience,ambienceHDR")
        #expect(Set(systems.keys) == ["ambience", "ambienceHDR"])
        let plain = try #require(systems["ambience"]), hdr = try #require(systems["ambienceHDR"])
        #expect(plain["culledMax"] == nil && plain["voicesMixed"] as? Int == 1024)
        #expect((hdr["culledMax"] as? Int ?? 0) > 512 && (hdr["culledMean"] as? Double ?? 0) > 0)
        #expect((hdr["runs"] as? [Double])?.count == 2 && (plain["runs"] as? [Double])?.count == 2)
        let ratios = try #require(scene["ratios"] as? [String: Any])
        #expect((ratios["ambienceHDROverAmbience"] as? Double ?? 0) > 0)

        let table = try benchTable(
            "--voices", "1024", "--seconds", "1.5", "--runs", "1", "--systems", "ambience,ambienceHDR")
        #expect(table.contains("1024 voices under an HDR window (a loud event every 2 s): culled mean "))
    }
}
