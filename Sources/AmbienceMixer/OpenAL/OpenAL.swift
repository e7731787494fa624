import AmbienceCore
import AmbiencePlatform
import COpenAL
import Synchronization

// The only file that calls OpenAL Soft. Everything above it speaks `LoopbackDevice`, `ALSource` and `ALBuffer`.

/// OpenAL Soft as a process-wide library: how it starts.
package enum OpenALSoft {
    /// Makes the process's first OpenAL call, once, with only the `null` backend (`ALSOFT_DRIVERS`, put back after):
    /// OpenAL Soft 1.19 starts every backend at its first call, and its PulseAudio backend waits on the server without
    /// a bound, so a frozen server hung even an offline render. The engine renders only through loopback devices.
    /// A game that opens OpenAL Soft devices of its own opens one before its first engine (docs/ARCHITECTURE.md).
    package static func startWithoutBackends() {
        _ = started
    }

    private static let started: Bool = ProcessEnvironment.withVariable("ALSOFT_DRIVERS", setTo: "null") {
        guard let device = alcLoopbackOpenDeviceSOFT(nil) else { return false }
        alcCloseDevice(device)
        return true
    }
}

/// The OpenAL Soft loopback device and its one context: the engine's mixer.
///
/// Buffers and sources belong to this device, so they survive any change of the real output device.
/// `render` may be called from the audio thread; everything else from the thread holding the engine's lock.
final class LoopbackDevice: @unchecked Sendable {
    private let device: OpaquePointer
    private let context: OpaquePointer
    let sampleRate: Int
    /// How many sources the context allows (mono and stereo together).
    let sourceLimit: Int

    /// The index in `AL_RESAMPLER_NAME_SOFT`'s list of the resampler voices use, or nil to leave OpenAL Soft's
    /// default (also when the extension or that resampler is missing).
    private var resamplerIndex: ALint? = nil
    /// Whether the output limiter was asked for; a reset for HRTF asks again.
    private let outputLimiter: Bool

    init(
        sampleRate: Int, sources: Int, hrtf: Bool = false, resampler: Resampler = .linear,
        outputLimiter: Bool = false
    ) throws(MixerSetupError) {
        OpenALSoft.startWithoutBackends()
        guard let device = alcLoopbackOpenDeviceSOFT(nil) else { throw .loopbackUnavailable }
        // The rate and source count come from a validated EngineConfiguration; checking again costs nothing.
        guard let rate = try? sampleRate.exactly(ALCint.self, "sample rate"),
            alcIsRenderFormatSupportedSOFT(device, rate, ALCenum(ALC_STEREO_SOFT), ALCenum(ALC_FLOAT_SOFT)) != 0
        else {
            alcCloseDevice(device)
            throw .formatUnsupported(sampleRate: sampleRate)
        }
        let attributes: [ALCint] = [
            ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT,
            ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT,
            ALC_FREQUENCY, rate,
            ALC_MONO_SOURCES, ALCint(clamping: max(sources - 16, 1)),
            ALC_STEREO_SOURCES, 16,
            ALC_HRTF_SOFT, hrtf ? ALC_TRUE : ALC_FALSE,
            ALC_OUTPUT_LIMITER_SOFT, outputLimiter ? ALC_TRUE : ALC_FALSE,
            0
        ]
        guard let context = alcCreateContext(device, attributes) else {
            let code = alcGetError(device)
            alcCloseDevice(device)
            throw .contextFailed(code: code)
        }
        self.device = device
        self.context = context
        self.sampleRate = sampleRate
        self.outputLimiter = outputLimiter
        var mono: ALCint = 0, stereo: ALCint = 0
        alcGetIntegerv(device, ALC_MONO_SOURCES, 1, &mono)
        alcGetIntegerv(device, ALC_STEREO_SOURCES, 1, &stereo)
        sourceLimit = Int(mono + stereo)
        resamplerIndex = withCurrentContext { Self.resamplerIndex(resampler) }
    }

