import Foundation
import Glibc

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceTestSupport

/// Where a real program runs (`RealPrograms.run`): a PulseAudio of its own with null sinks, the first the default,
/// and, when asked, a session bus of its own for MPRIS (a real mpv) and the screensaver. Ready once every sink is
/// listed: a player started before its sink is there plays on the default one.
final class RealProgramStage {
    let fixtures: Fixtures
    let server: ThrowawayService
    let bus: ThrowawayService?

    init(sinks: [String] = ["speakers"], sessionBus: Bool = false) throws {
        fixtures = try Fixtures()
        server = try ThrowawayService.pulseaudio(in: fixtures, sinks: sinks)
        bus = sessionBus ? try ThrowawayService.dbus(in: fixtures) : nil
        guard eventually({ Set(sinkNames().values).isSuperset(of: sinks) }) else {
            throw FixtureError.toolFailed("the server lists \(sinkNames().values.sorted()), not all of \(sinks)")
        }
    }

    deinit {
        server.kill()
        bus?.kill()
    }

    /// What a program needs to reach the server, and the bus when there is one.
    var environment: [String: String] {
        server.environment.merging(bus.map { ["DBUS_SESSION_BUS_ADDRESS": $0.address] } ?? [:]) { $1 }
    }

    /// `pactl ARGS` on this server: its output.
    @discardableResult
    func pactl(_ arguments: [String]) throws -> String {
        try Fixtures.run("pactl", arguments, environment: server.environment, timeout: 10)
    }

    /// Unloads the null sink `name`'s module: the sink goes away, as a USB headset pulled out does.
    func removeSink(_ name: String) throws {
        let modules = try pactl(["list", "short", "modules"]).split(separator: "\n")
        guard let line = modules.first(where: { $0.contains("module-null-sink") && $0.contains("sink_name=\(name) ") }),
            let index = line.split(separator: "\t").first
        else {
            throw FixtureError.toolFailed("no module-null-sink for \(name) in:\n\(modules.joined(separator: "\n"))")
        }
        try pactl(["unload-module", String(index)])
    }

    /// `pactl --format=json ARGS` on this server, decoded; nil when pactl fails or says something else.
    private func pactlJSON(_ arguments: [String]) -> [[String: Any]]? {
        guard let text = try? pactl(["--format=json"] + arguments) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]]
    }

    /// The server's sinks' names, by index.
    func sinkNames() -> [Int: String] {
        var names: [Int: String] = [:]
        for sink in pactlJSON(["list", "short", "sinks"]) ?? [] {
            if let index = sink["index"] as? Int, let name = sink["name"] as? String { names[index] = name }
        }
        return names
    }

    /// The sinks that the streams (sink inputs) of the processes `pids` play on, by name, one per stream.
    func sinks(playedBy pids: Set<pid_t>) -> [String] {
        let names = sinkNames()
        return (pactlJSON(["list", "sink-inputs"]) ?? []).compactMap { input in
            guard let properties = input["properties"] as? [String: Any],
                let pid = (properties["application.process.id"] as? String).flatMap({ pid_t($0) }),
                pids.contains(pid), let sink = input["sink"] as? Int
            else { return nil }
            return names[sink] ?? "sink #\(sink)"
        }
    }

    /// Whether the program's music plays: an MPRIS player of a stand-in's engine (`ambience.*`, but `ambience run`'s
    /// own) on this stage's bus says Playing. It does while the session rule keeps the music quiet (the player runs on
    /// under the muted bus), so this tells when a program whose music is all it plays has started it.
    func programMusicPlays() -> Bool {
        guard let names = playerctl(["-l"], bus: bus?.address) else { return false }
        return names.split(separator: "\n").contains { name in
            name.hasPrefix("ambience.") && !name.hasPrefix("ambience.ambience_run")
                && playerctl(["-p", String(name), "status"], bus: bus?.address) == "Playing"
        }
    }

    /// Loads a null sink `name` again: the output is back.
    func addSink(_ name: String) throws {
        try pactl([
            "load-module", "module-null-sink", "sink_name=\(name)",
            "sink_properties=device.description=\(name.capitalized)"
        ])
    }

    /// A real mpv on this stage's bus, playing `file` in a loop on `sink`.
    func mpv(playing file: String, on sink: String) throws -> MPV {
        try MPV(playing: file, busAddress: bus?.address, sink: sink, soundServer: server.environment)
    }

    /// `playerctl -p mpv COMMAND` on this stage's bus, as the user pausing or playing their music.
    func mpvCommand(_ command: String) { _ = playerctl(["-p", "mpv", command], bus: bus?.address) }

    /// Whether a process running python is among `root`'s descendants: the program has started.
    static func pythonRuns(under root: pid_t) -> Bool {
        RealPrograms.processes(under: root).contains { $0.executable.contains("python") }
    }

    /// mpv's MPRIS PlaybackStatus on this stage's bus ("Playing", "Paused"), or nil when it cannot be read.
    func mpvStatus() -> String? { playerctl(["-p", "mpv", "status"], bus: bus?.address) }
}

