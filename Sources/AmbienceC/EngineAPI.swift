// ambience.h: version, engine lifetime, update and render, stats and capabilities.

import Ambience
import CAmbience
import Glibc

@_cdecl("ambience_get_version")
public func ambience_get_version(
    _ major: UnsafeMutablePointer<UInt32>?, _ minor: UnsafeMutablePointer<UInt32>?,
    _ patch: UnsafeMutablePointer<UInt32>?
) -> ambience_status {
    api("ambience_get_version") {
        // Ambience.version reads the header's macros: the numbers are small constants, never out of range.
        major?.pointee = UInt32(clamping: Ambience.version.major)
        minor?.pointee = UInt32(clamping: Ambience.version.minor)
        patch?.pointee = UInt32(clamping: Ambience.version.patch)
    }
}

/// "0.2.0", made once and never freed (the header promises a static string).
nonisolated(unsafe) private let versionText: UnsafePointer<CChar> = {
    let text = Ambience.version.description
    let copy = UnsafeMutablePointer<CChar>.allocate(capacity: text.utf8.count + 1)
    text.withCString { copy.initialize(from: $0, count: text.utf8.count + 1) }
    return UnsafePointer(copy)
}()

@_cdecl("ambience_version")
public func ambience_version() -> UnsafePointer<CChar> { versionText }

// MARK: - Configuration

private func defaultConfig() -> ambience_engine_config {
    let defaults = EngineConfiguration()
    var config = ambience_engine_config()
    config.output = AMBIENCE_OUTPUT_DEVICE
    config.device_name = nil
    config.sample_rate = Int32(defaults.sampleRate)
    config.real_voices = Int32(defaults.realVoices)
    config.max_voices = Int32(defaults.maxVoices)
    config.block_frames = Int32(defaults.blockFrames)
    config.hrtf = defaults.hrtf
    config.app_name = nil
    config.sound_memory_budget = UInt64(defaults.soundMemoryBudget)
    config.handle_termination_signals = defaults.handlesTerminationSignals
    config.resampler = cResampler(defaults.resampler)
    config.output_limiter = defaults.outputLimiter
    config.sound_font = nil
    config.module_interpolation = Int32(defaults.decoding.moduleInterpolation.rawValue)
    config.module_stereo_separation = Int32(defaults.decoding.moduleStereoSeparation)
    return config
}

@_cdecl("ambience_engine_config_init")
public func ambience_engine_config_init(_ config: UnsafeMutablePointer<ambience_engine_config>?) -> ambience_status {
    api("ambience_engine_config_init") {
        try output(config, "config").pointee = defaultConfig()
    }
}

private func configuration(_ c: ambience_engine_config) throws(APIError) -> EngineConfiguration {
    let outputKind: EngineConfiguration.Output
    switch c.output {
    case AMBIENCE_OUTPUT_DEVICE: outputKind = .device(name: try optionalString(c.device_name, "config->device_name"))
    case AMBIENCE_OUTPUT_OFFLINE: outputKind = .offline
    default: throw APIError.invalid("config->output is \(c.output.rawValue), not an ambience_output_kind")
    }
    guard c.sound_memory_budget <= UInt64(Int.max) else {
        throw APIError.invalid("config->sound_memory_budget is too large")
    }
    let appName = try optionalString(c.app_name, "config->app_name") ?? "ambience"
    // The numbers are checked where Swift's are (EngineConfiguration.validated), under their C names.
    var settings = EngineConfiguration(
        output: outputKind, sampleRate: Int(c.sample_rate), realVoices: Int(c.real_voices),
        maxVoices: Int(c.max_voices), hrtf: c.hrtf, blockFrames: Int(c.block_frames),
        appName: appName, soundMemoryBudget: Int(c.sound_memory_budget))
    settings.handlesTerminationSignals = c.handle_termination_signals
    settings.resampler = try resampler(c.resampler)
    settings.outputLimiter = c.output_limiter
    settings.decoding.soundFont = try optionalString(c.sound_font, "config->sound_font")
    guard let interpolation = Int(exactly: c.module_interpolation).flatMap(DecoderOptions.ModuleInterpolation.init)
    else {
        throw APIError.invalid("config->module_interpolation is \(c.module_interpolation), not 1, 2, 4 or 8")
    }
    settings.decoding.moduleInterpolation = interpolation
    settings.decoding.moduleStereoSeparation = Int(c.module_stereo_separation)
    do {
        return try settings.validated()
    } catch {
        guard case .invalidNumber(let refusal) = error else { throw APIError(error) }
        throw APIError.invalid(
            "config->\(cName(ofConfigurationField: refusal.what)) is \(refusal.value), not \(refusal.expected)")
    }
}

