import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// The SDL_mixer stand-in's code that sees or makes samples (Mix_HookMusic, Mix_RegisterEffect and its kin,
/// Mix_SetPostMix) and its gapless finite loops, from C: Tests/SDLMixer/standin_effects_test.c, compiled against
/// Debian's own SDL_mixer.h.
@Suite(
    .offTheCooperativePool, .timeLimit(.minutes(5)), .serialized,
    .enabled(if: MixerStandIn.built, Comment(rawValue: MixerStandIn.missing)))
struct SDLMixerEffectsTests {
    static let program = "standin_effects_test"

    /// The contracts: bad input (NULL functions, channels -3, -1 and 100000, effects never registered) is 0 with the
    /// reason; effects run in registration order, each on what the one before left, in whole frames of the opened
    /// format; done callbacks come at the play's end, at a halt and an unregistering (before it returns), at a shrink
    /// that drops the channel and at Mix_CloseAudio (post effects), and no call comes after; a play under way moves
    /// to a stream when an effect is registered; loops = 2 plays three times; the hook gets one block per call and
    /// Mix_GetMusicHookData its argument; a removed post-mix function is not called again.
    @Test func contractsFromC() throws {
        let folder = try MixerStandIn.prepare(Self.program)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try MixerStandIn.run(
            folder, [], environment: ["SDL_AUDIODRIVER": "dummy"], program: Self.program)
        #expect(!result.killedBySignal, "\(Self.program) crashed: \(result.stderr)")
        #expect(result.status == 0, "\(Self.program): \(result.stdout)\n\(result.stderr)")
        let tally = CAPI.tally(result.stdout)
        #expect(tally != nil && tally!.failed == 0 && tally!.passed >= 49, "\(result.stdout)")
    }

    /// What the device was given (SDL's disk driver, 32-bit float stereo at 44.1 kHz), in four parts: the hook's
    /// 440 Hz; a 660 Hz chunk whose right side an effect zeroes; a 330 Hz chunk whose left side the post-mix zeroes;
    /// and a tone of period 100 frames, 4,400 frames long, played with loops = 2: 13,200 frames with no gap and no
    /// break at the seams (each frame on the sine fitted to the whole part).
    @Test func effectsAreHeard() throws {
        let folder = try MixerStandIn.prepare(Self.program)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recording = folder + "/device.raw"
        let result = try MixerStandIn.run(
            folder, ["--heard"], environment: ["SDL_AUDIODRIVER": "disk", "SDL_DISKAUDIOFILE": recording],
            program: Self.program)
        #expect(result.status == 0, "\(Self.program) --heard: \(result.stdout)\n\(result.stderr)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: recording))
        let signal = Signal(
            bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }, channels: 2, sampleRate: 44_100)
        let parts = Self.parts(of: signal)
        try #require(parts.count == 4, "parts heard: \(parts)")

        // The hook's tone, both sides, at the half scale it wrote (measured at 440 Hz and beside it, so that a late
        // wake-up of the stream thread on a loaded machine, a short gap, does not read as another tone).
        let hook = Self.middle(of: parts[0])
        for side in 0..<2 {
            let level = signal.amplitude(of: 440, in: hook, channel: side)
            #expect(level > 0.3 && level < 0.6, "hook side \(side) at \(level)")
            #expect(signal.amplitude(of: 660, in: hook, channel: side) < 0.05)
        }
        // The effect's channel: the left as played, the right zeroed (after the play moved to its stream).
        let effect = Self.middle(of: parts[1])
        #expect(abs(signal.dominantFrequency(in: effect) - 660) < 2)
        #expect(signal.amplitude(of: 660, in: effect) > 0.4)
        #expect(signal.rms(effect, channel: 1) < 0.001, "right side under the effect")
        // The post-mix: the left of the whole mix zeroed from the first block, the right as played.
        #expect(signal.rms(parts[2], channel: 0) < 0.001, "left side under the post-mix")
        let post = Self.middle(of: parts[2])
        #expect(abs(signal.dominantFrequency(in: post, channel: 1) - 330) < 2)
        #expect(signal.amplitude(of: 330, in: post, channel: 1) > 0.4)
        // Three plays back to back: 13,200 frames, each on one sine of period 100 frames.
        let loops = parts[3]
        #expect(abs(loops.count - 13_200) < 100, "looped part of \(loops.count) frames")
        let fitted = (loops.lowerBound + 50)..<(loops.upperBound - 50)
        for side in 0..<2 {
            let residual = Self.largestResidual(signal, fitted, period: 100, channel: side)
            #expect(residual.amplitude > 0.45 && residual.amplitude < 0.55, "loops at \(residual.amplitude)")
            #expect(residual.largest < 0.02, "a frame \(residual.largest) off the sine: a gap or a break at a seam")
        }
    }

    /// The stretches where something sounds (any side over 0.02), joined across quiet spells under 50 ms (a sine's
    /// zero crossings, a play moving to a stream).
    static func parts(of signal: Signal) -> [Range<Int>] {
        var parts: [Range<Int>] = []
        var start: Int?, last = 0
        for f in 0..<signal.frames where max(abs(signal.samples[2 * f]), abs(signal.samples[2 * f + 1])) > 0.02 {
            if let begun = start, f - last > 2_205 {
                parts.append(begun..<(last + 1))
                start = f
            } else if start == nil {
                start = f
            }
            last = f
        }
        if let begun = start { parts.append(begun..<(last + 1)) }
        return parts
    }

    /// The middle half of a part: clear of its start and end.
    static func middle(of part: Range<Int>) -> Range<Int> {
        (part.lowerBound + part.count / 4)..<(part.upperBound - part.count / 4)
    }

    /// The sine of `period` frames fitted to one side over `range` (least squares), and the largest distance of a
    /// frame from it.
    static func largestResidual(_ signal: Signal, _ range: Range<Int>, period: Double, channel: Int) -> (
        amplitude: Double, largest: Double
    ) {
        var sine = 0.0, cosine = 0.0
        for f in range {
            let phase = 2 * Double.pi * Double(f) / period
            sine += Double(signal.samples[2 * f + channel]) * sin(phase)
            cosine += Double(signal.samples[2 * f + channel]) * cos(phase)
        }
        sine *= 2 / Double(range.count)
        cosine *= 2 / Double(range.count)
        var largest = 0.0
        for f in range {
            let phase = 2 * Double.pi * Double(f) / period
            let fitted = sine * sin(phase) + cosine * cos(phase)
            largest = max(largest, abs(Double(signal.samples[2 * f + channel]) - fitted))
        }
        return ((sine * sine + cosine * cosine).squareRoot(), largest)
    }
}