    /// Set once the device is closed: OpenAL calls then run with no context at all and do nothing.
    private let closed = Atomic<Bool>(false)
    /// Whether `close` has run: a caller that would make OpenAL calls outside `render` (which checks) asks first.
    var isClosed: Bool { closed.load(ordering: .acquiring) }

    deinit { close() }

    /// The index of OpenAL Soft's resampler by its 1.19 name ("Linear", "11th order Sinc"…), or one whose name
    /// begins so in a later version; nil when it is OpenAL Soft's default anyway, or not there.
    private static func resamplerIndex(_ resampler: Resampler) -> ALint? {
        guard alIsExtensionPresent("AL_SOFT_source_resampler") != 0 else { return nil }
        let wanted =
            switch resampler {
            case .point: "Nearest"
            case .linear: "Linear"
            case .cubic: "Cubic"
            case .sinc12: "11th order Sinc"
            case .sinc24: "23rd order Sinc"
            }
        let count = min(max(alGetInteger(AL_NUM_RESAMPLERS_SOFT), 0), 64)
        let names = (0..<count).map { alGetStringiSOFT(AL_RESAMPLER_NAME_SOFT, $0).map { String(cString: $0) } ?? "" }
        guard let index = names.firstIndex(of: wanted) ?? names.firstIndex(where: { $0.hasPrefix(wanted) }),
            index != Int(alGetInteger(AL_DEFAULT_RESAMPLER_SOFT))
        else { return nil }
        return ALint(index)
    }

    /// Sets the configured resampler on the voices' sources. Nothing to do when it is OpenAL Soft's default.
    func applyResampler(to sources: [ALSource]) {
        guard let resamplerIndex else { return }
        withCurrentContext {
            for source in sources { alSourcei(source.id, AL_SOURCE_RESAMPLER_SOFT, resamplerIndex) }
        }
    }

    /// Whether the output limiter is on.
    var outputLimiterEnabled: Bool {
        var value: ALCint = 0
        alcGetIntegerv(device, ALC_OUTPUT_LIMITER_SOFT, 1, &value)
        return value != 0
    }