private let resamplers: [(ambience_resampler, EngineConfiguration.Resampler)] = [
    (AMBIENCE_RESAMPLER_POINT, .point), (AMBIENCE_RESAMPLER_LINEAR, .linear), (AMBIENCE_RESAMPLER_CUBIC, .cubic),
    (AMBIENCE_RESAMPLER_SINC12, .sinc12), (AMBIENCE_RESAMPLER_SINC24, .sinc24)
]

private func resampler(_ c: ambience_resampler) throws(APIError) -> EngineConfiguration.Resampler {
    guard let match = resamplers.first(where: { $0.0 == c }) else {
        throw APIError.invalid("config->resampler is \(c.rawValue), not an ambience_resampler")
    }
    return match.1
}

private func cResampler(_ resampler: EngineConfiguration.Resampler) -> ambience_resampler {
    resamplers.first { $0.1 == resampler }?.0 ?? AMBIENCE_RESAMPLER_LINEAR
}

/// The C field for a Swift `EngineConfiguration` property: `blockFrames` is `block_frames`,
/// `decoding.moduleStereoSeparation` is `module_stereo_separation`.
private func cName(ofConfigurationField name: String) -> String {
    (name.hasPrefix("decoding.") ? name.dropFirst("decoding.".count) : Substring(name)).reduce(into: "") { result, c in
        result += c.isUppercase ? "_" + c.lowercased() : String(c)
    }
}

// MARK: - Lifetime

@_cdecl("ambience_engine_create")
public func ambience_engine_create(
    _ config: UnsafePointer<ambience_engine_config>?,
    _ outEngine: UnsafeMutablePointer<OpaquePointer?>?
) -> ambience_status {
    api("ambience_engine_create") {
        try createEngine(config, backend: .automatic, priority: .raised, outEngine)
    }
}

private let backends: [(ambience_output_backend, EngineConfiguration.OutputBackend)] = [
    (AMBIENCE_OUTPUT_BACKEND_AUTOMATIC, .automatic), (AMBIENCE_OUTPUT_BACKEND_SDL, .sdl),
    (AMBIENCE_OUTPUT_BACKEND_LIBPULSE, .libpulse)
]

// A function of its own, not a field: a new field would change the size of the config struct that programs built
// against an older header pass in.
@_cdecl("ambience_engine_create_with_backend")
public func ambience_engine_create_with_backend(
    _ config: UnsafePointer<ambience_engine_config>?, _ backend: ambience_output_backend,
    _ outEngine: UnsafeMutablePointer<OpaquePointer?>?
) -> ambience_status {
    api("ambience_engine_create_with_backend") {
        try createEngine(config, backend: outputBackend(backend), priority: .raised, outEngine)
    }
}

private func outputBackend(_ c: ambience_output_backend) throws(APIError) -> EngineConfiguration.OutputBackend {
    guard let chosen = backends.first(where: { $0.0 == c })?.1 else {
        throw APIError.invalid("backend is \(c.rawValue), not an ambience_output_backend")
    }
    return chosen
}

let threadPolicies: [(ambience_audio_thread_priority, AudioThreadPolicy)] = [
    (AMBIENCE_AUDIO_THREAD_RAISED, .raised), (AMBIENCE_AUDIO_THREAD_UNCHANGED, .unchanged),
    (AMBIENCE_AUDIO_THREAD_REALTIME, .realtime)
]

// As ambience_engine_create_with_backend: a function, not a field, so the config struct keeps its size.
@_cdecl("ambience_engine_create_with_output")
public func ambience_engine_create_with_output(
    _ config: UnsafePointer<ambience_engine_config>?, _ backend: ambience_output_backend,
    _ priority: ambience_audio_thread_priority, _ outEngine: UnsafeMutablePointer<OpaquePointer?>?
) -> ambience_status {
    api("ambience_engine_create_with_output") {
        guard let policy = threadPolicies.first(where: { $0.0 == priority })?.1 else {
            throw APIError.invalid("priority is \(priority.rawValue), not an ambience_audio_thread_priority")
        }
        try createEngine(config, backend: outputBackend(backend), priority: policy, outEngine)
    }
}

