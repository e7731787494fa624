import Ambience
import AmbienceDecoding
import AmbiencePlatform
import Foundation

/// One test file per format, made by the reference encoders from the same music-like source (a sweep under pink
/// noise, 44.1 kHz stereo, so every format but Opus is resampled to 48 kHz on the way).
public enum FormatFiles {
    /// Format name, file extension, and the shell command that encodes `$1` (the WAV source) into `$2`.
    static let encoders: [(name: String, ext: String, command: String)] = [
        ("WAV", "wav", "cp \"$1\" \"$2\""),
        ("MP3", "mp3", "lame --quiet -b 192 \"$1\" \"$2\""),
        ("Ogg Vorbis", "ogg", "oggenc -Q -q 5 -o \"$2\" \"$1\""),
        ("FLAC", "flac", "flac -s -f -o \"$2\" \"$1\""),
        ("Opus", "opus", "opusenc --quiet --bitrate 128 \"$1\" \"$2\""),
        ("AAC (M4A)", "m4a", "ffmpeg -v error -y -i \"$1\" -c:a aac -b:a 192k -f mp4 \"$2\""),
        ("ALAC (M4A)", "alac.m4a", "ffmpeg -v error -y -i \"$1\" -c:a alac -f mp4 \"$2\"")
    ]

    /// Game music as games ship it, from the Debian packages `MusicFormatsTests` checks (pingus-data, ballz-data,
    /// openttd-openmsx): measured as they are, at their own lengths, since no encoder makes them from the source.
    static let shippedMusic: [(name: String, path: String)] = [
        ("Module (IT)", "/usr/share/games/pingus/data/music/gd-matth.it"),
        ("Module (XM)", "/usr/share/games/ballz/finalman-quickie.xm"),
        ("MIDI", "/usr/share/games/openttd/baseset/openmsx/train_filled_with_cash.mid")
    ]

    /// The shipped modules and MIDI files that are installed and that this engine plays (libopenmpt, libfluidsynth
    /// and a SoundFont present); the others are left out rather than failing the bench.
    public static func shipped() -> [File] {
        shippedMusic.compactMap { name, path in
            (try? AudioFile.info(path)) == nil ? nil : File(format: name, path: path)
        }
    }

    public struct File: Sendable {
        public var format: String
        public var path: String
    }

    /// Makes `copies` files of `seconds` each per format in `folder` (one subfolder per format, `<ext>/<n>.<ext>`).
    /// Each copy's source differs slightly (its own sweep), so no two files are the same bytes. Throws with the tool
    /// that failed.
    public static func make(seconds: Double, copies: Int = 1, in folder: String) throws -> [File] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var files: [File] = []
        let length = String(format: "%.2f", max(seconds, 0.1))
        for copy in 0..<max(copies, 1) {
            let source = "\(folder)/source-\(copy).wav"
            let top = 1760 + 10 * copy
            try shell("sox -q -n -r 44100 -c 2 -b 16 \"$1\" synth \(length) sine 110-\(top) pinknoise vol 0.3", source)
            for encoder in encoders {
                let sub = "\(folder)/\(encoder.ext)"
                try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: true)
                let path = "\(sub)/\(copy).\(encoder.ext)"
                try shell(encoder.command, source, path)
                files.append(File(format: encoder.name, path: path))
            }
            try? FileManager.default.removeItem(atPath: source)
        }
        return files
    }

    static func shell(_ command: String, _ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", command, "bash"] + arguments
        process.standardOutput = FileHandle.nullDevice
        do { try process.run() } catch { throw FormatBenchError.tool(command, "bash could not start") }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FormatBenchError.tool(command, "exit status \(process.terminationStatus)")
        }
    }
}

public enum FormatBenchError: Error, CustomStringConvertible {
    case tool(String, String)
    case decoding(DecodingError)

    public var description: String {
        switch self {
        case .tool(let command, let why):
            "\(command.split(separator: " ").first ?? ""): \(why) (the bench needs sox, lame, oggenc, flac, opusenc and ffmpeg)"
        case .decoding(let error): "\(error)"
        }
    }
}

