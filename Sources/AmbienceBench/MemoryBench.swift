import Ambience
import AmbiencePlatform
import Foundation

/// The systems `bench --memory` measures.
public enum MemorySystem: String, CaseIterable, Sendable {
    case ambience
    case openal

    public var title: String { self == .ambience ? BenchSystem.ambience.title : BenchSystem.openal.title }
}

/// What `bench --memory` measures, and with what.
public struct MemoryOptions: Sendable {
    /// The crowd sizes measured: raw OpenAL Soft sets aside about 90 KiB per source, so 16,384 sources are already
    /// 1.4 GiB.
    public static let voiceCounts = 2...16_384
    /// Crowd sizes. Each is also run with one voice, the baseline it is measured against.
    public var voiceCounts: [Int] = [256, 1024, 4096, 10_000]
    /// Ambience mixes every voice for real up to this many, and `crowdRealVoices` in larger crowds (as `bench` does).
    public var allRealUpTo = 4096
    public var crowdRealVoices = 256
    /// Seconds of sound loaded (mono, 48 kHz float, one-second sounds) for the per-loaded-second figure.
    public var loadedSeconds = 60
    /// The `ambience` executable that runs each child (default: this one).
    public var executable = "/proc/self/exe"

    public init() {}
}

/// One child's figures: the scene with `voices` voices and `loadedSeconds` seconds of extra sound loaded, mixed for
/// one second.
public struct MemoryRow: Sendable {
    public var system: MemorySystem
    public var voices: Int
    /// Voices mixed for real (OpenAL sources): as asked, then as the child reports.
    public var realVoices: Int
    public var loadedSeconds: Int
    /// The child's peak resident set (`ru_maxrss`).
    public var peakBytes = 0
    /// Its resident set at the end, after glibc gave back its free memory.
    public var residentBytes = 0
    public var error: String? = nil
}

public struct MemoryReport: Sendable {
    public var rows: [MemoryRow] = []

    func row(_ system: MemorySystem, voices: Int, loadedSeconds: Int) -> MemoryRow? {
        rows.first {
            $0.system == system && $0.voices == voices && $0.loadedSeconds == loadedSeconds && $0.error == nil
        }
    }

    /// Peak bytes per 1,000 voices at `voices`: the crowd's peak less the one-voice baseline's, over the voices added.
    public func peakPerThousandVoices(_ system: MemorySystem, voices: Int) -> Double? {
        guard voices > 1, let crowd = row(system, voices: voices, loadedSeconds: 0),
            let base = row(system, voices: 1, loadedSeconds: 0)
        else { return nil }
        return Double(crowd.peakBytes - base.peakBytes) / Double(voices - 1) * 1000
    }

    /// Peak bytes per virtual voice in Ambience at `voices`: the crowd's peak less that of a crowd of as many voices as
    /// it mixes for real, all real, over the virtual voices; nil when the crowd has no virtual voice or that cell is
    /// not measured.
    public func peakPerVirtualVoice(voices: Int) -> Double? {
        guard let crowd = row(.ambience, voices: voices, loadedSeconds: 0), crowd.realVoices < voices,
            let allReal = row(.ambience, voices: crowd.realVoices, loadedSeconds: 0),
            allReal.realVoices == crowd.realVoices
        else { return nil }
        return Double(crowd.peakBytes - allReal.peakBytes) / Double(voices - crowd.realVoices)
    }

    /// Peak bytes per second of sound loaded: the loaded run's peak less the one-voice baseline's, per second, less
    /// the caller's own copy of the samples (a mono 48 kHz float second, `StressScene.loadedSecondBytes`), which the
    /// scene holds in both systems alike: what the library keeps.
    public func peakPerLoadedSecond(_ system: MemorySystem) -> Double? {
        guard let loaded = rows.first(where: { $0.system == system && $0.loadedSeconds > 0 && $0.error == nil }),
            let base = row(system, voices: 1, loadedSeconds: 0)
        else { return nil }
        return Double(loaded.peakBytes - base.peakBytes) / Double(loaded.loadedSeconds)
            - Double(StressScene.loadedSecondBytes)
    }
}

/// `ambience bench --memory`: each cell is a child process (`ambience bench --memory-client …`) that mixes the stress
/// scene for one second and reports its peak resident set, since a peak covers a process's whole life. Ambience and
/// raw OpenAL Soft run the same scene through the same code as `ambience bench`.
public enum MemoryBench {
    public static func run(_ options: MemoryOptions, progress: (String) -> Void = { _ in }, isCancelled: () -> Bool)
        throws(BenchError) -> MemoryReport
    {
        guard options.voiceCounts.allSatisfy({ MemoryOptions.voiceCounts.contains($0) }) else {
            throw .memory("voice counts must be from 2 to 16384")
        }
        guard (1...3600).contains(options.loadedSeconds) else {
            throw .memory("loaded seconds must be from 1 to 3600")
        }
        let cells = [(1, 0)] + options.voiceCounts.map { ($0, 0) } + [(1, options.loadedSeconds)]
        var report = MemoryReport()
        for (voices, loaded) in cells {
            for system in MemorySystem.allCases {
                if isCancelled() { return report }
                progress("\(system.title): \(voices) voices, \(loaded) s loaded")
                let real = system == .openal || voices <= options.allRealUpTo ? voices : options.crowdRealVoices
                var row = MemoryRow(system: system, voices: voices, realVoices: real, loadedSeconds: loaded)
                do {
                    let child = try ChildProcess.run(
                        options.executable,
                        [
                            "bench", "--memory-client", system.rawValue, "--voices", "\(voices)", "--real-voices",
                            "\(real)", "--loaded-seconds", "\(loaded)"
                        ], timeoutSeconds: 600)
                    if let failure = child.failure("the child", timeoutSeconds: 600) {
                        row.error = failure
                    } else if let (peak, resident, mixed) = MemoryBench.parse(child.output) {
                        row.peakBytes = peak
                        row.residentBytes = resident
                        row.realVoices = mixed
                    } else {
                        row.error = "the child printed something unexpected"
                    }
                } catch {
                    row.error = error.message
                }
                report.rows.append(row)
            }
        }
        return report
    }

    /// The child: mixes one second of the scene and returns the line the parent reads.
    public static func client(_ system: MemorySystem, voices: Int, realVoices: Int, loadedSeconds: Int)
        throws(BenchError) -> String
    {
        let scene = StressScene(voices: voices, loadedSeconds: loadedSeconds)
        let mixed: Int
        switch system {
        case .ambience:
            do {
                mixed =
                    try scene.run(StressOptions(seconds: 1, realVoices: realVoices, blockFrames: 1024, music: nil))
                    .realVoices
            } catch {
                throw .engine(error)
            }
        case .openal:
            mixed = try RawOpenAL.run(scene, seconds: 1).voicesMixed
        }
        return "peak \(ProcessUsage.peakRSSBytes) resident \(ProcessUsage.residentBytesAfterTrim) real \(mixed)"
    }

    /// Reads "peak P resident R real N".
    static func parse(_ output: String) -> (peak: Int, resident: Int, real: Int)? {
        let words = output.split(whereSeparator: \.isWhitespace)
        guard words.count == 6, words[0] == "peak", words[2] == "resident", words[4] == "real",
            let peak = Int(words[1]), let resident = Int(words[3]), let real = Int(words[5]), peak > 0, resident >= 0,
            real >= 0
        else { return nil }
        return (peak, resident, real)
    }
}
