import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// `bench --formats` measures modules and MIDI beside SDL_mixer playing the same Debian files.
@Suite(.onTheComputeThread, .timeLimit(.minutes(10))) struct BenchFormatsTests {
    @Test func modulesAndMIDIAreMeasuredBesideSDLMixer() throws {
        let result = try ToolRunner.run(
            ["bench", "--formats", "--seconds", "1", "--runs", "1", "--json"], timeout: 540)
        try #require(result.status == 0, "bench --formats: \(result.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let rows = json?["formats"] as? [[String: Any]] ?? []
        for name in ["Module (IT)", "Module (XM)", "MIDI"] {
            let row = rows.first { $0["format"] as? String == name }
            #expect(row != nil, "\(name) is measured: \(result.stdout)")
            guard let row else { continue }
            let seconds = row["audioSeconds"] as? Double ?? 0
            #expect(seconds > 30, "\(name): the whole file, \(seconds) s")
            #expect((row["ambience"] as? Double ?? 0) > 0, "\(name): Ambience's cost")
            #expect((row["sdlMixer"] as? Double).map { $0 >= 0 } == true, "\(name): SDL_mixer plays it too")
        }
    }
}
