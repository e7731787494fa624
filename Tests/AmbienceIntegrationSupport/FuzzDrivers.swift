// What each fuzz target does with one input. Shared by the libFuzzer binary (Tests/Fuzz/run.sh compiles this file
// with Tests/Fuzz/Main.swift) and by the test suite, which replays every input in Tests/Fuzz/regressions/ through
// the same code (FuzzRegressionTests). A driver returns the invariants the input broke; surviving is the rest.

import CAmbience
import Foundation
import Glibc
import Synchronization

@testable import Ambience
@testable import AmbienceC
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceLibrary
@testable import AmbienceTool

enum FuzzTarget: String, CaseIterable, Sendable {
    /// The decoding path of one format: sniffing, tags, integrity checks, reading to the end, seeking.
    case wav, ogg, mp3
    case flac
    case opus
    /// AAC and ALAC in MP4 through FFmpeg: box parsing, the edit list, tags and the cover, decoding, seeking.
    case mp4
    /// FLAC picture blocks, MIME sniffing, and the cover through its header check and SDL2_image.
    case picture
    /// Tracker modules through libopenmpt: the probe, loading, the length count, tags, reading, seeking.
    case module
    /// MIDI: `StandardMIDIFile`'s checks, then libfluidsynth with TimGM6mb on what they let through.
    case midi
    /// The `ambience render --sfx` parser.
    case sfx
    /// The library's playlist parser.
    case m3u
    /// Any bytes through detection, decoding, resampling, `info`'s text and JSON, and a few offline blocks as a
    /// sound and as streamed music.
    case pipeline
    /// A byte string read as a sequence of C API calls with arbitrary arguments, on an offline engine.
    case capi
    /// Loudness tag text (`KEY=value` lines) through `LoudnessTags`, the one gain parser, and the gain decision.
    case loudness
    /// Any bytes as one D-Bus message, through the connection's checks, the MPRIS server and the client's signal
    /// handlers (BusFuzzDriver.swift).
    case bus

    /// Runs one input; the result lists what went wrong without a crash (empty: nothing).
    func run(_ bytes: [UInt8]) -> [String] {
        switch self {
        case .wav, .ogg, .mp3: return FuzzDrivers.decode(bytes)
        case .flac, .opus, .mp4, .module: return FuzzDrivers.decode(bytes)
        case .midi: return FuzzDrivers.midi(bytes)
        case .picture: return FuzzDrivers.picture(bytes)
        case .sfx:
            _ = try? SFXCue(parsing: String(decoding: bytes, as: UTF8.self))
            return []
        case .m3u: return FuzzDrivers.playlist(bytes)
        case .pipeline: return FuzzDrivers.pipeline(bytes)
        case .capi:
            var program = CAPIProgram(bytes)
            return program.run()
        case .loudness: return FuzzDrivers.loudness(bytes)
        case .bus: return FuzzDrivers.bus(bytes)
        }
    }
}

