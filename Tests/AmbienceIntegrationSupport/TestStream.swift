import Ambience
import AmbiencePlatform
import Foundation

@testable import AmbienceAudioTestSupport
@testable import AmbienceTestSupport

/// A stream voice's callback for tests: a sine per channel (or silence until `arm()`), that can end after a number
/// of frames and remembers its calls.
final class TestStream: Sendable {
    struct State {
        /// Frames written so far.
        var frame = 0
        var calls = 0
        /// Calls that came after `stop()` returned.
        var callsAfterStop = 0
        var stopped = false
        /// Silent until armed; the first frame written after `arm()`.
        var silentUntilArmed = false
        var armedFrame: Int?
        /// The names of the threads that called.
        var threads: Set<String> = []
    }

    let hz: [Double]
    let rate: Int
    let amplitude: Float
    /// Frames the stream has in all; nil: endless.
    let length: Int?
    let state: Lock<State>

    init(hz: [Double], rate: Int = 48_000, amplitude: Float = 0.5, length: Int? = nil, silentUntilArmed: Bool = false) {
        self.hz = hz
        self.rate = rate
        self.amplitude = amplitude
        self.length = length
        var initial = State()
        initial.silentUntilArmed = silentUntilArmed
        state = Lock(initial)
    }

    var channels: Int { hz.count }
    var calls: Int { state.withLock { $0.calls } }
    var framesWritten: Int { state.withLock { $0.frame } }

    func arm() { state.withLock { $0.silentUntilArmed = false } }

    /// Notes that the voice was stopped: any later call is counted.
    func noteStopped() { state.withLock { $0.stopped = true } }

    func render(_ buffer: UnsafeMutableBufferPointer<Float>) -> Int {
        let name = Thread.current.name ?? ""
        return state.withLock { state in
            state.calls += 1
            state.threads.insert(name)
            if state.stopped { state.callsAfterStop += 1 }
            let asked = buffer.count / channels
            let frames = length.map { min(asked, max($0 - state.frame, 0)) } ?? asked
            if state.silentUntilArmed {
                state.frame += frames
                return frames
            }
            if state.armedFrame == nil { state.armedFrame = state.frame }
            for f in 0..<frames {
                for c in 0..<channels {
                    let phase = 2 * Double.pi * hz[c] * Double(state.frame + f) / Double(rate)
                    buffer[f * channels + c] = amplitude * Float(sin(phase))
                }
            }
            state.frame += frames
            return frames
        }
    }

    /// Starts it on `engine`.
    func play(on engine: AudioEngine, _ options: PlayOptions = PlayOptions()) throws -> Voice {
        try engine.playStream(sampleRate: rate, channels: channels, options) { [self] in render($0) }
    }
}
