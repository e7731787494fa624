import AmbiencePlatform
import CAmbience
import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceC
@testable import AmbienceCore
@testable import AmbienceIntegrationSupport
@testable import AmbienceMixer
@testable import AmbienceOutput
@testable import AmbienceTestSupport

/// The engine's bounded queues overflowed through the public API, in Swift and in C: what is lost is counted exactly,
/// the documented end is kept, and the game is warned once.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct DroppedEventsTests {
    /// More one-shots than the mixer's queue holds, all ending before anyone calls `update()`.
    static let voices = Mixer.pendingEventCapacity + 1_000

    @Test func theMixerCountsEveryVoiceEndingItCouldNotQueue() throws {
        let engine = try AudioEngine(.offline())
        let tick = try engine.makeSound(tone(hz: 440, seconds: 0.01), name: "tick")
        let started = (0..<Self.voices).map { _ in engine.play(tick) }
        #expect(started.allSatisfy { $0 != .none })
        _ = try engine.render(frames: 4_800)  // 0.1 s: every 10 ms tick has ended

        let events = engine.update()
        let finished = events.filter { if case .voiceFinished = $0 { true } else { false } }
        let stats = engine.stats
        #expect(stats.finished == Self.voices && stats.stolen == 0)
        #expect(finished.count == Mixer.pendingEventCapacity, "the queue holds its cap, the newest were refused")
        #expect(stats.droppedEvents == stats.finished - finished.count)
        #expect(stats.droppedEvents == 1_000)
        #expect(events.first == .eventsDropped(queue: "mixer", count: 1_000), "the warning comes first, with the count")
        #expect(events.filter { if case .eventsDropped = $0 { true } else { false } }.count == 1)

        // Within the cap nothing more is lost, and the warning is not given again.
        for _ in 0..<10 { engine.play(tick) }
        _ = try engine.render(frames: 4_800)
        let later = engine.update()
        #expect(later.count == 10 && later.allSatisfy { if case .voiceFinished = $0 { true } else { false } })
        #expect(engine.stats.droppedEvents == 1_000)
        #expect(engine.stats.finished == Self.voices + 10)
    }

    @Test func sessionNotificationsKeepTheNewestWhenFull() throws {
        let engine = try AudioEngine(.offline())
        let changes = SessionNotifications.capacity + 76
        let categories: [SessionCategory] = [.ambient, .playback]
        for n in 0..<changes { engine.session.setCategory(categories[n % 2]) }

        let events = engine.update()
        #expect(engine.stats.droppedEvents == 76)
        #expect(events.first == .eventsDropped(queue: "session", count: 76))
        let notes = events.compactMap { if case .session(let note) = $0 { note } else { nil } }
        #expect(notes.count == SessionNotifications.capacity)
        // The oldest gave way: what is left ends with the category the game set last.
        #expect(notes.last == .categoryChanged(categories[(changes - 1) % 2]))
        #expect(notes.first == .categoryChanged(categories[76 % 2]))
        #expect(engine.session.category == categories[(changes - 1) % 2])
    }

    @Test func theCAPICountsTheSameLossThroughItsAccessor() throws {
        var config = ambience_engine_config()
        ambience_engine_config_init(&config)
        config.output = AMBIENCE_OUTPUT_OFFLINE
        var made: OpaquePointer?
        #expect(ambience_engine_create(&config, &made) == AMBIENCE_OK)
        let engine = try #require(made)
        defer { ambience_engine_destroy(engine) }

        let delivered = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        defer { delivered.deallocate() }
        delivered.pointee = 0
        #expect(
            ambience_set_voice_finished_callback(
                engine,
                { userdata, _, how in
                    if how == AMBIENCE_VOICE_FINISHED { userdata?.assumingMemoryBound(to: Int.self).pointee += 1 }
                }, delivered) == AMBIENCE_OK)

        let samples = tone(hz: 440, seconds: 0.01).samples
        var sound: OpaquePointer?
        let status = samples.withUnsafeBufferPointer {
            ambience_sound_create_pcm(engine, "tick", $0.baseAddress, $0.count, 1, 48_000, &sound)
        }
        #expect(status == AMBIENCE_OK)
        var options = ambience_play_options()
        ambience_play_options_init(&options)
        for _ in 0..<Self.voices {
            var voice: UInt64 = 0
            #expect(ambience_play(sound, &options, &voice) == AMBIENCE_OK)
        }
        var mix = [Float](repeating: 0, count: 2 * 4_800)
        #expect(ambience_render(engine, &mix, 4_800) == AMBIENCE_OK)

        var dropped: Int64 = -1
        #expect(ambience_engine_dropped_events(engine, &dropped) == AMBIENCE_OK)
        #expect(dropped == 1_000, "counted when lost, before any update")
        #expect(ambience_update(engine) == AMBIENCE_OK)
        var stats = ambience_stats()
        #expect(ambience_engine_get_stats(engine, &stats) == AMBIENCE_OK)
        #expect(stats.finished == Int64(Self.voices))
        #expect(delivered.pointee == Mixer.pendingEventCapacity)
        #expect(ambience_engine_dropped_events(engine, &dropped) == AMBIENCE_OK)
        #expect(dropped == stats.finished - Int64(delivered.pointee))

        #expect(ambience_engine_dropped_events(engine, nil) == AMBIENCE_ERROR_INVALID_ARGUMENT)
        #expect(ambience_engine_dropped_events(nil, &dropped) == AMBIENCE_ERROR_NULL_HANDLE)
    }
}
