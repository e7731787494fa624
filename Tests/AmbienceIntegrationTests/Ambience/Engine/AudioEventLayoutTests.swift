import Testing

@testable import Ambience
@testable import AmbienceCore
@testable import AmbienceMixer

/// `AudioEvent` stays as small as a voice's end: a crowd hands the game thousands of `voiceFinished` a second, and
/// each was copied at the largest case's size (328 bytes) until the large, rare cases were made indirect.
@Suite struct AudioEventLayoutTests {
    /// The largest payload left in place is `eventsDropped`'s name and count (24 bytes; a voice is 17), so an event
    /// takes 32 bytes in the array `update()` returns.
    @Test func anEventIsAsSmallAsItsLargestDirectPayload() {
        #expect(MemoryLayout<Voice>.size <= MemoryLayout<(String, Int)>.size)
        #expect(MemoryLayout<AudioEvent>.size <= MemoryLayout<(String, Int)>.size + 1)
        #expect(MemoryLayout<AudioEvent>.stride <= 32)
    }

    /// The boxed cases keep their values and compare as before.
    @Test func theIndirectCasesKeepTheirPayloads() {
        let item = MediaItem(persistentID: 7, url: "file:///music/a.ogg", title: "A")
        var events: [AudioEvent] = [.music(.nowPlayingItemDidChange(item)), .systemMusic(.volumeDidChange(0.5))]
        events += [.session(.silenceSecondaryAudioHint(true)), .library(.libraryDidChange)]
        events.append(.eventsDropped(queue: "mixer", count: 3))
        let copied = events.map { $0 }
        #expect(copied == events)
        guard case .music(.nowPlayingItemDidChange(let playing)) = copied[0] else {
            Issue.record("the music event lost its case")
            return
        }
        #expect(playing == item)
        #expect(copied[1] != .systemMusic(.volumeDidChange(0.25)))
        #expect(copied[2] == .session(.silenceSecondaryAudioHint(true)))
    }
}
