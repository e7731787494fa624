import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// Real-time output through SDL (the dummy driver on machines with no sound card: it runs the callback at real-time pace).
extension SoundServerSuites {
    @Suite(.offTheCooperativePool, .timeLimit(.minutes(5)), .serialized) struct RealtimeTests {
        @Test func aStalledGameThreadDoesNotStarveTheMusic() throws {
            // SDL's dummy driver runs the callback at real-time pace on a machine with or without a sound server.
            let previous = getenv("SDL_AUDIODRIVER").map { String(cString: $0) }
            setenv("SDL_AUDIODRIVER", "dummy", 1)
            defer { if let previous { setenv("SDL_AUDIODRIVER", previous, 1) } else { unsetenv("SDL_AUDIODRIVER") } }
            let fixtures = try Fixtures()
            let engine = try AudioEngine(
                EngineConfiguration(output: .device(), appName: "ambience-stall-test", desktopIntegration: false))
            defer { engine.shutdown() }
            try engine.musicPlayer.setQueue(paths: [try fixtures.sineWAV("long.wav", seconds: 6)])
            engine.musicPlayer.play()
            // Until the stream has started: the playhead moves.
            #expect(
                eventually {
                    engine.update()
                    return engine.musicPlayer.currentPlaybackTime > 0
                }, "the music never started")
            engine.update()
            let before = engine.musicPlayer.currentPlaybackTime
            let underrunsBefore = engine.stats.underruns
            let start = Date()
            usleep(2_000_000)  // the game thread stalls for 2 s: no update() at all
            let elapsed = Date().timeIntervalSince(start)
            let after = engine.musicPlayer.currentPlaybackTime
            // The playhead moved on by the wall-clock time: the stream never ran dry (a starved source stops its clock
            // and is counted as an underrun when the streaming thread restarts it).
            #expect(abs((after - before) - elapsed) < 0.15, "moved \(after - before) s in \(elapsed) s")
            #expect(engine.stats.underruns == underrunsBefore)
            #expect(engine.musicPlayer.playbackState == .playing)
            #expect(engine.outputDriver != "offline")
        }

        @Test func aDeviceNoDriverCanOpenIsATypedOutputError() throws {
            // SDL's dummy driver has only its default device: a named one opens nowhere.
            let previous = getenv("SDL_AUDIODRIVER").map { String(cString: $0) }
            setenv("SDL_AUDIODRIVER", "dummy", 1)
            defer { if let previous { setenv("SDL_AUDIODRIVER", previous, 1) } else { unsetenv("SDL_AUDIODRIVER") } }
            var configuration = EngineConfiguration(
                output: .device(name: "ambience-no-such-device"), appName: "ambience-no-device-test",
                desktopIntegration: false)
            configuration.outputBackend = .sdl  // SDL's own error, whatever AMBIENCE_OUTPUT says
            let error = #expect(throws: EngineError.self) { try AudioEngine(configuration) }
            guard case .output(.noDriver(let tried)) = error else {
                Issue.record("not a typed output error: \(String(describing: error))")
                return
            }
            #expect(tried.contains("dummy"))
            #expect(
                error?.description
                    == "SDL audio: no driver could open a device (tried \(tried.joined(separator: ", ")))")
        }

        @Test func deviceEngineRendersInRealTimeAndRefusesOfflineRender() throws {
            // SDL's dummy driver paces its callback from the start; a null sink on the private PulseAudio sleeps up
            // to 2 s before it takes a new stream's first blocks (README, "Small periods").
            var configuration = EngineConfiguration(
                output: .device(), appName: "ambience-realtime-test", desktopIntegration: false)
            configuration.outputBackend = .sdl
            let engine = try AudioEngine(configuration)
            defer { engine.shutdown() }
            #expect(throws: EngineError.notOffline) { try engine.render(frames: 512) }
            let frames = engine.mixer.framesRendered.count
            usleep(500_000)
            let rendered = engine.mixer.framesRendered.count - frames
            #expect(abs(Double(rendered) - 24_000) < 6_000, "rendered \(rendered) frames in 0.5 s")
        }
    }
}
