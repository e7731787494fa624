import Foundation
import Testing

@testable import AmbienceMixer

/// Scripts on one source, so that each sound takes it as another left it: a folded voice leaves `AL_MAX_GAIN`
/// raised, the source relative at the listener's point, rolloff and velocity 0, and a stereo sound past OpenAL's
/// ceiling, or a mono one placed and moving in the world, must find none of it; nor a folded voice what a stereo or
/// mono one left. And NaN, infinite and huge numbers on a folded voice, refused or clamped as on the stereo one.
extension StereoFoldTests {
    static let reuseScripts: [Script] = [
        Script(
            name: "one source: folded at gain 3, then a stereo sound at gain 3, pan 0.7",
            realVoices: 1,
            steps: [
                { s in s.play(s.sides, PlayOptions(gain: 3, placement: .world(x: 0, y: 0, z: 0))) }, { _ in },
                { s in s.takeOver(s.stereo, PlayOptions(gain: 3, placement: .pan(0.7))) }
            ]),
        Script(
            name: "one source: folded in the world, then a mono sound moving in the world, then folded, then at a pan",
            realVoices: 1,
            steps: [
                { s in
                    // Moved and turned: a world point taken as relative to the listener would sound elsewhere. The
                    // stereo voice at a world point leaves its source absolute, rolled off and moving; the folded
                    // one leaves it relative, unattenuated and still.
                    try s.mixer.setListener(Self.movedListener)
                    s.play(
                        s.sides,
                        PlayOptions(
                            gain: 2, placement: .world(x: -1, y: 0, z: -2, velocity: Vector3(x: 0, y: 0, z: 15))))
                },
                { _ in },
                { s in
                    s.takeOver(
                        s.mono,
                        PlayOptions(
                            gain: 1.5, pitch: 1.2,
                            placement: .world(x: 3, y: 0, z: -1, velocity: Vector3(x: 0, y: 0, z: -25))))
                },
                { s in s.takeOver(s.sides, PlayOptions(gain: 3, placement: .world(x: 4, y: 1, z: 2))) },
                { s in s.takeOver(s.mono, PlayOptions(gain: 2, placement: .pan(0.8))) }
            ]),
        Script(
            name: "one source: a stereo sound at gain 3, pan -0.8, then folded at gain 0.6",
            realVoices: 1,
            steps: [
                { s in s.play(s.stereo, PlayOptions(gain: 3, placement: .pan(-0.8))) }, { _ in },
                { s in s.takeOver(s.sides, PlayOptions(gain: 0.6, placement: .pan(0.4))) }
            ]),
        Script(
            name: "one source: a mono sound moving in the world, then folded at a moving world point",
            realVoices: 1,
            steps: [
                { s in
                    try s.mixer.setListener(Self.movedListener)
                    s.play(
                        s.mono,
                        PlayOptions(
                            gain: 1.8, placement: .world(x: -2, y: 1, z: -3, velocity: Vector3(x: 20, y: 0, z: 0))))
                },
                { _ in },
                { s in
                    s.takeOver(
                        s.sides,
                        PlayOptions(
                            gain: 0.7, placement: .world(x: 2, y: 0, z: -2, velocity: Vector3(x: 0, y: 0, z: 30))))
                }
            ]),
        Script(
            name: "one source: a folded voice loses it to a louder stereo one and gets it back",
            realVoices: 1,
            steps: [
                { s in s.play(s.sides, PlayOptions(gain: 2, loop: true, priority: 20, placement: .pan(0.3))) },
                { s in
                    s.play(s.stereo, PlayOptions(gain: 3, priority: 250, placement: .pan(0.9)))
                    s.noteVoices()
                },
                { s in s.expectVoices("virtual real") },
                { s in s.voices[1].stop() }, { _ in }, { _ in },
                { s in s.expectVoices("real over") }
            ])
    ]

    /// A listener away from the origin and turned, with a rolloff of its own.
    static let movedListener = ListenerState(
        position: Vector3(x: 1, y: 0, z: 1), forward: Vector3(x: 1, y: 0, z: 0), rolloff: 2)

    /// Each refused number (NaN, ±infinity) gives `.invalid` and changes nothing; each huge one is clamped. The
    /// notes (every result) must match the stereo voice's, and the renders too.
    static let numberScripts: [Script] = [
        Script(
            name: "NaN, infinite and huge numbers on a folded voice and its buses",
            steps: [
                { s in
                    s.play(s.sides, PlayOptions(gain: .nan))
                    s.play(s.sides, PlayOptions(placement: .pan(.infinity)))
                    s.play(s.sides, PlayOptions(placement: .world(x: 0, y: -.infinity, z: 0)))
                    s.play(s.sides, PlayOptions(gain: 1e30, pitch: 1, loop: true, placement: .pan(-1e30)))
                    s.expectPlayed([false, false, false, true])
                },
                { s in
                    let voice = s.voices[3]
                    s.note(voice.setGain(.nan), refused: true, "gain NaN")
                    s.note(voice.setGain(-.infinity), refused: true, "gain -inf")
                    s.note(voice.setPlacement(.pan(.nan)), refused: true, "pan NaN")
                    s.note(voice.setPlacement(.world(x: .infinity, y: 0, z: 0)), refused: true, "x inf")
                    s.note(voice.setPitch(.nan), refused: true, "pitch NaN")
                    s.note(voice.fade(to: .nan, over: 0.1), refused: true, "fade to NaN")
                    s.note(voice.fade(to: 0.5, over: .infinity), refused: true, "fade over inf")
                    s.note(voice.stop(fade: .nan), refused: true, "stop over NaN")
                    s.note(voice.setOcclusion(.infinity), refused: true, "occlusion inf")
                    for bus in [s.mixer.bus(.sfx), s.mixer.bus(.master)] {
                        s.notes.append("\(Result { () throws(InvalidNumber) in try bus.setGain(.nan) })")
                        s.notes.append(
                            "\(Result { () throws(InvalidNumber) in try bus.fade(to: 1, over: -.infinity) })")
                    }
                },
                { s in
                    let voice = s.voices[3]
                    s.note(voice.setGain(1e30), refused: false, "gain 1e30")
                    s.note(voice.setPlacement(.pan(1e30)), refused: false, "pan 1e30")
                    try s.mixer.bus(.sfx).setGain(1e30)
                    try s.mixer.bus(.master).setGain(.greatestFiniteMagnitude)
                    s.notes.append("bus gains \(s.mixer.bus(.sfx).gain) \(s.mixer.bus(.master).gain)")
                },
                { s in
                    let voice = s.voices[3]
                    s.note(voice.setPlacement(.world(x: 1e30, y: -1e30, z: 3e38)), refused: false, "world 1e30")
                    s.note(voice.setPitch(1e-30), refused: false, "pitch 1e-30")
                    s.note(voice.fade(to: 1e30, over: 1e-30), refused: false, "fade to 1e30")
                },
                { s in
                    try s.mixer.bus(.sfx).setGain(0.02)
                    s.note(s.voices[3].setGain(0.5), refused: false, "gain 0.5")
                }
            ])
    ]
}
