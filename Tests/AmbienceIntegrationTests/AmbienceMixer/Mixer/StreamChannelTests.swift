import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// The mixer's stream channel, which the music player drives without touching OpenAL: buffers queued through it play
/// on its bus, come back once played, and go away with the channel. Heard through offline renders of an engine whose
/// music player is left idle (the channels here are the tests' own).
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct StreamChannelTests {
    /// `seconds` of a sine at `hz`, as interleaved stereo at 48 kHz.
    static func stereoTone(hz: Double, seconds: Double) -> [Float] {
        tone(hz: hz, seconds: seconds).samples.flatMap { [$0, $0] }
    }

    static func queue(_ samples: [Float], into buffer: StreamBuffer, on channel: StreamChannel) -> Bool {
        samples.withUnsafeBufferPointer { stereo in
            channel.locked { $0.queue(buffer, stereo: stereo, rate: 48_000) }
        }
    }

    @Test func aQueuedBufferPlaysOnItsBusAndComesBackOncePlayed() throws {
        let engine = try AudioEngine(.offline(sampleRate: 48_000))
        defer { engine.shutdown() }
        let channel = try #require(engine.mixer.makeStreamChannel(bus: engine.music, bufferCount: 2))
        defer { engine.mixer.removeStreamChannel(channel) }
        #expect(channel.buffers.count == 2 && Set(channel.buffers).count == 2)
        #expect(channel.locked { $0.state } == .initial)

        #expect(Self.queue(Self.stereoTone(hz: 440, seconds: 0.1), into: channel.buffers[0], on: channel))
        channel.locked { $0.play() }
        #expect(channel.locked { $0.state } == .playing)
        let out = Signal(try engine.render(frames: 9_600))
        #expect(abs(out.dominantFrequency(in: 256..<4_600) - 440) < 1)
        #expect(out.rms(5_000..<9_600) < 0.001, "the stream stops after its one buffer")
        let (played, state) = channel.locked { ($0.reclaimPlayed(), $0.state) }
        #expect(played == [channel.buffers[0]])
        #expect(state == .stopped)

        // The bus's gain reaches the stream: a muted music bus silences it.
        try engine.music.setGain(0)
        #expect(Self.queue(Self.stereoTone(hz: 440, seconds: 0.1), into: channel.buffers[1], on: channel))
        channel.locked { $0.play() }
        #expect(Signal(try engine.render(frames: 4_800)).rms() < 0.001)
    }

    @Test func stopTakesEveryBufferOffAndThePlayheadBackToTheStart() throws {
        let engine = try AudioEngine(.offline(sampleRate: 48_000))
        defer { engine.shutdown() }
        let channel = try #require(engine.mixer.makeStreamChannel(bus: engine.music, bufferCount: 2))
        defer { engine.mixer.removeStreamChannel(channel) }
        for buffer in channel.buffers {
            #expect(Self.queue(Self.stereoTone(hz: 300, seconds: 0.5), into: buffer, on: channel))
        }
        channel.locked { $0.play() }
        _ = try engine.render(frames: 4_800)
        #expect((4_000...5_600).contains(channel.locked { $0.sampleOffset }))
        channel.locked { $0.stop() }
        let (state, offset, played) = channel.locked { ($0.state, $0.sampleOffset, $0.reclaimPlayed()) }
        #expect(state == .initial && offset == 0 && played.isEmpty)
        #expect(Signal(try engine.render(frames: 4_800)).rms() < 0.001)
        // Both buffers are free again: each can be filled and queued anew, and waits to be played (OpenAL would count
        // a buffer queued on a stopped source as played at once; the stream is rewound).
        for buffer in channel.buffers {
            #expect(Self.queue(Self.stereoTone(hz: 400, seconds: 0.1), into: buffer, on: channel))
        }
        #expect(channel.locked { $0.reclaimPlayed() }.isEmpty, "buffers queued after stop() counted as played")
        channel.locked { $0.play() }
        #expect(abs(Signal(try engine.render(frames: 4_800)).dominantFrequency(in: 256..<4_800) - 400) < 1)
    }

    /// A stream that played out what it held (stopped by itself: run dry, or at the end) gives it back and is
    /// rewound before more is queued, so that what is queued next waits to be played.
    @Test func aStreamThatPlayedOutIsRewoundBeforeMoreIsQueued() throws {
        let engine = try AudioEngine(.offline(sampleRate: 48_000))
        defer { engine.shutdown() }
        let channel = try #require(engine.mixer.makeStreamChannel(bus: engine.music, bufferCount: 2))
        defer { engine.mixer.removeStreamChannel(channel) }
        #expect(Self.queue(Self.stereoTone(hz: 300, seconds: 0.1), into: channel.buffers[0], on: channel))
        channel.locked { $0.play() }
        _ = try engine.render(frames: 9_600)
        #expect(channel.locked { $0.state } == .stopped)
        #expect(channel.locked { $0.rewindIfStopped() } == [channel.buffers[0]])
        #expect(channel.locked { $0.state } == .initial)

        #expect(Self.queue(Self.stereoTone(hz: 440, seconds: 0.1), into: channel.buffers[1], on: channel))
        #expect(channel.locked { $0.reclaimPlayed() }.isEmpty, "a buffer not yet played came back as played")
        #expect(channel.locked { $0.rewindIfStopped() }.isEmpty, "a stream that is not stopped is left alone")
        channel.locked { $0.play() }
        #expect(abs(Signal(try engine.render(frames: 4_800)).dominantFrequency(in: 256..<4_800) - 440) < 1)
    }

    /// A second removal (an engine shut down twice closes its player twice) must not delete OpenAL names that a
    /// newer channel may have been given since: OpenAL Soft hands out the lowest free ones again.
    @Test func aChannelRemovedTwiceLeavesTheNextOneAlone() throws {
        let engine = try AudioEngine(.offline(sampleRate: 48_000))
        defer { engine.shutdown() }
        let old = try #require(engine.mixer.makeStreamChannel(bus: engine.music, bufferCount: 2))
        engine.mixer.removeStreamChannel(old)
        let new = try #require(engine.mixer.makeStreamChannel(bus: engine.music, bufferCount: 2))
        defer { engine.mixer.removeStreamChannel(new) }
        engine.mixer.removeStreamChannel(old)
        #expect(Self.queue(Self.stereoTone(hz: 440, seconds: 0.2), into: new.buffers[0], on: new))
        new.locked { $0.play() }
        // A player closed twice drives its old channel once more: that reaches nothing (OpenAL Soft gives the
        // deleted names to the next channel, whose stream would stop).
        old.locked { $0.stop() }
        #expect(old.locked { $0.state } == .stopped && old.locked { $0.reclaimPlayed() }.isEmpty)
        #expect(!Self.queue(Self.stereoTone(hz: 440, seconds: 0.2), into: old.buffers[0], on: old))
        let out = Signal(try engine.render(frames: 4_800))
        #expect(abs(out.dominantFrequency(in: 256..<4_800) - 440) < 1)
    }
}
