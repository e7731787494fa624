import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// Music with no MPRIS player (mpd, cmus): a stream on the sound server with `media.role=music` is the user's music.
/// Against the private PulseAudio server, with `paplay` as the music app and `ambience play` as the game (no
/// session bus, so only the stream can set the hint).
extension SoundServerSuites {
    @Suite(
        .offTheCooperativePool,
        .timeLimit(.minutes(5)), .serialized,
        .enabled(if: PulseServer.isRunning, "needs the private PulseAudio server of scripts/with-services.sh"))
    struct MusicStreamTests {
        let fixtures: Fixtures
        let music: String
        let soundtrack: String

        init() throws {
            fixtures = try Fixtures()
            try PulseServer.restore()
            music = try fixtures.sineWAV("users-music.wav", hz: 330, seconds: 60, channels: 2, amplitude: 0.2)
            soundtrack = try fixtures.sineWAV("soundtrack.wav", seconds: 60, channels: 2, amplitude: 0.2)
        }

        /// Starts `paplay` with `role` and waits until the server shows its stream playing.
        func startPaplay(role: String) throws -> ChildProcess {
            let paplay = try ChildProcess(["paplay", "--property=media.role=\(role)", music])
            #expect(
                eventually {
                    (try? PulseServer.streams())?.contains { $0.application == "paplay" && !$0.corked } == true
                })
            return paplay
        }

        /// The `pactl list sink-inputs` block of the stream whose `application.name` is `application`.
        func streamProperties(of application: String) throws -> String? {
            try PulseServer.pactl("list", "sink-inputs").components(separatedBy: "Sink Input #")
                .first { $0.contains("application.name = \"\(application)\"") }
        }

        @Test func aMusicStreamSetsTheSecondaryAudioHintAndItsEndClearsIt() throws {
            let paplay = try startPaplay(role: "music")
            defer { paplay.kill() }
            let game = try LivePlayer(files: [soundtrack])
            defer { game.stop() }
            #expect(
                game.waitFor(event: "silenceSecondaryAudioHint", { $0["begin"] as? Bool == true }) != nil,
                "no hint while a media.role=music stream plays: \(game.events)")
            // The game's own stream says what it is.
            #expect(
                eventually {
                    (try? streamProperties(of: "ambience"))??.contains("media.role = \"game\"") == true
                },
                "\(String(describing: try? streamProperties(of: "ambience")))")
            let before = game.events.count
            paplay.kill()
            #expect(
                game.waitFor(event: "silenceSecondaryAudioHint", after: before, { $0["begin"] as? Bool == false })
                    != nil,
                "the hint stayed on after the music stream ended")
        }

        /// Another app's sound that is not music (`media.role=event`) is other audio, but not the user's music.
        @Test func aStreamThatIsNotMusicLeavesTheHintOff() throws {
            let paplay = try startPaplay(role: "event")
            defer { paplay.kill() }
            let game = try LivePlayer(files: [soundtrack])
            defer { game.stop() }
            #expect(game.waitFor(event: "playbackState", { $0["state"] as? String == "playing" }) != nil)
            #expect(game.roundTrip() && game.roundTrip())
            #expect(
                !game.events.contains {
                    $0["event"] as? String == "silenceSecondaryAudioHint" && $0["begin"] as? Bool == true
                },
                "\(game.events)")
        }
    }
}
