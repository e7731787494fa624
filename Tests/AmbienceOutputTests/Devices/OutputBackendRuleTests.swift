import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceOutput
@testable import AmbienceTestSupport

/// The output's choice of backend, as a rule (no server needed).
@Suite struct OutputBackendRuleTests {
    typealias Backend = OutputBackend

    @Test func automaticTriesLibpulseThenSDLUnlessTheEnvironmentChose() {
        let none: (String) -> String? = { _ in nil }
        #expect(Backend.candidates(for: .automatic, environment: none) == [.libpulse, .sdl])
        #expect(Backend.candidates(for: .automatic, environment: { $0 == "SDL_AUDIODRIVER" ? "dummy" : nil }) == [.sdl])
        #expect(
            Backend.candidates(for: .automatic, environment: { $0 == "SDL_AUDIODRIVER" ? "" : nil }) == [
                .libpulse, .sdl
            ])
        // AMBIENCE_OUTPUT wins over SDL_AUDIODRIVER; a value it does not know is ignored.
        let both: (String) -> String? = { $0 == "AMBIENCE_OUTPUT" ? "libpulse" : "pulseaudio" }
        #expect(Backend.candidates(for: .automatic, environment: both) == [.libpulse, .sdl])
        #expect(Backend.candidates(for: .automatic, environment: { $0 == "AMBIENCE_OUTPUT" ? "sdl" : nil }) == [.sdl])
        #expect(
            Backend.candidates(for: .automatic, environment: { $0 == "AMBIENCE_OUTPUT" ? "alsa" : nil }) == [
                .libpulse, .sdl
            ])
        // A backend the game named is the only one tried, whatever the environment says.
        #expect(Backend.candidates(for: .sdl, environment: both) == [.sdl])
        #expect(Backend.candidates(for: .libpulse, environment: { _ in "sdl" }) == [.libpulse])
    }

    @Test func bufferingParsesWhatTheBenchSetsAndRefusesTheRest() throws {
        let parsed = try #require(PulseBuffering(parsing: "tlength=4, minreq=2,prebuf=0,adjust=0"))
        #expect(parsed == PulseBuffering(targetBlocks: 4, requestBlocks: 2, prebufferBlocks: 0, adjustLatency: false))
        #expect(PulseBuffering(parsing: parsed.description) == parsed)
        #expect(PulseBuffering(parsing: "prebuf=2")?.targetBlocks == PulseBuffering.chosen.targetBlocks)
        let wrongs = [
            "tlength=0", "minreq=-1", "minreq=65", "tlength=65", "adjust=2", "latency=3", "tlength", "tlength=x"
        ]
        for wrong in wrongs {
            #expect(PulseBuffering(parsing: wrong) == nil, "\(wrong)")
        }
        // Bytes toward libpulse saturate instead of trapping.
        let huge = PulseBuffering(targetBlocks: 64, requestBlocks: 1, prebufferBlocks: 0, adjustLatency: true)
        #expect(huge.attributes(blockBytes: Int.max / 2).tlength == UInt32.max - 1)
        #expect(PulseBuffering.chosen.attributes(blockBytes: 1024).minreq == 1024)
    }
}