@_cdecl("ambience_engine_get_output_backend")
public func ambience_engine_get_output_backend(
    _ engine: OpaquePointer?, _ outBackend: UnsafeMutablePointer<ambience_output_backend>?
) -> ambience_status {
    api("ambience_engine_get_output_backend") {
        let out = try output(outBackend, "out_backend")
        let current = try engineBox(engine).engine.outputBackend
        out.pointee = backends.first { $0.1 == current }?.0 ?? AMBIENCE_OUTPUT_BACKEND_NONE
    }
}

private func createEngine(
    _ config: UnsafePointer<ambience_engine_config>?, backend: EngineConfiguration.OutputBackend,
    priority: AudioThreadPolicy, _ outEngine: UnsafeMutablePointer<OpaquePointer?>?
) throws {
    let out = try output(outEngine, "out_engine")
    var settings = try configuration(config?.pointee ?? defaultConfig())
    settings.outputBackend = backend
    settings.audioThreadPriority = priority
    let engine: AudioEngine
    engine = try AudioEngine(settings)
    engine.musicPlayer.beginGeneratingPlaybackNotifications()
    _ = exitStepAdded
    let builtins: [Bus] = [engine.master, engine.music, engine.sfx, engine.ui, engine.dialogue]
    let handle = registry.withLock { state -> UInt in
        let handle = HandleKind.engine.handle(serial: state.serial())
        let busHandles = builtins.map { _ in HandleKind.bus.handle(serial: state.serial()) }
        let box = EngineBox(handle: handle, engine: engine, builtinBuses: busHandles)
        state.engines[handle] = box
        for (bus, busHandle) in zip(builtins, busHandles) {
            state.buses[busHandle] = BusBox(handle: busHandle, owner: box, bus: bus)
        }
        return handle
    }
    out.pointee = OpaquePointer(bitPattern: handle)
}

@_cdecl("ambience_engine_shutdown")
public func ambience_engine_shutdown(_ engine: OpaquePointer?) -> ambience_status {
    api("ambience_engine_shutdown") {
        let box = try engineBox(engine, allowShutDown: true)
        if box.isShutDown.exchange(true, ordering: .acquiringAndReleasing) { return }
        box.engine.shutdown()
    }
}

@_cdecl("ambience_engine_destroy")
public func ambience_engine_destroy(_ engine: OpaquePointer?) -> ambience_status {
    api("ambience_engine_destroy") {
        let box = try engineBox(engine, allowShutDown: true)
        guard let (_, libraries) = registry.withLock({ $0.removeEngine(box.handle) }) else {
            throw APIError(AMBIENCE_ERROR_DESTROYED_HANDLE, "engine was destroyed")  // lost a race with another destroy
        }
        for library in libraries { library.endAllNotifications() }
        box.isDestroyed.store(true, ordering: .releasing)
        if !box.isShutDown.exchange(true, ordering: .acquiringAndReleasing) { box.engine.shutdown() }
        // The box (and with it the engine, its mixer and its OpenAL device) is released when the last call using
        // it returns: at once, unless another thread is inside a call on this engine.
    }
}

// MARK: - The game loop

@_cdecl("ambience_update")
public func ambience_update(_ engine: OpaquePointer?) -> ambience_status {
    api("ambience_update") {
        let box = try engineBox(engine)
        guard !box.isUpdating.exchange(true, ordering: .acquiringAndReleasing) else {
            throw APIError(AMBIENCE_ERROR_BUSY, "ambience_update is already running for this engine")
        }
        defer { box.isUpdating.store(false, ordering: .releasing) }
        let events = box.engine.update()
        for event in events {
            if box.isDestroyed.load(ordering: .acquiring) || box.isShutDown.load(ordering: .acquiring) { break }
            deliver(event, to: box)
        }
        for library in registry.withLock({ $0.libraries(of: box) }) {
            for event in library.library.drainEvents() {
                if box.isDestroyed.load(ordering: .acquiring) || box.isShutDown.load(ordering: .acquiring) { break }
                switch event {
                case .libraryDidChange:
                    guard let callback = box.callbacks.withLock({ $0.libraryChanged }) else { continue }
                    callback.function(callback.userdata, OpaquePointer(bitPattern: library.handle))
                }
            }
        }
        sweepVoices()
    }
}

