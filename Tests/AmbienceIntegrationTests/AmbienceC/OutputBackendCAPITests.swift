import CAmbience
import Foundation
import Testing

@testable import Ambience
@testable import AmbienceC
@testable import AmbienceOutput

/// The C API's choice of backend and audio thread priority: unknown values refused with a message, offline engines
/// reporting none. The rule itself is `OutputBackendRuleTests` (AmbienceOutputTests).
@Suite struct OutputBackendCAPITests {
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