/// The streaming cost of each format, Ambience beside SDL_mixer 2.6, on the same files in one run.
public struct FormatCostReport: Sendable {
    public struct Row: Sendable {
        public var format: String
        public var audioSeconds: Double
        /// CPU seconds per second of audio: decoded and resampled to 48 kHz.
        public var ambience: Double
        /// The same without the resampler: what decoding alone costs.
        public var ambienceDecodeOnly: Double
        /// `Mix_PlayMusic` to the end, less SDL_mixer mixing silence for as long; nil where it cannot play the format.
        public var sdlMixer: Double?
        /// SDL_mixer's cost including its mixer running (what the process pays).
        public var sdlMixerGross: Double?
        public var ratio: Double? { sdlMixer.map { $0 > 0 ? ambience / $0 : .infinity } }
    }

    public var rows: [Row] = []
    public var runs = 0
    public var seconds = 0.0
}

public enum FormatCosts {
    /// Makes the files in a temporary folder (deleted afterwards) and measures each format `runs` times, medians.
    public static func run(seconds: Double, runs: Int, isCancelled: () -> Bool = { false }) throws -> FormatCostReport {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ambience-format-bench-\(ProcessIdentity.current)"
        )
        .path
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let files = try FormatFiles.make(seconds: seconds, in: folder) + FormatFiles.shipped()
        var report = FormatCostReport(runs: runs, seconds: seconds)
        for file in files {
            if isCancelled() { break }
            var ours: [Double] = [], decodeOnly: [Double] = [], theirs: [Double] = [], gross: [Double] = []
            var audio = 0.0
            var playable = true
            for _ in 0..<runs {
                let full = try decode(file.path, resample: true)
                audio = full.audioSeconds
                ours.append(full.cpuSeconds / max(full.audioSeconds, 1e-9))
                let plain = try decode(file.path, resample: false)
                decodeOnly.append(plain.cpuSeconds / max(plain.audioSeconds, 1e-9))
                guard playable else { continue }
                guard let played = try SDLMixer.playMusic(file.path) else {
                    playable = false
                    continue
                }
                let idle = try SDLMixer.playMusic(nil, silenceSeconds: played.audioSeconds)
                let idleCPU = idle?.cpuSeconds ?? 0
                theirs.append(max(played.cpuSeconds - idleCPU, 0) / max(played.audioSeconds, 1e-9))
                gross.append(played.cpuSeconds / max(played.audioSeconds, 1e-9))
            }
            report.rows.append(
                FormatCostReport.Row(
                    format: file.format, audioSeconds: audio, ambience: median(ours),
                    ambienceDecodeOnly: median(decodeOnly),
                    sdlMixer: playable ? median(theirs) : nil, sdlMixerGross: playable ? median(gross) : nil))
        }
        return report
    }

    /// Opens and decodes the whole file in 4096-frame blocks (the music player's block), resampled to 48 kHz when
    /// `resample`; the process's CPU time for it.
    static func decode(_ path: String, resample: Bool) throws -> (cpuSeconds: Double, audioSeconds: Double) {
        let start = ProcessUsage.cpuSeconds
        do throws(DecodingError) {
            let opened = try AudioFile.open(path)
            let decoder: any AudioDecoder =
                resample && opened.info.sampleRate != 48_000 ? ResampledDecoder(opened, rate: 48_000) : opened
            let channels = decoder.info.channels
            var buffer = [Float](repeating: 0, count: 4096 * channels)
            var frames = 0
            while true {
                let got = try buffer.withUnsafeMutableBufferPointer { (pointer) throws(DecodingError) -> Int in
                    try decoder.read(into: pointer.baseAddress!, frames: 4096)
                }
                if got == 0 { break }
                frames += got
            }
            return (ProcessUsage.cpuSeconds - start, Double(frames) / Double(decoder.info.sampleRate))
        } catch {
            throw FormatBenchError.decoding(error)
        }
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