    /// Destroys the context and closes the device now, rather than whenever the last reference goes (a thread that
    /// is still finishing at process exit may hold one, and OpenAL complains about devices left open at exit).
    /// The audio thread must have stopped calling `render` first.
    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if alcGetThreadContext() == context { alcSetThreadContext(nil) }
        alcDestroyContext(context)
        alcCloseDevice(device)
    }

    /// Makes this context current on the calling thread only (so engines on other threads are not disturbed) and
    /// returns what to hand to `leave`, which puts back whatever was current before. A thread therefore never keeps
    /// our context: one that ends later cannot leak it (OpenAL Soft 1.19 leaks a context still current on an
    /// exiting thread).
    func enter() -> ContextToken {
        let previous = alcGetThreadContext()
        let wanted = closed.load(ordering: .acquiring) ? nil : context
        guard previous != wanted else { return ContextToken(previous: previous, changed: false) }
        alcSetThreadContext(wanted)
        return ContextToken(previous: previous, changed: true)
    }

    func leave(_ token: ContextToken) {
        if token.changed { alcSetThreadContext(token.previous) }
    }

    struct ContextToken {
        fileprivate let previous: OpaquePointer?
        fileprivate let changed: Bool
    }

    func withCurrentContext<R>(_ body: () throws -> R) rethrows -> R {
        let token = enter()
        defer { leave(token) }
        return try body()
    }

    /// `body` with this context current when `needed`, else as it is (a caller whose calls reach OpenAL only then).
    func withCurrentContext<R>(if needed: Bool, _ body: () throws -> R) rethrows -> R {
        guard needed else { return try body() }
        return try withCurrentContext(body)
    }

    /// Mixes `frames` stereo float frames into `buffer`. Safe on the audio thread: no allocation, no locks of ours.
    func render(into buffer: UnsafeMutableRawPointer, frames: Int) {
        guard !closed.load(ordering: .relaxed) else {
            buffer.initializeMemory(as: Float.self, repeating: 0, count: frames * 2)
            return
        }
        alcRenderSamplesSOFT(device, buffer, ALCsizei(frames))
    }

    func hasDeviceExtension(_ name: String) -> Bool { alcIsExtensionPresent(device, name) != 0 }
    func hasExtension(_ name: String) -> Bool { alIsExtensionPresent(name) != 0 }

    /// Whether HRTF is in use.
    var hrtfEnabled: Bool {
        var value: ALCint = 0
        alcGetIntegerv(device, ALC_HRTF_SOFT, 1, &value)
        return value != 0
    }

    /// Turns HRTF on or off by resetting the device with new attributes.
    @discardableResult
    func setHRTF(_ on: Bool) -> Bool {
        let attributes: [ALCint] = [
            ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT, ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT,
            ALC_FREQUENCY, ALCint(clamping: sampleRate), ALC_HRTF_SOFT, on ? ALC_TRUE : ALC_FALSE,
            ALC_OUTPUT_LIMITER_SOFT, outputLimiter ? ALC_TRUE : ALC_FALSE, 0
        ]
        return alcResetDeviceSOFT(device, attributes) != 0
    }

    /// Every ALC and AL extension string, for capability reports.
    var extensions: [String] {
        var names: [String] = []
        if let alc = alcGetString(device, ALC_EXTENSIONS) {
            names += String(cString: alc).split(separator: " ").map(String.init)
        }
        if let al = alGetString(AL_EXTENSIONS) { names += String(cString: al).split(separator: " ").map(String.init) }
        return names
    }

    var rendererName: String {
        // AL_VERSION reads "1.1 ALSOFT 1.19.1": the spec version, then the implementation's.
        let version = alGetString(AL_VERSION).map { String(cString: $0) } ?? ""
        return "OpenAL Soft " + (version.split(separator: " ").last.map(String.init) ?? version)
    }
}

/// Groups property changes so the mixer applies them together at the next block boundary.
enum ALBatch {
    static func begin() { alDeferUpdatesSOFT() }
    static func commit() { alProcessUpdatesSOFT() }
}

/// The 3D listener of the current context.
enum ALListener {
    static func setGain(_ gain: Float) { alListenerf(AL_GAIN, gain) }
    static func setPosition(_ x: Float, _ y: Float, _ z: Float) { alListener3f(AL_POSITION, x, y, z) }
    static func setVelocity(_ x: Float, _ y: Float, _ z: Float) { alListener3f(AL_VELOCITY, x, y, z) }
    static func setOrientation(at: Vector3, up: Vector3) {
        let values: [ALfloat] = [at.x, at.y, at.z, up.x, up.y, up.z]
        alListenerfv(AL_ORIENTATION, values)
    }
    static func useInverseDistanceClamped() { alDistanceModel(AL_INVERSE_DISTANCE_CLAMPED) }
    static func setDopplerFactor(_ factor: Float) { alDopplerFactor(factor) }
    static func setSpeedOfSound(_ speed: Float) { alSpeedOfSound(speed) }
}

/// How many OpenAL buffers and sources this process has made and not yet deleted, over every device: what a soak
/// run watches for leaks (`ambience stress --soak`).
package enum ALObjectCount {
    package static let buffers = Atomic<Int>(0)
    package static let sources = Atomic<Int>(0)
}

/// Sample data owned by the loopback device.
struct ALBuffer: Hashable, Sendable {
    let id: ALuint

    /// Whether OpenAL still knows this buffer (the context must be current).
    var exists: Bool { alIsBuffer(id) != ALboolean(AL_FALSE) }

