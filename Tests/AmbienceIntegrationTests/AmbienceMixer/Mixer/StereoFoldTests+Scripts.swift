import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceMixer

/// Scripts of several steps around a folded voice (buses and their fades, ducking, HDR windows, suspension and
/// pauses, a source used by a folded sound then by others, refused and clamped numbers), each performed twice on
/// real OpenAL Soft: on the equal-sided sound folded, and on it stereo. The renders must be equal within
/// `tolerance`, and what the steps saw on the way (results of calls, which voices were real) the same.
extension StereoFoldTests {
    /// What a script's steps act on. Only `sides` differs between the two performances.
    final class Stage {
        let mixer: Mixer
        /// The equal-sided sound: folded in one performance, stereo in the other.
        let sides: Sound
        /// A stereo sound whose sides differ, and a mono one: the same in both performances.
        let stereo: Sound
        let mono: Sound
        /// The voices played so far, in order, and the game's buses made so far.
        var voices: [Voice] = []
        var buses: [Bus] = []
        /// What the steps saw, compared between the performances.
        var notes: [String] = []

        init(mixer: Mixer, sides: Sound, stereo: Sound, mono: Sound) {
            self.mixer = mixer
            self.sides = sides
            self.stereo = stereo
            self.mono = mono
        }

        func play(_ sound: Sound, _ options: PlayOptions) { voices.append(mixer.play(sound, options)) }

        /// Stops the last voice played and plays `sound` on the source it leaves; notes the voices.
        func takeOver(_ sound: Sound, _ options: PlayOptions) {
            voices.last?.stop()
            play(sound, options)
            expectVoices(Array(repeating: "over", count: voices.count - 1).joined(separator: " ") + " real")
        }

        /// Notes which voices are real, virtual or over, and each HDR window's top and culled voices; returns the
        /// first.
        @discardableResult func noteVoices() -> String {
            let states = voices.map { $0.isReal ? "real" : $0.isAlive ? "virtual" : "over" }.joined(separator: " ")
            notes.append(states)
            let sfx = mixer.bus(.sfx)
            if let top = sfx.hdrWindowTop { notes.append("top \(top), culled \(sfx.hdrCulledVoices)") }
            return states
        }

        /// `noteVoices`, expecting the voices to be `states` ("real virtual over").
        func expectVoices(_ states: String) {
            let seen = noteVoices()
            #expect(seen == states)
        }

        /// Expects what a step needs of the mixer (a `#expect` in a step's closure crashes Swift 6.3's region
        /// analysis).
        func expect(_ condition: Bool, _ what: String) { #expect(condition, "\(what)") }

        /// Notes which voices were played (not `Voice.none`), and expects it to be what the script says.
        func expectPlayed(_ played: [Bool]) {
            let seen = voices.map { $0 != .none }
            notes.append("played \(seen)")
            #expect(seen == played)
        }

        /// Notes a call's result, and expects it to be what the script says.
        func note(_ result: VoiceResult, refused: Bool, _ what: String) {
            notes.append("\(what): \(result)")
            if case .invalid = result {
                #expect(refused, "\(what): refused")
            } else {
                #expect(!refused && result == .ok, "\(what): \(result)")
            }
        }
    }

    /// Steps 0.1 s apart (`stepFrames`), the first before anything is rendered; the render goes on 0.3 s after the
    /// last. A one-source script (`realVoices` 1) has every sound take the source another left.
    struct Script: CustomTestStringConvertible, Sendable {
        let name: String
        var realVoices = 8
        let steps: [@Sendable (Stage) throws -> Void]
        var testDescription: String { name }
    }

    static let stepFrames = 4_800

    /// Half a second of a stereo sound whose sides differ: the chirp on the left, a lower tone on the right.
    static func differentSides() -> PCMBuffer {
        var samples = equalSides().samples
        for f in 0..<samples.count / 2 {
            samples[f * 2 + 1] = Float(0.3 * sin(2 * Double.pi * 220 * Double(f) / Double(rate)))
        }
        return PCMBuffer(sampleRate: rate, channels: 2, samples: samples)
    }

