import AmbiencePlatform
import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// Stream voices (`AudioEngine.playStream`): a sound fed by the game's callback, heard through offline renders of the
/// real OpenAL Soft, where `render` feeds the stream before each block.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct StreamVoiceTests {
    static let rate = 48_000
    static let block = 512

    func engine() throws -> AudioEngine { try AudioEngine(.offline(sampleRate: Self.rate)) }

    @Test func aSineStreamIsHeardAtItsFrequencyAndAtTheLevelOfTheSameSound() throws {
        let streamed = try engine()
        let stream = TestStream(hz: [440])
        let voice = try stream.play(on: streamed)
        #expect(voice.isPlaying && voice.isReal)
        let heard = try Signal(streamed.render(frames: 24_000))
        // The same tone as a sound, through another engine: the reference level.
        let played = try engine()
        played.play(try played.makeSound(tone(hz: 440, seconds: 1), name: "tone"))
        let reference = try Signal(played.render(frames: 24_000))
        let range = 2_048..<24_000
        #expect(abs(heard.dominantFrequency(in: range) - 440) < 0.5)
        let level = heard.amplitude(of: 440, in: range)
        #expect(level > 0.2)
        #expect(abs(decibels(level, over: reference.amplitude(of: 440, in: range))) < 0.1)
        // From the very first frame (offline, the stream is fed before the first block), with no gap or click later.
        #expect(heard.firstFrame(above: 0.001)! < 4)
        #expect(heard.maxStep(in: 1..<24_000) < 0.05)
        #expect(abs(voice.elapsed! - 0.5) < 0.001)
    }

    @Test func theAddedLatencyIsTwoEngineBlocks() throws {
        let engine = try engine()
        let stream = TestStream(hz: [1_000], silentUntilArmed: true)
        _ = try stream.play(on: engine)
        _ = try engine.render(frames: 10 * Self.block)
        // The game asks for sound now: the stream's next buffer carries it.
        stream.arm()
        let out = try Signal(engine.render(frames: 8 * Self.block))
        let heardAt = try #require(out.firstFrame(above: 0.01))
        // The frames asked for now are two blocks behind the playhead: 1,024 frames, 21.3 ms at 48 kHz (and one
        // more frame here, as the sine's first sample is 0).
        #expect(heardAt == 2 * Self.block + 1, "heard \(heardAt) frames after the trigger")
        let firstWritten = try #require(stream.state.withLock { $0.armedFrame })
        #expect(firstWritten == 12 * Self.block)
    }

    @Test func aPausedStreamIsSilentAndResumesWhereItWas() throws {
        let engine = try engine()
        let stream = TestStream(hz: [440])
        let voice = try stream.play(on: engine)
        _ = try engine.render(frames: 4_800)
        #expect(voice.pause() == .ok)
        #expect(!voice.isPlaying && voice.isAlive)
        let elapsed = try #require(voice.elapsed)
        let callsWhenPaused = stream.calls
        let paused = try Signal(engine.render(frames: 9_600))
        #expect(paused.peak(1_024..<9_600) == 0)
        // Nothing plays out while paused, so the callback is not asked for more.
        #expect(stream.calls == callsWhenPaused)
        #expect(voice.elapsed == elapsed)
        #expect(voice.resume() == .ok)
        let resumed = try Signal(engine.render(frames: 9_600))
        #expect(abs(resumed.dominantFrequency(in: 512..<9_600) - 440) < 1)
        #expect(resumed.amplitude(of: 440, in: 512..<9_600) > 0.2)
        #expect(voice.elapsed! > elapsed + 0.19)
    }

    @Test func aStreamEndsWhenItsCallbackReturnsShort() throws {
        let engine = try engine()
        let length = 12_000  // not a whole number of blocks: the last call returns short
        let stream = TestStream(hz: [440], length: length)
        let voice = try stream.play(on: engine)
        let out = try Signal(engine.render(frames: 24_000))
        #expect(out.rms(0..<length - 100) > 0.1)
        // Exactly what it wrote, then silence.
        #expect(out.peak(length..<24_000) == 0)
        #expect(stream.framesWritten == length)
        let calls = stream.calls
        #expect(!voice.isAlive)
        #expect(engine.update().contains(.voiceFinished(voice)))
        _ = try engine.render(frames: 4_800)
        #expect(stream.calls == calls, "called again after it ended")
        #expect(voice.pause() == .stale)
    }

    @Test func aMonoStreamPansAndMovesAndAStereoOneKeepsItsChannels() throws {
        let engine = try engine()
        let voice = try TestStream(hz: [440]).play(on: engine, PlayOptions(placement: .pan(-1)))
        let left = try Signal(engine.render(frames: 9_600))
        #expect(left.rms(1_024..<9_600, channel: 0) > 20 * left.rms(1_024..<9_600, channel: 1))
        #expect(voice.setPlacement(.pan(1)) == .ok)
        let right = try Signal(engine.render(frames: 9_600))
        #expect(right.rms(1_024..<9_600, channel: 1) > 20 * right.rms(1_024..<9_600, channel: 0))
        voice.stop()
        // Stereo: 440 Hz on the left, 660 Hz on the right, each where it was written.
        let stereo = try TestStream(hz: [440, 660]).play(on: engine)
        let both = try Signal(engine.render(frames: 9_600))
        #expect(abs(both.dominantFrequency(in: 1_024..<9_600, channel: 0) - 440) < 1)
        #expect(abs(both.dominantFrequency(in: 1_024..<9_600, channel: 1) - 660) < 1)
        // Over whole periods of both tones (0.15 s), so neither leaks into the other's measure.
        let whole = 1_200..<8_400
        #expect(both.amplitude(of: 660, in: whole, channel: 0) < 0.001)
        #expect(both.amplitude(of: 440, in: whole, channel: 1) < 0.001)
        #expect(abs(both.amplitude(of: 440, in: whole, channel: 0) - 0.5) < 0.01)
        #expect(stereo.isAlive)
    }

    @Test func aStreamFollowsItsBusGainAndFadesAndStops() throws {
        let engine = try engine()
        let stream = TestStream(hz: [440])
        let voice = try stream.play(on: engine, PlayOptions(bus: engine.ui))
        let full = try Signal(engine.render(frames: 4_800)).amplitude(of: 440, in: 1_024..<4_800)
        try engine.ui.setGain(0.5)
        let half = try Signal(engine.render(frames: 4_800)).amplitude(of: 440, in: 1_024..<4_800)
        #expect(abs(decibels(half, over: full) + 6.02) < 0.1)
        #expect(voice.setGain(0.5) == .ok)
        let quarter = try Signal(engine.render(frames: 4_800)).amplitude(of: 440, in: 1_024..<4_800)
        #expect(abs(decibels(quarter, over: full) + 12.04) < 0.1)
        // A fade-out to a stop: silent and gone after it.
        #expect(voice.stop(fade: 0.1) == .ok)
        let faded = try Signal(engine.render(frames: 9_600))
        #expect(faded.peak(6_000..<9_600) == 0)
        #expect(!voice.isAlive)
        // A stop returns once the callback is not running, and it is never called again.
        let other = TestStream(hz: [440])
        let second = try other.play(on: engine)
        _ = try engine.render(frames: 2_048)
        #expect(second.stop() == .ok)
        other.noteStopped()
        #expect(try Signal(engine.render(frames: 4_800)).peak() == 0)
        #expect(other.state.withLock { $0.callsAfterStop } == 0)
        #expect(second.stop() == .stale)
    }

    @Test func aStreamMayStopItselfFromItsCallback() throws {
        let engine = try engine()
        let handle = Lock<Voice>(.none)
        let calls = Lock<Int>(0)
        let voice = try engine.playStream(sampleRate: 48_000, channels: 1) { buffer in
            let n = calls.withLock { count in
                count += 1
                return count
            }
            for i in buffer.indices { buffer[i] = 0.25 }
            // The third call stops its own voice: it must not wait for itself.
            if n == 3 { handle.withLock { $0 }.stop() }
            return buffer.count
        }
        handle.withLock { $0 = voice }
        let out = try Signal(engine.render(frames: 9_600))
        #expect(!voice.isAlive)
        #expect(calls.withLock { $0 } == 3)
        #expect(out.peak(2_048..<9_600) == 0)
    }

    @Test func refusedStreamsSayWhy() throws {
        let engine = try engine()
        let render: @Sendable (UnsafeMutableBufferPointer<Float>) -> Int = { $0.count }
        for (rate, channels) in [(0, 1), (48_000, 3), (1_000_000, 2), (48_000, 0)] {
            #expect(throws: EngineError.self) {
                try engine.playStream(sampleRate: rate, channels: channels, render: render)
            }
        }
        #expect(throws: EngineError.self) {
            try engine.playStream(sampleRate: 48_000, channels: 1, PlayOptions(gain: .nan), render: render)
        }
        // At most 64 at once; the 65th is refused, and a stopped one makes room.
        var voices: [Voice] = []
        for _ in 0..<64 { voices.append(try engine.playStream(sampleRate: 44_100, channels: 2, render: render)) }
        #expect(throws: EngineError.self) { try engine.playStream(sampleRate: 48_000, channels: 1, render: render) }
        voices[10].stop()
        #expect(try engine.playStream(sampleRate: 48_000, channels: 1, render: render).isAlive)
        _ = try engine.render(frames: 1_024)
        engine.shutdown()
        #expect(try engine.playStream(sampleRate: 48_000, channels: 1, render: render) == .none)
        #expect(voices.allSatisfy { !$0.isAlive })
    }
}
