import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// A short soak through the command, in a process of its own (resident memory is the process's, and other suites
/// share this one): five minutes of game audio, rendered offline in seconds. After the first two-minute cycle of
/// events (the warm-up), nothing may grow: OpenAL sources and buffers stay as they were, voices stay bounded, and
/// resident memory grows by less than 1 MB (about 0.2 MB is usual over these 150 s).
@Suite(.offTheCooperativePool, .timeLimit(.minutes(10))) struct SoakTests {
    @Test func fiveMinutesOfGameAudioLeakNothing() throws {
        // Under AddressSanitizer (scripts/sanitizers.sh) its quarantine holds freed memory back on purpose, which a
        // measure of resident memory would read as growth: the soak's child runs without it (leaks are LSan's job).
        let asan =
            ProcessInfo.processInfo.environment["ASAN_OPTIONS"].map {
                ["ASAN_OPTIONS": $0 + " quarantine_size_mb=0 thread_local_quarantine_size_kb=0"]
            } ?? [:]
        let result = try ToolRunner.run(
            ["stress", "--soak", "--seconds", "300", "--json"], environment: asan, timeout: 240)
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let soak = try #require(json["soak"] as? [String: Any])
        func int(_ key: String) -> Int { soak[key] as? Int ?? -1 }
        #expect(json["seconds"] as? Double == 300)
        #expect(int("oneShots") == 84_000)
        #expect(int("musicSkips") == 10)
        #expect(int("interruptions") == 3 && int("interruptionEvents") == 6)
        #expect(int("backgroundings") == 2)
        #expect(int("routeChanges") == 2 && int("routeChangeEvents") == 2)
        #expect(int("playbackErrors") == 0)
        #expect(int("alSourcesAfterWarmup") > 0)
        #expect(
            int("alSourcesAtEnd") == int("alSourcesAfterWarmup") && int("alSourcesMax") == int("alSourcesAfterWarmup"))
        #expect(
            int("alBuffersAtEnd") == int("alBuffersAfterWarmup") && int("alBuffersMax") == int("alBuffersAfterWarmup"))
        #expect(int("voicesAtEnd") > 0 && int("voicesAtEnd") < 1_000)
        #expect(int("rssAfterWarmupBytes") > 0)
        #expect(int("rssGrowthBytes") < 1 << 20, "RSS grew by \(int("rssGrowthBytes")) bytes after warm-up")
        #expect((soak["maxBlockMicroseconds"] as? Double ?? 0) >= (soak["averageBlockMicroseconds"] as? Double ?? 1))
    }
}