    /// Uploads interleaved float samples (1 or 2 channels).
    static func make(samples: UnsafeBufferPointer<Float>, channels: Int, sampleRate: Int) -> ALBuffer? {
        var id: ALuint = 0
        alGetError()
        alGenBuffers(1, &id)
        guard alGetError() == AL_NO_ERROR else { return nil }
        ALObjectCount.buffers.add(1, ordering: .relaxed)
        let buffer = ALBuffer(id: id)
        guard buffer.fill(samples: samples, channels: channels, sampleRate: sampleRate) else {
            buffer.delete(); return nil
        }
        return buffer
    }

    /// Buffers with no data yet, for streaming.
    static func makeEmpty(count: Int) -> [ALBuffer] {
        // A handful, chosen by the music player; clamping only guards the type.
        var ids = [ALuint](repeating: 0, count: min(max(count, 0), 1024))
        alGenBuffers(ALsizei(clamping: ids.count), &ids)
        let made = ids.filter { $0 != 0 }.map(ALBuffer.init(id:))
        ALObjectCount.buffers.add(made.count, ordering: .relaxed)
        return made
    }

    /// Replaces the buffer's contents. The buffer must not be attached to a playing source. False when OpenAL
    /// refuses them, or when their size or rate does not fit its `ALsizei` (2 GiB of samples at most).
    func fill(samples: UnsafeBufferPointer<Float>, channels: Int, sampleRate: Int) -> Bool {
        let format = channels == 1 ? AL_FORMAT_MONO_FLOAT32 : AL_FORMAT_STEREO_FLOAT32
        let (bytes, overflow) = samples.count.multipliedReportingOverflow(by: MemoryLayout<Float>.size)
        guard !overflow, let size = try? bytes.exactly(ALsizei.self, "buffer bytes"),
            let rate = try? sampleRate.checked(ALsizei.self, in: 1...ALsizei.max, "buffer rate")
        else { return false }
        alGetError()
        alBufferData(id, format, samples.baseAddress, size, rate)
        return alGetError() == AL_NO_ERROR
    }

    func delete() {
        var id = id
        alDeleteBuffers(1, &id)
        ALObjectCount.buffers.subtract(1, ordering: .relaxed)
    }
}

/// One OpenAL source: a real, mixed voice.
struct ALSource: Hashable, Sendable {
    let id: ALuint

    static func make(count: Int) -> [ALSource] {
        var made: [ALSource] = []
        made.reserveCapacity(count)
        for _ in 0..<count {
            var id: ALuint = 0
            alGetError()
            alGenSources(1, &id)
            guard alGetError() == AL_NO_ERROR else { break }
            made.append(ALSource(id: id))
        }
        ALObjectCount.sources.add(made.count, ordering: .relaxed)
        return made
    }

    func delete() {
        var id = id
        alDeleteSources(1, &id)
        ALObjectCount.sources.subtract(1, ordering: .relaxed)
    }

    enum State { case initial, playing, paused, stopped }

    var state: State {
        var value: ALint = 0
        alGetSourcei(id, AL_SOURCE_STATE, &value)
        switch value {
        case AL_PLAYING: return .playing
        case AL_PAUSED: return .paused
        case AL_STOPPED: return .stopped
        default: return .initial
        }
    }

    func play() { alSourcePlay(id) }

    /// Plays every source of `batch` with one call: OpenAL Soft looks each up and gives it a voice as
    /// `alSourcePlay` would, but takes its context, source-list and device locks once for them all.
    static func playAll(_ batch: UnsafeBufferPointer<ALSource>) {
        guard let first = batch.baseAddress, !batch.isEmpty else { return }
        // An ALSource is its id alone (a struct of one ALuint), so the batch is already the array of ids.
        precondition(MemoryLayout<ALSource>.stride == MemoryLayout<ALuint>.stride)
        first.withMemoryRebound(to: ALuint.self, capacity: batch.count) {
            alSourcePlayv(ALsizei(clamping: batch.count), $0)
        }
    }

