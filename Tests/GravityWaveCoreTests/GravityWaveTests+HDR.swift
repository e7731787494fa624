import AmbienceHost
import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport
@testable import GravityWaveCore

/// The demo's HDR window (docs/HDR.md): an explosion pushes the thrust down and it comes back, heard in the
/// recording; the run draws the window over time.
extension GravityWaveTests {
    /// A headless run of `seconds` with the thrust alone in the recording (the other buses at 0: bus gains act after
    /// the window, so the other effects still move it), with its window or without one.
    func recordThrust(_ name: String, seconds: Double, window: Bool, plot: String? = nil, voices: Int = 0) throws
        -> (run: GameRun, summary: RunSummary, audio: PCMBuffer)
    {
        var launch = LaunchOptions()
        launch.headless = true
        launch.seconds = seconds
        launch.voices = voices
        launch.record = fixtures.path(name)
        launch.hdrPlot = plot
        let run = try GameRun(launch: launch, headless: true, assets: BuildProducts.assets, settingsPath: settingsPath)
        run.engine.music.gain = 0
        run.engine.ui.gain = 0
        for (kind, bus) in run.game.audio.buses where kind != .thrust { bus.gain = 0 }
        if !window { run.engine.sfx.hdr = nil }
        let summary = try run.run()
        return (run, summary, try AudioFile.decode(fixtures.path(name)))
    }

    @Test func anExplosionPushesTheThrustDownUnderTheWindowAndItComesBack() throws {
        let seconds = 10.0
        let plotPath = fixtures.path("hdr.svg")
        let (run, summary, heard) = try recordThrust("thrust-hdr.wav", seconds: seconds, window: true, plot: plotPath)
        let (_, plain, unwindowed) = try recordThrust("thrust-plain.wav", seconds: seconds, window: false)
        #expect(summary.sfxLog == plain.sfxLog)
        #expect(run.engine.sfx.hdr == GameAudio.window)

        // The first explosion with 3.6 s of the run after it, and no other explosion within 3.6 s either side.
        let explosions = summary.sfxLog.filter { $0.kind == .explosion }.map(\.time)
        let start = try #require(
            explosions.first { t in
                t >= 0.6 && t + 3.6 < seconds && !explosions.contains { $0 != t && abs($0 - t) < 3.6 }
            },
            "explosions at \(explosions)")
        func decibels(_ pcm: PCMBuffer, _ from: Double) -> Double {
            let range = Int(from * 48_000)..<Int((from + 0.25) * 48_000)
            return 20 * log10(max(Double(Signal(pcm).rms(range)), 1e-9))
        }
        func change(at time: Double) -> Double { decibels(heard, time) - decibels(unwindowed, time) }
        // Before: the window rests at 0, where every sound but the explosion stands: the thrust as without it. Within
        // 1 dB, not to the sample: the thrust starts at gain 0, so under the window it starts culled and takes its
        // source a block later where its playhead stands, and a quarter second of the noisy loop a few milliseconds
        // apart differs by up to 0.6 dB.
        #expect(decibels(unwindowed, start - 0.5) > -60, "the thrust is heard before the explosion")
        #expect(abs(change(at: start - 0.5)) < 1, "before the explosion")
        // From the end of the attack (30 ms) on, for as long as the explosion plays: at least 15 dB down, or culled.
        for offset in [0.1, 0.4, 0.8] {
            #expect(change(at: start + offset) < -15, "\(offset) s into the explosion")
        }
        // The explosion (1.2 s at its pitch, at most 1.3 s) ends, the window falls in 1.5 s: the thrust is back.
        #expect(abs(change(at: start + 3.2)) < 1, "after the release")

        // The window's own account of it, frame by frame, as drawn in the plot.
        let samples = run.hdrPlot.samples
        #expect(samples.count == summary.frames)
        let before = try #require(samples.last { $0.time < start })
        let peak = try #require(samples.filter { $0.time > start && $0.time < start + 1 }.map(\.top).max())
        let after = try #require(samples.first { $0.time > start + 3.2 })
        #expect(before.top == 0 && after.top == 0)
        #expect(peak > 15 && peak <= GameAudio.explosionLoudness)
        #expect(run.hdrPlot.explosions == explosions)

        // The plot is written: both panels, a point per frame in each line, the explosions marked.
        let svg = try String(contentsOfFile: plotPath, encoding: .utf8)
        #expect(svg.hasPrefix("<?xml") && svg.hasSuffix("</svg>\n"))
        let lines = svg.components(separatedBy: "<polyline")
        #expect(lines.count == 3)
        for line in lines.dropFirst() {
            let points = line.components(separatedBy: "points=\"")[1].prefix { $0 != "\"" }
            #expect(points.split(separator: " ").count == summary.frames)
        }
        #expect(svg.components(separatedBy: "stroke-dasharray").count - 1 == 2 * explosions.count)
    }

    @Test func theWindowCullsAmbientVoicesWhileAnExplosionSounds() throws {
        let (run, summary, _) = try recordThrust(
            "crowd-hdr.wav", seconds: 6, window: true, plot: fixtures.path("crowd.svg"), voices: 60)
        let explosions = summary.sfxLog.filter { $0.kind == .explosion }.map(\.time)
        let start = try #require(explosions.first, "no explosion in 6 s")
        let samples = run.hdrPlot.samples
        let calm = try #require(samples.last { $0.time < start }).culled
        let loud = try #require(samples.filter { $0.time > start + 0.1 && $0.time < start + 0.8 }.map(\.culled).max())
        #expect(loud > calm, "culled \(calm) before the explosion, \(loud) during it")
        #expect(loud <= 60 + 2)
    }
}
