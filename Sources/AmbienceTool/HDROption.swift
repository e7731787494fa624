import Ambience

/// One `--hdr BUS=WIDTH,ATTACK,RELEASE` of `ambience render`: an HDR window (docs/HDR.md) on a built-in bus, with
/// the default threshold (0 dB).
package struct HDROption: Equatable, Sendable {
    /// The built-in buses a window may go on, by the names `Bus.name` gives them.
    package static let buses = ["master", "music", "sfx", "ui", "dialogue"]

    /// The bus's name, one of `buses`.
    package var bus: String
    /// The window: the width, attack and release given, the default threshold.
    package var settings: HDRSettings

    /// Parses a window; every number must be finite and within `MixerLimits` (width 0…200 dB, times 0…86400 s).
    package init(parsing text: String) throws(UsageError) {
        let parts = text.split(separator: "=", maxSplits: 1)
        guard parts.count == 2, HDROption.buses.contains(String(parts[0])) else {
            let names = HDROption.buses.joined(separator: ", ")
            throw UsageError("--hdr '\(text)': expected BUS=WIDTH,ATTACK,RELEASE with BUS one of \(names)")
        }
        let numbers = parts[1].split(separator: ",", omittingEmptySubsequences: false).map { Double($0) }
        guard numbers.count == 3, let width = numbers[0], let attack = numbers[1], let release = numbers[2],
            MixerLimits.hdrWidth.contains(Float(width)), MixerLimits.seconds.contains(attack),
            MixerLimits.seconds.contains(release)
        else {
            throw UsageError(
                "--hdr '\(text)': expected WIDTH (0…200 dB), ATTACK and RELEASE (0…86400 s) after the bus's name")
        }
        bus = String(parts[0])
        settings = HDRSettings(width: Float(width), attack: attack, release: release)
    }

    /// The bus of `engine` this window goes on.
    func bus(of engine: AudioEngine) -> Bus {
        switch bus {
        case "master": engine.master
        case "music": engine.music
        case "ui": engine.ui
        case "dialogue": engine.dialogue
        default: engine.sfx
        }
    }
}