    /// The script performed on a mixer of its own, on the equal-sided sound folded or stereo.
    func perform(_ script: Script, folding: Bool) throws -> (samples: [Float], notes: [String], folded: Bool) {
        let mixer = try Mixer(MixerConfiguration(sampleRate: Self.rate, realVoices: script.realVoices))
        let sides = try #require(mixer.makeSound(Self.equalSides(), name: "sides", foldingEqualSides: folding))
        let stereo = try #require(mixer.makeSound(Self.differentSides(), name: "stereo"))
        let mono = try #require(mixer.makeSound(tone(hz: 523, seconds: 0.4), name: "mono"))
        let stage = Stage(mixer: mixer, sides: sides, stereo: stereo, mono: mono)
        var samples: [Float] = []
        for step in script.steps {
            try step(stage)
            samples += mixer.render(frames: Self.stepFrames).samples
        }
        stage.noteVoices()
        samples += mixer.render(frames: 3 * Self.stepFrames).samples
        return (samples, stage.notes, sides.storedChannels == 1)
    }

    static var scripts: [Script] { busScripts + hdrScripts + pauseScripts + reuseScripts + numberScripts }

    @Test(arguments: scripts) func theFoldedSoundActsAsTheStereoOne(script: Script) throws {
        let stereo = try perform(script, folding: false)
        let folded = try perform(script, folding: true)
        #expect(!stereo.folded && folded.folded)
        #expect(stereo.notes == folded.notes)
        let loudest = stereo.samples.map(abs).max() ?? 0
        #expect(loudest > 0.05, "the script is heard: \(loudest)")
        let worst = Self.worstDifference(stereo.samples, folded.samples)
        #expect(worst.difference <= Self.tolerance, "\(script.name): \(worst.difference) at sample \(worst.at)")
    }

    /// The largest difference between two renders, and the sample where it is (-1 when they are equal).
    static func worstDifference(_ a: [Float], _ b: [Float]) -> (difference: Float, at: Int) {
        var worst: (difference: Float, at: Int) = (a.count == b.count ? 0 : .infinity, -1)
        for (i, (x, y)) in zip(a, b).enumerated() where abs(x - y) > worst.difference { worst = (abs(x - y), i) }
        return worst
    }

    /// Bus gains and fades past OpenAL's gain ceiling, a game's bus under a faded parent, master muted, ducking,
    /// the voice's own fades, and occlusion.
    static let busScripts: [Script] = [
        Script(
            name: "the sfx bus at 0.5, faded past OpenAL's ceiling, then out",
            steps: [
                { s in
                    try s.mixer.bus(.sfx).setGain(0.5)
                    s.play(s.sides, PlayOptions(gain: 0.9, loop: true, placement: .pan(0.4)))
                },
                { s in try s.mixer.bus(.sfx).fade(to: 1.8, over: 0.25) }, { _ in }, { _ in },
                { s in try s.mixer.bus(.sfx).fade(to: 0, over: 0.15) }
            ]),
        Script(
            name: "a game's bus under a faded ui bus; master muted and back",
            steps: [
                { s in
                    let steps = s.mixer.makeBus(named: "steps", parent: s.mixer.bus(.ui))
                    try steps.setGain(1.5)
                    s.buses.append(steps)
                    s.play(
                        s.sides, PlayOptions(gain: 0.5, loop: true, bus: steps, placement: .world(x: 1, y: 0, z: -3)))
                },
                { s in try s.mixer.bus(.ui).fade(to: 0.3, over: 0.2) }, { _ in },
                { s in s.mixer.bus(.master).isMuted = true },
                { s in s.mixer.bus(.master).isMuted = false },
                { s in try s.buses[0].fade(to: 3, over: 0.1) }
            ]),
        Script(
            name: "ducked under a dialogue voice, and back",
            steps: [
                { s in
                    try s.mixer.setDuckingRules([
                        DuckingRule(
                            trigger: s.mixer.bus(.dialogue), target: s.mixer.bus(.sfx), depth: 12, attack: 0.05,
                            release: 0.15)
                    ])
                    s.play(s.sides, PlayOptions(gain: 0.8, loop: true, placement: .pan(-0.7)))
                },
                { s in s.play(s.mono, PlayOptions(gain: 0.3, bus: s.mixer.bus(.dialogue), placement: .pan(0.5))) },
                { _ in }, { _ in }, { _ in }, { _ in }, { s in s.noteVoices() }
            ]),
        Script(
            name: "faded in, up past the ceiling, out to its stop",
            steps: [
                { s in s.play(s.sides, PlayOptions(gain: 0.7, loop: true, placement: .pan(0.2), fadeIn: 0.15)) },
                { s in s.note(s.voices[0].fade(to: 2.5, over: 0.1), refused: false, "fade to 2.5") }, { _ in },
                { s in s.note(s.voices[0].stop(fade: 0.2), refused: false, "stop over 0.2 s") },
                { _ in }, { _ in }, { s in s.noteVoices() }
            ]),
        Script(
            name: "occluded (a direct low-pass) at gain 1.5, then clear",
            steps: [
                { s in
                    s.expect(s.mixer.effectsAvailable, "OpenAL Soft's EFX (the occlusion's filter)")
                    s.play(s.sides, PlayOptions(gain: 1.5, loop: true, placement: .pan(-0.2)))
                },
                { s in s.note(s.voices[0].setOcclusion(0.8), refused: false, "occlusion 0.8") }, { _ in },
                { s in s.note(s.voices[0].setOcclusion(0), refused: false, "occlusion 0") }
            ])
    ]