enum FuzzDrivers {
    /// Lines of `KEY=value` as a tag reader hands them over: whatever parses must be finite and within the stated
    /// limits, and every mode's gain must be finite, positive and keep the known peak within the ceiling.
    static func loudness(_ bytes: [UInt8]) -> [String] {
        let lines = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == "\n" })
        let entries = lines.map { line -> (key: String, value: String) in
            let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
        var problems: [String] = []
        guard let found = LoudnessTags.measurement(from: entries) else { return [] }
        for loudness in [found.trackLoudness, found.albumLoudness].compactMap({ $0 })
        where !loudness.isFinite || abs(loudness) > 90 {
            problems.append("loudness \(loudness) LUFS out of range")
        }
        for peak in [found.trackPeak, found.albumPeak].compactMap({ $0 }) where !LoudnessTags.peaks.contains(peak) {
            problems.append("peak \(peak) out of range")
        }
        for mode in LoudnessMatching.allCases {
            for neighbour in [false, true] {
                let decision = LoudnessGain.decide(tags: found, analysis: nil, mode: mode, albumNeighbour: neighbour)
                if !decision.gain.isFinite || decision.gain <= 0 { problems.append("\(mode): gain \(decision.gain)") }
                let peak = [found.trackPeak, found.albumPeak].compactMap { $0 }.max() ?? 0
                if decision.basis == .album, peak * Double(decision.gain) > LoudnessGain.ceiling * (1 + 1e-6) {
                    problems.append("\(mode): peak \(peak) × gain \(decision.gain) over the ceiling")
                }
            }
        }
        return problems
    }

    /// A file of this process's own for the input's bytes (decoders and the engine read paths). A new name per input,
    /// so the engine's sound cache, which keys on the path, never answers from an earlier input.
    static func scratchFile(_ bytes: [UInt8]) -> String? {
        let serial = scratchFiles.add(1, ordering: .relaxed).newValue
        let path = NSTemporaryDirectory() + "/ambience-fuzz-\(getpid())-\(serial).bin"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        return written == bytes.count ? path : nil
    }

    /// Reads the stream in blocks to its end (or `limit` frames), checking each sample; returns the frames read.
    static func readAll(_ decoder: any AudioDecoder, limit: Int64 = .max, problems: inout [String]) -> Int64 {
        let channels = decoder.info.channels
        guard channels > 0 else { problems.append("a decoder opened with \(channels) channels"); return 0 }
        var buffer = [Float](repeating: 0, count: 1024 * channels)
        var total: Int64 = 0
        while total < limit {
            let got: Int
            do {
                got = try buffer.withUnsafeMutableBufferPointer { (p) throws(DecodingError) -> Int in
                    try decoder.read(into: p.baseAddress!, frames: 1024)
                }
            } catch {
                break
            }
            guard got > 0 else { break }
            guard got <= 1024 else { problems.append("read gave \(got) frames for 1024 asked"); break }
            if buffer[0..<got * channels].contains(where: { !$0.isFinite }) {
                problems.append("a decoded sample is not finite")
            }
            total += Int64(got)
        }
        return total
    }

    static func decode(_ bytes: [UInt8]) -> [String] {
        guard let path = scratchFile(bytes) else { return [] }
        defer { unlink(path) }
        guard let decoder = try? AudioFile.open(path) else { return [] }
        var problems: [String] = []
        let info = decoder.info
        if !AudioInfo.sampleRates.contains(info.sampleRate) {
            problems.append("sample rate \(info.sampleRate) Hz was accepted")
        }
        if !(1...AudioInfo.maximumChannels).contains(info.channels) {
            problems.append("\(info.channels) channels were accepted")
        }
        let frames = readAll(decoder, problems: &problems)
        if frames > info.frames { problems.append("\(frames) frames decoded of \(info.frames) claimed") }
        try? decoder.seek(toFrame: info.frames / 2)
        _ = readAll(decoder, problems: &problems)
        return problems
    }

    /// A MIDI file the checks accept must have a finite, non-negative length within their limit and its tags within
    /// theirs; one of at most a minute is then decoded whole with the small SoundFont, and must not decode past its stated length.
    static func midi(_ bytes: [UInt8]) -> [String] {
        guard let file = try? StandardMIDIFile(bytes) else { return [] }
        var problems: [String] = []
        let duration = file.duration
        if !(duration.isFinite && duration >= 0 && duration <= StandardMIDIFile.maximumSeconds) {
            problems.append("a length of \(duration) s was accepted")
        }
        if file.tempos.contains(where: { $0.microsecondsPerQuarter <= 0 }) {
            problems.append("a tempo of 0 was accepted")
        }
        // Tags within their bounds: 1024 bytes of the file a text (2 bytes each once Latin-1 is UTF-8), 16 texts.
        let texts = [file.text.name, file.text.copyright].compactMap { $0 } + file.text.texts
        if file.text.texts.count > MetaText.maximumEvents
            || texts.contains(where: { $0.utf8.count > 2 * MetaText.maximumBytes })
        {
            problems.append("tags past their bounds: \(file.text.texts.count) texts")
        }
        guard duration <= 60, let path = scratchFile(bytes) else { return problems }
        defer { unlink(path) }
        var options = DecoderOptions()
        options.soundFont = "/usr/share/sounds/sf2/TimGM6mb.sf2"
        guard let decoder = try? AudioFile.open(path, options: options) else { return problems }
        let frames = readAll(decoder, problems: &problems)
        if frames > decoder.info.frames {
            problems.append("\(frames) frames decoded of \(decoder.info.frames) claimed")
        }
        return problems
    }

    static func picture(_ bytes: [UInt8]) -> [String] {
        if let (picture, _) = EmbeddedPicture.parseFLACPictureBlock(bytes) {
            _ = EmbeddedPicture.sniffMIMEType(picture.data)
        }
        _ = EmbeddedPicture.sniffMIMEType(bytes)
        // The cover as the library treats it: header first, then SDL2_image, then one small scaled copy.
        guard let artwork = try? MediaItemArtwork(data: bytes, source: .embedded(mimeType: "image/png"), name: "fuzz")
        else { return [] }
        var problems: [String] = []
        let pixels = artwork.bounds.width.multipliedReportingOverflow(by: artwork.bounds.height)
        if pixels.overflow || pixels.partialValue > MediaItemArtwork.maximumPixels {
            problems.append("a \(artwork.bounds.width)×\(artwork.bounds.height) picture was decoded")
        }
        if let image = artwork.image(size: ArtworkSize(width: 8, height: 8)), image.pixels.count != 8 * 8 * 4 {
            problems.append("an 8×8 image has \(image.pixels.count) bytes")
        }
        return problems
    }

    /// The library's playlist parser, as `.m3u` (Latin-1 fallback) and as `.m3u8`, with roots that exercise
    /// "inside", "outside" and the whole file system. Every entry it accepts must be normalized and inside a root.
    static func playlist(_ bytes: [UInt8]) -> [String] {
        let roots: [[UInt8]] = [Array("/music".utf8), Array("/".utf8)]
        var problems: [String] = []
        for isUTF8Playlist in [false, true] {
            var parsed = PlaylistFile.Parsed(name: "fuzz")
            PlaylistFile.parse(
                bytes, folder: Array("/music/lists".utf8), isUTF8Playlist: isUTF8Playlist,
                roots: roots, into: &parsed)
            for entry in parsed.entries {
                if entry.path != RawPath.normalized(entry.path) { problems.append("entry not normalized") }
                if !roots.contains(where: { RawPath.isInside(entry.path, $0) }) {
                    problems.append("entry outside every root")
                }
                if entry.line < 1 { problems.append("entry without a line") }
            }
        }
        return problems
    }

    /// The engine the pipeline target renders with: one for the process, offline, with a small cache budget so
    /// that large claims meet the budget's refusal rather than memory's end.
    static let engine: AudioEngine? = {
        var configuration = EngineConfiguration.offline(sampleRate: 44_100, realVoices: 16)
        configuration.blockFrames = 256
        configuration.soundMemoryBudget = 64 << 20
        return try? AudioEngine(configuration)
    }()

    static func pipeline(_ bytes: [UInt8]) -> [String] {
        guard let path = scratchFile(bytes) else { return [] }
        defer { unlink(path) }
        var problems: [String] = []
        // `info`, as the command prints it.
        if let info = try? AudioFile.info(path) {
            _ = InfoCommand.lines(path: path, info)
            let json = InfoCommand.describe(info).text
            if (try? JSONSerialization.jsonObject(with: Data(json.utf8))) == nil {
                problems.append("info's JSON does not parse: \(json)")
            }
        }
        // Decoded at its own rate, then resampled to the engine's, as the music player does. A 1 Hz file claims hours
        // at 48 kHz, which the player would stream in real time: the harness reads the first million frames, then
        // seeks to the middle and reads on.
        if let decoder = try? AudioFile.open(path) {
            let resampled = ResampledDecoder(decoder, rate: decoder.info.sampleRate == 48_000 ? 44_100 : 48_000)
            _ = readAll(resampled, limit: 1 << 20, problems: &problems)
            try? resampled.seek(toFrame: resampled.info.frames / 2)
            _ = readAll(resampled, limit: 1 << 16, problems: &problems)
        }
        // Through the engine: a sound played in a few blocks, then the same file streamed as music.
        guard let engine else { return problems + ["no offline engine"] }
        if let sound = try? engine.load(path) {
            engine.play(sound, PlayOptions(gain: 0.5, pitch: 1.5, placement: .world(x: 1, y: 0, z: -1)))
            problems += renderedProblems(engine, seconds: 0.02)
            engine.unload(sound)
        }
        if (try? engine.musicPlayer.setQueue(paths: [path])) != nil {
            engine.musicPlayer.play()
            problems += renderedProblems(engine, seconds: 0.05)
            try? engine.musicPlayer.seek(to: 1e9)
            problems += renderedProblems(engine, seconds: 0.02)
            engine.musicPlayer.stop()
        }
        _ = engine.update()
        return problems
    }

    static func renderedProblems(_ engine: AudioEngine, seconds: Double) -> [String] {
        guard let mix = try? engine.render(seconds: seconds) else { return ["an offline render failed"] }
        return mix.samples.allSatisfy(\.isFinite) ? [] : ["the mix holds a sample that is not finite"]
    }
}