@_cdecl("ambience_render")
public func ambience_render(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<Float>?, _ frames: Int)
    -> ambience_status
{
    api("ambience_render") {
        let box = try engineBox(engine)
        guard box.engine.isOffline else { throw APIError(EngineError.notOffline) }
        guard frames >= 0, frames <= Int.max / 8 else {
            throw APIError.invalid("frames \(UInt(bitPattern: frames)) is too large")
        }
        guard frames > 0 else { return }
        guard let out else { throw APIError.invalid("out is NULL") }
        // In whole blocks, so the result is the same as one long render, without holding it all in memory twice.
        let block = box.engine.configuration.blockFrames
        let chunk = block * max(1, 8192 / block)
        var done = 0
        while done < frames {
            let count = min(chunk, frames - done)
            let pcm: PCMBuffer
            pcm = try box.engine.render(frames: count)
            pcm.samples.withUnsafeBufferPointer { samples in
                if let base = samples.baseAddress {
                    (out + done * 2).update(from: base, count: min(samples.count, count * 2))
                }
            }
            done += count
        }
    }
}

// MARK: - Queries

@_cdecl("ambience_engine_get_sample_rate")
public func ambience_engine_get_sample_rate(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<Int32>?)
    -> ambience_status
{
    api("ambience_engine_get_sample_rate") {
        let box = try engineBox(engine)
        try output(out, "out_sample_rate").pointee = Int32(box.engine.configuration.sampleRate)
    }
}

@_cdecl("ambience_engine_is_offline")
public func ambience_engine_is_offline(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<Bool>?) -> ambience_status
{
    api("ambience_engine_is_offline") {
        let box = try engineBox(engine)
        try output(out, "out_offline").pointee = box.engine.isOffline
    }
}

@_cdecl("ambience_engine_get_output_driver")
public func ambience_engine_get_output_driver(
    _ engine: OpaquePointer?, _ buffer: UnsafeMutablePointer<CChar>?,
    _ size: Int, _ required: UnsafeMutablePointer<Int>?
) -> ambience_status {
    api("ambience_engine_get_output_driver") {
        let box = try engineBox(engine)
        try copyOut(box.engine.outputDriver, buffer, size, required)
    }
}

@_cdecl("ambience_engine_get_stats")
public func ambience_engine_get_stats(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<ambience_stats>?)
    -> ambience_status
{
    api("ambience_engine_get_stats") {
        let box = try engineBox(engine)
        let target = try output(out, "out_stats")
        let s = box.engine.stats
        var stats = ambience_stats()
        stats.real_voices = Int64(s.realVoices)
        stats.virtual_voices = Int64(s.virtualVoices)
        stats.started = Int64(s.started)
        stats.stolen = Int64(s.stolen)
        stats.finished = Int64(s.finished)
        stats.rendered_blocks = Int64(s.renderedBlocks)
        stats.underruns = Int64(s.underruns)
        stats.average_render_microseconds = s.averageRenderMicroseconds
        stats.max_render_microseconds = s.maxRenderMicroseconds
        target.pointee = stats
    }
}

@_cdecl("ambience_engine_dropped_events")
public func ambience_engine_dropped_events(_ engine: OpaquePointer?, _ out: UnsafeMutablePointer<Int64>?)
    -> ambience_status
{
    api("ambience_engine_dropped_events") {
        let box = try engineBox(engine)
        try output(out, "out_dropped").pointee = Int64(box.engine.stats.droppedEvents)
    }
}

@_cdecl("ambience_engine_get_capabilities")
public func ambience_engine_get_capabilities(
    _ engine: OpaquePointer?,
    _ out: UnsafeMutablePointer<ambience_capabilities>?
) -> ambience_status {
    api("ambience_engine_get_capabilities") {
        let box = try engineBox(engine)
        let target = try output(out, "out_capabilities")
        let c = box.engine.capabilities
        var caps = ambience_capabilities()
        caps.effects = c.effects
        caps.hrtf = c.hrtf
        caps.hrtf_enabled = c.hrtfEnabled
        caps.real_voices = Int32(clamping: c.realVoices)
        target.pointee = caps
    }
}
