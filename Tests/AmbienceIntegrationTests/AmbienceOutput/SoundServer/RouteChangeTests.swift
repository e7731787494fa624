import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// Route changes against a real PulseAudio server (scripts/with-services.sh), through `ambience play --events-json`.
extension SoundServerSuites {
    @Suite(
        .offTheCooperativePool,
        .timeLimit(.minutes(10)), .serialized,
        .enabled(if: PulseServer.isRunning, "needs the private PulseAudio server of scripts/with-services.sh"))
    struct RouteChangeTests {
        let fixtures: Fixtures
        let music: String

        init() throws {
            fixtures = try Fixtures()
            try PulseServer.restore()
            music = try fixtures.sineWAV("music.wav", seconds: 30, channels: 2, amplitude: 0.3)
        }

        func startPlaying() throws -> LivePlayer {
            let player = try LivePlayer(files: [music])
            #expect(player.waitFor(event: "playbackState", { $0["state"] as? String == "playing" }) != nil)
            // Wait until the server shows our stream.
            let deadline = Date().addingTimeInterval(waitBound)
            while try !PulseServer.streams().contains(where: { $0.application == "ambience" }) && Date() < deadline {
                usleep(20_000)
            }
            return player
        }

        func ourStream() throws -> (application: String, sink: String, corked: Bool)? {
            try PulseServer.streams().first { $0.application == "ambience" }
        }

        @Test func unloadingTheSinkInUsePausesAndResumeContinuesOnTheOtherSink() throws {
            let player = try startPlaying()
            defer { player.stop() }
            #expect(try ourStream()?.sink == "speakers")
            let before = player.events.count
            try PulseServer.pactl("unload-module", try #require(try PulseServer.moduleID(ofSink: "speakers")))
            let change = player.waitFor(event: "routeChange", after: before) {
                $0["reason"] as? String == "oldDeviceUnavailable"
            }
            let (event, seconds) = try #require(change)
            // A functional bound, generous for a loaded machine; the figure itself is printed for the record.
            print("RouteChangeTests: oldDeviceUnavailable \(seconds) s after the unload")
            #expect(seconds < 2)
            #expect(event["previous"] as? String == "Speakers (speakers)")
            #expect(event["current"] as? String == "Headphones (headphones)")
            #expect(player.waitFor(event: "playbackState", after: before) { $0["state"] as? String == "paused" } != nil)
            let paused = player.events.count
            player.send("resume")
            #expect(
                player.waitFor(event: "playbackState", after: paused) { $0["state"] as? String == "playing" } != nil)
            let stream = try #require(try ourStream())
            #expect(stream.sink == "headphones")
            #expect(!stream.corked)
        }

        @Test func changingTheDefaultIsFollowed() throws {
            let player = try startPlaying()
            defer { player.stop() }
            #expect(try ourStream()?.sink == "speakers")
            let before = player.events.count
            try PulseServer.pactl("set-default-sink", "headphones")
            let change = try #require(
                player.waitFor(event: "routeChange", after: before) {
                    $0["reason"] as? String == "routeConfigurationChange"
                })
            #expect(change.event["current"] as? String == "Headphones (headphones)")
            #expect(eventually { ((try? ourStream()) ?? nil)?.sink == "headphones" })
            // Answered markers: every event the player had to report by now is in.
            #expect(player.roundTrip())
            #expect(!player.events.dropFirst(before).contains { $0["state"] as? String == "paused" })
        }

