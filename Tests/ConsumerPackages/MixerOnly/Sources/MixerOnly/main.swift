import AmbienceMixer
import Glibc

// A 440 Hz tone made by the game, played through the mixer and rendered offline: the render must hold the tone at
// its pitch while the voice plays and silence once it has played out. Prints what it measured; exits 1 on a miss.
let rate = 48_000
let tone = (0..<rate / 2).map { Float(sin(2 * Double.pi * 440 * Double($0) / Double(rate))) * 0.5 }
var failures: [String] = []

do {
    let mixer = try Mixer(sampleRate: rate, realVoices: 8)
    guard let sound = mixer.makeSound(PCMBuffer(sampleRate: rate, channels: 1, samples: tone), name: "tone") else {
        print("MixerOnly: the mixer had no room for the tone")
        exit(1)
    }
    let voice = mixer.play(sound)
    let playing = mixer.render(frames: rate / 4)
    let left = stride(from: 0, to: playing.samples.count, by: 2).map { playing.samples[$0] }
    let rms = (left.reduce(0) { $0 + $1 * $1 } / Float(max(left.count, 1))).squareRoot()
    // Upward zero crossings over the quarter second, past the first block (the source starting).
    let steady = left.dropFirst(1024)
    let crossings = zip(steady, steady.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
    let hertz = Double(crossings) * Double(rate) / Double(steady.count)
    let tail = mixer.render(frames: rate / 2)
    let tailPeak = tail.samples.suffix(rate / 4).map(abs).max() ?? 0
    print("MixerOnly: rate \(mixer.sampleRate), rms \(rms), pitch \(hertz) Hz, after the end peak \(tailPeak)")
    if rms < 0.1 { failures.append("the tone is too quiet (rms \(rms))") }
    if abs(hertz - 440) > 10 { failures.append("the tone is at \(hertz) Hz, not 440") }
    if tailPeak != 0 { failures.append("the mix is not silent after the sound ends (peak \(tailPeak))") }
    if voice.isPlaying { failures.append("the voice still plays after its sound ended") }
} catch {
    print("MixerOnly: \(error)")
    exit(1)
}
if !failures.isEmpty {
    print("MixerOnly: FAILED: " + failures.joined(separator: "; "))
    exit(1)
}
print("MixerOnly: ok")
