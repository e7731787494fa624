import Ambience
import AmbiencePlatform
import CSDLMixer
import Glibc
import Synchronization

// With SDLMixerScene.swift, the only files that call SDL_mixer, through the table `SDLMixer.functions()` opens at
// run time: nothing links it.

/// The stress scene through SDL_mixer 2.6: one channel per voice, each placed with `Mix_SetPosition` (angle and
/// distance from the voice's 3D position), mixed by SDL's `disk` driver into /dev/null as fast as the CPU allows.
///
/// SDL_mixer has no per-channel pitch, so its voices play at pitch 1. SDL audio is process-wide: this must not run
/// while anything else in the process has SDL audio open.
enum SDLMixer {
    /// Bytes the mixer has produced, counted by the post-mix callback on SDL's audio thread.
    private static let mixedBytes = Atomic<Int>(0)

    /// SDL_mixer, opened the first time a comparison runs (by its soname, so a stand-in that is first on the library
    /// path is the one opened). The `ambience` command and the test binary do not link it.
    static let library = OptionalLibrary<ambience_sdl_mixer_functions>(
        name: "libSDL2_mixer-2.0.so.0", feature: "the benchmark's comparison with SDL_mixer",
        names: String(cString: ambience_sdl_mixer_function_names()))

    /// SDL_mixer's functions, or `sdlMixer` naming the library and the Debian package.
    static func functions() throws(BenchError) -> ambience_sdl_mixer_functions {
        do throws(SharedLibraryError) { return try library.functions() } catch {
            throw .sdlMixer("\(error.description); install Debian's libsdl2-mixer-2.0-0 to compare with SDL_mixer")
        }
    }

    static func run(
        _ scene: StressScene, seconds: Double, blockFrames: Int = 1024,
        isCancelled: () -> Bool = { false }
    ) throws(BenchError) -> SystemMeasurement {
        let mix = try functions()
        let disk = try DiskAudio()
        defer { disk.close() }
        guard
            mix.Mix_OpenAudio(Int32(clamping: scene.sampleRate), Uint16(AUDIO_F32SYS), 2, Int32(clamping: blockFrames))
                == 0
        else {
            throw .sdlMixer("Mix_OpenAudio: \(sdlError())")
        }
        defer { mix.Mix_CloseAudio() }
        var rate: Int32 = 0, format: Uint16 = 0, channels: Int32 = 0
        guard mix.Mix_QuerySpec(&rate, &format, &channels) != 0, rate == scene.sampleRate,
            format == Uint16(AUDIO_F32SYS),
            channels == 2
        else {
            throw .sdlMixer(
                "the device opened at \(rate) Hz, format 0x\(String(format, radix: 16)), \(channels) channels, not \(scene.sampleRate) Hz float stereo"
            )
        }

        // The scene's mono sounds as stereo float chunks in the device's format.
        let samples = scene.sounds.map { sound in
            let stereo = UnsafeMutableBufferPointer<Float>.allocate(capacity: sound.frames * 2)
            for (i, v) in sound.samples.enumerated() { stereo[2 * i] = v; stereo[2 * i + 1] = v }
            return stereo
        }
        defer { for s in samples { s.deallocate() } }
        var chunks: [UnsafeMutablePointer<Mix_Chunk>] = []
        defer { for chunk in chunks { mix.Mix_FreeChunk(chunk) } }
        for s in samples {
            let bytes = UnsafeMutableRawPointer(s.baseAddress!).assumingMemoryBound(to: Uint8.self)
            guard let chunk = mix.Mix_QuickLoad_RAW(bytes, Uint32(clamping: s.count * MemoryLayout<Float>.size)) else {
                throw .sdlMixer("Mix_QuickLoad_RAW: \(sdlError())")
            }
            chunks.append(chunk)
        }

        let count = Int(mix.Mix_AllocateChannels(Int32(clamping: scene.voices.count)))
        guard count == scene.voices.count else {
            throw .sdlMixer("Mix_AllocateChannels gave \(count) channels, not \(scene.voices.count)")
        }
        defer { _ = mix.Mix_HaltChannel(-1) }
        let placement = scene.voices.map(position)
        var oneShots: [Int32] = []
        for (i, voice) in scene.voices.enumerated() {
            let channel = Int32(i)
            _ = mix.Mix_SetPosition(channel, placement[i].angle, placement[i].distance)
            guard mix.Mix_PlayChannel(channel, chunks[voice.sound], voice.loop ? -1 : 0) == channel else {
                throw .sdlMixer("Mix_PlayChannel(\(channel)): \(sdlError())")
            }
            if !voice.loop { oneShots.append(channel) }
        }

        mixedBytes.store(0, ordering: .relaxed)
        mix.Mix_SetPostMix({ _, _, length in SDLMixer.mixedBytes.add(Int(length), ordering: .relaxed) }, nil)
        defer { mix.Mix_SetPostMix(nil, nil) }
        let bytesPerFrame = 2 * MemoryLayout<Float>.size
        let targetBytes = Int((seconds * Double(scene.sampleRate)).rounded()) * bytesPerFrame
        let startBytes = mixedBytes.load(ordering: .relaxed)
        let cpuStart = ProcessUsage.cpuSeconds
        let wallStart = ProcessUsage.monotonicNanoseconds
        var lastProgress = (bytes: startBytes, at: wallStart)
        var restarted = 0
        var polledBytes = startBytes
        let blockBytes = blockFrames * bytesPerFrame
        while mixedBytes.load(ordering: .relaxed) - startBytes < targetBytes, !isCancelled() {
            sleepUntil(monotonicNanoseconds: monotonicNanoseconds() + 1_000_000)
            let now = ProcessUsage.monotonicNanoseconds, bytes = mixedBytes.load(ordering: .relaxed)
            if bytes != lastProgress.bytes {
                lastProgress = (bytes, now)
            } else if now - lastProgress.at > 10_000_000_000 {
                throw .sdlMixer("SDL's audio thread stopped mixing")
            }
            // What a game does, once per mixed block like the other systems here: start finished one-shots again
            // (SDL_mixer drops a channel's effects when it ends). Polling more often would only take SDL's audio
            // lock away from the mixing thread.
            guard bytes - polledBytes >= blockBytes else { continue }
            polledBytes = bytes
            for channel in oneShots where mix.Mix_Playing(channel) == 0 {
                let voice = scene.voices[Int(channel)]
                _ = mix.Mix_SetPosition(channel, placement[Int(channel)].angle, placement[Int(channel)].distance)
                _ = mix.Mix_PlayChannel(channel, chunks[voice.sound], 0)
                restarted += 1
            }
        }
        let cpuEnd = ProcessUsage.cpuSeconds
        let wallEnd = ProcessUsage.monotonicNanoseconds
        let frames = (mixedBytes.load(ordering: .relaxed) - startBytes) / bytesPerFrame

        var m = SystemMeasurement()
        m.cpuSeconds = cpuEnd - cpuStart
        m.wallSeconds = Double(wallEnd - wallStart) / 1e9
        m.frames = frames
        m.seconds = Double(frames) / Double(scene.sampleRate)
        m.rtf = m.seconds > 0 ? m.cpuSeconds / m.seconds : 0
        m.voicesMixed = count
        m.restarts = restarted
        return m
    }

