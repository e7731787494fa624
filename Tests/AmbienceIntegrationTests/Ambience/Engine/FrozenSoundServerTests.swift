import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceDecoding
@testable import AmbienceIntegrationSupport
@testable import AmbienceOutput
@testable import AmbienceTestSupport

extension SoundServerSuites {
    /// A sound server that accepts connections and never answers (SIGSTOP): OpenAL Soft's and SDL's PulseAudio code
    /// wait on it without a bound of their own, so these check the engine's: an offline engine never asks the server
    /// anything, and a real-time one gives up on opening or closing its device after `SDLAudioDevice`'s deadlines.
    /// Each runs the built `ambience` as a child, since OpenAL Soft starts once per process.
    @Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct FrozenSoundServerTests {
        let fixtures: Fixtures
        init() throws { fixtures = try Fixtures() }

        /// `render` and `stress` are offline: a frozen server must not even be noticed.
        @Test func offlineRenderAndStressNeverWaitOnTheServer() throws {
            let server = try ThrowawayService.soundServer(in: fixtures)
            server.freeze()
            defer { server.thaw() }
            let out = fixtures.path("offline.wav")
            let render = try ToolRunner.run(
                ["render", "--out", out, "--seconds", "1"], environment: server.environment, timeout: 60)
            #expect(!render.timedOut && render.status == 0, "\(render.stderr)")
            #expect(try AudioFile.open(out).info.frames == 48_000)
            let stress = try ToolRunner.run(
                ["stress", "--voices", "50", "--seconds", "1"], environment: server.environment, timeout: 60)
            #expect(!stress.timedOut && stress.status == 0, "\(stress.stderr)")
        }

        /// A server that freezes while `play` runs: the run still ends on time (its close of the device gives up
        /// after two seconds and says so), with status 0.
        @Test func playEndsWhenTheServerFreezesMidPlay() throws {
            let server = try ThrowawayService.soundServer(in: fixtures)
            defer { server.thaw() }
            let music = try fixtures.sineOgg("music.ogg", hz: 440, seconds: 30)
            let player = try LivePlayer(
                files: [music], arguments: ["--seconds", "4", "--category", "playback"],
                environment: server.environment.merging(["SDL_AUDIODRIVER": "pulseaudio"]) { $1 })
            defer { player.stop() }
            #expect(player.waitFor(event: "started")?.event["driver"] as? String == "pulseaudio")
            server.freeze()
            // Four seconds of play, two for the close and generous room for a loaded machine; it used to hang.
            #expect(player.process.waitForExit(within: 40))
            #expect(player.process.terminationStatus == 0)
        }

        /// Starting on a frozen server fails with a typed error after the open's deadline, instead of hanging.
        @Test func startOnAFrozenServerFailsWithAnError() throws {
            let server = try ThrowawayService.soundServer(in: fixtures)
            server.freeze()
            defer { server.thaw() }
            let music = try fixtures.sineOgg("music.ogg", hz: 440, seconds: 5)
            let play = try ToolRunner.run(
                ["play", music, "--seconds", "2"],
                environment: server.environment.merging([
                    "SDL_AUDIODRIVER": "pulseaudio", "DBUS_SESSION_BUS_ADDRESS": ""
                ]) { $1 },
                timeout: 60)
            #expect(!play.timedOut)
            #expect(play.status == 1)
            #expect(play.stderr.contains("did not answer within"), "\(play.stderr)")
        }

        /// A session bus that never answers: SDL 2.26 would join it inside libdbus's global lock at its start and
        /// wait for ever, and every libdbus call of the engine's would then wait behind that lock. `play` ends on
        /// time with its music played, the desktop left out.
        @Test func playRunsOnAFrozenSessionBus() throws {
            let bus = try ThrowawayService.dbus(in: fixtures)
            bus.freeze()
            defer { bus.thaw() }
            let music = try fixtures.sineOgg("music.ogg", hz: 440, seconds: 5)
            let play = try ToolRunner.run(
                ["play", music, "--seconds", "2", "--category", "playback"],
                environment: ["SDL_AUDIODRIVER": "pulseaudio", "DBUS_SESSION_BUS_ADDRESS": bus.address], timeout: 90)
            #expect(!play.timedOut, "\(play.stderr)")
            #expect(play.status == 0, "\(play.stderr)")
            #expect(play.stdout.contains("state: playing"), "\(play.stdout)")
        }
    }
}
