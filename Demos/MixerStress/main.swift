// MixerStress: drives Ambience's stress scene headless and prints a summary.
//
//   swift run -c release MixerStress [VOICES] [SECONDS] [REAL]
//
// The scene is a seeded crowd of 3D voices (70% looping, the rest one-shots started again as they finish) with the
// bundled theme streaming beside it. It renders offline, as fast as the CPU allows: no sound card is needed.
import Ambience
import AmbienceBench
import AmbiencePlatform

/// One line on stderr, shown through `TerminalText`: an error's file name cannot act on the terminal.
func complain(_ message: String) {
    StandardStream.error.writeWhole(TerminalText.shown(message) + "\n")
}

let words = CommandLine.arguments.dropFirst().map { Int($0) }
guard words.allSatisfy({ $0 != nil && $0! > 0 }), words.count <= 3 else {
    complain("usage: MixerStress [VOICES] [SECONDS] [REAL]   (whole numbers above 0)")
    ProcessExit.end(status: 2)
}
let voices = words.count > 0 ? words[0]! : 4096
let seconds = words.count > 1 ? words[1]! : 5
let real = words.count > 2 ? words[2]! : 256

let scene = StressScene(voices: voices)
print(
    "MixerStress: \(voices) voices (\(real) real), \(seconds) s of audio, \(scene.sounds.count) sounds made in memory")
do {
    let report = try scene.run(StressOptions(seconds: Double(seconds), realVoices: real))
    func fixed(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        return "\(rounded)"
    }
    print(
        """
          music          \(report.music.map(TerminalText.shown) ?? "none (Assets/Music/gravity-wave-theme.ogg not found)")
          voices         \(report.realVoices) real + \(report.virtualVoices) virtual at the end
          one-shots      \(report.retriggers) started again after finishing
          CPU            \(fixed(report.cpuSeconds, 3)) s for \(fixed(report.seconds, 2)) s of audio (rtf \(fixed(report.rtf, 4)))
          play()         median \(Int(report.playCallNs)) ns over \(report.playCalls) calls
          mix block      average \(fixed(report.averageRenderMicroseconds, 1)) µs, longest \(fixed(report.maxRenderMicroseconds, 1)) µs
          output RMS     \(fixed(report.outputRMS ?? 0, 4))
          peak memory    \(report.peakRSSBytes >> 20) MiB
        """)
} catch {
    complain("MixerStress: \(error)")
    ProcessExit.end(status: 1)
}
