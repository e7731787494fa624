import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceDecoding
@testable import AmbienceIntegrationSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport
@testable import AmbienceTool

/// `ambience render --sfx FILE@T,loudness=DB --hdr BUS=WIDTH,ATTACK,RELEASE` (docs/HDR.md), heard in the WAV it
/// writes, band by band; and its refusals.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct HDRRenderCommandTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    /// Footsteps (500 Hz) at 50 dB and an ambience (300 Hz) at 40 under a window 40 dB wide on sfx; an explosion
    /// (1250 Hz) at 85 from 0.5 s to 1.5 s pushes the footsteps 35 dB down and culls the ambience; after the release
    /// both are back. Windows of tenths of a second hold whole cycles of every tone.
    @Test func anHDRWindowFromTheCommandLineIsHeard() throws {
        let steps = try fixtures.sineWAV("steps.wav", hz: 500, seconds: 3)
        let air = try fixtures.sineWAV("air.wav", hz: 300, seconds: 3)
        let boom = try fixtures.sineWAV("boom.wav", hz: 1250, seconds: 1)
        let out = fixtures.path("mix.wav")
        let result = try ToolRunner.run([
            "render", "--out", out, "--seconds", "2.6", "--hdr", "sfx=40,0.05,0.5",
            "--sfx", "\(steps)@0,loudness=50", "--sfx", "\(air)@0,loudness=40", "--sfx", "\(boom)@0.5,loudness=85"
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let mix = Signal(try AudioFile.decode(out))
        let calm = 4_800..<24_000, loud = 28_800..<43_200, after = 100_800..<120_000
        let stepsCalm = mix.amplitude(of: 500, in: calm), airCalm = mix.amplitude(of: 300, in: calm)
        #expect(abs(decibels(airCalm, over: stepsCalm) + 10) < 0.3)
        let stepsLoud = decibels(mix.amplitude(of: 500, in: loud), over: stepsCalm)
        let airLoud = decibels(mix.amplitude(of: 300, in: loud), over: airCalm)
        #expect(abs(stepsLoud + 35) < 0.5, "footsteps \(stepsLoud) dB")
        #expect(airLoud < -80, "ambience \(airLoud) dB")
        #expect(abs(decibels(mix.amplitude(of: 500, in: after), over: stepsCalm)) < 0.3)
        #expect(abs(decibels(mix.amplitude(of: 300, in: after), over: airCalm)) < 0.3)
    }

    /// A bad window or loudness is a usage error (exit 2, an `ambience:` line naming the option, then the usage),
    /// before anything is written.
    @Test(arguments: [
        ["--hdr", "sfx=40,0.05"], ["--hdr", "bogus=40,0.05,0.5"], ["--hdr", "sfx=nan,0,0"], ["--hdr", "sfx=40,inf,0"],
        ["--hdr", "sfx=300,0,0"], ["--hdr", "sfx=40,0,-1"], ["--sfx", "x.wav@0,loudness=500"],
        ["--sfx", "x.wav@0,loudness=nan"]
    ])
    func badWindowsAndLoudnessesAreUsageErrors(arguments: [String]) throws {
        let out = fixtures.path("never.wav")
        let result = try ToolRunner.run(["render", "--out", out, "--seconds", "1"] + arguments)
        #expect(result.status == 2)
        let first = result.stderrLines.first ?? ""
        #expect(first.hasPrefix("ambience: render: \(arguments[0]) '"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func theOptionsParse() throws {
        #expect(try SFXCue(parsing: "a.wav@1,loudness=-12.5").loudness == -12.5)
        #expect(try SFXCue(parsing: "a.wav@1").loudness == nil)
        let window = try HDROption(parsing: "dialogue=0,0,86400")
        #expect(window.bus == "dialogue" && window.settings == HDRSettings(width: 0, attack: 0, release: 86_400))
    }
}
