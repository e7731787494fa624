import Ambience
import Foundation
import Glibc

@testable import AmbienceAudioTestSupport
@testable import AmbienceTestSupport

/// The sound server a run asked for: scripts/with-services.sh starts the one `AMBIENCE_SOUND_SERVER` names
/// (PulseAudio by default) and exports the name, and the tests' own throw-away servers are of the same kind.
enum SoundServer: String, CaseIterable {
    case pulseaudio, pipewire

    static var requested: SoundServer {
        ProcessInfo.processInfo.environment["AMBIENCE_SOUND_SERVER"].flatMap(SoundServer.init(rawValue:)) ?? .pulseaudio
    }

    /// Whether `serverName` (`pa_server_info.server_name`, the "Server Name" of `pactl info`) is this kind's:
    /// PulseAudio says "pulseaudio"; PipeWire's PulseAudio server "PulseAudio (on PipeWire 0.3.65)".
    func isNamed(by serverName: String) -> Bool {
        switch self {
        case .pulseaudio: serverName == "pulseaudio"
        case .pipewire: serverName.contains("on PipeWire")
        }
    }

    /// The "Server Name" line of `pactl info`, on the server at `address` (nil: the one `PULSE_SERVER` names).
    static func name(at address: String? = nil) throws -> String? {
        let info = try Fixtures.run(
            "pactl", ["info"], environment: address.map { ["PULSE_SERVER": $0] } ?? [:], timeout: 10)
        return info.split(separator: "\n").first { $0.hasPrefix("Server Name: ") }.map {
            String($0.dropFirst("Server Name: ".count))
        }
    }
}

/// An engine made with `configuration` on SDL's PulseAudio driver. SDL's audio is process-wide: while another suite's
/// engine holds it (on the dummy driver), this waits for it to be free, up to 20 s, and then takes what it gets.
func engineOnPulseAudio(_ configuration: EngineConfiguration) throws -> AudioEngine {
    let previous = getenv("SDL_AUDIODRIVER").map { String(cString: $0) }
    setenv("SDL_AUDIODRIVER", "pulseaudio", 1)
    defer { if let previous { setenv("SDL_AUDIODRIVER", previous, 1) } else { unsetenv("SDL_AUDIODRIVER") } }
    let start = monotonicSeconds()
    while true {
        let engine = try AudioEngine(configuration)
        if engine.outputDriver == "pulseaudio" || monotonicSeconds() - start > 20 { return engine }
        engine.shutdown()
        usleep(100_000)
    }
}
