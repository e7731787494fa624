/// Room for one piece of a conversion between the opened format and the engine's floats: `capacity` frames of the
/// opened channels, as bytes and as floats. Allocated when a hook or post-mix is installed, so the threads that run
/// them (the engine's stream thread, the audio thread) never allocate.
final class FormatScratch {
    let capacity: Int
    let bytes: UnsafeMutableRawPointer
    let floats: UnsafeMutablePointer<Float>

    init(frames: Int, spec: OutputSpec) {
        capacity = max(frames, 16)
        bytes = .allocate(byteCount: capacity * spec.channels * spec.format.width, alignment: 16)
        floats = .allocate(capacity: capacity * spec.channels)
    }

    deinit {
        bytes.deallocate()
        floats.deallocate()
    }
}
