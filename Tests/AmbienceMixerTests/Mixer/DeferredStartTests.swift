import Foundation
import Synchronization
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// `play()` records a real voice's start and the next block applies it (`PendingStarts`, issue #34 item 2), heard
/// through the real OpenAL Soft: the voice sounds from that block's first sample, exactly as a start made inside
/// the call does; many starts in one block all sound; whatever the game does to a voice before its block (stop,
/// pause, a question about its playhead, a tick) finds it as an immediate start would have left it.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(2))) struct DeferredStartTests {
    /// A mono cosine: its first sample is its loudest, so a late or early start shows at once.
    static let sound = PCMBuffer(
        sampleRate: 48_000, channels: 1,
        samples: (0..<4_800).map { 0.5 * Float(cos(2 * Double.pi * 750 * Double($0) / 48_000)) })

    func mixer(realVoices: Int = 256) throws -> (Mixer, Sound) {
        let mixer = try Mixer(sampleRate: 48_000, realVoices: realVoices)
        return (mixer, try #require(mixer.makeSound(Self.sound, name: "cosine")))
    }

    /// The mix of one voice of the cosine started after 300 frames of silence; `settle` asks its playhead right
    /// after `play`, which applies the start inside the call, as every start was applied before.
    func startAfterSilence(settle: Bool, gain: Float = 1) throws -> [Float] {
        let (mixer, sound) = try mixer()
        #expect(Signal(mixer.render(frames: 300)).peak() == 0)
        let voice = mixer.play(sound, PlayOptions(gain: gain))
        #expect(voice.isPlaying && voice.isReal)
        if settle { #expect(voice.elapsed == 0) }
        return mixer.render(frames: 2_048).samples
    }

    @Test func aStartSoundsFromTheFirstSampleOfTheNextBlockAsAnImmediateOneDoes() throws {
        let deferred = try startAfterSilence(settle: false)
        let immediate = try startAfterSilence(settle: true)
        #expect(deferred == immediate)
        let out = Signal(deferred, channels: 2, sampleRate: 48_000)
        // Centred, each side carries the cosine at one gain from the block's first frame on.
        let gain = out.channel(0)[0] / Self.sound.samples[0]
        #expect(gain > 0.5 && gain < 1.01)
        let expected = (0..<2_048).map { gain * Self.sound.samples[$0] }
        #expect(out.rmsError(against: expected, 0..<2_048) < 1e-4)
    }

    /// 200 voices started between two blocks sum to 200 times one voice, sample for sample from the block's first:
    /// one missing or a block late would leave the sum 0.5 % short.
    @Test func manyStartsInOneBlockAllSound() throws {
        let gain: Float = 0.004
        let one = try startAfterSilence(settle: false, gain: gain)
        let (mixer, sound) = try mixer()
        _ = mixer.render(frames: 300)
        let voices = (0..<200).map { _ in mixer.play(sound, PlayOptions(gain: gain)) }
        #expect(voices.allSatisfy { $0.isReal })
        #expect(mixer.pendingStarts.hasRecorded)
        let all = mixer.render(frames: 2_048).samples
        #expect(!mixer.pendingStarts.hasRecorded)
        #expect(mixer.stats.realVoices == 200)
        let reference = one.map { $0 * 200 }
        let worst = zip(all, reference).map { abs($0 - $1) }.max() ?? 1
        #expect(worst < 1e-4 * (reference.map(abs).max() ?? 0))
        #expect(all[0] > 0.2)  // 200 × 0.004 × 0.5, centred
    }

    /// The whole pool started between two blocks, twice: every start lands in the voices primed at start
    /// (`SourcePool.primeVoices`), and the 256 sound as 256 times one.
    @Test func theWholePoolStartsInOneBlockAndAgainOnceItEnded() throws {
        let gain: Float = 0.002
        let one = try startAfterSilence(settle: false, gain: gain)
        let (mixer, sound) = try mixer()
        for _ in 0..<2 {
            _ = mixer.render(frames: 300)
            let voices = (0..<256).map { _ in mixer.play(sound, PlayOptions(gain: gain)) }
            #expect(voices.allSatisfy { $0.isReal })
            let all = mixer.render(frames: 2_048).samples
            #expect(mixer.stats.realVoices == 256)
            let reference = one.map { $0 * 256 }
            let worst = zip(all, reference).map { abs($0 - $1) }.max() ?? 1
            #expect(worst < 1e-4 * (reference.map(abs).max() ?? 0))
            // The cosine is 4,800 frames long: rendered past its end, every voice has ended.
            _ = mixer.render(frames: 4_800)
            #expect(mixer.stats.realVoices == 0)
        }
    }

    @Test func aVoiceStoppedBeforeItsBlockIsNeverHeardAndItsSourceStartsCleanAgain() throws {
        let (mixer, sound) = try mixer(realVoices: 1)
        let voice = mixer.play(sound)
        #expect(voice.stop() == .ok)
        #expect(Signal(mixer.render(frames: 2_048)).peak() == 0)
        #expect(mixer.stats.realVoices == 0)
        // The one source is used again, and starts at the sound's first frame.
        let again = mixer.play(sound)
        #expect(again.isReal)
        let out = mixer.render(frames: 2_048).samples
        #expect(out == (try startAfterSilence(settle: false)))
    }

    @Test func aVoicePausedBeforeItsBlockWaitsAtItsStart() throws {
        let (mixer, sound) = try mixer()
        let voice = mixer.play(sound)
        #expect(voice.pause() == .ok)
        #expect(Signal(mixer.render(frames: 2_048)).peak() == 0)
        #expect(voice.elapsed == 0)
        #expect(voice.resume() == .ok)
        #expect(mixer.render(frames: 2_048).samples == (try startAfterSilence(settle: false)))
    }

    /// The libpulse output answers a request in pieces (`PulseBuffering.Writing.pieces`): OpenAL Soft's loopback
    /// mixes exactly the frames it is asked for and applies a start at the next call, so a start made between two
    /// 64-frame pieces sounds from the second one's first sample, and the pieces after it are, sample for sample,
    /// the one long render of the same start.
    @Test func aStartBetweenPiecesSoundsFromTheNextPieceAsInOneRender() throws {
        func mix(pieces: [Int], startBefore: Int) throws -> [Float] {
            let (mixer, sound) = try mixer()
            var out = [Float](repeating: 1, count: pieces.reduce(0, +) * 2)
            out.withUnsafeMutableBufferPointer { buffer in
                var done = 0
                for (index, frames) in pieces.enumerated() {
                    if index == startBefore { #expect(mixer.play(sound).isReal) }
                    mixer.render(into: buffer.baseAddress! + done * 2, frames: frames)
                    done += frames
                }
            }
            return out
        }
        let pieces = try mix(pieces: Array(repeating: 64, count: 32), startBefore: 3)
        let whole = try mix(pieces: [192, 1_856], startBefore: 1)
        #expect(pieces[0..<384].allSatisfy { $0 == 0 })
        // The cosine's first sample, its loudest, is the fourth piece's first frame.
        #expect(abs(pieces[384]) > 0.25 && abs(pieces[384] - whole[384]) < 1e-6)
        let worst = zip(pieces, whole).map { abs($0 - $1) }.max() ?? 1
        #expect(worst < 1e-5, "pieces differ from one render by \(worst)")
    }

    /// A source a one-shot has played out is `stopped` again before its next start is applied: a tick in between
    /// (the game's `update()` before the audio thread's next block) must not take it for played out.
    @Test func aTickBeforeTheBlockDoesNotEndAStartNotYetApplied() throws {
        let (mixer, sound) = try mixer(realVoices: 1)
        let first = mixer.play(sound)
        _ = mixer.render(frames: 9_600)
        #expect(!first.isAlive)
        #expect(mixer.drainEvents() == [.voiceFinished(first)])
        let second = mixer.play(sound)
        #expect(second.setPitch(1) == .ok)  // asked about every block from now on
        for _ in 0..<3 { mixer.tick(frames: 512) }
        #expect(second.isAlive)
        #expect(mixer.drainEvents().isEmpty)
        #expect(Signal(mixer.render(frames: 512)).peak() > 0.2)
    }

    /// The audio thread's path: one thread renders block after block (`render(into:frames:)`, as an output does)
    /// while the game thread starts, stops, pauses and resumes voices and ticks. Afterwards nothing plays that the
    /// mixer does not know of: with every voice stopped, the mix is silent.
    @Test func startsAppliedByARenderingThreadLeaveNoSourcePlayingUnowned() throws {
        let (mixer, sound) = try mixer(realVoices: 16)
        let stop = Atomic<Bool>(false)
        let finished = DispatchSemaphore(value: 0)
        let renderer = Thread {
            var block = [Float](repeating: 0, count: 256 * 2)
            while !stop.load(ordering: .acquiring) {
                block.withUnsafeMutableBufferPointer { mixer.render(into: $0.baseAddress!, frames: 256) }
            }
            finished.signal()
        }
        renderer.start()
        var rng = SplitMix64(seed: 0x5_7A27)
        var live: [Voice] = []
        for step in 0..<20_000 {
            switch Int.random(in: 0..<8, using: &rng) {
            case 0..<3: live.append(mixer.play(sound, PlayOptions(loop: Bool.random(using: &rng))))
            case 3..<5 where !live.isEmpty: live.remove(at: Int.random(in: 0..<live.count, using: &rng)).stop()
            case 5 where !live.isEmpty: live[Int.random(in: 0..<live.count, using: &rng)].pause()
            case 6 where !live.isEmpty: live[Int.random(in: 0..<live.count, using: &rng)].resume()
            default: if step % 16 == 0 { mixer.tick(frames: 256) }
            }
            if live.count > 24 { live.removeFirst().stop() }
        }
        stop.store(true, ordering: .releasing)
        finished.wait()
        for voice in live { voice.stop() }
        mixer.tick(frames: 256)
        #expect(mixer.stats.realVoices == 0)
        #expect(mixer.stats.started > 5_000)
        #expect(Signal(mixer.render(frames: 1_024)).peak() == 0)
    }
}
