import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceBench
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport
@testable import AmbienceTool

// `bench --memory`: the arithmetic over made-up rows, the scene's loaded ballast, and one small run of real child
// processes. Memory is not time: the figures it checks are sizes that follow from what was loaded.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct MemoryBenchTests {
    @Test func childLinesParseOnlyWhenWellFormed() {
        #expect(MemoryBench.parse("peak 1000 resident 900 real 12\n")! == (1000, 900, 12))
        for bad in [
            "", "peak 1000 resident 900", "peak x resident 1 real 1", "resident 1 peak 2 real 1",
            "peak 0 resident 1 real 1", "peak 1 resident -1 real 1", "peak 1 resident 1 real -1"
        ] {
            #expect(MemoryBench.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func perThousandAndPerSecondComeFromTheBaseline() throws {
        let second = StressScene.loadedSecondBytes
        var report = MemoryReport()
        for system in MemorySystem.allCases {
            let perVoice = system == .ambience ? 100 : 90
            report.rows += [
                MemoryRow(system: system, voices: 1, realVoices: 1, loadedSeconds: 0, peakBytes: 50_000_000),
                MemoryRow(
                    system: system, voices: 1001, realVoices: 1001, loadedSeconds: 0,
                    peakBytes: 50_000_000 + 1000 * perVoice),
                MemoryRow(
                    system: system, voices: 1, realVoices: 1, loadedSeconds: 10,
                    peakBytes: 50_000_000 + 10 * (second + 5000))
            ]
        }
        #expect(report.peakPerThousandVoices(.ambience, voices: 1001) == 100_000)
        #expect(report.peakPerThousandVoices(.openal, voices: 1001) == 90_000)
        #expect(report.peakPerLoadedSecond(.openal) == 5000)
        // 10,000 voices with 256 real over 256 all real: 9,744 virtual voices.
        report.rows += [
            MemoryRow(system: .ambience, voices: 256, realVoices: 256, loadedSeconds: 0, peakBytes: 60_000_000),
            MemoryRow(
                system: .ambience, voices: 10_000, realVoices: 256, loadedSeconds: 0, peakBytes: 60_000_000 + 9744 * 150
            )
        ]
        #expect(report.peakPerVirtualVoice(voices: 10_000) == 150)
        #expect(report.peakPerVirtualVoice(voices: 256) == nil)
        // A failed or missing cell gives no figure rather than a wrong one.
        #expect(report.peakPerThousandVoices(.ambience, voices: 4096) == nil)
        report.rows[0].error = "failed"
        #expect(report.peakPerThousandVoices(.ambience, voices: 1001) == nil)
        #expect(report.peakPerLoadedSecond(.ambience) == nil)
    }

    @Test func loadedSecondsAddSoundsButChangeNoVoice() {
        let plain = StressScene(voices: 64)
        let loaded = StressScene(voices: 64, loadedSeconds: 3)
        #expect(loaded.voices == plain.voices)
        #expect(loaded.sounds.count == plain.sounds.count + 3)
        let ballast = loaded.sounds.suffix(3)
        #expect(ballast.allSatisfy { $0.frames == 48_000 && $0.channels == 1 })
        #expect(Set(ballast.map { $0.samples.prefix(8) }).count == 3)
        #expect(StressScene(voices: 1, loadedSeconds: -5).sounds.count == plain.sounds.count)
    }

    @Test func memoryCommandMeasuresBothSystemsInChildren() throws {
        let seconds = 20
        let result = try ToolRunner.run(
            ["bench", "--memory", "--voices", "512", "--loaded-seconds", "\(seconds)", "--json"], timeout: 240)
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let rows = try #require(json["rows"] as? [[String: Any]])
        #expect(rows.count == 6)
        for row in rows {
            #expect(row["error"] is NSNull, "\(row)")
            #expect((row["peakBytes"] as? Int ?? 0) > 1_000_000, "\(row)")
            // Every voice of 512 is real in both (Ambience mixes up to 4,096 for real); the baseline has one.
            #expect(row["realVoices"] as? Int == row["voices"] as? Int, "\(row)")
        }
        let perThousand = try #require(json["peakBytesPerThousandVoices"] as? [String: [String: Double]])
        let perSecond = try #require(json["peakBytesPerLoadedSecond"] as? [String: Double])
        for system in MemorySystem.allCases {
            // 512 voices do cost memory (OpenAL Soft sets aside a mixing state per source).
            #expect((perThousand[system.rawValue]?["512"] ?? 0) > 0, "\(system)")
            // Both keep the float samples once: about a second's bytes per second beyond the caller's copy, not two.
            let kept = try #require(perSecond[system.rawValue], "\(system)")
            let bytes = Double(StressScene.loadedSecondBytes)
            #expect(kept > 0.5 * bytes && kept < 1.5 * bytes, "\(system): \(kept) bytes per loaded second")
        }
    }

    @Test func memoryCommandRefusesAbsurdSizes() throws {
        for arguments in [
            ["--voices", "1"], ["--voices", "100000"], ["--loaded-seconds", "0"], ["--loaded-seconds", "99999"]
        ] {
            let result = try ToolRunner.run(["bench", "--memory"] + arguments, timeout: 30)
            #expect(result.status != 0, "\(arguments)")
        }
    }
}
