import Ambience
import CSDLMixerABI
import Synchronization

// Mix_HookMusic: music whose samples come from the program's function, as an engine stream voice on the music bus
// (so the session's rule for the program's music, MusicRule.swift, silences it as it does Mix_PlayMusic's). The
// function fills `len` bytes in the opened format (Mix_QuerySpec's), given silence, one engine block at a time, on
// the engine's stream thread; they are converted to floats for the engine.
//
// Latency: what the function writes is heard two engine blocks after the block during which it was called (the
// stream's queue of three blocks): 2 × chunksize frames, 23 ms at 44.1 kHz with 512-frame chunks, plus up to half a
// block for the stream thread's wake-up.
//
// As in SDL_mixer, Mix_VolumeMusic does not reach the hook (it writes the final samples itself), and the hook stays
// set across Mix_CloseAudio: it plays again on the next opening.

/// The hook, its argument and the stream voice playing it, in the stand-in's state (`MixerState.hook`): one lock for
/// the hook and the music's hold, so a hook set on one thread while another clears it ends as one of the two calls
/// left it, the music held exactly when a hook is set. A voice is stopped (which waits out a call of the function
/// under way) with no lock held: the function may call the library.
struct MusicHook {
    var function: standin_mix_func?
    /// The argument's address (a plain number, so the state stays Sendable).
    var argument: UInt = 0
    var voice: Voice?
    /// Counts changes, so a voice started for a hook since replaced is stopped, not kept.
    var generation = 0
    /// Voices of replaced hooks being stopped: the music is let go only once none is heard.
    var stopping = 0
}

/// The hook's argument, read without a lock (Mix_GetMusicHookData may be called from inside the hook, while a thread
/// holding the stand-in's lock waits for that call to end); written under the stand-in's lock with the hook.
private let hookArgument = Atomic<UInt>(0)

/// The program's function as an engine stream: silence in, the function, the bytes converted to floats.
final class HookBridge: @unchecked Sendable {
    private let function: standin_mix_func
    private let argument: UnsafeMutableRawPointer?
    /// The hook's `MusicHook.generation`: once it is replaced, `hookGate` calls the function no more.
    private let generation: Int
    private let format: SampleFormat
    private let channels: Int
    let streamChannels: Int
    private let scratch: FormatScratch
    private var capacity: Int { scratch.capacity }
    private var bytes: UnsafeMutableRawPointer { scratch.bytes }
    private var floats: UnsafeMutablePointer<Float> { scratch.floats }

    init(
        _ function: @escaping standin_mix_func, _ argument: UnsafeMutableRawPointer?, generation: Int, spec: OutputSpec,
        capacity: Int
    ) {
        self.function = function
        self.argument = argument
        self.generation = generation
        format = spec.format
        channels = spec.channels
        streamChannels = min(spec.channels, 2)
        scratch = FormatScratch(frames: capacity, spec: spec)
    }

    /// Fills `out` (frames × `streamChannels`) from the program's function (silence once the hook is replaced); the
    /// stream never ends by itself.
    func render(_ out: UnsafeMutableBufferPointer<Float>) -> Int {
        guard let base = out.baseAddress else { return 0 }
        let frames = out.count / streamChannels
        var done = 0
        while done < frames {
            let piece = min(frames - done, capacity)
            let samples = piece * channels
            format.silence(bytes, count: samples)
            _ = hookGate.call(generation) {
                function(argument, bytes.assumingMemoryBound(to: UInt8.self), Int32(clamping: samples * format.width))
            }
            format.decode(
                UnsafeRawBufferPointer(start: bytes, count: samples * format.width), into: floats, count: samples)
            mapFrames(floats, channels, into: base + done * streamChannels, streamChannels, frames: piece)
            done += piece
        }
        return frames
    }
}

/// Starts the hook's stream on the open device, if a hook is set and none plays. With no stream voice left the
/// reason is in Mix_GetError.
func startMusicHook() {
    let found = StandIn.shared.state.withLock { state -> (MusicHook, OpenDevice)? in
        guard state.hook.function != nil, state.hook.voice == nil, let device = state.device else { return nil }
        return (state.hook, device)
    }
    guard let (hook, device) = found, let function = hook.function else { return }
    let bridge = HookBridge(
        function, UnsafeMutableRawPointer(bitPattern: hook.argument), generation: hook.generation, spec: device.spec,
        capacity: device.engine.configuration.blockFrames)
    let voice: Voice
    do {
        voice = try device.engine.playStream(
            sampleRate: device.spec.frequency, channels: bridge.streamChannels, PlayOptions(bus: device.engine.music)
        ) { bridge.render($0) }
    } catch {
        report("Mix_HookMusic: \(error.description)")
        return
    }
    let kept = StandIn.shared.state.withLock { now -> Bool in
        guard now.hook.generation == hook.generation, now.hook.voice == nil,
            now.device?.generation == device.generation
        else { return false }
        now.hook.voice = voice
        return true
    }
    if !kept { voice.stop() }
}

/// Mix_HookMusic: plays the program's function in the place of the music (NULL stops it). When it returns, the
/// function it replaced is not running and will not be called again. Set with the device closed, it plays from the
/// next opening. As in SDL_mixer, Mix_PlayMusic's music waits meanwhile, unheard, where it is (MusicHold.swift), and
/// goes on once the hook is removed.
@_cdecl("Mix_HookMusic")
public func mixHookMusic(_ function: standin_mix_func?, _ argument: UnsafeMutableRawPointer?) {
    let address = function == nil ? 0 : UInt(bitPattern: argument)
    // The music is held before the hook plays (in the same step as the hook is set), and let go after the voice of
    // the hook it replaced has stopped, if no hook is set by then: never both heard, never a hook with the music
    // let go.
    let old = StandIn.shared.state.withLock { state -> Voice? in
        if function != nil {
            state.setMusicHooked(true)
        }
        let old = state.hook.voice
        if old != nil { state.hook.stopping += 1 }
        state.hook.function = function
        state.hook.argument = address
        state.hook.voice = nil
        state.hook.generation += 1
        hookGate.admit(state.hook.generation)
        hookArgument.store(address, ordering: .sequentiallyConsistent)
        return old
    }
    old?.stop()
    // A voice of the replaced hook that was still starting (not yet in the state) may be in a call: waited out.
    hookGate.waitOutReplaced()
    StandIn.shared.state.withLock { state in
        if old != nil { state.hook.stopping -= 1 }
        if state.hook.function == nil && state.hook.stopping == 0 { state.setMusicHooked(false) }
    }
    startMusicHook()
}

/// Mix_GetMusicHookData: the argument Mix_HookMusic was given with the current hook; NULL when none is set.
@_cdecl("Mix_GetMusicHookData")
public func mixGetMusicHookData() -> UnsafeMutableRawPointer? {
    UnsafeMutableRawPointer(bitPattern: hookArgument.load(ordering: .sequentiallyConsistent))
}