    /// What one `Mix_PlayMusic` of a whole file cost: process CPU seconds from `Mix_LoadMUS` until the music ended
    /// (SDL's audio thread decodes, resamples and mixes it), and the audio seconds mixed meanwhile.
    struct MusicCost {
        var cpuSeconds: Double
        var audioSeconds: Double
    }

    /// Plays `path` once with `Mix_PlayMusic` into SDL's `disk` driver (/dev/null, no delay) at `sampleRate` float
    /// stereo, as fast as the CPU allows. `.none` when SDL_mixer cannot load the file (a format it does not play);
    /// `music: nil` mixes `seconds` of silence instead, the cost of the mixer running with nothing to play.
    static func playMusic(
        _ path: String?, silenceSeconds: Double = 0, sampleRate: Int = 48_000,
        blockFrames: Int = 4096
    ) throws(BenchError) -> MusicCost? {
        let mix = try functions()
        let disk = try DiskAudio()
        defer { disk.close() }
        _ = mix.Mix_Init(
            Int32(
                MIX_INIT_FLAC.rawValue | MIX_INIT_MP3.rawValue | MIX_INIT_OGG.rawValue | MIX_INIT_OPUS.rawValue
                    | MIX_INIT_MOD.rawValue | MIX_INIT_MID.rawValue))
        // MIDI with the SoundFont the engine picks when none is configured, so both play the same instruments.
        if let font = DecoderOptions.defaultSoundFonts.first(where: FilePaths.isReadable) {
            _ = mix.Mix_SetSoundFonts(font)
        }
        defer { mix.Mix_Quit() }
        guard mix.Mix_OpenAudio(Int32(clamping: sampleRate), Uint16(AUDIO_F32SYS), 2, Int32(clamping: blockFrames)) == 0
        else {
            throw .sdlMixer("Mix_OpenAudio: \(sdlError())")
        }
        defer { mix.Mix_CloseAudio() }
        mixedBytes.store(0, ordering: .relaxed)
        mix.Mix_SetPostMix({ _, _, length in SDLMixer.mixedBytes.add(Int(length), ordering: .relaxed) }, nil)
        defer { mix.Mix_SetPostMix(nil, nil) }
        let bytesPerFrame = 2 * MemoryLayout<Float>.size
        let cpuStart = ProcessUsage.cpuSeconds
        let startBytes = mixedBytes.load(ordering: .relaxed)
        var finished: () -> Bool
        var music: OpaquePointer?
        if let path {
            guard let loaded = mix.Mix_LoadMUS(path) else { return nil }
            music = loaded
            guard mix.Mix_PlayMusic(loaded, 0) == 0 else { throw .sdlMixer("Mix_PlayMusic(\(path)): \(sdlError())") }
            finished = { mix.Mix_PlayingMusic() == 0 }
        } else {
            let target = Int(silenceSeconds * Double(sampleRate)) * bytesPerFrame
            finished = { SDLMixer.mixedBytes.load(ordering: .relaxed) - startBytes >= target }
        }
        defer { if let music { mix.Mix_FreeMusic(music) } }
        let wallStart = ProcessUsage.monotonicNanoseconds
        while !finished() {
            sleepUntil(monotonicNanoseconds: monotonicNanoseconds() + 200_000)
            if ProcessUsage.monotonicNanoseconds - wallStart > 600_000_000_000 {
                throw .sdlMixer("music still playing after 10 minutes")
            }
        }
        let cpu = ProcessUsage.cpuSeconds - cpuStart
        let frames = (mixedBytes.load(ordering: .relaxed) - startBytes) / bytesPerFrame
        return MusicCost(cpuSeconds: cpu, audioSeconds: Double(frames) / Double(sampleRate))
    }

