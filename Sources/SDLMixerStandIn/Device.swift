import Ambience
import AmbiencePlatform
import CSDLMixerABI
import Foundation

// The device: Mix_Init/Mix_Quit, Mix_OpenAudio(Device)/Mix_CloseAudio/Mix_QuerySpec, the version and the decoders.
// Opening makes one AudioEngine (real-time output through SDL) that every channel plays through, and starts the
// update thread that drives it (UpdateThread.swift).

/// Mix_Linked_Version's answer: 2.6.2, the version whose ABI this is. Written once, read only.
nonisolated(unsafe) private let linkedVersion: UnsafeMutablePointer<SDL_version> = {
    let version = UnsafeMutablePointer<SDL_version>.allocate(capacity: 1)
    version.initialize(
        to: SDL_version(
            major: UInt8(STANDIN_MIXER_MAJOR), minor: UInt8(STANDIN_MIXER_MINOR),
            patch: UInt8(STANDIN_MIXER_PATCHLEVEL)))
    return version
}()

@_cdecl("Mix_Linked_Version")
public func mixLinkedVersion() -> UnsafePointer<SDL_version>? { UnsafePointer(linkedVersion) }

/// What the engine decodes, by SDL_mixer's decoder names: the formats it always has, and tracker modules and MIDI
/// when libopenmpt and libfluidsynth load (they are opened at run time; a machine without them does not have them).
struct Decoders {
    let names: [String]
    let initFlags: Int32

    static let available: Decoders = {
        let loaded = AudioEngine.systemLibraries.filter(\.isAvailable).map(\.name)
        var names = ["WAVE", "OGG", "OPUS", "FLAC", "MP3"]
        var flags = STANDIN_MIX_INIT_OGG | STANDIN_MIX_INIT_OPUS | STANDIN_MIX_INIT_FLAC | STANDIN_MIX_INIT_MP3
        if loaded.contains(where: { $0.hasPrefix("libopenmpt") }) {
            names.append("MOD")
            flags |= STANDIN_MIX_INIT_MOD
        }
        if loaded.contains(where: { $0.hasPrefix("libfluidsynth") }) {
            names.append("MIDI")
            flags |= STANDIN_MIX_INIT_MID
        }
        return Decoders(names: names, initFlags: Int32(flags))
    }()

    /// The names as C strings, made once and never freed (programs keep the pointers).
    nonisolated(unsafe) static let cNames: [UnsafeMutablePointer<CChar>] = available.names.map { strdup($0)! }

    static func name(_ index: Int32) -> UnsafePointer<CChar>? {
        guard index >= 0, Int(index) < cNames.count else {
            report("no decoder \(index): there are \(cNames.count)")
            return nil
        }
        return UnsafePointer(cNames[Int(index)])
    }

    static func has(_ name: UnsafePointer<CChar>?) -> SDL_bool {
        guard let name else { return SDL_FALSE }
        let wanted = String(cString: name).uppercased()
        return available.names.contains(wanted) || (wanted == "MID" && available.names.contains("MIDI"))
            ? SDL_TRUE : SDL_FALSE
    }
}

/// Mix_Init: the flags asked for that the engine can decode, added to those already initialized; returns them all.
/// A flag it cannot honour (MOD without libopenmpt, MID without libfluidsynth) sets the error.
@_cdecl("Mix_Init")
public func mixInit(_ flags: Int32) -> Int32 {
    let granted = flags & Decoders.available.initFlags
    if granted != flags {
        report("Mix_Init: support for 0x\(String(flags & ~granted, radix: 16)) is not available (\(unavailableText))")
    }
    return StandIn.shared.state.withLock { state in
        state.initialized |= granted
        return state.initialized
    }
}

private var unavailableText: String {
    AudioEngine.systemLibraries.compactMap { library in
        library.unavailableReason.map { "\(library.feature): \($0)" }
    }.joined(separator: "; ")
}

@_cdecl("Mix_Quit")
public func mixQuit() {
    StandIn.shared.state.withLock { $0.initialized = 0 }
}

@_cdecl("Mix_GetNumChunkDecoders")
public func mixGetNumChunkDecoders() -> Int32 { Int32(Decoders.available.names.count) }

