import CAmbience
import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceC
@testable import AmbienceIntegrationSupport
@testable import AmbienceOutput
@testable import AmbienceTestSupport

/// The output's choice of backend, as a rule (no server needed).
@Suite struct OutputBackendRuleTests {
    typealias Backend = EngineConfiguration.OutputBackend

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

    @Test func theCAPIRefusesAnUnknownBackendAndReportsNoneOffline() throws {
        var config = ambience_engine_config()
        ambience_engine_config_init(&config)
        config.output = AMBIENCE_OUTPUT_OFFLINE
        var made: OpaquePointer?
        #expect(
            ambience_engine_create_with_backend(&config, ambience_output_backend(rawValue: 7), &made)
                == AMBIENCE_ERROR_INVALID_ARGUMENT)
        #expect(made == nil)
        #expect(
            ambience_engine_create_with_backend(&config, AMBIENCE_OUTPUT_BACKEND_NONE, &made)
                == AMBIENCE_ERROR_INVALID_ARGUMENT)
        #expect(ambience_engine_create_with_backend(&config, AMBIENCE_OUTPUT_BACKEND_LIBPULSE, &made) == AMBIENCE_OK)
        let engine = try #require(made)
        defer { ambience_engine_destroy(engine) }
        var backend = AMBIENCE_OUTPUT_BACKEND_SDL
        #expect(ambience_engine_get_output_backend(engine, &backend) == AMBIENCE_OK)
        #expect(backend == AMBIENCE_OUTPUT_BACKEND_NONE)
        #expect(ambience_engine_get_output_backend(engine, nil) == AMBIENCE_ERROR_INVALID_ARGUMENT)
    }

    @Test func theCAPIRefusesAnUnknownThreadPriorityWithAMessage() throws {
        var config = ambience_engine_config()
        ambience_engine_config_init(&config)
        config.output = AMBIENCE_OUTPUT_OFFLINE
        var made: OpaquePointer?
        let wrong = ambience_audio_thread_priority(rawValue: 9)
        #expect(
            ambience_engine_create_with_output(&config, AMBIENCE_OUTPUT_BACKEND_AUTOMATIC, wrong, &made)
                == AMBIENCE_ERROR_INVALID_ARGUMENT)
        #expect(made == nil)
        #expect(
            String(cString: ambience_last_error())
                .contains("priority is 9, not an ambience_audio_thread_priority"))
        // The backend is checked as ambience_engine_create_with_backend checks it.
        #expect(
            ambience_engine_create_with_output(
                &config, AMBIENCE_OUTPUT_BACKEND_NONE, AMBIENCE_AUDIO_THREAD_REALTIME, &made)
                == AMBIENCE_ERROR_INVALID_ARGUMENT)
        #expect(made == nil)
        for priority in [AMBIENCE_AUDIO_THREAD_RAISED, AMBIENCE_AUDIO_THREAD_UNCHANGED, AMBIENCE_AUDIO_THREAD_REALTIME]
        {
            #expect(
                ambience_engine_create_with_output(&config, AMBIENCE_OUTPUT_BACKEND_AUTOMATIC, priority, &made)
                    == AMBIENCE_OK)
            let engine = try #require(made)
            ambience_engine_destroy(engine)
            made = nil
        }
        // Each C value means the policy of its name (the offline engines above ask for nothing, so they cannot tell),
        // and zero is the default, as AUTOMATIC is for the backend.
        let mapped = Dictionary(uniqueKeysWithValues: threadPolicies.map { ($0.0.rawValue, $0.1) })
        #expect(
            mapped == [
                AMBIENCE_AUDIO_THREAD_RAISED.rawValue: .raised, AMBIENCE_AUDIO_THREAD_UNCHANGED.rawValue: .unchanged,
                AMBIENCE_AUDIO_THREAD_REALTIME.rawValue: .realtime
            ])
        #expect(AMBIENCE_AUDIO_THREAD_RAISED.rawValue == 0 && EngineConfiguration().audioThreadPriority == .raised)
    }
}
