// ambience.h: sounds, voices and the listener.

import Ambience
import AmbienceDecoding
import AmbiencePlatform
import CAmbience
import Glibc

// MARK: - Sounds

/// The C handle for a sound: the existing one when this `Sound` already has a live handle.
private func register(_ sound: Sound, owner: EngineBox) -> UInt {
    registry.withLock { state in
        if let existing = state.soundHandles[ObjectIdentifier(sound)], state.sounds[existing] != nil { return existing }
        let handle = HandleKind.sound.handle(serial: state.serial())
        state.sounds[handle] = SoundBox(handle: handle, owner: owner, sound: sound)
        state.soundHandles[ObjectIdentifier(sound)] = handle
        return handle
    }
}

@_cdecl("ambience_sound_load")
public func ambience_sound_load(
    _ engine: OpaquePointer?, _ path: UnsafePointer<CChar>?,
    _ outSound: UnsafeMutablePointer<OpaquePointer?>?
) -> ambience_status {
    api("ambience_sound_load") {
        let box = try engineBox(engine)
        let path = try string(path, "path")
        let out = try output(outSound, "out_sound")
        let sound: Sound
        sound = try box.engine.load(path)
        out.pointee = OpaquePointer(bitPattern: register(sound, owner: box))
    }
}

@_cdecl("ambience_sound_create_pcm")
public func ambience_sound_create_pcm(
    _ engine: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ samples: UnsafePointer<Float>?,
    _ frames: Int, _ channels: Int32, _ sampleRate: Int32,
    _ outSound: UnsafeMutablePointer<OpaquePointer?>?
) -> ambience_status {
    api("ambience_sound_create_pcm") {
        let box = try engineBox(engine)
        let name = try optionalString(name, "name") ?? "pcm"
        let out = try output(outSound, "out_sound")
        // Only what the pointer needs is checked here: AudioEngine.makeSound holds the rest to the Swift API's rules.
        guard (1...Int32(AudioInfo.maximumChannels)).contains(channels) else {
            throw APIError.invalid("channels is \(channels), not 1...\(AudioInfo.maximumChannels)")
        }
        let most = Int(AudioFile.maximumDecodedBytes) / MemoryLayout<Float>.size / Int(channels)
        guard frames > 0, frames <= most else {
            throw APIError.invalid("frames is \(UInt(bitPattern: frames)), outside 1...\(most)")
        }
        guard let samples else { throw APIError.invalid("samples is NULL") }
        let buffer = UnsafeBufferPointer(start: samples, count: frames * Int(channels))
        let pcm = PCMBuffer(sampleRate: Int(sampleRate), channels: Int(channels), samples: Array(buffer))
        let sound: Sound
        sound = try box.engine.makeSound(pcm, name: name)
        out.pointee = OpaquePointer(bitPattern: register(sound, owner: box))
    }
}

@_cdecl("ambience_preload")
public func ambience_preload(_ engine: OpaquePointer?, _ paths: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int)
    -> ambience_status
{
    api("ambience_preload") {
        let box = try engineBox(engine)
        let paths = try strings(paths, count: count, "paths")
        if !paths.isEmpty { box.engine.preload(paths) }
    }
}

@_cdecl("ambience_sound_unload")
public func ambience_sound_unload(_ sound: OpaquePointer?) -> ambience_status {
    api("ambience_sound_unload") {
        let box = try soundBox(sound)
        let removed = registry.withLock { state -> Sound? in
            guard state.sounds.removeValue(forKey: box.handle) != nil else { return nil }
            let sound = box.sound
            if state.soundHandles[ObjectIdentifier(sound)] == box.handle {
                state.soundHandles[ObjectIdentifier(sound)] = nil
            }
            return sound
        }
        guard let removed else { throw APIError(AMBIENCE_ERROR_DESTROYED_HANDLE, "sound was destroyed") }
        box.owner.engine.unload(removed)
    }
}

