import Ambience
import AmbiencePlatform
import COpenAL
import CSDL2
import CVorbisFile

// The floor of `bench --sdl-mixer-stand-in`: MixerScene's scene with no engine and no SDL_mixer, as a careful game
// would play it on OpenAL Soft and libvorbisfile alone. Only the benchmark links this; the engine's OpenAL and Vorbis
// wrappers stay the only ones in the Ambience library. Its CPU per audio second is the least any stand-in that
// mixes through OpenAL Soft can spend on the scene.

/// The scene on raw OpenAL Soft: a loopback device rendered in SDL's audio callback (stereo float, the engine's way
/// out), one source per effect channel polled and played again by the same 60 Hz loop as MixerScene's, and the theme
/// decoded by libvorbisfile on one thread into four queued 16-bit buffers of 8,192 frames (186 ms each): the thread
/// refills the played ones and sleeps until the one playing ends.
public enum MixerFloor {
    static let musicBufferFrames = 8_192
    static let musicBuffers = 4

    /// Plays the scene for `seconds` on SDL's `driver`; the result names OpenAL Soft's library and version. The
    /// effects are mono, as the files are and as a game on OpenAL loads them; `stereoChunks` uploads them as
    /// stereo instead, as a stand-in receives them (Mix_LoadWAV converts to the device's two channels), which
    /// OpenAL Soft mixes at a higher cost: the scene's floor measured about 1.4 times the mono one's.
    public static func run(driver: MixerSceneDriver, seconds: Double, periodFrames: Int, stereoChunks: Bool = false)
        throws(BenchError) -> MixerSceneResult
    {
        MixerScene.chooseDriver(driver)
        guard let assets = MixerScene.assetsFolder else {
            throw .sdlMixer("Assets/ (its SFX and Music/gravity-wave-theme.ogg) is not found")
        }
        guard SDL_Init(Uint32(SDL_INIT_AUDIO)) == 0 else { throw .sdlMixer("SDL_Init: \(sdlError())") }
        defer { SDL_Quit() }
        OpenALSoft.startWithoutBackends()
        guard let device = alcLoopbackOpenDeviceSOFT(nil) else { throw .openAL("cannot open a loopback device") }
        defer { alcCloseDevice(device) }
        let rate = ALCint(clamping: MixerScene.sampleRate)
        let attributes: [ALCint] = [
            ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT, ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT, ALC_FREQUENCY, rate,
            // The limiter stated as the engine states it (off: `EngineConfiguration.outputLimiter`'s default, which the
            // stand-in keeps), not left to OpenAL Soft's default (on), so that the floor does the engine's work.
            ALC_HRTF_SOFT, ALC_FALSE, ALC_OUTPUT_LIMITER_SOFT, ALC_FALSE, 0
        ]
        guard let context = alcCreateContext(device, attributes) else { throw .openAL("cannot create a context") }
        // Current for the whole process: the game loop and the music thread both call OpenAL.
        guard alcMakeContextCurrent(context) != 0 else {
            alcDestroyContext(context)
            throw .openAL("cannot make the context current (ALC error \(alcGetError(device)))")
        }
        defer {
            alcMakeContextCurrent(nil)
            alcDestroyContext(context)
        }

        var want = SDL_AudioSpec()
        want.freq = Int32(clamping: MixerScene.sampleRate)
        want.format = SDL_AudioFormat(AUDIO_F32SYS)
        want.channels = 2
        want.samples = Uint16(clamping: periodFrames)
        want.callback = { userdata, stream, bytes in
            // The whole callback: OpenAL Soft renders the block in place.
            let device = OpaquePointer(userdata)
            alcRenderSamplesSOFT(device, stream, ALCsizei(bytes / 8))
        }
        want.userdata = UnsafeMutableRawPointer(device)
        var have = SDL_AudioSpec()
        let output = SDL_OpenAudioDevice(nil, 0, &want, &have, 0)
        guard output > 0 else { throw .sdlMixer("SDL_OpenAudioDevice: \(sdlError())") }
        // Closed here on the ways out before it plays; once it plays, by the last defer below, before anything the
        // callback renders is deleted.
        var outputOpen = true
        defer { if outputOpen { SDL_CloseAudioDevice(output) } }

        var result = MixerSceneResult()
        result.library = MixerScene.mapped(libraryNamed: "libopenal") ?? ""
        result.version = alGetString(AL_VERSION).map { String(cString: $0) } ?? ""
        result.driver = SDL_GetCurrentAudioDriver().map { String(cString: $0) } ?? "none"
        guard result.driver == driver.rawValue else {
            throw .sdlMixer("SDL chose the '\(result.driver)' audio driver, not '\(driver.rawValue)'")
        }

        let names = ["explosion", "laser", "pickup", "thrust-loop", "ui-click"]
        var buffers = [ALuint](repeating: 0, count: names.count)
        alGenBuffers(ALsizei(clamping: buffers.count), &buffers)
        defer { alDeleteBuffers(ALsizei(clamping: buffers.count), buffers) }
        for (buffer, name) in zip(buffers, names) {
            try loadWAV(assets + "/SFX/\(name).wav", into: buffer, stereo: stereoChunks)
        }
        var sources = [ALuint](repeating: 0, count: MixerScene.effectChannels)
        alGenSources(ALsizei(clamping: sources.count), &sources)
        guard alGetError() == AL_NO_ERROR else { throw .openAL("cannot make \(sources.count) sources") }
        defer {
            alSourceStopv(ALsizei(clamping: sources.count), sources)
            alDeleteSources(ALsizei(clamping: sources.count), sources)
        }
        for (i, source) in sources.enumerated() {
            alSourcei(source, AL_BUFFER, ALint(bitPattern: buffers[i % buffers.count]))
            alSourcei(source, AL_SOURCE_RELATIVE, AL_TRUE)
            alSourcef(source, AL_GAIN, Float(MixerScene.effectVolume) / 128)
        }

        // Cleared first: the stream's own check must not report an error left by the calls above.
        _ = alGetError()
        let music = try MusicStream(path: assets + "/Music/gravity-wave-theme.ogg")
        defer { music.close() }
        let musicThread = WorkerThread(name: "floor-music", scheduling: .batch) { control in
            music.run(control)
        }
        defer { musicThread.stop() }
        guard musicThread.isRunning else { throw .sdlMixer("the system gave no thread for the music") }
        SDL_PauseAudioDevice(output, 0)
        // Declared last, so run first: the callback stops (the pause waits for a running one) and the device closes
        // before the music, the sources and the buffers it renders are deleted.
        defer {
            SDL_PauseAudioDevice(output, 1)
            SDL_CloseAudioDevice(output)
            outputOpen = false
        }
        alSourcePlayv(ALsizei(clamping: sources.count), sources)

        let start = monotonicNanoseconds()
        let end = start + (seconds * 1e9).saturated(Int.self)
        let cpuStart = ProcessUsage.cpuSeconds
        let frame = 16_666_667
        while monotonicNanoseconds() < end {
            sleepUntil(monotonicNanoseconds: min(monotonicNanoseconds() + frame, end))
            for source in sources {
                var state: ALint = 0
                alGetSourcei(source, AL_SOURCE_STATE, &state)
                if state == AL_STOPPED {
                    alSourcePlay(source)
                    result.retriggers += 1
                }
            }
        }
        result.cpuSeconds = ProcessUsage.cpuSeconds - cpuStart
        result.wallSeconds = Double(monotonicNanoseconds() - start) / 1e9
        return result
    }

