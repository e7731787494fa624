import Ambience
import AmbienceBench
import AmbiencePlatform
import Foundation

/// `ambience library bench --mixed N`: N ten-second files of each format (made by the reference encoders into a
/// temporary folder, deleted afterwards), each format scanned as a library of its own, then its loudness analysed:
/// the scan rate per format with and without loudness analysis.
struct LibraryFormatBench {
    let copies: Int

    func run(json: Bool) throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ambience-library-mixed-\(ProcessIdentity.current)"
        )
        .path
        try? FileManager.default.removeItem(atPath: base)
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let files = try FormatFiles.make(seconds: 10, copies: copies, in: base + "/music")
        var rows: [JSON] = []
        if !json {
            Output.print(
                "format        files  scan files/s  analysis files/s  analysis × real time  scan+analysis files/s")
        }
        var formats: [String] = []
        for file in files where !formats.contains(file.format) { formats.append(file.format) }
        for format in formats {
            try Interrupt.check()
            guard let first = files.first(where: { $0.format == format }) else { continue }
            let folder = (first.path as NSString).deletingLastPathComponent
            let library = try MediaLibrary(folders: [folder], databasePath: "\(base)/\(rows.count).sqlite")
            var clock = Stopwatch()
            let scan = try library.scan()
            let scanSeconds = clock.lap()
            let analysis = try library.analyzeLoudness()
            let analysisSeconds = clock.lap()
            let count = Double(scan.files)
            let scanRate = count / max(scanSeconds, 1e-9), analysisRate = count / max(analysisSeconds, 1e-9)
            let both = count / max(scanSeconds + analysisSeconds, 1e-9)
            let realTime = analysis.audioSeconds / max(analysisSeconds, 1e-9)
            let failed = scan.failed.count + analysis.failed.count
            rows.append(
                JSON.object([
                    ("format", .string(format)), ("files", .int(scan.files)), ("failed", .int(failed)),
                    ("scanFilesPerSecond", .double(scanRate)), ("analysisFilesPerSecond", .double(analysisRate)),
                    ("analysisTimesRealTime", .double(realTime)), ("scanAndAnalysisFilesPerSecond", .double(both))
                ]))
            if !json {
                let name = format.padding(toLength: 12, withPad: " ", startingAt: 0)
                Output.print(
                    "\(name)  \(scan.files)     \(String(format: "%.0f", scanRate))          \(String(format: "%.1f", analysisRate))             \(String(format: "%.0f", realTime))×                  \(String(format: "%.1f", both))"
                )
            }
        }
        if json { Output.print(JSON.object([("secondsPerFile", .double(10)), ("formats", .array(rows))]).text) }
    }
}