@_cdecl("ambience_sound_get_info")
public func ambience_sound_get_info(_ sound: OpaquePointer?, _ out: UnsafeMutablePointer<ambience_sound_info>?)
    -> ambience_status
{
    api("ambience_sound_get_info") {
        let box = try soundBox(sound)
        let target = try output(out, "out_info")
        let s = box.sound
        target.pointee = ambience_sound_info(
            sample_rate: Int32(clamping: s.sampleRate), channels: Int32(clamping: s.channels),
            frames: Int64(s.frames), duration: s.duration, memory_cost: UInt64(s.memoryCost))
    }
}

@_cdecl("ambience_engine_get_sound_memory")
public func ambience_engine_get_sound_memory(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<UInt64>?)
    -> ambience_status
{
    api("ambience_engine_get_sound_memory") {
        let box = try engineBox(engine)
        try output(out, "out_bytes").pointee = UInt64(max(box.engine.soundMemory, 0))
    }
}

// MARK: - Playing

func defaultPlayOptions() -> ambience_play_options {
    var o = ambience_play_options()
    o.gain = 1
    o.pitch = 1
    o.loop = false
    o.bus = nil
    o.priority = 128
    o.placement = AMBIENCE_PLACEMENT_PAN
    o.pan = 0
    o.position = (0, 0, 0)
    o.velocity = (0, 0, 0)
    o.fade_in = 0
    return o
}

@_cdecl("ambience_play_options_init")
public func ambience_play_options_init(_ options: UnsafeMutablePointer<ambience_play_options>?) -> ambience_status {
    api("ambience_play_options_init") { try output(options, "options").pointee = defaultPlayOptions() }
}

func playOptions(_ o: ambience_play_options, engine: EngineBox) throws(APIError) -> PlayOptions {
    let placement: Placement
    switch o.placement {
    case AMBIENCE_PLACEMENT_PAN:
        placement = .pan(o.pan)
    case AMBIENCE_PLACEMENT_WORLD:
        placement = .world(position: Vector3(o.position), velocity: Vector3(o.velocity))
    default:
        throw APIError.invalid("options->placement is \(o.placement.rawValue), not an ambience_placement")
    }
    guard (0...255).contains(o.priority) else {
        throw APIError.invalid("options->priority is \(o.priority), outside 0...255")
    }
    var bus: Bus? = nil
    if let pointer = o.bus {
        let busBox = try busBox(pointer, "options->bus")
        guard busBox.owner === engine else {
            throw APIError(AMBIENCE_ERROR_WRONG_ENGINE, "options->bus belongs to another engine")
        }
        bus = busBox.bus
    }
    let options = PlayOptions(
        gain: o.gain, pitch: o.pitch, loop: o.loop, bus: bus, priority: UInt8(o.priority),
        placement: placement, fadeIn: o.fade_in)
    do { return try options.validated() } catch { throw APIError.invalid("options->\(error.description)") }
}

@_cdecl("ambience_play")
public func ambience_play(
    _ sound: OpaquePointer?, _ options: UnsafePointer<ambience_play_options>?,
    _ outVoice: UnsafeMutablePointer<UInt64>?
) -> ambience_status {
    api("ambience_play") { try startVoice(sound, options, loudness: nil, outVoice) }
}

/// `ambience_play` and `ambience_play_with_loudness`: the voice's id in `outVoice`, 0 for a refused one.
func startVoice(
    _ sound: OpaquePointer?, _ options: UnsafePointer<ambience_play_options>?, loudness: Float?,
    _ outVoice: UnsafeMutablePointer<UInt64>?
) throws(APIError) {
    let box = try soundBox(sound)
    let engine = box.owner
    var settings = try playOptions(options?.pointee ?? defaultPlayOptions(), engine: engine)
    if let loudness {
        settings.loudness = try checked { () throws(InvalidNumber) in
            try loudness.clamped(to: MixerLimits.loudness, "loudness_db")
        }
    }
    let voice = engine.engine.play(box.sound, settings)
    outVoice?.pointee = register(voice, owner: engine, placement: settings.placement)
}

/// The C id of a voice just started (`ambience_play`, `ambience_play_stream`): 0 for a refused one.
func register(_ voice: Voice, owner engine: EngineBox, placement: Placement) -> UInt64 {
    guard voice != .none else { return 0 }
    return registry.withLock { state in
        // The engine may have been destroyed meanwhile: then the voice is stale from the start.
        guard state.engines[engine.handle] != nil else {
            defer { state.nextVoice += 1 }
            return state.nextVoice
        }
        return state.addVoice(voice, owner: engine, placement: placement)
    }
}

