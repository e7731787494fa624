import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceIntegrationSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// A stereo sound whose two sides are equal is stored and mixed as mono (`Mixer.makeSound`), and sounds as the
/// stereo one does: the same scene rendered through the real OpenAL Soft twice, once on the stereo buffer (the fold
/// turned off) and once on the folded one, equal sample for sample within `tolerance`. OpenAL Soft 1.19 plays a
/// stereo source as two speakers ahead whatever its placement, so the scenes place the voice every way the engine
/// can (pans, world points near and far, moving, at the listener's point, moved halfway): the folded voice must
/// ignore them all as the stereo one does.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct StereoFoldTests {
    /// Full scale is 1. OpenAL Soft adds a stereo source's two half-gain sides where it adds the mono source once,
    /// so the two renders may differ by a few roundings of a float; 2e-6 is 114 dB under full scale.
    static let tolerance: Float = 2e-6
    static let rate = 48_000

    /// Half a second of a chirp (100 Hz to 6 kHz) under noise, both sides the same samples: every frequency the
    /// resampler and the panning could treat apart is in it.
    static func equalSides(seconds: Double = 0.5) -> PCMBuffer {
        var random = SplitMix64(seed: 46)
        let frames = Int(seconds * Double(rate))
        var samples = [Float](repeating: 0, count: frames * 2)
        for f in 0..<frames {
            let t = Double(f) / Double(rate)
            let phase = 2 * Double.pi * (100 * t + (5_900 / (2 * seconds)) * t * t)
            let v = Float(0.4 * sin(phase)) + Float.random(in: -0.1...0.1, using: &random)
            samples[f * 2] = v
            samples[f * 2 + 1] = v
        }
        return PCMBuffer(sampleRate: rate, channels: 2, samples: samples)
    }

    /// A way to place and play the sound, and what to do to the mixer or the voice halfway.
    struct Scene: CustomTestStringConvertible, Sendable {
        let name: String
        var options = PlayOptions()
        var listener = ListenerState()
        /// After the first half of the render.
        var halfway: (@Sendable (Mixer, Voice) -> Void)? = nil
        var testDescription: String { name }
    }

    static let scenes: [Scene] = [
        Scene(name: "pan 0", options: PlayOptions(placement: .pan(0))),
        Scene(name: "pan -1, gain 0.5", options: PlayOptions(gain: 0.5, placement: .pan(-1))),
        Scene(name: "pan 1, gain 0.25", options: PlayOptions(gain: 0.25, placement: .pan(1))),
        Scene(name: "pan 0.3, gain 3 (OpenAL's gain ceiling)", options: PlayOptions(gain: 3, placement: .pan(0.3))),
        Scene(name: "pitch 1.5, pan -0.6", options: PlayOptions(pitch: 1.5, placement: .pan(-0.6))),
        Scene(name: "looping at pitch 0.75", options: PlayOptions(pitch: 0.75, loop: true)),
        Scene(name: "world point 5 m away", options: PlayOptions(placement: .world(x: 3, y: 0, z: -4))),
        Scene(
            name: "world point behind and above, gain 0.7, pitch 1.25",
            options: PlayOptions(gain: 0.7, pitch: 1.25, placement: .world(x: -2, y: 1, z: 0.5))),
        Scene(
            name: "world point with a turned, moved listener",
            options: PlayOptions(placement: .world(x: 4, y: 0, z: 2)),
            listener: ListenerState(
                position: Vector3(x: 1, y: 0, z: 1), forward: Vector3(x: 1, y: 0, z: 0), rolloff: 2)),
        Scene(
            name: "moving world point (doppler)",
            options: PlayOptions(
                placement: .world(position: Vector3(x: 2, y: 0, z: -2), velocity: Vector3(x: 0, y: 0, z: 30)))),
        Scene(name: "at the listener's point", options: PlayOptions(placement: .world(x: 0, y: 0, z: 0))),
        Scene(
            name: "at the listener's point, gain 0.4",
            options: PlayOptions(gain: 0.4, placement: .world(x: 0, y: 0, z: 0))),
        Scene(
            name: "at the listener's point, gain 3 (OpenAL's gain ceiling)",
            options: PlayOptions(gain: 3, placement: .world(x: 0, y: 0, z: 0))),
        Scene(
            name: "moved onto the listener's point halfway",
            options: PlayOptions(placement: .world(x: 1, y: 0, z: -1)),
            halfway: { _, voice in voice.setPlacement(.world(x: 0, y: 0, z: 0)) }),
        Scene(
            name: "the listener walks onto the voice", options: PlayOptions(placement: .world(x: 2, y: 0, z: 0)),
            halfway: { mixer, _ in try? mixer.setListener(ListenerState(position: Vector3(x: 2, y: 0, z: 0))) }),
        Scene(
            name: "the listener walks off the voice", options: PlayOptions(placement: .world(x: 0, y: 0, z: 0)),
            halfway: { mixer, _ in try? mixer.setListener(ListenerState(position: Vector3(x: 0, y: 0, z: 3))) }),
        Scene(
            name: "gain and pitch changed halfway", options: PlayOptions(gain: 0.8, placement: .pan(0.5)),
            halfway: { _, voice in
                voice.setGain(0.3)
                voice.setPitch(0.9)
            })
    ]

    /// The scene rendered (0.6 s, past the sound's end) on a mixer of its own, on `sound`'s stereo or folded copy.
    func render(_ scene: Scene, folding: Bool, hrtf: Bool = false) throws -> (samples: [Float], sound: Sound) {
        let mixer = try Mixer(MixerConfiguration(sampleRate: Self.rate, realVoices: 8, hrtf: hrtf))
        try mixer.setListener(scene.listener)
        let sound = try #require(mixer.makeSound(Self.equalSides(), name: "sides", foldingEqualSides: folding))
        let voice = mixer.play(sound, scene.options)
        var samples = mixer.render(frames: 14_400).samples
        scene.halfway?(mixer, voice)
        samples += mixer.render(frames: 14_400).samples
        return (samples, sound)
    }

    @Test(arguments: scenes) func theFoldedSoundRendersAsTheStereoOne(scene: Scene) throws {
        let stereo = try render(scene, folding: false)
        let folded = try render(scene, folding: true)
        #expect(stereo.sound.storedChannels == 2 && folded.sound.storedChannels == 1)
        #expect(folded.sound.channels == 2 && folded.sound.memoryCost * 2 == stereo.sound.memoryCost)
        let loudest = stereo.samples.map(abs).max() ?? 0
        #expect(loudest > 0.05, "the scene is heard: \(loudest)")
        let worst = Self.worstDifference(stereo.samples, folded.samples)
        #expect(worst.difference <= Self.tolerance, "\(scene.name): \(worst.difference) at sample \(worst.at)")
    }

    /// With HRTF on, OpenAL Soft plays a stereo source's sides through the HRIRs of ±30°, which no gain of a mono
    /// source reproduces: a sound made then stays stereo, and renders as one made without the fold.
    @Test func withHRTFTheSoundStaysStereo() throws {
        func render(folding: Bool) throws -> (samples: [Float], sound: Sound) {
            let mixer = try Mixer(MixerConfiguration(sampleRate: Self.rate, realVoices: 8, hrtf: true))
            try #require(mixer.capabilities.hrtfEnabled, "OpenAL Soft found no HRTF data set (libopenal-data)")
            let sound = try #require(mixer.makeSound(Self.equalSides(), name: "sides", foldingEqualSides: folding))
            _ = mixer.play(sound, PlayOptions(placement: .pan(-0.5)))
            return (mixer.render(frames: 28_800).samples, sound)
        }
        let made = try render(folding: true), reference = try render(folding: false)
        #expect(made.sound.storedChannels == 2)
        #expect((reference.samples.map(abs).max() ?? 0) > 0.05)
        #expect(made.samples == reference.samples)
    }

    /// Sides equal but for one sample (one float step apart) are not folded; a mono sound is mono as it was.
    @Test func sidesThatDifferByOneSampleAreNotFolded() throws {
        let mixer = try Mixer(sampleRate: Self.rate)
        let equal = Self.equalSides()
        var samples = equal.samples
        samples[samples.count / 2 + 1] = samples[samples.count / 2 + 1].nextUp
        let nearly = try #require(
            mixer.makeSound(PCMBuffer(sampleRate: Self.rate, channels: 2, samples: samples), name: "nearly"))
        #expect(nearly.storedChannels == 2 && nearly.memoryCost == samples.count * 4)
        let folded = try #require(mixer.makeSound(equal, name: "equal"))
        #expect(folded.storedChannels == 1 && folded.channels == 2 && folded.memoryCost == samples.count * 2)
        let mono = try #require(mixer.makeSound(tone(hz: 440, seconds: 0.1), name: "mono"))
        #expect(mono.storedChannels == 1 && mono.channels == 1)
        // The engine's own way in folds too.
        let engine = try AudioEngine(.offline())
        #expect(try engine.makeSound(equal, name: "equal").storedChannels == 1)
    }

    /// The rules that rank voices see a folded sound as loud as the stereo one: twelve voices of different gains on
    /// four sources keep the same four real, and an HDR window measures the same top.
    @Test func rankingAndHDRSeeTheFoldedSoundAsLoudAsTheStereoOne() throws {
        func crowd(folding: Bool) throws -> (real: [Bool], top: Float?) {
            let engine = try AudioEngine(.offline(realVoices: 4))
            try engine.sfx.setHDR(HDRSettings(width: 30, threshold: 0, attack: 0, release: 0))
            let sound = try #require(
                engine.mixer.makeSound(Self.equalSides(), name: "sides", foldingEqualSides: folding))
            #expect(sound.storedChannels == (folding ? 1 : 2))
            var voices: [Voice] = []
            for i in 0..<12 {
                let x = Float(i), gain = Float(i + 1) / 12, loudness = Float(60 + 3 * i)
                var options = PlayOptions(gain: gain, loop: true, priority: UInt8(200 - i), loudness: loudness)
                options.placement = .world(x: x, y: 0, z: -2)
                voices.append(engine.play(sound, options))
            }
            _ = try engine.render(frames: 9_600)
            return (voices.map { $0.isReal }, engine.sfx.hdrWindowTop)
        }
        let stereo = try crowd(folding: false), folded = try crowd(folding: true)
        #expect(stereo.real.filter { $0 }.count == 4)
        #expect(stereo.real == folded.real)
        #expect(stereo.top != nil && stereo.top == folded.top)
    }
}
