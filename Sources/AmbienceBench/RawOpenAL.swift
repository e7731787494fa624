import Ambience
import AmbiencePlatform
import COpenAL

// The benchmark's own, separate use of OpenAL Soft: the stress scene with no engine in between. Only the benchmark
// links this; the engine's OpenAL wrapper stays the only one in the Ambience library.

/// How the raw OpenAL Soft run sets up its device and sources. The default is the side-by-side benchmark's: the scene's
/// rate, mono buffers, OpenAL Soft's own default resampler and limiter, finished one-shots started again.
/// `bench --openal-options` varies one field at a time.
struct RawOpenALSetup: Sendable, Equatable {
    /// The device's mixing rate, or nil for the scene's own.
    var mixingRate: Int? = nil
    /// An index into `AL_RESAMPLER_NAME_SOFT`'s list, set on every source; nil leaves OpenAL Soft's default.
    var resampler: Int? = nil
    /// Upload each mono sound as a stereo buffer (both channels the same).
    var stereoBuffers = false
    /// `ALC_OUTPUT_LIMITER_SOFT` in the context's attributes; nil leaves it out (OpenAL Soft's default).
    var outputLimiter: Bool? = nil
    /// Start finished one-shots again after each block (the benchmark's crowd). Off, the render does not depend on
    /// when one-shots are polled, so it is the same at any block size and from one run to the next.
    var restartOneShots = true
}

/// The stress scene played straight through an OpenAL Soft loopback device: one source per voice (as many as the
/// device gives), the same buffers, positions and pitches, rendered in blocks; finished one-shots are played again.
enum RawOpenAL {
    /// What a loopback context gets when nothing is asked for: the resamplers `AL_SOFT_source_resampler` lists (in
    /// its order; empty without the extension), the index of its default, and whether the output limiter is on.
    static func defaults() throws(BenchError) -> (resamplers: [String], defaultResampler: Int?, limiter: Bool?) {
        OpenALSoft.startWithoutBackends()
        guard let device = alcLoopbackOpenDeviceSOFT(nil) else { throw .openAL("cannot open a loopback device") }
        defer { alcCloseDevice(device) }
        let attributes: [ALCint] = [
            ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT, ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT, ALC_FREQUENCY, 48_000, 0
        ]
        guard let context = alcCreateContext(device, attributes) else { throw .openAL("cannot create a context") }
        let previous = alcGetThreadContext()
        alcSetThreadContext(context)
        defer {
            alcSetThreadContext(previous)
            alcDestroyContext(context)
        }
        var limiter: Bool? = nil
        if alcIsExtensionPresent(device, "ALC_SOFT_output_limiter") != 0 {
            var value: ALCint = 0
            alcGetIntegerv(device, ALC_OUTPUT_LIMITER_SOFT, 1, &value)
            limiter = value != 0
        }
        guard alIsExtensionPresent("AL_SOFT_source_resampler") != 0 else { return ([], nil, limiter) }
        let count = min(max(Int(alGetInteger(AL_NUM_RESAMPLERS_SOFT)), 0), 64)
        let names = (0..<count).map { i in
            alGetStringiSOFT(AL_RESAMPLER_NAME_SOFT, ALsizei(i)).map { String(cString: $0) } ?? "resampler \(i)"
        }
        return (names, Int(alGetInteger(AL_DEFAULT_RESAMPLER_SOFT)), limiter)
    }

