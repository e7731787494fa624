import AmbiencePlatform
import Synchronization

/// The game's post-mix observer (`AudioEngine.setPostMix(_:)`): a callback that sees, and may change, every mixed
/// block before it leaves the engine.
///
/// The audio thread never locks here. The observer lives in a retained box whose address sits in an atomic; a render
/// announces itself (`inFlight`) before it loads the address and withdraws after the call, both sequentially
/// consistent, so a setter that has swapped the address and then sees no render in flight knows that no render can
/// still be using the old box (a render that announced itself later loads the new address). The setter waits out
/// the renders in flight, at most one block each, and only then releases the old box: a cleared observer is never
/// called once `set` has returned. Called from inside the observer itself, `set` cannot wait for its own call: the
/// old box is kept aside and released by the next `set` from another thread, or with the mixer.
package final class PostMix: @unchecked Sendable {
    package typealias Observer = @Sendable (UnsafeMutableBufferPointer<Float>, Int) -> Void

    private final class Box {
        let observer: Observer
        init(_ observer: @escaping Observer) { self.observer = observer }
    }

    private let current = Atomic<UInt>(0)
    private let inFlight = Atomic<Int>(0)
    /// The thread inside the observer, 0 when none: a `set` from there must not wait for itself.
    private let callingThread = Atomic<UInt>(0)
    /// Boxes replaced from inside the observer, released once no render can hold them. Never touched by the audio
    /// thread.
    private let retired = Lock<[UInt]>([])
    /// Serialises setters, so each one's wait covers the box it replaced.
    private let setting = Lock<Void>(())

    deinit {
        release(current.exchange(0, ordering: .sequentiallyConsistent))
        for box in retired.withLock({ $0 }) { release(box) }
    }

    /// Whether an observer is set (a render without one skips the bookkeeping but for two atomic operations).
    var isSet: Bool { current.load(ordering: .relaxed) != 0 }

    /// Replaces the observer (nil removes it). When it returns, the observer it replaced is not running and will never
    /// be called again, unless `set` was called from inside that observer, whose call then ends with the block.
    package func set(_ observer: Observer?) {
        let fresh = observer.map { UInt(bitPattern: Unmanaged.passRetained(Box($0)).toOpaque()) } ?? 0
        setting.withLock { _ in
            let old = current.exchange(fresh, ordering: .sequentiallyConsistent)
            if callingThread.load(ordering: .sequentiallyConsistent) == currentThreadIdentity() {
                if old != 0 { retired.withLock { $0.append(old) } }
                return
            }
            while inFlight.load(ordering: .sequentiallyConsistent) != 0 {
                sleepUntil(monotonicNanoseconds: monotonicNanoseconds() + 100_000)
            }
            release(old)
            for box in retired.withLock({ boxes in
                defer { boxes.removeAll() }
                return boxes
            }) {
                release(box)
            }
        }
    }

    /// Runs the observer on a mixed block (stereo, interleaved), on the rendering thread: no lock, no allocation.
    func run(_ buffer: UnsafeMutablePointer<Float>, frames: Int) {
        inFlight.add(1, ordering: .sequentiallyConsistent)
        defer { inFlight.subtract(1, ordering: .sequentiallyConsistent) }
        let address = current.load(ordering: .sequentiallyConsistent)
        guard let pointer = UnsafeRawPointer(bitPattern: address) else { return }
        let box = Unmanaged<Box>.fromOpaque(pointer).takeUnretainedValue()
        callingThread.store(currentThreadIdentity(), ordering: .sequentiallyConsistent)
        box.observer(UnsafeMutableBufferPointer(start: buffer, count: frames * 2), frames)
        callingThread.store(0, ordering: .sequentiallyConsistent)
    }

    private func release(_ address: UInt) {
        guard let pointer = UnsafeRawPointer(bitPattern: address) else { return }
        Unmanaged<Box>.fromOpaque(pointer).release()
    }
}