@_cdecl("Mix_GetChunkDecoder")
public func mixGetChunkDecoder(_ index: Int32) -> UnsafePointer<CChar>? { Decoders.name(index) }

@_cdecl("Mix_HasChunkDecoder")
public func mixHasChunkDecoder(_ name: UnsafePointer<CChar>?) -> SDL_bool { Decoders.has(name) }

@_cdecl("Mix_GetNumMusicDecoders")
public func mixGetNumMusicDecoders() -> Int32 { Int32(Decoders.available.names.count) }

@_cdecl("Mix_GetMusicDecoder")
public func mixGetMusicDecoder(_ index: Int32) -> UnsafePointer<CChar>? { Decoders.name(index) }

@_cdecl("Mix_HasMusicDecoder")
public func mixHasMusicDecoder(_ name: UnsafePointer<CChar>?) -> SDL_bool { Decoders.has(name) }

/// Mix_OpenAudio: Mix_OpenAudioDevice on the default device, letting the rate and channel count change.
@_cdecl("Mix_OpenAudio")
public func mixOpenAudio(_ frequency: Int32, _ format: UInt16, _ channels: Int32, _ chunkSize: Int32) -> Int32 {
    mixOpenAudioDevice(
        frequency, format, channels, chunkSize, nil,
        Int32(SDL_AUDIO_ALLOW_FREQUENCY_CHANGE | SDL_AUDIO_ALLOW_CHANNELS_CHANGE))
}

/// Mix_OpenAudioDevice: opens the engine's output at `frequency` (0: 22,050 Hz), in blocks of `chunkSize` frames,
/// for chunks in `format` and `channels`. Opened again in the same format and channels, it only counts the open;
/// in another, it closes and opens anew. 0, or -1 with the reason.
@_cdecl("Mix_OpenAudioDevice")
public func mixOpenAudioDevice(
    _ frequency: Int32, _ format: UInt16, _ channels: Int32, _ chunkSize: Int32, _ device: UnsafePointer<CChar>?,
    _ allowedChanges: Int32
) -> Int32 {
    let spec: OutputSpec
    switch OutputSpec.requested(
        frequency: frequency, format: format, channels: channels, allowedChanges: allowedChanges)
    {
    case .success(let accepted): spec = accepted
    case .failure(let reason): return refuse("Mix_OpenAudioDevice: \(reason.text)")
    }
    // One thread opens at a time (the engine is made outside the lock, and two engines made at once would fight
    // for the device): the others wait, then count their open on the device it opened. A callback run by a close
    // inside the opening may open again itself.
    let claimed = claimOpening()
    guard claimed != .timedOut else { return refuse("Mix_OpenAudioDevice: another thread is still opening the device") }
    defer { if claimed == .claimed { StandIn.shared.state.withLock { $0.openingThread = nil } } }
    for _ in 0..<8 {
        if countOpen(spec) { return 0 }
        while StandIn.shared.state.withLock({ $0.device != nil }) { mixCloseAudio() }
        switch openEngine(spec, device: device, chunkSize: chunkSize) {
        case .success(true): return 0
        case .success(false): continue
        case .failure(let reason): return refuse("Mix_OpenAudioDevice: \(reason.text)")
        }
    }
    return refuse("Mix_OpenAudioDevice: other threads kept opening the device meanwhile")
}

/// Whether this thread now opens the device (`claimed`), already was (`reentered`), or waited 10 s in vain.
private enum OpeningClaim { case claimed, reentered, timedOut }

private func claimOpening() -> OpeningClaim {
    for _ in 0..<10_000 {
        let claim = StandIn.shared.state.withLock { state -> OpeningClaim? in
            guard let opener = state.openingThread else {
                state.openingThread = currentThreadIdentity()
                return .claimed
            }
            return opener == currentThreadIdentity() ? .reentered : nil
        }
        if let claim { return claim }
        sleep(milliseconds: 1)
    }
    return .timedOut
}

/// Counts one more open of the device when it is open in `spec`'s format and channels.
private func countOpen(_ spec: OutputSpec) -> Bool {
    StandIn.shared.state.withLock { state -> Bool in
        guard var open = state.device, open.spec.format == spec.format, open.spec.channels == spec.channels else {
            return false
        }
        open.openCount += 1
        state.device = open
        return true
    }
}