    /// Uploads a 16-bit WAV file, as SDL reads it, to `buffer` in its own rate and channels, or a mono one as stereo.
    private static func loadWAV(_ path: String, into buffer: ALuint, stereo: Bool) throws(BenchError) {
        var spec = SDL_AudioSpec()
        var bytes: UnsafeMutablePointer<Uint8>? = nil
        var length: Uint32 = 0
        guard SDL_LoadWAV_RW(SDL_RWFromFile(path, "rb"), 1, &spec, &bytes, &length) != nil, let bytes else {
            throw .sdlMixer("SDL_LoadWAV(\(path)): \(sdlError())")
        }
        defer { SDL_FreeWAV(bytes) }
        guard spec.format == SDL_AudioFormat(AUDIO_S16LSB), spec.channels == 1 || spec.channels == 2 else {
            throw .sdlMixer("\(path) is not 16-bit mono or stereo")
        }
        if spec.channels == 1, stereo {
            // As Mix_LoadWAV hands it over at a stereo device: each sample on both sides.
            let mono = UnsafeBufferPointer(
                start: UnsafeRawPointer(bytes).assumingMemoryBound(to: Int16.self), count: Int(length) / 2)
            let both = mono.flatMap { [$0, $0] }
            both.withUnsafeBytes {
                alBufferData(
                    buffer, AL_FORMAT_STEREO16, $0.baseAddress, ALsizei(clamping: $0.count),
                    ALsizei(clamping: spec.freq))
            }
        } else {
            alBufferData(
                buffer, spec.channels == 1 ? AL_FORMAT_MONO16 : AL_FORMAT_STEREO16, bytes, ALsizei(clamping: length),
                ALsizei(clamping: spec.freq))
        }
        guard alGetError() == AL_NO_ERROR else { throw .openAL("cannot upload \(path)") }
    }

