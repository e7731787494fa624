import AmbiencePlatform
import Synchronization

/// The game's callback behind a stream voice (`AudioEngine.playStream`): fills the buffer it is given (its frames ×
/// the stream's channels, interleaved, zeroed beforehand) and returns how many frames it wrote. Fewer than asked ends
/// the stream once they have played.
package typealias StreamRender = @Sendable (UnsafeMutableBufferPointer<Float>) -> Int

/// One stream voice's OpenAL side, a source of its own with `bufferCount` buffers queued on it, and the game's
/// callback that fills them.
///
/// OpenAL Soft 1.19 has no callback buffers (AL_SOFT_callback_buffer came later), so the stream is a queue refilled
/// from outside the audio thread: by the mixer's stream thread, or by `render` when offline. The queue's bookkeeping
/// (the `var`s) is guarded by the mixer's lock; the callback and the block it fills are guarded by `calling`, taken
/// before the mixer's lock and never inside it, so the callback runs with no lock of the mixer held and may call the
/// engine.
final class StreamFeed: @unchecked Sendable {
    /// Buffers queued per stream: one playing and two ahead. A sample the callback writes is heard two buffers (two
    /// engine blocks) later; StreamVoiceTests measures it.
    static let bufferCount = 3

    let source: ALSource
    let buffers: [ALBuffer]
    let sampleRate: Int
    let channels: Int
    /// Frames each call asks for: one engine block at the stream's rate.
    let framesPerBuffer: Int
    private let render: StreamRender

    // Guarded by the mixer's lock.
    var free: [ALBuffer]
    /// What the source holds, oldest first, with the frames each holds.
    var queued: [(buffer: ALBuffer, frames: Int)] = []
    /// Frames of the buffers the source has played out.
    var playedFrames = 0
    /// The callback returned short: it is not called again, and the voice ends when the queue has played.
    var ended = false
    /// The voice was released: nothing is queued any more and the callback is not called again.
    var closed = false
    /// The source has been played once (so a stop after that is a starved queue, an underrun).
    var started = false
    /// The occlusion filter, made on first use.
    var filter: ALFilter?

    private let calling = Lock<Void>(())
    /// The thread inside the callback, 0 when none.
    private let callingThread = Atomic<UInt>(0)
    /// The block the callback fills; only touched under `calling`.
    private let block: UnsafeMutableBufferPointer<Float>

    init(
        source: ALSource, buffers: [ALBuffer], sampleRate: Int, channels: Int, framesPerBuffer: Int,
        render: @escaping StreamRender
    ) {
        self.source = source
        self.buffers = buffers
        self.sampleRate = sampleRate
        self.channels = channels
        self.framesPerBuffer = framesPerBuffer
        self.render = render
        free = buffers
        block = .allocate(capacity: framesPerBuffer * channels)
        block.initialize(repeating: 0)
    }

    deinit { block.deallocate() }

    /// Calls the callback for one block, unless `isOpen` (asked under `calling`) says the voice has closed, and hands
    /// what it wrote to `deliver`, still under `calling`. Returns what `deliver` returns (false: stop asking).
    func produce(isOpen: () -> Bool, deliver: (UnsafeBufferPointer<Float>, Int) -> Bool) -> Bool {
        calling.withLock { _ in
            guard isOpen() else { return false }
            block.update(repeating: 0)
            callingThread.store(currentThreadIdentity(), ordering: .sequentiallyConsistent)
            let written = render(block)
            callingThread.store(0, ordering: .sequentiallyConsistent)
            let frames = min(max(written, 0), framesPerBuffer)
            return deliver(UnsafeBufferPointer(rebasing: block[0..<frames * channels]), frames)
        }
    }

    /// Returns once no call of the callback is under way. With `closed` set beforehand, none starts afterwards. From
    /// inside the callback (a voice stopping itself) it returns at once: the call under way is the caller's own.
    func waitOutCallback() {
        guard callingThread.load(ordering: .sequentiallyConsistent) != currentThreadIdentity() else { return }
        calling.withLock { _ in }
    }
}
