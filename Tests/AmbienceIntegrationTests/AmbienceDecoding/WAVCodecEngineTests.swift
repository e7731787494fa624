import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceTestSupport

/// A WAV codec through the engine: what `WAVCodecTests` (AmbienceDecodingTests) decodes also loads and plays.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct WAVCodecEngineTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    /// pygame's example sounds are Microsoft ADPCM: such a file loads as a sound and plays.
    @Test func anMSADPCMSoundLoadsAndPlays() throws {
        let source = try fixtures.sineWAV("source.wav", hz: 440, seconds: 0.5, rate: 22_050, channels: 1)
        let adpcm = fixtures.path("pygame-style.wav")
        try fixtures.run("sox", [source, "-e", "ms-adpcm", adpcm])
        let engine = try AudioEngine(.offline(sampleRate: 48_000))
        let voice = engine.play(try engine.load(adpcm))
        #expect(voice != .none)
        let out = Signal(try engine.render(frames: 12_000))
        #expect(abs(out.dominantFrequency(in: 1_000..<11_000) - 440) < 2)
        #expect(out.rms(1_000..<11_000) > 0.05)
    }
}