/// Makes the engine and installs it when no device is open by then (true); false when another thread opened one
/// meanwhile (this engine is shut down).
private func openEngine(_ spec: OutputSpec, device: UnsafePointer<CChar>?, chunkSize: Int32) -> Result<
    Bool, OpenRefusal
> {
    var configuration = EngineConfiguration(
        output: .device(name: device.map { String(cString: $0) }), sampleRate: spec.frequency,
        blockFrames: min(
            max(Int(chunkSize), EngineConfiguration.blockFrameCounts.lowerBound),
            EngineConfiguration.blockFrameCounts.upperBound),
        appName: ProgramIdentity.appName)
    configuration.decoding.soundFont = StandIn.shared.state.withLock { $0.music.decoderOptions.soundFont }
    let engine: AudioEngine
    do { engine = try AudioEngine(configuration) } catch { return .failure(OpenRefusal(text: "\(error)")) }
    engine.session.setCategory(ProgramIdentity.category)
    engine.session.setActive(true)
    let installed = StandIn.shared.state.withLock { state -> Bool in
        guard state.device == nil else { return false }
        state.openings += 1
        let generation = state.openings
        let updates = WorkerThread(name: "sdlmixer-update") { control in
            runUpdates(control, engine: engine, generation: generation)
        }
        state.device = OpenDevice(engine: engine, spec: spec, openCount: 1, generation: generation, updates: updates)
        // Chains a closing has yet to call done for are kept, with those of effects registered on the closed
        // device's channels meanwhile (by its finished callbacks, before they opened this one): they go with that
        // device, their done callbacks below.
        for i in state.channels.slots.indices where state.channels.slots[i].effects != nil {
            state.channels.closeEffects(i)
        }
        var fresh = ChannelTable()
        fresh.closedChains = state.channels.closedChains
        fresh.slots = Array(repeating: ChannelSlot(), count: Int(STANDIN_MIX_CHANNELS))
        state.channels = fresh
        try? engine.sfx.setGain(gain(state.masterVolume))
        try? engine.musicPlayer.setVolume(gain(state.music.volume))
        return true
    }
    guard installed else {
        engine.shutdown()
        return .success(false)
    }
    deliverFinished([])
    installPostProcessing()
    startMusicHook()
    return .success(true)
}

/// Mix_CloseAudio: counts one open down; at none, halts every channel and the music (callbacks and the music's
/// finished hook run before it returns), stops the update thread and shuts the engine down (the session's exit rule
/// runs then). Loaded music stays loaded, to play when a device opens again.
@_cdecl("Mix_CloseAudio")
public func mixCloseAudio() {
    let closing = StandIn.shared.state.withLock { state -> (OpenDevice, [Int32], Bool, Voice?)? in
        guard var device = state.device else { return nil }
        device.openCount -= 1
        if device.openCount > 0 {
            state.device = device
            return nil
        }
        // Ends a game's call found and the update thread has not reported yet come first: they ended first.
        let settled = state.settledEnds
        state.settledEnds = []
        state.reporting.subtract(settled)
        let finished = settled + state.channels.slots.indices.filter { state.channels.end($0) }.map(Int32.init)
        let musicEnded = state.haltMusic()
        // Every channel's effects go with the device, idle channels' too (done callbacks in deliverFinished).
        for i in state.channels.slots.indices where state.channels.slots[i].effectCount > 0 {
            state.channels.closeEffects(i)
        }
        state.device = nil
        for record in state.chunks.records { record.made = nil }  // the engine's sounds go with it
        // The hook's voice goes with the device now, so that a device opened again by a callback below starts the
        // hook anew on itself (the hook stays set).
        let hookVoice = state.hook.voice
        state.hook.voice = nil
        return (device, finished, musicEnded, hookVoice)
    }
    guard let (device, finished, musicEnded, hookVoice) = closing else { return }
    device.updates.stop()
    hookVoice?.stop()
    // The channels go once their callbacks have run, so a callback's Mix_GetChunk is the chunk that ended (SDL_mixer
    // halts every channel before it frees them); effects a callback registered meanwhile go with them.
    deliverFinished(finished)
    StandIn.shared.state.withLock { state in
        guard state.device == nil else { return }  // opened again meanwhile: the table is that opening's
        for i in state.channels.slots.indices where state.channels.slots[i].effects != nil {
            state.channels.closeEffects(i)
        }
        var emptied = ChannelTable()
        emptied.closedChains = state.channels.closedChains
        state.channels = emptied
    }
    deliverFinished([])
    if musicEnded { deliverMusicFinished() }
    closePostProcessing(device.engine)
    device.engine.shutdown()
}

