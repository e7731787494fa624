import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceBench
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

extension SoundServerSuites {
    /// `bench --sdl-mixer-stand-in` runs its scene through both libraries and the raw OpenAL Soft floor, and reports
    /// all three. No timing threshold: the
    /// figures are the command's business. It records the default sink's monitor, so it runs one at a time with the
    /// other suites that use that server.
    @Suite(
        .offTheCooperativePool, .timeLimit(.minutes(5)),
        .enabled(if: MixerStandIn.built, Comment(rawValue: MixerStandIn.missing)))
    struct BenchStandInTests {
        @Test func childLinesRoundTrip() throws {
            var result = MixerSceneResult()
            result.library = "/usr/lib/x86_64-linux-gnu/libSDL2_mixer-2.0.so.0.600.2"
            result.version = "2.6.2"
            result.driver = "disk"
            result.cpuSeconds = 0.25
            result.wallSeconds = 10.5
            result.retriggers = 812
            result.triggers = [1_000_000_000, 1_120_000_000]
            #expect(MixerSceneResult(lines: result.lines.joined(separator: "\n")) == result)
            #expect(MixerSceneResult(lines: "cpu 1\nwall 2") == nil, "no library named")
            #expect(MixerSceneResult(lines: "library /x\ncpu many") == nil)
            #expect(StandInBench.median([3, 1, 2]) == 2 && StandInBench.median([4, 1]) == 2.5)
            #expect(StandInBench.median([]) == nil)
        }

        @Test(
            .enabled(
                if: PulseServer.isRunning && SoundServer.requested == .pulseaudio,
                "needs scripts/with-services.sh's PulseAudio"))
        func bothLibrariesPlayTheSceneAndAreReported() throws {
            let result = try ToolRunner.run(
                ["bench", "--sdl-mixer-stand-in", "--seconds", "1", "--runs", "1", "--clicks", "6", "--json"],
                timeout: 240)
            try #require(result.status == 0, "bench --sdl-mixer-stand-in: \(result.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let systems = try #require(json["systems"] as? [String: [String: Any]], "\(result.stdout)")
            let standIn = try #require(systems["standIn"]), system = try #require(systems["sdlMixer"])
            let built = URL(fileURLWithPath: MixerStandIn.library).resolvingSymlinksInPath().path
            #expect(standIn["library"] as? String == built, "the stand-in child had the stand-in mapped")
            let debian = system["library"] as? String ?? ""
            #expect(debian.hasPrefix("/usr/lib") && debian.contains("libSDL2_mixer"), "Debian's: \(debian)")
            for (name, row) in [("standIn", standIn), ("sdlMixer", system)] {
                #expect((row["errors"] as? [String])?.isEmpty == true, "\(name): \(row["errors"] ?? "")")
                #expect(row["version"] as? String == "2.6.2", "\(name)")
                #expect((row["cpuPerAudioSecond"] as? Double ?? 0) > 0, "\(name) used CPU")
                #expect((row["retriggersPerSecond"] as? Double ?? 0) > 0, "\(name)'s one-shots were started again")
                #expect(row["clicks"] as? Int == 6, "\(name)")
                let found = row["found"] as? Int ?? -1
                #expect(found >= 4 && found <= 6, "\(name) found \(found) of 6 clicks")
                let p50 = row["p50Milliseconds"] as? Double ?? -1, p99 = row["p99Milliseconds"] as? Double ?? -1
                #expect(p50 > 0 && p50 <= p99 && p99 < 1_000, "\(name): p50 \(p50), p99 \(p99)")
            }
            // The floor: the scene on raw OpenAL Soft, CPU only.
            let floor = try #require(systems["floor"])
            let openAL = floor["library"] as? String ?? ""
            #expect(openAL.contains("libopenal"), "the floor child had OpenAL Soft mapped: \(openAL)")
            #expect((floor["errors"] as? [String])?.isEmpty == true, "floor: \(floor["errors"] ?? "")")
            #expect((floor["cpuPerAudioSecond"] as? Double ?? 0) > 0, "the floor used CPU")
            #expect((floor["retriggersPerSecond"] as? Double ?? 0) > 0, "the floor's one-shots were started again")
            #expect(floor["clicks"] as? Int == 0 && floor["p99Milliseconds"] is NSNull, "no latency run for the floor")
            let ratios = try #require(json["ratios"] as? [String: Any])
            #expect(
                ratios["cpuStandInOverSDLMixer"] is Double && ratios["p99StandInMinusSDLMixerMilliseconds"] is Double)
            #expect(ratios["cpuFloorOverSDLMixer"] is Double && ratios["cpuStandInOverFloor"] is Double)
            #expect(ratios["cpuStandInOverSDLMixerPaired"] is Double && ratios["cpuFloorOverSDLMixerPaired"] is Double)
        }
    }
}
