import Foundation
import FoundationXML
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceBench
@testable import AmbienceCore
@testable import AmbienceIntegrationSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport
@testable import AmbienceTool

extension SoundServerSuites {
    /// The bench on the private PulseAudio. It records the default sink's monitor, so it runs one at a time with the
    /// other suites that load, unload and switch that server's sinks.
    @Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct LatencyServerTests {
        @Test(
            .enabled(
                if: PulseServer.isRunning && SoundServer.requested == .pulseaudio,
                "needs scripts/with-services.sh's PulseAudio"))
        func latencyCommandFindsEveryClick() throws {
            let plot = FileManager.default.temporaryDirectory.appendingPathComponent("latency-\(getpid()).svg").path
            defer { try? FileManager.default.removeItem(atPath: plot) }
            let result = try ToolRunner.run(
                ["bench", "--latency", "--clicks", "8", "--periods", "512", "--json", "--plot", plot], timeout: 120)
            #expect(result.status == 0, "\(result.stderr)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let rows = try #require(json["rows"] as? [[String: Any]])
            #expect(Set(rows.compactMap { $0["system"] as? String }) == Set(LatencySystem.allCases.map(\.rawValue)))
            for row in rows {
                let system = row["system"] as? String ?? "?"
                #expect(row["error"] is NSNull, "\(system): \(row["error"] ?? "")")
                #expect(row["periodFrames"] as? Int == 512)
                #expect(row["clicks"] as? Int == 8, "\(system)")
                // A loaded machine can drop a click in the stream itself (an underflow), which is the bench's to report,
                // not a failure of the finding: most must be found, and never more than were played.
                let found = row["found"] as? Int ?? -1
                #expect(found >= 6 && found <= 8, "\(system) found \(found) of 8 clicks")
                let delay = try #require(row["delayMilliseconds"] as? [String: Double], "\(system)")
                let (p50, p99, max) = (delay["p50"] ?? -1, delay["p99"] ?? -1, delay["max"] ?? -1)
                #expect(p50 > 0 && p50 <= p99 && p99 <= max && max < 1_000, "\(system): \(delay)")
            }
            #expect((json["server"] as? String ?? "").lowercased().contains("pulseaudio"))
            let svg = try String(contentsOfFile: plot, encoding: .utf8)
            #expect(XMLParser(data: Data(svg.utf8)).parse())
            #expect(svg.contains(">512 frames<") && svg.contains(">raw OpenAL Soft<"))
        }
    }
}
