import Ambience
import AmbiencePlatform
import CSDLMixerABI

// The final mix: effects registered on MIX_CHANNEL_POST (in registration order) and then Mix_SetPostMix's function,
// on the engine's post-mix observer. The program sees each mixed block in the opened format (Mix_QuerySpec's) and may
// change it: the engine's stereo floats are converted to that format, handed over, and converted back. It runs on
// the audio thread and adds no latency; nothing is allocated there: every change builds a new `PostProcessor` (its
// list and its two blocks made beforehand) and swaps it in. The engine's setter returns once the processor it
// replaced is not running, and never will again, so a removed effect's done callback is called after that.

/// What runs on the final mix, under `postEffects`' lock. Effects go with the device (their done callbacks run at
/// Mix_CloseAudio, as SDL_mixer's do); the post-mix function stays for the next opening.
struct PostEffects {
    var effects: [RegisteredEffect] = []
    var function: standin_mix_func?
    /// The function's argument's address (a plain number, so the state stays Sendable).
    var argument: UInt = 0
}

/// The final mix's effects. Changes are serialised by this lock and installed under it; the audio thread never takes
/// it. A post effect or post-mix function that itself registers or removes one (from the audio thread) is served,
/// unless another thread is changing them at that moment: that one waits for the block, which waits for this lock.
let postEffects = Lock<PostEffects>(PostEffects())

/// One arrangement of the final mix's processing, with its blocks made beforehand.
final class PostProcessor: @unchecked Sendable {
    private let effects: [RegisteredEffect]
    private let function: standin_mix_func?
    private let argument: UnsafeMutableRawPointer?
    private let format: SampleFormat
    private let channels: Int
    private let scratch: FormatScratch
    private var capacity: Int { scratch.capacity }
    private var bytes: UnsafeMutableRawPointer { scratch.bytes }
    private var floats: UnsafeMutablePointer<Float> { scratch.floats }

    init(_ post: PostEffects, spec: OutputSpec, capacity: Int) {
        effects = post.effects
        function = post.function
        argument = UnsafeMutableRawPointer(bitPattern: post.argument)
        format = spec.format
        channels = spec.channels
        scratch = FormatScratch(frames: capacity, spec: spec)
    }

    /// The engine's observer: the block (stereo floats) through every effect and the function, in the opened format.
    func run(_ block: UnsafeMutableBufferPointer<Float>, frames: Int) {
        guard let base = block.baseAddress else { return }
        var done = 0
        while done < frames {
            let piece = min(frames - done, capacity)
            let samples = piece * channels
            let length = Int32(clamping: samples * format.width)
            mapFrames(base + done * 2, 2, into: floats, channels, frames: piece)
            format.encode(floats, count: samples, into: bytes)
            for effect in effects { effect.function(STANDIN_MIX_CHANNEL_POST, bytes, length, effect.argument) }
            function?(argument, bytes.assumingMemoryBound(to: UInt8.self), length)
            format.decode(UnsafeRawBufferPointer(start: bytes, count: Int(length)), into: floats, count: samples)
            mapFrames(floats, channels, into: base + done * 2, 2, frames: piece)
            done += piece
        }
    }
}

/// Installs what `post` asks on the open device's engine (nothing when there is nothing to run: the engine's mix
/// then goes out untouched, with no conversion). Under `postEffects`' lock.
private func install(_ post: PostEffects) {
    guard let device = StandIn.shared.state.withLock({ $0.device }) else { return }
    guard !post.effects.isEmpty || post.function != nil else {
        device.engine.setPostMix(nil)
        return
    }
    let processor = PostProcessor(post, spec: device.spec, capacity: device.engine.configuration.blockFrames)
    device.engine.setPostMix { block, frames in processor.run(block, frames: frames) }
}

/// Installs the final mix's processing on a device just opened.
func installPostProcessing() {
    postEffects.withLock { install($0) }
}

/// Ends the final mix's processing before the device closes: the effects' done callbacks run (after the engine has
/// stopped calling them); the post-mix function is kept for the next opening.
func closePostProcessing(_ engine: AudioEngine) {
    let removed = postEffects.withLock { post in
        engine.setPostMix(nil)
        defer { post.effects.removeAll() }
        return post.effects
    }
    callDone(removed, channel: STANDIN_MIX_CHANNEL_POST)
}

/// Mix_RegisterEffect(MIX_CHANNEL_POST, ...): appended to the final mix's effects.
func addPostEffect(_ effect: RegisteredEffect) -> Int32 {
    postEffects.withLock { post in
        post.effects.append(effect)
        install(post)
    }
    return 1
}

/// Mix_UnregisterEffect(MIX_CHANNEL_POST, ...): the first registration of `function` goes; its done callback runs
/// once the engine no longer calls it.
func removePostEffect(_ function: Mix_EffectFunc_t?) -> Int32 {
    let removed = postEffects.withLock { post -> RegisteredEffect? in
        guard let function, let at = post.effects.firstIndex(where: { $0.isFunction(function) }) else { return nil }
        let effect = post.effects.remove(at: at)
        install(post)
        return effect
    }
    guard let removed else {
        report("Mix_UnregisterEffect: no such effect registered on MIX_CHANNEL_POST")
        return 0
    }
    callDone([removed], channel: STANDIN_MIX_CHANNEL_POST)
    return 1
}

/// Mix_UnregisterAllEffects(MIX_CHANNEL_POST): every post effect goes (done callbacks after the engine's last call).
func removeAllPostEffects() -> Int32 {
    let removed = postEffects.withLock { post in
        defer {
            post.effects.removeAll()
            install(post)
        }
        return post.effects
    }
    callDone(removed, channel: STANDIN_MIX_CHANNEL_POST)
    return 1
}

/// Mix_SetPostMix: the one function that sees (and may change) the final mix, after the post effects; NULL removes
/// it. When it returns, the function it replaced is not running and will not be called again.
@_cdecl("Mix_SetPostMix")
public func mixSetPostMix(_ function: standin_mix_func?, _ argument: UnsafeMutableRawPointer?) {
    postEffects.withLock { post in
        post.function = function
        post.argument = function == nil ? 0 : UInt(bitPattern: argument)
        install(post)
    }
}