    /// A folded voice under an HDR window: its level under a louder voice, its culling, and its rank for sources.
    static let hdrScripts: [Script] = [
        Script(
            name: "under an HDR window: pushed down by a louder voice, one culled and back",
            steps: [
                { s in
                    try s.mixer.bus(.sfx).setHDR(HDRSettings(width: 20, threshold: 0, attack: 0, release: 0.1))
                    s.play(s.sides, PlayOptions(loop: true, placement: .pan(-0.3), loudness: 80))
                    s.play(s.sides, PlayOptions(gain: 0.9, loop: true, placement: .pan(0.6), loudness: 63))
                },
                { s in
                    s.expectVoices("real real")
                    s.play(s.mono, PlayOptions(placement: .pan(0.2), loudness: 90))
                },
                { s in s.expectVoices("real virtual real") }, { _ in }, { _ in }, { s in s.noteVoices() }, { _ in },
                { _ in }, { s in s.expectVoices("real real over") }
            ]),
        Script(
            name: "under an HDR window, three voices on two sources",
            realVoices: 2,
            steps: [
                { s in
                    try s.mixer.bus(.sfx).setHDR(HDRSettings(width: 40, threshold: 0, attack: 0.02, release: 0.2))
                    s.play(s.sides, PlayOptions(gain: 0.8, loop: true, placement: .pan(0.5), loudness: 70))
                    s.play(s.sides, PlayOptions(loop: true, placement: .world(x: -1, y: 0, z: -2), loudness: 60))
                },
                { s in
                    s.expectVoices("real real")
                    s.play(s.mono, PlayOptions(gain: 0.6, placement: .pan(-0.4), loudness: 80))
                },
                { s in s.expectVoices("real virtual real") }, { _ in }, { _ in }, { s in s.noteVoices() }, { _ in },
                { _ in }, { s in s.expectVoices("real real over") }
            ])
    ]

    /// The mixer suspended (the engine's session pause) and the voice paused, mid-sound, and the session's hold.
    static let pauseScripts: [Script] = [
        Script(
            name: "the mixer suspended mid-sound, then resumed",
            steps: [
                { s in s.play(s.sides, PlayOptions(gain: 0.8, placement: .pan(0.5))) },
                { s in s.mixer.setSuspended(true) }, { _ in },
                { s in s.mixer.setSuspended(false) }
            ]),
        Script(
            name: "paused mid-sound, then resumed",
            steps: [
                { s in s.play(s.sides, PlayOptions(gain: 1.4, placement: .world(x: 2, y: 0, z: -1))) },
                { s in s.note(s.voices[0].pause(), refused: false, "pause") }, { _ in },
                { s in s.note(s.voices[0].resume(), refused: false, "resume") }
            ]),
        Script(
            name: "paused, the mixer suspended, resumed while suspended, then the mixer resumed",
            steps: [
                { s in s.play(s.sides, PlayOptions(gain: 0.6, loop: true, placement: .pan(-0.5))) },
                { s in s.note(s.voices[0].pause(), refused: false, "pause") },
                { s in s.mixer.setSuspended(true) },
                { s in s.note(s.voices[0].resume(), refused: false, "resume") },
                { s in s.mixer.setSuspended(false) }, { _ in }
            ]),
        Script(
            name: "held by the session, then played again from the top",
            steps: [
                { s in s.play(s.sides, PlayOptions(gain: 0.9, placement: .pan(0.1))) },
                { s in
                    s.mixer.setSuspended(true)
                    s.mixer.rewindAndHoldUnpausedVoices()
                    s.noteVoices()
                },
                { s in s.mixer.setSuspended(false) },
                { s in s.note(s.voices[0].resume(), refused: false, "resume") },
                { s in s.noteVoices() }
            ])
    ]
}
