import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport
@testable import GravityWaveCore

/// The demo's bounds (issue 32, class 8): a voice count it can keep, a top-up that stops at the first refusal (so
/// no frame runs for minutes and a SIGTERM is seen at the next one), and a screenshot that is taken or reported as
/// not taken.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct GravityWaveLimitTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    func game(_ arguments: [String], timeout: Double = 60) throws -> (status: Int32, stderr: String, timedOut: Bool) {
        let run = try ChildProcess.run(
            [BuildProducts.gravityWave, "--headless", "--assets", BuildProducts.assets] + arguments,
            environment: childEnvironment(["SDL_AUDIODRIVER": "dummy"]), timeout: timeout)
        return (run.status, String(decoding: run.stderr, as: UTF8.self), run.timedOut)
    }

    @Test func aVoiceCountBeyondThePoolIsAUsageErrorAtOnce() throws {
        let result = try game(["--voices", "2000000"], timeout: 30)
        #expect(!result.timedOut)
        #expect(result.status == 2)
        #expect(
            result.stderr.hasPrefix("gravity-wave: --voices: 2000000 is more than the 16384 voices the engine tracks\n")
        )
        #expect(throws: GameError.self) { try LaunchOptions.parse(["--voices", "16385"]) }
        #expect(try LaunchOptions.parse(["--voices", "\(LaunchOptions.maximumVoices)"]).voices == 16_384)
    }

    @Test func theTopUpStopsAtTheFirstVoiceThePoolRefuses() throws {
        let engine = try AudioEngine(EngineConfiguration(output: .offline, realVoices: 16, maxVoices: 64))
        defer { engine.shutdown() }
        // Every slot is taken by a voice that matters more than any ambient one: each ambient voice is refused.
        let tone = try engine.load(try fixtures.sineWAV("tone.wav", seconds: 1))
        for _ in 0..<64 { #expect(engine.play(tone, PlayOptions(loop: true, priority: 200)).isAlive) }
        let audio = try GameAudio(engine: engine, assets: BuildProducts.assets)
        let started = engine.stats.started
        audio.keepAmbientVoices(1_000)
        audio.keepAmbientVoices(1_000)
        #expect(audio.ambientVoiceCount == 0)
        // One refused attempt per top-up, not one per missing voice.
        #expect(engine.stats.started == started)
    }

    @Test func aScreenshotFramePastTheEndIsRefusedBeforeTheRun() throws {
        let picture = fixtures.path("late.png")
        let result = try game(["--seconds", "1", "--screenshot", picture, "--screenshot-frame", "100"])
        #expect(result.status == 2)
        #expect(
            result.stderr
                == "gravity-wave: --screenshot-frame 100 is past the run's last frame, 60 (1.0 s at 60 frames a second)\n"
        )
        #expect(!FileManager.default.fileExists(atPath: picture))
        // The last frame itself is still a frame of the run.
        let last = try game(["--seconds", "1", "--screenshot", picture, "--screenshot-frame", "60"])
        #expect(last.status == 0, "\(last.stderr)")
        #expect(FileManager.default.fileExists(atPath: picture))
    }

    @Test func aScriptedShotTheRunNeverReachesIsAFailure() throws {
        let picture = fixtures.path("never.png")
        let result = try game(["--seconds", "1", "--at", "100:shot=\(picture)"])
        #expect(result.status == 1)
        #expect(result.stderr == "gravity-wave: \(picture): not taken; the run ended at frame 60, before --at 100\n")
        #expect(!FileManager.default.fileExists(atPath: picture))
    }
}