    /// Renders the scene for `seconds` with `setup`, timing it; `capture`, when given, sees every rendered block
    /// (interleaved stereo float at the mixing rate) inside the timed loop, so cost runs leave it out.
    static func run(
        _ scene: StressScene, seconds: Double, blockFrames: Int = 1024, setup: RawOpenALSetup = RawOpenALSetup(),
        capture: ((UnsafeBufferPointer<Float>) -> Void)? = nil,
        isCancelled: () -> Bool = { false }
    ) throws(BenchError) -> SystemMeasurement {
        OpenALSoft.startWithoutBackends()
        guard let device = alcLoopbackOpenDeviceSOFT(nil) else { throw .openAL("cannot open a loopback device") }
        defer { alcCloseDevice(device) }
        let mixingRate = setup.mixingRate ?? scene.sampleRate
        guard let rate = try? mixingRate.checked(ALCint.self, in: 8_000...192_000, "mixing rate"),
            alcIsRenderFormatSupportedSOFT(device, rate, ALCenum(ALC_STEREO_SOFT), ALCenum(ALC_FLOAT_SOFT)) != 0
        else {
            throw .openAL("cannot render stereo float at \(mixingRate) Hz")
        }
        let sourceCount = ALCint(clamping: max(scene.voices.count, 1))
        var attributes: [ALCint] = [
            ALC_FORMAT_CHANNELS_SOFT, ALC_STEREO_SOFT, ALC_FORMAT_TYPE_SOFT, ALC_FLOAT_SOFT, ALC_FREQUENCY, rate,
            setup.stereoBuffers ? ALC_STEREO_SOURCES : ALC_MONO_SOURCES, sourceCount, ALC_HRTF_SOFT, ALC_FALSE
        ]
        if let limiter = setup.outputLimiter {
            guard alcIsExtensionPresent(device, "ALC_SOFT_output_limiter") != 0 else {
                throw .openAL("ALC_SOFT_output_limiter is not available")
            }
            attributes += [ALC_OUTPUT_LIMITER_SOFT, limiter ? ALC_TRUE : ALC_FALSE]
        }
        attributes.append(0)
        guard let context = alcCreateContext(device, attributes) else {
            throw .openAL("cannot create a context (ALC error 0x\(String(alcGetError(device), radix: 16)))")
        }
        let previous = alcGetThreadContext()
        alcSetThreadContext(context)
        defer {
            alcSetThreadContext(previous)
            alcDestroyContext(context)
        }
        if setup.resampler != nil, alIsExtensionPresent("AL_SOFT_source_resampler") == 0 {
            throw .openAL("AL_SOFT_source_resampler is not available")
        }

        alDistanceModel(AL_INVERSE_DISTANCE_CLAMPED)
        var buffers = [ALuint](repeating: 0, count: scene.sounds.count)
        alGenBuffers(ALsizei(buffers.count), &buffers)
        defer { alDeleteBuffers(ALsizei(buffers.count), buffers) }
        for (buffer, sound) in zip(buffers, scene.sounds) {
            // The same sound as a stereo buffer: each sample twice, interleaved.
            let samples = setup.stereoBuffers ? sound.samples.flatMap { [$0, $0] } : sound.samples
            samples.withUnsafeBytes {
                alBufferData(
                    buffer, setup.stereoBuffers ? AL_FORMAT_STEREO_FLOAT32 : AL_FORMAT_MONO_FLOAT32, $0.baseAddress,
                    ALsizei($0.count), ALsizei(sound.sampleRate))
            }
        }
        guard alGetError() == AL_NO_ERROR else { throw .openAL("cannot upload the scene's sounds") }

        // As many sources as the device gives, up to one per voice.
        var sources: [ALuint] = []
        sources.reserveCapacity(scene.voices.count)
        for _ in scene.voices {
            var id: ALuint = 0
            alGenSources(1, &id)
            guard alGetError() == AL_NO_ERROR else { break }
            sources.append(id)
        }
        defer {
            alSourceStopv(ALsizei(sources.count), sources)
            alDeleteSources(ALsizei(sources.count), sources)
        }
        guard !sources.isEmpty else { throw .openAL("the device gave no sources") }
        var oneShots: [Int] = []
        for (i, source) in sources.enumerated() {
            let voice = scene.voices[i]
            alSourcei(source, AL_BUFFER, ALint(bitPattern: buffers[voice.sound]))
            alSourcei(source, AL_LOOPING, voice.loop ? AL_TRUE : AL_FALSE)
            alSourcef(source, AL_PITCH, voice.pitch)
            alSourcef(source, AL_REFERENCE_DISTANCE, 1)
            alSourcef(source, AL_MAX_DISTANCE, 1000)
            alSourcef(source, AL_ROLLOFF_FACTOR, 1)
            alSource3f(source, AL_POSITION, voice.x, voice.y, voice.z)
            if let resampler = setup.resampler {
                alSourcei(source, AL_SOURCE_RESAMPLER_SOFT, ALint(clamping: resampler))
            }
            if !voice.loop, setup.restartOneShots { oneShots.append(i) }
        }
        alSourcePlayv(ALsizei(sources.count), sources)
        guard alGetError() == AL_NO_ERROR else { throw .openAL("cannot play \(sources.count) sources") }

        let totalFrames = Int((seconds * Double(mixingRate)).rounded())
        var out = [Float](repeating: 0, count: blockFrames * 2)
        var done = 0
        var sumOfSquares = 0.0
        var restarted = 0
        var renderNanos = 0, blocks = 0
        // The cost of starting a one-shot again, sampled like Ambience's `play` (the first 65,536 calls).
        var playNanos: [Double] = []
        playNanos.reserveCapacity(65_536)
        let cpuStart = ProcessUsage.cpuSeconds
        let wallStart = ProcessUsage.monotonicNanoseconds
        while done < totalFrames, !isCancelled() {
            let frames = min(blockFrames, totalFrames - done)
            out.withUnsafeMutableBufferPointer { block in
                let renderStart = ProcessUsage.monotonicNanoseconds
                alcRenderSamplesSOFT(device, block.baseAddress, ALCsizei(frames))
                renderNanos += ProcessUsage.monotonicNanoseconds - renderStart
                blocks += 1
                var sum: Float = 0
                for v in block[0..<(frames * 2)] { sum += v * v }
                sumOfSquares += Double(sum)
                if let capture { capture(UnsafeBufferPointer(rebasing: block[0..<(frames * 2)])) }
            }
            done += frames
            // What a game does without an engine: poll its one-shots and start the finished ones again.
            for i in oneShots {
                var state: ALint = 0
                alGetSourcei(sources[i], AL_SOURCE_STATE, &state)
                if state == AL_STOPPED {
                    let start = ProcessUsage.monotonicNanoseconds
                    alSourcePlay(sources[i])
                    if playNanos.count < playNanos.capacity {
                        playNanos.append(Double(ProcessUsage.monotonicNanoseconds - start))
                    }
                    restarted += 1
                }
            }
        }
        var m = SystemMeasurement()
        m.cpuSeconds = ProcessUsage.cpuSeconds - cpuStart
        m.wallSeconds = Double(ProcessUsage.monotonicNanoseconds - wallStart) / 1e9
        m.frames = done
        m.seconds = Double(done) / Double(mixingRate)
        m.rtf = m.seconds > 0 ? m.cpuSeconds / m.seconds : 0
        m.voicesMixed = sources.count
        m.outputRMS = done > 0 ? (sumOfSquares / Double(done * 2)).squareRoot() : 0
        m.restarts = restarted
        m.renderMicroseconds = blocks > 0 ? Double(renderNanos) / Double(blocks) / 1000 : nil
        m.playCallNs = playNanos.isEmpty ? nil : Benchmark.median(playNanos)
        return m
    }
}