// MARK: - Voices

@_cdecl("ambience_voice_stop")
public func ambience_voice_stop(_ voice: UInt64, _ fade: Double) -> ambience_status {
    api("ambience_voice_stop") {
        try checked { () throws(InvalidNumber) in _ = try fade.clamped(to: MixerLimits.seconds, "fade") }
        try voiceCall(voice) { $0.voice.stop(fade: fade) }
        if fade <= 0 { registry.withLock { $0.removeVoice(voice) } }
    }
}

@_cdecl("ambience_voice_pause")
public func ambience_voice_pause(_ voice: UInt64) -> ambience_status {
    api("ambience_voice_pause") { try voiceCall(voice) { $0.voice.pause() } }
}

@_cdecl("ambience_voice_resume")
public func ambience_voice_resume(_ voice: UInt64) -> ambience_status {
    api("ambience_voice_resume") { try voiceCall(voice) { $0.voice.resume() } }
}

@_cdecl("ambience_voice_set_gain")
public func ambience_voice_set_gain(_ voice: UInt64, _ gain: Float) -> ambience_status {
    api("ambience_voice_set_gain") {
        try checked { () throws(InvalidNumber) in _ = try gain.clamped(to: MixerLimits.gain, "gain") }
        try voiceCall(voice) { $0.voice.setGain(gain) }
    }
}

@_cdecl("ambience_voice_set_pitch")
public func ambience_voice_set_pitch(_ voice: UInt64, _ pitch: Float) -> ambience_status {
    api("ambience_voice_set_pitch") {
        try checked { () throws(InvalidNumber) in _ = try pitch.clamped(to: MixerLimits.pitch, "pitch") }
        try voiceCall(voice) { $0.voice.setPitch(pitch) }
    }
}

/// Sets a new placement and remembers it for the next partial update.
private func place(_ id: UInt64, _ requested: Placement) throws(APIError) {
    let placement = try checked { () throws(InvalidNumber) in try requested.validated() }
    try voiceCall(id) { $0.voice.setPlacement(placement) }
    registry.withLock { state in state.voices[id]?.placement = placement }
}

@_cdecl("ambience_voice_set_pan")
public func ambience_voice_set_pan(_ voice: UInt64, _ pan: Float) -> ambience_status {
    api("ambience_voice_set_pan") { try place(voice, .pan(pan)) }
}

@_cdecl("ambience_voice_set_position")
public func ambience_voice_set_position(_ voice: UInt64, _ x: Float, _ y: Float, _ z: Float) -> ambience_status {
    api("ambience_voice_set_position") {
        try checked { () throws(InvalidNumber) in _ = try Placement.world(x: x, y: y, z: z).validated() }
        var velocity = Vector3.zero
        if case .world(_, let v) = try voiceEntry(voice).placement { velocity = v }
        try place(voice, .world(x: x, y: y, z: z, velocity: velocity))
    }
}

@_cdecl("ambience_voice_set_velocity")
public func ambience_voice_set_velocity(_ voice: UInt64, _ x: Float, _ y: Float, _ z: Float) -> ambience_status {
    api("ambience_voice_set_velocity") {
        let velocity = Vector3(x: x, y: y, z: z)
        try checked { () throws(InvalidNumber) in
            _ = try Placement.world(position: .zero, velocity: velocity).validated()
        }
        guard case .world(let position, _) = try voiceEntry(voice).placement else {
            throw APIError.invalid("voice \(voice) is panned, not placed in the world: set its position first")
        }
        try place(voice, .world(position: position, velocity: velocity))
    }
}

@_cdecl("ambience_voice_fade")
public func ambience_voice_fade(_ voice: UInt64, _ gain: Float, _ seconds: Double) -> ambience_status {
    api("ambience_voice_fade") {
        try checked { () throws(InvalidNumber) in
            _ = try gain.clamped(to: MixerLimits.gain, "gain")
            _ = try seconds.clamped(to: MixerLimits.seconds, "seconds")
        }
        try voiceCall(voice) { $0.voice.fade(to: gain, over: seconds) }
    }
}

