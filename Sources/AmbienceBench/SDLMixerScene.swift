import Ambience
import AmbiencePlatform
import CSDL2
import CSDLMixer
import Glibc

/// The SDL driver a scene child plays through.
public enum MixerSceneDriver: String, Sendable {
    /// SDL's `disk` driver into /dev/null at its own pace (one period's duration, in whole milliseconds, between
    /// writes): real time with no sound server, for the CPU figure.
    case disk
    /// SDL's `pulseaudio` driver, heard at the default sink's monitor, for the latency figure.
    case pulseaudio
}

/// What one scene child did, printed for the parent as lines (`library …`, `version …`, `driver …`, `cpu …`,
/// `wall …`, `retriggers …`, then `trigger NS` per click).
public struct MixerSceneResult: Sendable, Equatable {
    /// The SDL_mixer the loader gave the child, from its /proc/self/maps (real path).
    public var library = ""
    /// `Mix_Linked_Version`, "2.6.2".
    public var version = ""
    public var driver = ""
    /// The whole child's CPU seconds (every thread) and the wall seconds over the played part.
    public var cpuSeconds = 0.0
    public var wallSeconds = 0.0
    /// One-shots started again because they had ended.
    public var retriggers = 0
    /// When each click was asked for (monotonic nanoseconds).
    public var triggers: [Int] = []

    public init() {}

    public var lines: [String] {
        [
            "library \(library)", "version \(version)", "driver \(driver)", "cpu \(cpuSeconds)", "wall \(wallSeconds)",
            "retriggers \(retriggers)"
        ] + triggers.map { "trigger \($0)" }
    }

    /// Reads `lines` back; nil if they are not that shape or lack the library.
    public init?(lines text: String) {
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return nil }
            switch parts[0] {
            case "library": library = parts[1]
            case "version": version = parts[1]
            case "driver": driver = parts[1]
            case "cpu": guard let v = Double(parts[1]) else { return nil }; cpuSeconds = v
            case "wall": guard let v = Double(parts[1]) else { return nil }; wallSeconds = v
            case "retriggers": guard let v = Int(parts[1]) else { return nil }; retriggers = v
            case "trigger": guard let v = Int(parts[1]) else { return nil }; triggers.append(v)
            default: return nil
            }
        }
        guard !library.isEmpty else { return nil }
    }
}

/// The scene of `bench --sdl-mixer-stand-in`, as an SDL_mixer game plays it: 32 channels of one-shots (the game's
/// sound effects, loaded with `Mix_LoadWAV`, each started again with `Mix_PlayChannel` by a 60 Hz game loop once it
/// has ended) and the bundled Ogg theme looping with `Mix_PlayMusic`, at 44.1 kHz, 16-bit stereo
/// (`MIX_DEFAULT_FORMAT`). Clicks, when asked for, play on a 33rd channel at full volume; the effects play at
/// 2/128 and the music at 4/128, so that nothing but a click crosses the detector's threshold at the monitor.
///
/// The code only calls SDL_mixer's API: whichever library the loader gave the process (Debian's, or the stand-in
/// first on `LD_LIBRARY_PATH`) plays it, and the result names it.
public enum MixerScene {
    public static let sampleRate = 44_100
    public static let effectChannels = 32
    static let effectVolume: Int32 = 2
    static let musicVolume: Int32 = 4
    /// The detector's threshold: a click peaks at 0.8, the scene below 0.25 even with every effect in phase.
    static let clickThreshold: Float = 0.4