    /// Has OpenAL Soft make room, now, for all of `batch` starting in one `alSourcePlayv` while as many have played:
    /// 1.19 grows its voice array inside that call (an allocation and a copy under the device lock) when the voices
    /// it has handed out plus the batch outgrow it, and allocates a property block for a start when its free list is
    /// empty. Each source plays a one-frame silent buffer twice, with `render` (a few frames of the device) after each
    /// play and stop to hand the property blocks back, and is left stopped, rewound and empty.
    static func primeVoices(_ batch: UnsafeBufferPointer<ALSource>, sampleRate: Int, render: () -> Void) {
        let silence = [Float](repeating: 0, count: 1).withUnsafeBufferPointer {
            ALBuffer.make(samples: $0, channels: 1, sampleRate: sampleRate)
        }
        guard let silence, !batch.isEmpty else { return }
        for source in batch { source.setBuffer(silence) }
        for _ in 0..<2 {
            playAll(batch)
            render()
            for source in batch { source.stop() }
            render()
        }
        for source in batch {
            source.rewind()
            source.setBuffer(nil)
        }
        silence.delete()
    }

    func pause() { alSourcePause(id) }
    func stop() { alSourceStop(id) }
    func rewind() { alSourceRewind(id) }

    func setBuffer(_ buffer: ALBuffer?) { alSourcei(id, AL_BUFFER, ALint(bitPattern: buffer?.id ?? 0)) }
    func setGain(_ gain: Float) { alSourcef(id, AL_GAIN, gain) }
    /// The most `AL_GAIN` may be (OpenAL clamps to it; 1 by default).
    func setMaxGain(_ gain: Float) { alSourcef(id, AL_MAX_GAIN, gain) }
    func setPitch(_ pitch: Float) { alSourcef(id, AL_PITCH, pitch) }
    func setLooping(_ loop: Bool) { alSourcei(id, AL_LOOPING, loop ? AL_TRUE : AL_FALSE) }
    func setRelative(_ relative: Bool) { alSourcei(id, AL_SOURCE_RELATIVE, relative ? AL_TRUE : AL_FALSE) }
    func setPosition(_ x: Float, _ y: Float, _ z: Float) { alSource3f(id, AL_POSITION, x, y, z) }
    func setVelocity(_ x: Float, _ y: Float, _ z: Float) { alSource3f(id, AL_VELOCITY, x, y, z) }
    func setReferenceDistance(_ d: Float) { alSourcef(id, AL_REFERENCE_DISTANCE, d) }
    func setMaxDistance(_ d: Float) { alSourcef(id, AL_MAX_DISTANCE, d) }
    func setRolloff(_ r: Float) { alSourcef(id, AL_ROLLOFF_FACTOR, r) }
    /// Plays stereo content straight to the output channels, unspatialised.
    func setDirectChannels(_ on: Bool) { alSourcei(id, AL_DIRECT_CHANNELS_SOFT, on ? AL_TRUE : AL_FALSE) }

    /// The playhead in sample frames of the current buffer.
    var sampleOffset: Int {
        get {
            var value: ALint = 0
            alGetSourcei(id, AL_SAMPLE_OFFSET, &value)
            return Int(value)
        }
        nonmutating set { alSourcei(id, AL_SAMPLE_OFFSET, ALint(clamping: newValue)) }
    }

    // Streaming: a queue of buffers played back to back, sample-exactly.
    func queue(_ buffer: ALBuffer) {
        var id = buffer.id
        alSourceQueueBuffers(self.id, 1, &id)
    }

    var buffersQueued: Int {
        var value: ALint = 0
        alGetSourcei(id, AL_BUFFERS_QUEUED, &value)
        return Int(value)
    }

    var buffersProcessed: Int {
        var value: ALint = 0
        alGetSourcei(id, AL_BUFFERS_PROCESSED, &value)
        return Int(value)
    }

    /// Takes one finished buffer off the queue.
    func unqueueProcessed() -> ALBuffer? {
        guard buffersProcessed > 0 else { return nil }
        var id: ALuint = 0
        alSourceUnqueueBuffers(self.id, 1, &id)
        return ALBuffer(id: id)
    }