extension RawOpenAL {
    /// `bench --latency`'s OpenAL Soft client: a device opened on OpenAL Soft's own PulseAudio backend, with the period
    /// its configuration file (`ALSOFT_CONF`, written by the parent) sets, and one source replaying the click at each
    /// time of `schedule` (monotonic nanoseconds). OpenAL Soft mixes on a thread of its own that the program cannot
    /// time, so late callbacks are not counted.
    static func latencyClient(sampleRate: Int, click: [Float], plan: () -> [Int]) throws(BenchError)
        -> LatencyClientResult
    {
        guard let device = alcOpenDevice(nil) else { throw .openAL("cannot open the default device") }
        defer { alcCloseDevice(device) }
        let attributes: [ALCint] = [ALC_FREQUENCY, ALCint(clamping: sampleRate), ALC_HRTF_SOFT, ALC_FALSE, 0]
        guard let context = alcCreateContext(device, attributes) else {
            throw .openAL("cannot create a context (ALC error 0x\(String(alcGetError(device), radix: 16)))")
        }
        let previous = alcGetThreadContext()
        alcSetThreadContext(context)
        defer {
            alcSetThreadContext(previous)
            alcDestroyContext(context)
        }
        var name = "OpenAL Soft"
        if let specifier = alcGetString(device, ALC_ALL_DEVICES_SPECIFIER) ?? alcGetString(device, ALC_DEVICE_SPECIFIER)
        {
            name += " on " + String(cString: specifier)
        }
        var refresh: ALCint = 0, frequency: ALCint = 0
        alcGetIntegerv(device, ALC_REFRESH, 1, &refresh)
        alcGetIntegerv(device, ALC_FREQUENCY, 1, &frequency)
        if refresh > 0 { name += ", \(frequency / refresh) frames per update" }

        var buffer: ALuint = 0
        alGenBuffers(1, &buffer)
        defer { alDeleteBuffers(1, &buffer) }
        click.withUnsafeBytes {
            alBufferData(buffer, AL_FORMAT_MONO_FLOAT32, $0.baseAddress, ALsizei($0.count), ALsizei(sampleRate))
        }
        var source: ALuint = 0
        alGenSources(1, &source)
        defer { alDeleteSources(1, &source) }
        alSourcei(source, AL_BUFFER, ALint(bitPattern: buffer))
        alSourcei(source, AL_SOURCE_RELATIVE, AL_TRUE)
        alSource3f(source, AL_POSITION, 0, 0, 0)
        guard alGetError() == AL_NO_ERROR else { throw .openAL("cannot set up the click's source") }

        var result = LatencyClientResult(driver: name)
        for due in plan() {
            sleepUntil(monotonicNanoseconds: due)
            let now = monotonicNanoseconds()
            alSourcePlay(source)
            result.triggers.append(now)
        }
        sleepUntil(monotonicNanoseconds: monotonicNanoseconds() + LatencyClient.tailNanoseconds)
        alSourceStop(source)
        result.lateCallbacks = nil
        return result
    }
}