        @Test func aNewSinkIsAnnouncedWithoutPausing() throws {
            let player = try startPlaying()
            defer { player.stop() }
            let before = player.events.count
            try PulseServer.pactl(
                "load-module", "module-null-sink", "sink_name=usb", "sink_properties=device.description=USB")
            let change = try #require(
                player.waitFor(event: "routeChange", after: before) { $0["reason"] as? String == "newDeviceAvailable" })
            print("RouteChangeTests: newDeviceAvailable \(change.seconds) s after the load")
            #expect(change.seconds < 2)
            #expect(player.roundTrip())
            #expect(!player.events.dropFirst(before).contains { $0["state"] as? String == "paused" })
            #expect(try ourStream()?.sink == "speakers")
        }

        @Test func losingEverySinkRendersToNothingAndASinkComingBackRecovers() throws {
            let player = try startPlaying()
            defer { player.stop() }
            let before = player.events.count
            try PulseServer.pactl("unload-module", try #require(try PulseServer.moduleID(ofSink: "headphones")))
            try PulseServer.pactl("unload-module", try #require(try PulseServer.moduleID(ofSink: "speakers")))
            #expect(
                player.waitFor(event: "routeChange", after: before) {
                    $0["reason"] as? String == "noSuitableRouteForCategory"
                } != nil)
            #expect(player.waitFor(event: "interruption", after: before) { $0["type"] as? String == "began" } != nil)
            // Rendering to nothing, it still answers: its loop turns.
            #expect(player.roundTrip())
            #expect(player.process.isRunning)
            let lost = player.events.count
            try PulseServer.pactl(
                "load-module", "module-null-sink", "sink_name=speakers", "sink_properties=device.description=Speakers")
            #expect(
                player.waitFor(event: "routeChange", after: lost) { $0["reason"] as? String == "newDeviceAvailable" }
                    != nil)
            #expect(
                player.waitFor(event: "interruption", after: lost) {
                    $0["type"] as? String == "ended" && $0["shouldResume"] as? Bool == true
                } != nil)
            #expect(player.waitFor(event: "playbackState", after: lost) { $0["state"] as? String == "playing" } != nil)
            // Our stream is back on the server.
            let deadline = Date().addingTimeInterval(waitBound)
            while try ourStream() == nil && Date() < deadline { usleep(20_000) }
            #expect(try ourStream()?.sink == "speakers")
        }

        @Test func fiftyUnplugReplugCyclesLeaveNothingBehind() throws {
            let player = try startPlaying()
            // Every unplug is reported as the old device going away, even on a loaded machine, where the server's
            // report of its new default can come a poll after the removal and the stream's move after both.
            var missed = 0
            for cycle in 0..<50 {
                // Unplug the speakers: the stream moves to the headphones and the game is told. Plug them back: the
                // server makes its configured default the default again, and the engine follows it there.
                #expect(eventually { ((try? ourStream()) ?? nil)?.sink == "speakers" }, "cycle \(cycle)")
                let before = player.events.count
                try PulseServer.pactl("unload-module", try #require(try PulseServer.moduleID(ofSink: "speakers")))
                let reported =
                    player.waitFor(event: "routeChange", after: before) {
                        $0["reason"] as? String == "oldDeviceUnavailable"
                    } != nil
                if !reported { missed += 1 }
                try PulseServer.pactl(
                    "load-module", "module-null-sink", "sink_name=speakers",
                    "sink_properties=device.description=Speakers")
                #expect(
                    player.waitFor(event: "routeChange", after: before) {
                        $0["reason"] as? String == "newDeviceAvailable"
                    } != nil, "cycle \(cycle)")
                player.send("resume")
                if reported {
                    #expect(
                        player.waitFor(event: "playbackState", after: before) {
                            $0["state"] as? String == "playing"
                        } != nil, "cycle \(cycle)")
                }
            }
            #expect(missed == 0, "\(missed) of 50 unplugs went unreported")
            #expect(eventually { ((try? ourStream()) ?? nil)?.sink == "speakers" })
            #expect(player.process.isRunning)
            player.stop()
            let stopped = try #require(player.events.last { $0["event"] as? String == "stopped" })
            #expect(player.process.terminationStatus == 0)
            // The mixer (its OpenAL buffers and sources) lives through every reopen: memory does not grow per cycle.
            let started = try #require(player.events.first { $0["event"] as? String == "started" })
            let growth = (stopped["residentBytes"] as? Int ?? .max) - (started["residentBytes"] as? Int ?? 0)
            #expect(growth < 8 << 20, "grew \(growth) bytes over 50 cycles")
        }

        @Test func withNoSoundServerEverythingStillRuns() throws {
            // No server by either protocol: SDL also has a PipeWire driver, which finds PipeWire's own socket.
            let player = try LivePlayer(
                files: [music], arguments: ["--seconds", "1"],
                environment: [
                    "PULSE_SERVER": "unix:/nonexistent/native", "PIPEWIRE_REMOTE": "/nonexistent/pipewire-0",
                    "SDL_AUDIODRIVER": ""
                ])
            let started = try #require(player.waitFor(event: "started"))
            #expect(started.event["driver"] as? String == "dummy")
            #expect(player.waitFor(event: "stopped") != nil)
            #expect(player.process.waitForExit(within: waitBound))
            #expect(player.process.terminationStatus == 0)
        }
    }
}