/// Mix_QuerySpec: what the program opened (the engine's rate, the program's format and channels); returns how
/// many times the device is open, or 0 when it is not (leaving the error text as it was, as SDL_mixer does). Any
/// pointer may be NULL.
@_cdecl("Mix_QuerySpec")
public func mixQuerySpec(
    _ frequency: UnsafeMutablePointer<Int32>?, _ format: UnsafeMutablePointer<UInt16>?,
    _ channels: UnsafeMutablePointer<Int32>?
) -> Int32 {
    StandIn.shared.state.withLock { state in
        guard let device = state.device else { return 0 }
        frequency?.pointee = Int32(device.engine.configuration.sampleRate)
        format?.pointee = device.spec.format.rawValue
        channels?.pointee = Int32(device.spec.channels)
        return Int32(device.openCount)
    }
}

/// Why a request to open is refused.
struct OpenRefusal: Error {
    let text: String
}

extension OutputSpec {
    /// The format a request opens: refused when a number is outside what the engine takes and may not change.
    static func requested(frequency: Int32, format: UInt16, channels: Int32, allowedChanges: Int32) -> Result<
        OutputSpec, OpenRefusal
    > {
        let rates = EngineConfiguration.sampleRates
        // 0 asks for the defaults. SDL_mixer 2.6 passes them to SDL, which opens 22,050 Hz, AUDIO_S16 and stereo
        // for them (as Debian's SDL_mixer 2.6.2 is seen to do), not MIX_DEFAULT_FREQUENCY.
        var rate = frequency == 0 ? 22_050 : Int(frequency)
        if !rates.contains(rate) {
            guard allowedChanges & Int32(SDL_AUDIO_ALLOW_FREQUENCY_CHANGE) != 0 else {
                return .failure(
                    OpenRefusal(text: "\(frequency) Hz is outside \(rates.lowerBound)...\(rates.upperBound)"))
            }
            rate = min(max(rate, rates.lowerBound), rates.upperBound)
        }
        var sampleFormat = format == 0 ? .s16LSB : SampleFormat(rawValue: format)
        if sampleFormat == nil && allowedChanges & Int32(SDL_AUDIO_ALLOW_FORMAT_CHANGE) != 0 { sampleFormat = .s16LSB }
        guard let sampleFormat else {
            return .failure(OpenRefusal(text: "unsupported audio format 0x\(String(format, radix: 16))"))
        }
        var count = channels == 0 ? 2 : Int(channels)
        if !(1...8).contains(count) {
            guard allowedChanges & Int32(SDL_AUDIO_ALLOW_CHANNELS_CHANGE) != 0 else {
                return .failure(OpenRefusal(text: "\(channels) channels: 1 to 8 are supported"))
            }
            count = Int(STANDIN_MIX_DEFAULT_CHANNELS)
        }
        return .success(OutputSpec(frequency: rate, format: sampleFormat, channels: count))
    }
}

/// Who the program is, for the sound server and the session bus, and the session rules it runs under.
enum ProgramIdentity {
    /// AMBIENCE_APP_NAME, else the program's file name.
    static var appName: String {
        if let name = environment("AMBIENCE_APP_NAME"), !name.isEmpty { return name }
        let program = CommandLine.arguments.first.map { ($0 as NSString).lastPathComponent } ?? ""
        return program.isEmpty ? "sdl-mixer-program" : program
    }

    /// AMBIENCE_SESSION_CATEGORY: ambient (the default), solo-ambient or playback.
    static var category: SessionCategory {
        switch environment("AMBIENCE_SESSION_CATEGORY") {
        case "solo-ambient": .soloAmbient
        case "playback": .playback
        default: .ambient
        }
    }

    private static func environment(_ name: String) -> String? { ProcessEnvironment.value(name) }
}
