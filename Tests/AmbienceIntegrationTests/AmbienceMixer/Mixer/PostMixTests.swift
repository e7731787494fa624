import AmbiencePlatform
import Foundation
import Synchronization
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// The post-mix observer (`AudioEngine.setPostMix`): it sees and may change every mixed block, and once its setter
/// has returned a replaced observer is never called again, even while another thread renders.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct PostMixTests {
    /// An offline engine playing a looping 440 Hz tone.
    func engineWithTone() throws -> AudioEngine {
        let engine = try AudioEngine(.offline())
        engine.play(try engine.makeSound(tone(hz: 440, seconds: 1), name: "tone"), PlayOptions(loop: true))
        return engine
    }

    @Test func aNegatingObserverNegatesTheRenderAndAZeroingOneSilencesIt() throws {
        let plain = try engineWithTone()
        let negated = try engineWithTone()
        let blocks = Lock<[Int]>([])
        negated.setPostMix { samples, frames in
            blocks.withLock { $0.append(frames) }
            #expect(samples.count == frames * 2)
            for i in samples.indices { samples[i] = -samples[i] }
        }
        let reference = try plain.render(frames: 4_800).samples
        let out = try negated.render(frames: 4_800).samples
        #expect(Signal(reference, channels: 2, sampleRate: 48_000).rms() > 0.1)
        #expect(out == reference.map { -$0 })
        // One call per mixed block, of the engine's block size (the last one what is left).
        #expect(blocks.withLock { $0 } == Array(repeating: 512, count: 9) + [192])
        negated.setPostMix { samples, _ in samples.update(repeating: 0) }
        #expect(try Signal(negated.render(frames: 4_800)).peak() == 0)
        negated.setPostMix(nil)
        #expect(try Signal(negated.render(frames: 4_800)).rms() > 0.1)
    }

    @Test func aClearedObserverIsNeverCalledAgainWhileAnotherThreadRenders() throws {
        let engine = try engineWithTone()
        let rendering = Atomic<Bool>(true)
        let renderer = Thread {
            let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 256 * 2)
            defer { buffer.deallocate() }
            while rendering.load(ordering: .relaxed) { try? engine.render(into: buffer) }
        }
        renderer.start()
        defer { rendering.store(false, ordering: .relaxed) }
        // Each observer counts the calls that come after its removal returned.
        final class Token: Sendable {
            let removed = Atomic<Bool>(false)
            let calls = Atomic<Int>(0)
            let callsAfterRemoval = Atomic<Int>(0)
        }
        var tokens: [Token] = []
        for round in 0..<200 {
            let token = Token()
            tokens.append(token)
            engine.setPostMix { _, _ in
                token.calls.add(1, ordering: .relaxed)
                if token.removed.load(ordering: .relaxed) { token.callsAfterRemoval.add(1, ordering: .relaxed) }
            }
            usleep(UInt32(200 + round % 7 * 100))
            // Alternately cleared and replaced: both must retire the old one.
            if round % 2 == 0 { engine.setPostMix(nil) } else { engine.setPostMix { _, _ in } }
            token.removed.store(true, ordering: .relaxed)
        }
        usleep(20_000)
        rendering.store(false, ordering: .relaxed)
        #expect(tokens.allSatisfy { $0.callsAfterRemoval.load(ordering: .relaxed) == 0 })
        // The observers did run meanwhile: the renders were really concurrent with the swaps.
        #expect(tokens.reduce(0) { $0 + $1.calls.load(ordering: .relaxed) } > 50)
    }

    @Test func anObserverMayRemoveItselfFromItsOwnCall() throws {
        let engine = try engineWithTone()
        let calls = Atomic<Int>(0)
        engine.setPostMix { [engine] samples, _ in
            calls.add(1, ordering: .relaxed)
            samples.update(repeating: 0)
            engine.setPostMix(nil)  // must not wait for itself
        }
        let out = try Signal(engine.render(frames: 2_048))
        #expect(calls.load(ordering: .relaxed) == 1)
        #expect(out.peak(0..<512) == 0)
        #expect(out.rms(512..<2_048) > 0.1)
        // The retired observer is released by the next setter, which has nothing to wait for.
        engine.setPostMix(nil)
        #expect(try Signal(engine.render(frames: 1_024)).rms() > 0.1)
    }
}