/// 16-bit stereo at 44.1 kHz, as parec recorded it, kept to be measured piece by piece.
struct RecordedSamples {
    let samples: [Int16]

    init(_ raw: Data) { samples = raw.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) } }

    var seconds: Double { Double(samples.count / 2) / Double(Recording.rate) }

    /// When the first frame above -60 dBFS is, in the recording's seconds; nil for silence.
    var firstSound: Double? {
        samples.firstIndex { abs(Int($0)) > 33 }.map { Double($0 / 2) / Double(Recording.rate) }
    }

    /// The stereo samples between two times of the recording (clamped to it).
    func piece(_ times: ClosedRange<Double>) -> ArraySlice<Int16> {
        let frame = { (time: Double) in min(max(Int(time * Double(Recording.rate)), 0), samples.count / 2) }
        return samples[frame(times.lowerBound) * 2..<frame(times.upperBound) * 2]
    }

    /// The measures of `Recording` over a piece.
    func measures(_ times: ClosedRange<Double>) -> Recording {
        Recording(raw: piece(times).withUnsafeBytes { Data($0) })
    }

    /// The level of a sine at `hz` in a piece, in dBFS of its amplitude (-infinity for none): Goertzel filters over
    /// Hann-windowed 100 ms blocks of the mono mix, averaged. The window keeps a loud tone 500 Hz away out of the bin
    /// (below -100 dB, where a plain block lets -45 dB of it in).
    func toneDecibels(hz: Double, _ times: ClosedRange<Double>) -> Double {
        let powers = tonePowers(hz: hz, times)
        return powers.isEmpty ? -.infinity : 10 * log10(powers.reduce(0, +) / Double(powers.count))
    }

    /// The power of a sine at `hz` in each Hann-windowed 100 ms block of a piece (the squared amplitude, full scale
    /// 1), in order: what `toneDecibels` averages.
    func tonePowers(hz: Double, _ times: ClosedRange<Double>) -> [Double] {
        let stereo = Array(piece(times))
        let block = Recording.rate / 10
        let coefficient = 2 * cos(2 * Double.pi * hz / Double(Recording.rate))
        var powers: [Double] = []
        var start = 0
        while start + block * 2 <= stereo.count {
            var previous = 0.0, beforePrevious = 0.0
            for frame in 0..<block {
                let window = 0.5 - 0.5 * cos(2 * Double.pi * Double(frame) / Double(block - 1))
                let mono =
                    window * (Double(stereo[start + frame * 2]) + Double(stereo[start + frame * 2 + 1])) / 2 / 32_768
                let next = mono + coefficient * previous - beforePrevious
                beforePrevious = previous
                previous = next
            }
            let magnitude =
                previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
            // The amplitude of a sine at the bin's centre: 2 |X| / (N × 0.5, the window's mean).
            powers.append(magnitude * 16 / Double(block * block))
            start += block * 2
        }
        return powers
    }
}