@_cdecl("ambience_voice_set_occlusion")
public func ambience_voice_set_occlusion(_ voice: UInt64, _ amount: Float) -> ambience_status {
    api("ambience_voice_set_occlusion") {
        try checked { () throws(InvalidNumber) in _ = try amount.clamped(to: MixerLimits.occlusion, "occlusion") }
        let entry = try voiceEntry(voice)
        guard entry.owner.hasEffects else {
            throw APIError(
                AMBIENCE_ERROR_UNSUPPORTED, "occlusion needs OpenAL's EFX extension, which this device lacks")
        }
        try voiceCall(voice) { $0.voice.setOcclusion(amount) }
    }
}

@_cdecl("ambience_voice_is_playing")
public func ambience_voice_is_playing(_ voice: UInt64, _ out: UnsafeMutablePointer<Bool>?) -> ambience_status {
    api("ambience_voice_is_playing") {
        let target = try output(out, "out_playing")
        target.pointee = false
        let entry = try voiceEntry(voice)
        guard entry.voice.isAlive else {
            registry.withLock { $0.removeVoice(voice) }
            throw staleVoice(voice)
        }
        target.pointee = entry.voice.isPlaying
    }
}

@_cdecl("ambience_voice_get_elapsed")
public func ambience_voice_get_elapsed(_ voice: UInt64, _ out: UnsafeMutablePointer<Double>?) -> ambience_status {
    api("ambience_voice_get_elapsed") {
        let target = try output(out, "out_seconds")
        guard let elapsed = try voiceEntry(voice).voice.elapsed else {
            registry.withLock { $0.removeVoice(voice) }
            throw staleVoice(voice)
        }
        target.pointee = elapsed
    }
}

// MARK: - Listener

@_cdecl("ambience_listener_get")
public func ambience_listener_get(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<ambience_listener>?)
    -> ambience_status
{
    api("ambience_listener_get") {
        let box = try engineBox(engine)
        let target = try output(out, "out_listener")
        let l = box.engine.listener
        var c = ambience_listener()
        c.position = l.position.cArray
        c.velocity = l.velocity.cArray
        c.forward = l.forward.cArray
        c.up = l.up.cArray
        c.reference_distance = l.referenceDistance
        c.max_distance = l.maxDistance
        c.rolloff = l.rolloff
        c.doppler_factor = l.dopplerFactor
        target.pointee = c
    }
}

@_cdecl("ambience_listener_set")
public func ambience_listener_set(_ engine: OpaquePointer?, _ listener: UnsafePointer<ambience_listener>?)
    -> ambience_status
{
    api("ambience_listener_set") {
        let box = try engineBox(engine)
        guard let c = listener?.pointee else { throw APIError.invalid("listener is NULL") }
        var l = box.engine.listener
        l.position = Vector3(c.position)
        l.velocity = Vector3(c.velocity)
        l.forward = Vector3(c.forward)
        l.up = Vector3(c.up)
        l.referenceDistance = c.reference_distance
        l.maxDistance = c.max_distance
        l.rolloff = c.rolloff
        l.dopplerFactor = c.doppler_factor
        try checked { () throws(InvalidNumber) in try box.engine.setListener(l) }
    }
}

@_cdecl("ambience_listener_set_position")
public func ambience_listener_set_position(_ engine: OpaquePointer?, _ x: Float, _ y: Float, _ z: Float)
    -> ambience_status
{
    api("ambience_listener_set_position") {
        let box = try engineBox(engine)
        var l = box.engine.listener
        l.position = Vector3(x: x, y: y, z: z)
        try checked { () throws(InvalidNumber) in try box.engine.setListener(l) }
    }
}

// MARK: - Vectors

extension Vector3 {
    /// A vector from the header's `float[3]`, which Swift imports as a tuple.
    init(_ c: (Float, Float, Float)) { self.init(x: c.0, y: c.1, z: c.2) }

    /// The vector as the header's `float[3]`.
    var cArray: (Float, Float, Float) { (x, y, z) }
}