    /// Plays the scene for `seconds` (or, with clicks, until the last click and its tail) through `driver`.
    public static func run(
        driver: MixerSceneDriver, seconds: Double, periodFrames: Int, clicks: Int, gaps: ClosedRange<Int>, seed: UInt64
    ) throws(BenchError) -> MixerSceneResult {
        let mix = try SDLMixer.functions()
        chooseDriver(driver)
        guard let assets = assetsFolder else {
            throw .sdlMixer("Assets/ (its SFX and Music/gravity-wave-theme.ogg) is not found")
        }
        guard SDL_Init(Uint32(SDL_INIT_AUDIO)) == 0 else { throw .sdlMixer("SDL_Init: \(sdlError())") }
        defer { SDL_Quit() }
        _ = mix.Mix_Init(Int32(MIX_INIT_OGG.rawValue))
        defer { mix.Mix_Quit() }
        guard
            mix.Mix_OpenAudio(Int32(clamping: sampleRate), Uint16(AUDIO_S16SYS), 2, Int32(clamping: periodFrames)) == 0
        else {
            throw .sdlMixer("Mix_OpenAudio: \(sdlError())")
        }
        defer { mix.Mix_CloseAudio() }
        var result = MixerSceneResult()
        result.library = mappedMixer() ?? ""
        if let v = mix.Mix_Linked_Version()?.pointee { result.version = "\(v.major).\(v.minor).\(v.patch)" }
        result.driver = SDL_GetCurrentAudioDriver().map { String(cString: $0) } ?? "none"
        guard result.driver == driver.rawValue else {
            throw .sdlMixer("SDL chose the '\(result.driver)' audio driver, not '\(driver.rawValue)'")
        }

        var chunks: [UnsafeMutablePointer<Mix_Chunk>] = []
        defer { for chunk in chunks { mix.Mix_FreeChunk(chunk) } }
        for name in ["explosion", "laser", "pickup", "thrust-loop", "ui-click"] {
            guard let chunk = mix.Mix_LoadWAV(assets + "/SFX/\(name).wav") else {
                throw .sdlMixer("Mix_LoadWAV(\(name).wav): \(sdlError())")
            }
            _ = mix.Mix_VolumeChunk(chunk, effectVolume)
            chunks.append(chunk)
        }
        let click = ClickChunk(mix)
        defer { click.free() }
        guard let clickChunk = click.chunk else { throw .sdlMixer("Mix_QuickLoad_RAW: \(sdlError())") }
        guard let music = mix.Mix_LoadMUS(assets + "/Music/gravity-wave-theme.ogg") else {
            throw .sdlMixer("Mix_LoadMUS: \(sdlError())")
        }
        defer { mix.Mix_FreeMusic(music) }
        let clickChannel = Int32(clamping: effectChannels)
        guard mix.Mix_AllocateChannels(clickChannel + 1) == clickChannel + 1 else {
            throw .sdlMixer("Mix_AllocateChannels: \(sdlError())")
        }
        defer { _ = mix.Mix_HaltChannel(-1) }
        _ = mix.Mix_VolumeMusic(musicVolume)
        guard mix.Mix_PlayMusic(music, -1) == 0 else { throw .sdlMixer("Mix_PlayMusic: \(sdlError())") }
        defer { _ = mix.Mix_HaltMusic() }
        for channel in 0..<clickChannel {
            guard mix.Mix_PlayChannel(channel, chunks[Int(channel) % chunks.count], 0) == channel else {
                throw .sdlMixer("Mix_PlayChannel(\(channel)): \(sdlError())")
            }
        }

        let start = monotonicNanoseconds()
        let plan = LatencyClient.schedule(
            clicks: clicks, start: start + LatencyClient.leadNanoseconds, gaps: gaps, seed: seed)
        let end = plan.last.map { $0 + LatencyClient.tailNanoseconds } ?? start + (seconds * 1e9).saturated(Int.self)
        let cpuStart = ProcessUsage.cpuSeconds
        let frame = 16_666_667
        var next = 0
        while monotonicNanoseconds() < end {
            // The game loop: a frame, or the click when it is due first, then the ended one-shots again.
            let now = monotonicNanoseconds()
            if next < plan.count, plan[next] <= now + frame {
                sleepUntil(monotonicNanoseconds: plan[next])
                let at = monotonicNanoseconds()
                guard mix.Mix_PlayChannel(clickChannel, clickChunk, 0) == clickChannel else {
                    throw .sdlMixer("Mix_PlayChannel(click): \(sdlError())")
                }
                result.triggers.append(at)
                next += 1
            } else {
                sleepUntil(monotonicNanoseconds: min(now + frame, end))
            }
            for channel in 0..<clickChannel where mix.Mix_Playing(channel) == 0 {
                _ = mix.Mix_PlayChannel(channel, chunks[Int(channel) % chunks.count], 0)
                result.retriggers += 1
            }
        }
        result.cpuSeconds = ProcessUsage.cpuSeconds - cpuStart
        result.wallSeconds = Double(monotonicNanoseconds() - start) / 1e9
        return result
    }

    /// Has SDL open `driver` next; the disk driver writes to /dev/null at its own pace.
    static func chooseDriver(_ driver: MixerSceneDriver) {
        try? ProcessEnvironment.set("SDL_AUDIODRIVER", to: driver.rawValue)
        if driver == .disk {
            try? ProcessEnvironment.set("SDL_DISKAUDIOFILE", to: "/dev/null")
            try? ProcessEnvironment.set("SDL_DISKAUDIODELAY", to: nil)
        }
    }

    /// The real path of the SDL_mixer mapped into this process, from /proc/self/maps.
    static func mappedMixer() -> String? { mapped(libraryNamed: "libSDL2_mixer") }

    /// The real path of the first library mapped into this process whose file name starts with `prefix`.
    static func mapped(libraryNamed prefix: String) -> String? {
        guard
            let path = ProcessIdentity.mappedFiles.first(where: {
                $0.split(separator: "/").last?.hasPrefix(prefix) == true
            })
        else { return nil }
        return FilePaths.resolved(path) ?? path
    }

    /// The repository's Assets folder, looked for where the bundled theme is.
    static var assetsFolder: String? {
        guard let theme = StressScene.defaultMusicPath else { return nil }
        let folder = theme.split(separator: "/", omittingEmptySubsequences: false).dropLast(2).joined(separator: "/")
        return folder.isEmpty ? "." : folder
    }

    private static func sdlError() -> String { String(cString: SDL_GetError()) }

    /// The latency click (`LatencyClient.click`) as a 16-bit stereo chunk over memory the scene owns.
    private struct ClickChunk {
        let samples: UnsafeMutableBufferPointer<Int16>
        let chunk: UnsafeMutablePointer<Mix_Chunk>?
        let mix: ambience_sdl_mixer_functions

        init(_ mix: ambience_sdl_mixer_functions) {
            self.mix = mix
            let click = LatencyClient.click(sampleRate: MixerScene.sampleRate)
            let stereo = UnsafeMutableBufferPointer<Int16>.allocate(capacity: click.count * 2)
            for (i, v) in click.enumerated() {
                let sample = Int16((v * 32_767).rounded())
                stereo[2 * i] = sample
                stereo[2 * i + 1] = sample
            }
            samples = stereo
            let bytes = UnsafeMutableRawPointer(stereo.baseAddress!).assumingMemoryBound(to: Uint8.self)
            chunk = mix.Mix_QuickLoad_RAW(bytes, Uint32(clamping: stereo.count * MemoryLayout<Int16>.size))
        }

        func free() {
            if let chunk { mix.Mix_FreeChunk(chunk) }
            samples.deallocate()
        }
    }
}