    /// SDL_mixer's angle (degrees clockwise from straight ahead, -z) and distance (0 near … 255 far) for a 3D
    /// position, with the inverse-distance attenuation OpenAL applies (reference 1 m, rolloff 1).
    static func position(_ voice: StressScene.VoiceSpec) -> (angle: Int16, distance: UInt8) {
        var degrees = atan2(Double(voice.x), Double(-voice.z)) * 180 / .pi
        if degrees < 0 { degrees += 360 }
        let metres = (Double(voice.x * voice.x + voice.y * voice.y + voice.z * voice.z)).squareRoot()
        let gain = 1 / max(metres, 1)
        return (Int16(degrees.rounded()) % 360, UInt8(clamping: Int(((1 - gain) * 255).rounded())))
    }

    private static func sdlError() -> String { String(cString: SDL_GetError()) }

    /// SDL audio on its `disk` driver into /dev/null with no delay, for as long as the benchmark mixes: SDL_mixer
    /// then runs as fast as the CPU allows. `close()` gives back SDL audio, its log and the environment.
    private struct DiskAudio {
        private let environment: SavedEnvironment
        private var logger: SDL_LogOutputFunction? = nil
        private var loggerData: UnsafeMutableRawPointer? = nil

        init() throws(BenchError) {
            guard SDL_WasInit(Uint32(SDL_INIT_AUDIO)) == 0 else {
                throw .sdlMixer("SDL audio is already in use in this process (SDL_mixer must own it for the benchmark)")
            }
            environment = SavedEnvironment([
                "SDL_AUDIODRIVER": "disk", "SDL_DISKAUDIOFILE": "/dev/null", "SDL_DISKAUDIODELAY": "0"
            ])
            // The disk driver logs a CRITICAL warning on every open; the benchmark chose it on purpose.
            SDL_LogGetOutputFunction(&logger, &loggerData)
            SDL_LogSetOutputFunction({ _, _, _, _ in }, nil)
            guard SDL_InitSubSystem(Uint32(SDL_INIT_AUDIO)) == 0 else {
                let error = SDLMixer.sdlError()
                restore()
                throw .sdlMixer("SDL audio: \(error)")
            }
            let driver = SDL_GetCurrentAudioDriver().map { String(cString: $0) } ?? "none"
            guard driver == "disk" else {
                close()
                throw .sdlMixer("SDL chose the '\(driver)' audio driver, not 'disk'")
            }
        }

        func close() {
            SDL_QuitSubSystem(Uint32(SDL_INIT_AUDIO))
            restore()
        }

        private func restore() {
            SDL_LogSetOutputFunction(logger, loggerData)
            environment.restore()
        }
    }
}

