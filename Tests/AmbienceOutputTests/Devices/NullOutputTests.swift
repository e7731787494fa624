import AmbiencePlatform
import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceMixer
@testable import AmbienceOutput
@testable import AmbienceTestSupport

/// The null output: real-time pace from a `WorkerThread`'s timed wait, and a stop that joins at once.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct NullOutputTests {
    @Test func itRendersAtRealTimeAndStopsByJoiningAtOnce() throws {
        let mixer = try Mixer(MixerConfiguration(sampleRate: 48_000, realVoices: 4, maxVoices: 4))
        defer { mixer.close() }
        let output = NullOutput(renderer: MixerRenderer(mixer: mixer), sampleRate: 48_000, blockFrames: 480)
        let start = monotonicNanoseconds()
        output.start()
        output.start()  // a second start is harmless
        #expect(eventually { mixer.framesRendered.count >= 24_000 })
        let elapsed = Double(monotonicNanoseconds() - start) / 1e9
        // Half a second of audio took about half a second: paced, not rendered as fast as the CPU allows.
        #expect(elapsed > 0.4, "rendered 0.5 s of audio in \(elapsed) s")

        let stopping = monotonicNanoseconds()
        output.stop()
        let stopTook = Double(monotonicNanoseconds() - stopping) / 1e9
        #expect(stopTook < 0.1, "stop took \(stopTook) s")
        let frames = mixer.framesRendered.count
        Thread.sleep(forTimeInterval: 0.05)
        #expect(mixer.framesRendered.count == frames, "nothing renders after stop() returns")

        // It starts again after a stop (the device's HRTF reset stops and restarts it).
        output.start()
        #expect(eventually { mixer.framesRendered.count > frames })
        output.stop()
        output.stop()
    }
}