    private static func sdlError() -> String { String(cString: SDL_GetError()) }

    /// The looping theme: a streaming source fed by libvorbisfile on the music thread.
    final class MusicStream: @unchecked Sendable {
        // Allocated once and never moved: libvorbisfile points into it. Touched by the music thread only once it runs.
        private let file = UnsafeMutablePointer<OggVorbis_File>.allocate(capacity: 1)
        private let format: ALenum
        private let rate: Int
        private var source: ALuint = 0
        private var buffers = [ALuint](repeating: 0, count: MixerFloor.musicBuffers)
        private var pcm: [Int16]

        init(path: String) throws(BenchError) {
            guard ov_fopen(path, file) == 0 else {
                file.deallocate()
                throw .sdlMixer("libvorbisfile cannot open \(path)")
            }
            let info = ov_info(file, -1)?.pointee
            guard let info, info.channels == 1 || info.channels == 2, info.rate > 0 else {
                ov_clear(file)
                file.deallocate()
                throw .sdlMixer("\(path) is not mono or stereo")
            }
            format = info.channels == 1 ? AL_FORMAT_MONO16 : AL_FORMAT_STEREO16
            rate = info.rate
            pcm = [Int16](repeating: 0, count: MixerFloor.musicBufferFrames * Int(info.channels))
            alGenSources(1, &source)
            alGenBuffers(ALsizei(clamping: buffers.count), &buffers)
            alSourcei(source, AL_SOURCE_RELATIVE, AL_TRUE)
            alSourcef(source, AL_GAIN, Float(MixerScene.musicVolume) / 128)
            for buffer in buffers { fill(buffer) }
            alSourceQueueBuffers(source, ALsizei(clamping: buffers.count), buffers)
            alSourcePlay(source)
            guard alGetError() == AL_NO_ERROR else {
                close()
                throw .openAL("cannot start the music's source")
            }
        }

        /// The thread's loop: refill what has played, start again after an underrun, sleep until the playing
        /// buffer ends.
        func run(_ control: WorkerThread.Control) {
            let bufferSeconds = Double(MixerFloor.musicBufferFrames) / Double(rate)
            while !control.isStopRequested {
                var processed: ALint = 0
                alGetSourcei(source, AL_BUFFERS_PROCESSED, &processed)
                for _ in 0..<max(processed, 0) {
                    var buffer: ALuint = 0
                    alSourceUnqueueBuffers(source, 1, &buffer)
                    fill(buffer)
                    alSourceQueueBuffers(source, 1, &buffer)
                }
                var state: ALint = 0
                alGetSourcei(source, AL_SOURCE_STATE, &state)
                if state != AL_PLAYING { alSourcePlay(source) }
                var offset: ALint = 0
                alGetSourcei(source, AL_SAMPLE_OFFSET, &offset)
                let left = Double(MixerFloor.musicBufferFrames - Int(offset) % MixerFloor.musicBufferFrames)
                control.wait(seconds: min(left / Double(rate) + 0.005, bufferSeconds))
            }
        }

        /// Decodes the next buffer's worth, going back to the start at the end (the theme loops).
        private func fill(_ buffer: ALuint) {
            let bytes = pcm.count * 2
            var filled = 0
            var rewound = false
            pcm.withUnsafeMutableBytes { raw in
                while filled < bytes {
                    let target = raw.baseAddress!.advanced(by: filled).assumingMemoryBound(to: CChar.self)
                    let got = ov_read(file, target, Int32(clamping: bytes - filled), 0, 2, 1, nil)
                    if got > 0 {
                        filled += got
                        rewound = false
                    } else if got == 0, !rewound {
                        rewound = true
                        guard ov_raw_seek(file, 0) == 0 else { break }
                    } else {
                        break
                    }
                }
                alBufferData(buffer, format, raw.baseAddress, ALsizei(clamping: filled), ALsizei(clamping: rate))
            }
        }

        func close() {
            alSourceStop(source)
            alDeleteSources(1, &source)
            alDeleteBuffers(ALsizei(clamping: buffers.count), buffers)
            ov_clear(file)
            file.deallocate()
        }
    }
}