    /// Removes every buffer from a stopped source.
    func unqueueAll() {
        setBuffer(nil)
    }

    /// Sends the source's sound to a reverb slot (aux send 0), or stops sending.
    func setReverbSend(_ slot: ALEffectSlot?) {
        alSource3i(id, AL_AUXILIARY_SEND_FILTER, ALint(bitPattern: slot?.id ?? 0), 0, AL_FILTER_NULL)
    }

    /// Filters the source's dry path, or removes the filter.
    func setDirectFilter(_ filter: ALFilter?) { alSourcei(id, AL_DIRECT_FILTER, ALint(bitPattern: filter?.id ?? 0)) }
}

/// An EFX auxiliary effect slot holding a reverb.
struct ALEffectSlot: Hashable, Sendable {
    let id: ALuint
    let effect: ALuint

    static func makeReverb(_ p: ReverbParameters) -> ALEffectSlot? {
        var slot: ALuint = 0, effect: ALuint = 0
        alGetError()
        alGenAuxiliaryEffectSlots(1, &slot)
        alGenEffects(1, &effect)
        guard alGetError() == AL_NO_ERROR else { return nil }
        let made = ALEffectSlot(id: slot, effect: effect)
        alEffecti(effect, AL_EFFECT_TYPE, AL_EFFECT_REVERB)
        made.set(p)
        return made
    }

    func set(_ p: ReverbParameters) {
        alEffectf(effect, AL_REVERB_DENSITY, p.density)
        alEffectf(effect, AL_REVERB_DIFFUSION, p.diffusion)
        alEffectf(effect, AL_REVERB_GAIN, p.gain)
        alEffectf(effect, AL_REVERB_GAINHF, p.gainHF)
        alEffectf(effect, AL_REVERB_DECAY_TIME, p.decayTime)
        alEffectf(effect, AL_REVERB_DECAY_HFRATIO, p.decayHFRatio)
        alEffectf(effect, AL_REVERB_REFLECTIONS_GAIN, p.reflectionsGain)
        alEffectf(effect, AL_REVERB_REFLECTIONS_DELAY, p.reflectionsDelay)
        alEffectf(effect, AL_REVERB_LATE_REVERB_GAIN, p.lateReverbGain)
        alEffectf(effect, AL_REVERB_LATE_REVERB_DELAY, p.lateReverbDelay)
        alEffectf(effect, AL_REVERB_AIR_ABSORPTION_GAINHF, p.airAbsorptionGainHF)
        alEffectf(effect, AL_REVERB_ROOM_ROLLOFF_FACTOR, p.roomRolloffFactor)
        alEffecti(effect, AL_REVERB_DECAY_HFLIMIT, p.decayHFLimit ? AL_TRUE : AL_FALSE)
        alAuxiliaryEffectSloti(id, AL_EFFECTSLOT_EFFECT, ALint(bitPattern: effect))
    }

    func delete() {
        var slot = id, effect = effect
        alDeleteAuxiliaryEffectSlots(1, &slot)
        alDeleteEffects(1, &effect)
    }
}

/// An EFX low-pass filter (for occlusion).
struct ALFilter: Hashable, Sendable {
    let id: ALuint

    static func makeLowPass() -> ALFilter? {
        var id: ALuint = 0
        alGetError()
        alGenFilters(1, &id)
        guard alGetError() == AL_NO_ERROR else { return nil }
        alFilteri(id, AL_FILTER_TYPE, AL_FILTER_LOWPASS)
        return ALFilter(id: id)
    }

    func setLowPass(gain: Float, gainHF: Float) {
        alFilterf(id, AL_LOWPASS_GAIN, gain)
        alFilterf(id, AL_LOWPASS_GAINHF, gainHF)
    }

    func delete() {
        var id = id
        alDeleteFilters(1, &id)
    }
}