extension SDLMixer {
    /// Callback timing of the latency client, written by the post-mix callback on SDL's audio thread.
    private static let lastCallback = Atomic<Int>(0)
    private static let callbacks = Atomic<Int>(0)
    private static let lateCallbacks = Atomic<Int>(0)
    private static let periodNanos = Atomic<Int>(0)

    /// `bench --latency`'s SDL_mixer client: SDL_mixer on SDL's pulseaudio driver with chunks of `periodFrames`, the
    /// click played on channel 0 at each time of `schedule` (monotonic nanoseconds). A callback that comes more than
    /// two periods after the one before counts as late.
    static func latencyClient(periodFrames: Int, sampleRate: Int, click: [Float], plan: () -> [Int]) throws(BenchError)
        -> LatencyClientResult
    {
        let mix = try functions()
        guard SDL_WasInit(Uint32(SDL_INIT_AUDIO)) == 0 else {
            throw .sdlMixer("SDL audio is already in use in this process")
        }
        let environment = SavedEnvironment(["SDL_AUDIODRIVER": "pulseaudio"])
        defer { environment.restore() }
        guard SDL_InitSubSystem(Uint32(SDL_INIT_AUDIO)) == 0 else { throw .sdlMixer("SDL audio: \(sdlError())") }
        defer { SDL_QuitSubSystem(Uint32(SDL_INIT_AUDIO)) }
        let driver = SDL_GetCurrentAudioDriver().map { String(cString: $0) } ?? "none"
        guard driver == "pulseaudio" else {
            throw .sdlMixer("SDL chose the '\(driver)' audio driver, not 'pulseaudio'")
        }
        guard
            mix.Mix_OpenAudio(Int32(clamping: sampleRate), Uint16(AUDIO_F32SYS), 2, Int32(clamping: periodFrames)) == 0
        else {
            throw .sdlMixer("Mix_OpenAudio: \(sdlError())")
        }
        defer { mix.Mix_CloseAudio() }
        let stereo = UnsafeMutableBufferPointer<Float>.allocate(capacity: click.count * 2)
        defer { stereo.deallocate() }
        for (i, v) in click.enumerated() { stereo[2 * i] = v; stereo[2 * i + 1] = v }
        let bytes = UnsafeMutableRawPointer(stereo.baseAddress!).assumingMemoryBound(to: Uint8.self)
        guard let chunk = mix.Mix_QuickLoad_RAW(bytes, Uint32(clamping: stereo.count * MemoryLayout<Float>.size)) else {
            throw .sdlMixer("Mix_QuickLoad_RAW: \(sdlError())")
        }
        defer { mix.Mix_FreeChunk(chunk) }
        defer { _ = mix.Mix_HaltChannel(-1) }
        periodNanos.store(periodFrames * 1_000_000_000 / sampleRate, ordering: .relaxed)
        callbacks.store(0, ordering: .relaxed)
        lateCallbacks.store(0, ordering: .relaxed)
        lastCallback.store(0, ordering: .relaxed)
        mix.Mix_SetPostMix(
            { _, _, _ in
                let now = monotonicNanoseconds()
                let last = SDLMixer.lastCallback.exchange(now, ordering: .relaxed)
                if last > 0, now - last > 2 * SDLMixer.periodNanos.load(ordering: .relaxed) {
                    SDLMixer.lateCallbacks.add(1, ordering: .relaxed)
                }
                SDLMixer.callbacks.add(1, ordering: .relaxed)
            }, nil)
        defer { mix.Mix_SetPostMix(nil, nil) }
        var result = LatencyClientResult(driver: "SDL_mixer on SDL \(driver)")
        for due in plan() {
            sleepUntil(monotonicNanoseconds: due)
            let now = monotonicNanoseconds()
            guard mix.Mix_PlayChannel(0, chunk, 0) == 0 else { throw .sdlMixer("Mix_PlayChannel: \(sdlError())") }
            result.triggers.append(now)
        }
        sleepUntil(monotonicNanoseconds: monotonicNanoseconds() + LatencyClient.tailNanoseconds)
        result.callbacks = callbacks.load(ordering: .relaxed)
        result.lateCallbacks = lateCallbacks.load(ordering: .relaxed)
        return result
    }
}

/// Sets environment variables and puts the old values back.
private struct SavedEnvironment {
    private var saved: [(String, String?)] = []

    init(_ values: [String: String]) {
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            saved.append((name, ProcessEnvironment.value(name)))
            try? ProcessEnvironment.set(name, to: value)
        }
    }

    func restore() {
        for (name, value) in saved {
            try? ProcessEnvironment.set(name, to: value)
        }
    }
}