/// Numbers scratch files apart.
private let scratchFiles = Atomic<Int>(0)

/// A byte string read as C API calls: each call is an opcode byte followed by the bytes of its arguments, taken raw,
/// so floats are as often NaN, infinite or huge as ordinary. Handles come from earlier calls, or are garbage.
struct CAPIProgram {
    private var bytes: [UInt8]
    private var at = 0
    /// What the last run did, so a kept input can be shown to still reach what it was kept for.
    private(set) var soundsMade = 0
    private(set) var voicesStarted = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    private mutating func byte() -> UInt8 {
        defer { at += 1 }
        return at < bytes.count ? bytes[at] : 0
    }
    private mutating func u32() -> UInt32 { (0..<4).reduce(0) { value, _ in value << 8 | UInt32(byte()) } }
    private mutating func u64() -> UInt64 { UInt64(u32()) << 32 | UInt64(u32()) }
    private mutating func float() -> Float { Float(bitPattern: u32()) }
    private mutating func double() -> Double { Double(bitPattern: u64()) }

    /// Runs the calls; returns what broke the API's rules (a status out of range, a sample that is not finite).
    mutating func run() -> [String] {
        var problems: [String] = []
        func check(_ status: ambience_status, _ call: String) {
            if status.rawValue > AMBIENCE_ERROR_LIBRARY.rawValue {
                problems.append("\(call) gave status \(status.rawValue)")
            }
        }
        var config = ambience_engine_config()
        ambience_engine_config_init(&config)
        config.output = AMBIENCE_OUTPUT_OFFLINE
        config.sample_rate = 8000 + Int32(byte()) * 100
        config.real_voices = 1 + Int32(byte() % 32)
        config.block_frames = 16 << Int32(byte() % 6)
        var engine: OpaquePointer?
        guard ambience_engine_create(&config, &engine) == AMBIENCE_OK, let engine else { return ["no offline engine"] }
        defer { ambience_engine_destroy(engine) }
        let samples: [Float] = (0..<400).map { sin(Float($0) * 0.3) * 0.5 }
        var sounds: [OpaquePointer?] = [nil]
        var voices: [UInt64] = [AMBIENCE_VOICE_NONE]
        var buses: [OpaquePointer?] = [nil]
        for which in [AMBIENCE_BUS_MASTER, AMBIENCE_BUS_SFX, AMBIENCE_BUS_MUSIC] {
            var bus: OpaquePointer?
            check(ambience_bus_get(engine, which, &bus), "bus_get")
            buses.append(bus)
        }
        var block = [Float](repeating: 0, count: 2 * 512)
        var calls = 0
        while at < bytes.count, calls < 256 {
            calls += 1
            let op = byte()
            let sound = sounds[Int(byte()) % sounds.count]
            let voiceByte = byte()  // high bit: a raw 64-bit value follows; else an earlier voice by index
            let voice = voiceByte & 0x80 != 0 ? u64() : voices[Int(voiceByte) % voices.count]
            let bus = buses[Int(byte()) % buses.count]
            switch op % 24 {
            case 0:
                var made: OpaquePointer?
                let channels = 1 + Int(byte() % 9)  // 9 is one too many
                let frames = Int(byte()) % (samples.count / channels + 1)
                let rate = Int32(bitPattern: u32())
                let status = samples.withUnsafeBufferPointer { p in
                    ambience_sound_create_pcm(engine, "fuzz", p.baseAddress, frames, Int32(channels), rate, &made)
                }
                check(status, "sound_create_pcm")
                if status == AMBIENCE_OK { sounds.append(made); soundsMade += 1 }
            case 1:
                var options = ambience_play_options()
                ambience_play_options_init(&options)
                options.gain = float(); options.pitch = float(); options.loop = byte() & 1 != 0
                options.priority = Int32(bitPattern: u32()); options.placement = ambience_placement(UInt32(byte() % 3))
                options.pan = float(); options.position = (float(), float(), float()); options.fade_in = double()
                options.bus = bus
                var started: UInt64 = 0
                check(ambience_play(sound.map { $0 }, &options, &started), "play")
                voices.append(started)
                if started != AMBIENCE_VOICE_NONE { voicesStarted += 1 }
            case 2: check(AmbienceC.ambience_voice_stop(voice, double()), "voice_stop")
            case 3: check(AmbienceC.ambience_voice_pause(voice), "voice_pause")
            case 4: check(AmbienceC.ambience_voice_resume(voice), "voice_resume")
            case 5:
                // Numbers are checked before the voice: NaN and infinities are refused whatever the voice's state.
                let gain = float()
                let status = AmbienceC.ambience_voice_set_gain(voice, gain)
                check(status, "voice_set_gain")
                if !gain.isFinite && status != AMBIENCE_ERROR_INVALID_ARGUMENT {
                    problems.append("voice_set_gain(\(voice), \(gain)) gave \(status.rawValue), not INVALID_ARGUMENT")
                }
            case 6: check(AmbienceC.ambience_voice_set_pitch(voice, float()), "voice_set_pitch")
            case 7: check(AmbienceC.ambience_voice_set_pan(voice, float()), "voice_set_pan")
            case 8: check(AmbienceC.ambience_voice_set_position(voice, float(), float(), float()), "voice_set_position")
            case 9: check(AmbienceC.ambience_voice_set_velocity(voice, float(), float(), float()), "voice_set_velocity")
            case 10: check(AmbienceC.ambience_voice_fade(voice, float(), double()), "voice_fade")
            case 11: check(AmbienceC.ambience_voice_set_occlusion(voice, float()), "voice_set_occlusion")
            case 12:
                var elapsed = 0.0
                check(AmbienceC.ambience_voice_get_elapsed(voice, &elapsed), "voice_get_elapsed")
            case 13: check(ambience_listener_set_position(engine, float(), float(), float()), "listener_set_position")
            case 14:
                var listener = ambience_listener()
                check(ambience_listener_get(engine, &listener), "listener_get")
                listener.velocity = (float(), float(), float()); listener.rolloff = float()
                listener.reference_distance = float(); listener.doppler_factor = float()
                check(ambience_listener_set(engine, &listener), "listener_set")
            case 15: check(ambience_bus_set_gain(bus, float()), "bus_set_gain")
            case 16: check(ambience_bus_fade(bus, float(), double()), "bus_fade")
            case 17: check(ambience_bus_set_muted(bus, byte() & 1 != 0), "bus_set_muted")
            case 18:
                var made: OpaquePointer?
                check(ambience_bus_create(engine, "fuzz", bus, &made), "bus_create")
                if made != nil { buses.append(made) }
            case 19:
                check(
                    ambience_ducking_add(engine, bus, buses[Int(byte()) % buses.count], float(), double(), double()),
                    "ducking_add")
            case 20: check(ambience_bus_set_reverb(bus, ambience_reverb_preset(u32() % 7)), "bus_set_reverb")
            case 21:
                check(ambience_sound_unload(sound), "sound_unload")
            case 22: check(ambience_music_set_volume(engine, float()), "music_set_volume")
            default:
                let frames = Int(byte()) * 2 % 513
                check(ambience_render(engine, &block, frames), "render")
                if block[0..<frames * 2].contains(where: { !$0.isFinite }) {
                    problems.append("a rendered sample is not finite")
                }
                check(ambience_update(engine), "update")
            }
        }
        check(ambience_render(engine, &block, 512), "render")
        if block.contains(where: { !$0.isFinite }) { problems.append("a rendered sample is not finite") }
        return problems
    }
}
