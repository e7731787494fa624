import AmbiencePlatform
import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceDecoding
@testable import AmbienceIntegrationSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// Numbers from callers and files: the checked conversions, the one duration formatter, and every API edge that
/// takes a number refusing NaN and infinities (and clamping the rest) while the rest of the engine plays on.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct CallerNumberTests {
    // MARK: Checked conversions (pure)

    @Test func integersReachCOnlyWhenTheyFit() throws {
        #expect(try 7.exactly(Int32.self, "n") == 7)
        #expect(throws: InvalidNumber.self) { try (Int(Int32.max) + 1).exactly(Int32.self, "n") }
        #expect(throws: InvalidNumber.self) { try (-1).exactly(UInt32.self, "n") }
        #expect(try 44_100.checked(Int32.self, in: 1...768_000, "rate") == 44_100)
        #expect(throws: InvalidNumber.self) { try 0.checked(Int32.self, in: 1...768_000, "rate") }
        let refusal = #expect(throws: InvalidNumber.self) { try Int.max.exactly(Int32.self, "frames in the fmt chunk") }
        #expect(refusal?.description.hasPrefix("frames in the fmt chunk is 9223372036854775807") == true)
    }

    @Test(
        arguments: [
            (1.4, Int64(1)), (1.5, 2), (-1.5, -2), (0, 0), (9.2e18, 9_200_000_000_000_000_000)
        ] as [(Double, Int64)])
    func finiteDoublesRound(value: Double, expected: Int64) throws {
        #expect(try value.integer(Int64.self, "t") == expected)
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity, 9.3e18, -9.3e18, 1e300])
    func doublesThatCannotBeIntegersAreRefused(value: Double) {
        #expect(throws: InvalidNumber.self) { try value.integer(Int64.self, "t") }
        #expect(throws: InvalidNumber.self) { try value.integer(Int32.self, "t") }
    }

    @Test func saturationNeverTraps() {
        #expect(Double.nan.saturated(Int.self) == 0)
        #expect(Double.infinity.saturated(Int32.self) == .max)
        #expect((-Double.infinity).saturated(Int64.self) == .min)
        #expect(Float(3e9).saturated(Int32.self) == .max)
        #expect(2.5.saturated(Int.self, rounding: .down) == 2)
    }

    @Test func clampingRefusesOnlyWhatHasNoValue() throws {
        #expect(try Float(100).clamped(to: MixerLimits.gain, "gain") == 64)
        #expect(try Float(-3).clamped(to: MixerLimits.gain, "gain") == 0)
        #expect(throws: InvalidNumber.self) { try Float.nan.clamped(to: MixerLimits.gain, "gain") }
        #expect(throws: InvalidNumber.self) { try Double.infinity.clamped(to: MixerLimits.seconds, "fade") }
    }

    // MARK: The duration formatter and parser (pure)

    @Test(
        arguments: [
            (0, "0:00.000"), (0.0004, "0:00.000"), (0.0005, "0:00.001"), (0.9994, "0:00.999"), (0.9995, "0:01.000"),
            (0.9996, "0:01.000"), (47_999.0 / 48_000, "0:01.000"), (1, "0:01.000"), (59.9994, "0:59.999"),
            (59.9995, "1:00.000"), (61.5, "1:01.500"), (3599.9995, "1:00:00.000"), (3600, "1:00:00.000"),
            (3661.25, "1:01:01.250"), (360_000, "100:00:00.000"), (-1.5, "-0:01.500"), (-0.0004, "0:00.000"),
            (-0.0, "0:00.000"), (.nan, "unknown"), (.infinity, "infinite"), (-.infinity, "-infinite"),
            (1e300, "1e+300 s")
        ] as [(Double, String)])
    func durationsFormatExactlyAtEveryBoundary(seconds: Double, text: String) {
        #expect(DurationText.format(seconds) == text)
    }

    @Test(
        arguments: [
            ("0", 0.0), ("90", 90), ("0.5", 0.5), ("1:30", 90), ("1:02:03.5", 3723.5), ("-2", -2), ("0:01.000", 1),
            ("100:00:00.000", 360_000)
        ] as [(String, Double)])
    func durationsParse(text: String, seconds: Double) {
        #expect(DurationText.parse(text) == seconds)
    }

    @Test(arguments: [
        "", "nan", "inf", "-", "1:", ":30", "1:60", "1:5", "1:2:3", "1.5:00", "1e3", "0x10", "1..5", ".5", "5.",
        "1:30:", "+5", " 5", "1,5", "١"
    ])
    func malformedDurationsAreRefused(text: String) {
        #expect(DurationText.parse(text) == nil)
    }

    @Test func everyFormattedDurationParsesBack() {
        for seconds in [0, 0.001, 0.9995, 59.9995, 61.5, 3599.9995, 86_399.999, -12.25] {
            let text = DurationText.format(seconds)
            let back = DurationText.parse(text)
            #expect(
                back.map { abs($0 - (seconds * 1000).rounded() / 1000) < 1e-9 } == true,
                "\(seconds) → \(text) → \(String(describing: back))")
        }
    }

    // MARK: The command, which trapped on exactly these

    @Test func infoOnA47999FrameWAVShowsOneSecond() throws {
        let fixtures = try Fixtures()
        let wav = fixtures.path("almost.wav")
        try fixtures.run("sox", ["-n", "-r", "48000", "-c", "1", "-b", "16", wav, "synth", "47999s", "sine", "440"])
        let result = try ToolRunner.run(["info", wav])
        #expect(!result.killedBySignal && result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("frames       47999"))
        #expect(result.stdout.contains("duration     0:01.000"))
    }

    @Test func renderOfAlmostOneSecondReportsOneSecond() throws {
        let fixtures = try Fixtures()
        let out = fixtures.path("o.wav")
        let result = try ToolRunner.run(["render", "--out", out, "--seconds", "0.9996"])
        #expect(!result.killedBySignal && result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("rendered 0:01.000 at 48000 Hz"))
        #expect(try AudioFile.info(out).frames == 47_981)
    }

    @Test(arguments: ["nan", "inf", "-1", "1e400", "1:75", "86401"])
    func renderRefusesAbsurdLengthsAsUsage(seconds: String) throws {
        let fixtures = try Fixtures()
        let out = fixtures.path("o.wav")
        let result = try ToolRunner.run(["render", "--out", out, "--seconds", seconds])
        #expect(!result.killedBySignal && result.status == 2, "\(result.stderr)")
        #expect(result.stderrLines.first?.hasPrefix("ambience:") == true)
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test func renderTakesClockTimes() throws {
        let fixtures = try Fixtures()
        let out = fixtures.path("o.wav")
        let result = try ToolRunner.run(["render", "--out", out, "--seconds", "0:02.5", "--rate", "8000"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try AudioFile.info(out).frames == 20_000)
    }

    // MARK: Engine configuration: one check for Swift and C

    @Test(
        arguments: [
            ("blockFrames", EngineConfiguration(output: .offline, blockFrames: 0)),
            ("blockFrames", EngineConfiguration(output: .offline, blockFrames: 1 << 30)),
            ("sampleRate", EngineConfiguration(output: .offline, sampleRate: 0)),
            ("sampleRate", EngineConfiguration(output: .offline, sampleRate: -48_000)),
            ("realVoices", EngineConfiguration(output: .offline, realVoices: 0)),
            ("maxVoices", EngineConfiguration(output: .offline, realVoices: 64, maxVoices: 8)),
            ("soundMemoryBudget", EngineConfiguration(output: .offline, soundMemoryBudget: -1))
        ] as [(String, EngineConfiguration)])
    func absurdConfigurationsAreRefusedBeforeAnythingOpens(field: String, configuration: EngineConfiguration) {
        // blockFrames: 0 hung the first render before this check.
        let error = #expect(throws: EngineError.self) { try AudioEngine(configuration) }
        guard case .invalidNumber(let refusal) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(refusal.what == field)
    }

    // MARK: The mixer's edge: refused numbers change nothing, and every other voice plays on

    private func engine() throws -> AudioEngine {
        try AudioEngine(EngineConfiguration(output: .offline, blockFrames: 512))
    }

    @Test func nonFiniteVoiceCallsAreRefusedAndTheMixPlaysOn() throws {
        let engine = try engine()
        let sine = try engine.makeSound(tone(hz: 440, seconds: 2), name: "sine")
        let steady = engine.play(sine, PlayOptions(placement: .pan(-1)))
        let target = engine.play(sine, PlayOptions(gain: 0.5, placement: .pan(1)))
        let before = try Signal(engine.render(frames: 4_800))
        for bad in [Float.nan, .infinity, -.infinity] {
            #expect(isInvalid(target.setGain(bad)))
            #expect(isInvalid(target.setPitch(bad)))
            #expect(isInvalid(target.setOcclusion(bad)))
            #expect(isInvalid(target.setPlacement(.pan(bad))))
            #expect(isInvalid(target.setPlacement(.world(x: 0, y: bad, z: 0))))
            #expect(isInvalid(target.setPlacement(.world(x: 0, y: 0, z: -1, velocity: Vector3(x: bad, y: 0, z: 0)))))
            #expect(isInvalid(target.fade(to: bad, over: 1)))
            #expect(isInvalid(target.fade(to: 0, over: Double(bad))))
            #expect(isInvalid(target.stop(fade: Double(bad))))
            #expect(engine.play(sine, PlayOptions(gain: bad)) == .none)
            #expect(engine.play(sine, PlayOptions(fadeIn: Double(bad))) == .none)
            #expect(engine.play(sine, PlayOptions(placement: .world(x: bad, y: 0, z: 0))) == .none)
        }
        #expect(throws: InvalidNumber.self) { try PlayOptions(pitch: .nan).validated() }
        // A handle that never was a voice has no mixer to ask: it is stale, whatever the number.
        #expect(Voice.none.setGain(.nan) == .stale)
        let after = try Signal(engine.render(frames: 4_800))
        #expect(after.samples.allSatisfy { $0.isFinite })
        #expect(steady.isPlaying && target.isPlaying)
        // Both sides sound exactly as loud as before: nothing was half-applied.
        for channel in 0..<2 {
            #expect(
                abs(after.rms(1_000..<4_800, channel: channel) - before.rms(1_000..<4_800, channel: channel)) < 0.005)
        }
    }

    @Test func finiteVoiceNumbersOutOfRangeAreClamped() throws {
        let engine = try engine()
        let sine = try engine.makeSound(tone(hz: 440, seconds: 2), name: "sine")
        let voice = engine.play(sine, PlayOptions(gain: -4, pitch: 0, placement: .pan(7)))
        #expect(voice != .none)
        #expect(voice.setPitch(1e30) == .ok)
        #expect(voice.setGain(1) == .ok)
        #expect(voice.setPlacement(.world(x: 1e30, y: -1e30, z: 0)) == .ok)
        #expect(voice.setPlacement(.pan(7)) == .ok)
        #expect(voice.fade(to: 1, over: 1e12) == .ok)
        let out = try Signal(engine.render(frames: 9_600))
        #expect(out.samples.allSatisfy { $0.isFinite })
        // Panned to 7 is hard right.
        #expect(out.rms(2_000..<9_600, channel: 1) > 4 * out.rms(2_000..<9_600, channel: 0))
    }

    @Test func busListenerAndDuckingRefuseNonFiniteNumbersAndKeepTheirState() throws {
        let engine = try engine()
        engine.sfx.gain = 0.5
        #expect(throws: InvalidNumber.self) { try engine.sfx.fade(to: .nan, over: 1) }
        #expect(throws: InvalidNumber.self) { try engine.sfx.fade(to: 1, over: .infinity) }
        #expect(throws: InvalidNumber.self) { try engine.sfx.setGain(-.infinity) }
        engine.sfx.gain = .nan
        #expect(engine.sfx.gain == 0.5)
        engine.sfx.gain = 1_000
        #expect(engine.sfx.gain == MixerLimits.gain.upperBound)

        var listener = engine.listener
        listener.position = Vector3(x: 1, y: 2, z: 3)
        try engine.setListener(listener)
        var bad = listener
        bad.position.x = .nan
        #expect(throws: InvalidNumber.self) { try engine.setListener(bad) }
        bad = listener
        bad.forward = .zero
        #expect(throws: InvalidNumber.self) { try engine.setListener(bad) }
        bad = listener
        bad.rolloff = .infinity
        engine.listener = bad
        #expect(engine.listener == listener)

        let rules = engine.duckingRules
        #expect(throws: InvalidNumber.self) {
            try engine.setDuckingRules([DuckingRule(trigger: engine.dialogue, target: engine.music, depth: .nan)])
        }
        #expect(engine.duckingRules == rules)
        let zone = ReverbZone(center: Vector3(x: 0, y: .nan, z: 0), radius: 1, reverb: ReverbPreset.cave.parameters)
        #expect(engine.setReverbZones([zone]) == false)
    }

    @Test func rendersRefuseWhatTheyCannotHold() throws {
        let engine = try engine()
        for seconds in [Double.nan, .infinity, -.infinity] {
            #expect(throws: EngineError.self) { try engine.render(seconds: seconds) }
        }
        #expect(throws: EngineError.self) { try engine.render(frames: .max) }
        #expect(try engine.render(frames: -5).frames == 0)
        #expect(try engine.render(seconds: -1).frames == 0)
    }

    @Test func musicSeeksAreBoundedAndNonFiniteOnesRefused() throws {
        let fixtures = try Fixtures()
        let song = try fixtures.sineOgg("song.ogg", seconds: 1)
        let engine = try engine()
        try engine.musicPlayer.setQueue(paths: [song])
        engine.musicPlayer.play()
        _ = try engine.render(frames: 4_800)
        for bad in [Double.nan, .infinity, -.infinity] {
            #expect(throws: InvalidNumber.self) { try engine.musicPlayer.seek(to: bad) }
        }
        engine.musicPlayer.currentPlaybackTime = .nan
        #expect(engine.musicPlayer.currentPlaybackTime.isFinite)
        #expect(throws: InvalidNumber.self) { try engine.musicPlayer.setVolume(.nan) }
        engine.musicPlayer.volume = 3
        #expect(engine.musicPlayer.volume == 1)
        // A seek far past the end lands at the end: the song finishes instead of trapping in the decoder.
        try engine.musicPlayer.seek(to: 1e300)
        #expect(engine.musicPlayer.currentPlaybackTime <= 1.0 + 1e-6)
        try engine.musicPlayer.seek(to: 9.3e18)
        let out = try Signal(engine.render(frames: 48_000))
        #expect(out.samples.allSatisfy { $0.isFinite })
    }

    private func isInvalid(_ result: VoiceResult) -> Bool {
        if case .invalid = result { return true }
        return false
    }
}
