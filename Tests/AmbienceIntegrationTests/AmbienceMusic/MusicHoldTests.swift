import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceIntegrationSupport
@testable import AmbienceMusic
@testable import AmbienceTestSupport

/// `MusicPlayer.isHeld` against what else drives the player: the session's pause and resume (an interruption) and the
/// desktop's Play and Pause (MPRIS, through `playerctl` on a session bus of the test's own), on a real device of the
/// private sound server (scripts/with-services.sh; PulseAudio, or PipeWire's). Held, the player is never heard and
/// its playhead stands still; once let go it plays only if what it was told last is to play and the session does not
/// hold the app's audio. (Issue #33: the SDL_mixer stand-in holds it for Mix_HookMusic.)
extension SoundServerSuites {
    @Suite(
        .offTheCooperativePool, .timeLimit(.minutes(10)), .serialized,
        .enabled(if: PulseServer.isRunning, "needs the private sound server of scripts/with-services.sh"))
    struct MusicHoldTests {
        /// What is done to a held player, in order, starting from a hold of music that plays.
        enum Step: String, Sendable {
            case sessionPause, sessionResume, mprisPlay, mprisPause, release
        }

        /// One row: each step with whether the music is heard after it and the state the player reports.
        struct Row: Sendable, CustomTestStringConvertible {
            let steps: [(Step, heard: Bool, PlaybackState)]
            var testDescription: String { steps.map(\.0.rawValue).joined(separator: ", ") }
        }

        static let table: [Row] = [
            Row(steps: [(.release, true, .playing)]),
            Row(steps: [(.mprisPlay, false, .playing), (.release, true, .playing)]),
            Row(steps: [
                (.sessionPause, false, .interrupted), (.sessionResume, false, .playing), (.release, true, .playing)
            ]),
            Row(steps: [
                (.sessionPause, false, .interrupted), (.release, false, .interrupted), (.sessionResume, true, .playing)
            ]),
            // Play from the desktop while the session holds the app's audio: recorded, and heard when the session
            // lets go, not when the hold does.
            Row(steps: [
                (.sessionPause, false, .interrupted), (.mprisPlay, false, .playing), (.release, false, .interrupted),
                (.sessionResume, true, .playing)
            ]),
            Row(steps: [
                (.sessionPause, false, .interrupted), (.mprisPlay, false, .playing), (.sessionResume, false, .playing),
                (.release, true, .playing)
            ]),
            Row(steps: [
                (.mprisPause, false, .paused), (.sessionPause, false, .paused), (.sessionResume, false, .paused),
                (.release, false, .paused), (.mprisPlay, true, .playing)
            ]),
            Row(steps: [(.mprisPause, false, .paused), (.mprisPlay, false, .playing), (.release, true, .playing)])
        ]

        let fixtures: Fixtures
        let song: String

        init() throws {
            fixtures = try Fixtures()
            song = try fixtures.sineWAV("song.wav", seconds: 30, rate: 48_000, channels: 2)
        }

        /// An engine on the sound server's default sink with its MPRIS player on `bus`.
        func engine(bus: String) throws -> AudioEngine {
            var configuration = EngineConfiguration(output: .device(), appName: "hold-test", desktopIntegration: true)
            configuration.sessionBusAddress = bus
            configuration.systemBusAddress = nil
            configuration.handlesTerminationSignals = false
            return try engineOnPulseAudio(configuration)
        }

        /// Whether the player is heard: its stream plays on the device and its playhead moves (0.15 s within the
        /// wait bound); not heard: it does not play, and the playhead stays put over 0.5 s.
        func heard(_ player: MusicPlayer) -> Bool {
            let playing = { player.stream.channel.locked { $0.state } == .playing }
            let from = player.currentPlaybackTime
            return eventually { playing() && player.currentPlaybackTime > from + 0.15 }
        }

        func silent(_ player: MusicPlayer) -> Bool {
            let from = player.currentPlaybackTime
            usleep(500_000)
            return player.stream.channel.locked { $0.state } != .playing
                && abs(player.currentPlaybackTime - from) < 0.02
        }

        @Test(arguments: MusicHoldTests.table)
        func aHeldPlayerPlaysOnlyWhenLetGoAndTold(row: Row) throws {
            let bus = try ThrowawayService.dbus(in: fixtures)
            defer { bus.kill() }
            let engine = try engine(bus: bus.address)
            defer { engine.shutdown() }
            try #require(engine.outputDriver == "pulseaudio")
            engine.session.setCategory(.playback)
            engine.session.setActive(true)
            let player = engine.musicPlayer
            try player.setQueue(paths: [song])
            player.play()
            try #require(heard(player), "the music never played")
            player.isHeld = true
            #expect(player.isHeld && player.playbackState == .playing)
            #expect(silent(player), "held, and still heard")
            for (step, shouldBeHeard, state) in row.steps {
                switch step {
                case .sessionPause: engine.session.beginInterruption()
                case .sessionResume: engine.session.endInterruption()
                case .release: player.isHeld = false
                case .mprisPlay, .mprisPause:
                    let command = step == .mprisPlay ? "play" : "pause"
                    #expect(playerctl(["-p", "ambience.hold_test", command], bus: bus.address) != nil)
                    let wanted: PlaybackState = step == .mprisPlay ? .playing : .paused
                    #expect(eventually { player.playbackState == wanted }, "\(command) did not reach the player")
                }
                #expect(player.playbackState == state, "after \(step)")
                if shouldBeHeard {
                    #expect(heard(player), "after \(step): not heard")
                } else {
                    #expect(silent(player), "after \(step): heard")
                }
            }
        }
    }
}
