import AmbiencePlatform
import Foundation
import Synchronization
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// Stream voices and the post-mix observer on real-time output (SDL's dummy driver, which runs the callback at
/// real-time pace): the stream is fed on the engine's `ambience-voices` thread, never on the audio thread, and the
/// observer runs on the audio thread.
extension SoundServerSuites {
    @Suite(.offTheCooperativePool, .timeLimit(.minutes(5)), .serialized) struct StreamDeviceTests {
        @Test func aStreamIsFedOnTheStreamThreadAndThePostMixRunsOnTheAudioThread() throws {
            let previous = getenv("SDL_AUDIODRIVER").map { String(cString: $0) }
            setenv("SDL_AUDIODRIVER", "dummy", 1)
            defer { if let previous { setenv("SDL_AUDIODRIVER", previous, 1) } else { unsetenv("SDL_AUDIODRIVER") } }
            let engine = try AudioEngine(
                EngineConfiguration(output: .device(), appName: "ambience-stream-test", desktopIntegration: false))
            defer { engine.shutdown() }
            let observerThreads = Lock<Set<String>>([])
            let observed = Atomic<Int>(0)
            engine.setPostMix { _, _ in
                // Counting only, as the audio thread allows; the name is read once.
                if observed.add(1, ordering: .relaxed).newValue == 1 {
                    let name = Thread.current.name ?? ""
                    _ = observerThreads.withLock { $0.insert(name) }
                }
            }
            let stream = TestStream(hz: [440])
            let voice = try stream.play(on: engine)
            // A second of real time: the stream thread keeps the queue fed at the device's pace.
            #expect(eventually { stream.framesWritten >= 48_000 }, "the stream was fed \(stream.framesWritten) frames")
            #expect(voice.isPlaying)
            #expect(stream.state.withLock { $0.threads } == ["ambience-voices"])
            #expect(observed.load(ordering: .relaxed) > 10)
            #expect(!observerThreads.withLock { $0 }.contains("ambience-voices"))
            #expect(voice.stop() == .ok)
            stream.noteStopped()
            usleep(100_000)
            #expect(stream.state.withLock { $0.callsAfterStop } == 0)
            engine.setPostMix(nil)
            let count = observed.load(ordering: .relaxed)
            usleep(50_000)
            #expect(observed.load(ordering: .relaxed) == count, "called after it was removed")
        }
    }
}
