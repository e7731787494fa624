import Ambience
import AmbienceBench
import AmbiencePlatform

extension BenchCommand {
    /// Writes the latency distributions (p50 to p99, and the max, per period and system) to `path` as SVG.
    static func writePlot(latency report: LatencyReport, to path: String) throws {
        let ranges = report.rows.compactMap { row in
            row.delay.map {
                SVGPlot.Range(
                    group: "\(row.periodFrames) frames", series: row.system.title, low: $0.p50, high: $0.p99,
                    top: $0.max)
            }
        }
        let server = report.server.isEmpty ? "" : " (\(report.server))"
        try write(
            SVGPlot(
                panels: [
                    .ranges(
                        title: "Trigger-to-sound latency at the sink's monitor\(server)", yLabel: "ms", ranges: ranges)
                ],
                caption: Machine.caption), to: path)
    }

    /// Writes the mixing cost against voices for each system (the varied-pitch scenes) to `path` as SVG.
    static func writePlot(cost report: BenchReport, to path: String) throws {
        let systems = BenchSystem.allCases.filter { s in
            report.scenes.contains { $0.measurement(s)?.error == nil && $0.measurement(s) != nil }
        }
        let lines = systems.map { system in
            SVGPlot.Line(
                name: system.title,
                points: report.scenes.filter { !$0.unitPitch }.compactMap { scene in
                    guard let m = scene.measurement(system), m.error == nil else { return nil }
                    return (Double(scene.voices), m.rtf * 100)
                })
        }
        // The real-set ratios where they ran: the like-for-like targets of the crowd scenes.
        let ratios = report.scenes.compactMap { scene -> String? in
            guard let raw = scene.ratio(ambienceOver: .openalRealSet) else { return nil }
            let alone = scene.ratio(ambienceOver: .ambienceRealSet).map { ", \(fixed($0, 2)) × its real set alone" }
            return "\(scene.title): \(fixed(raw, 2)) × raw OpenAL on its real set" + (alone ?? "")
        }
        try write(
            SVGPlot(
                panels: [
                    .lines(
                        title: "Mixing cost against voices (offline, 48 kHz, 1024-frame blocks)",
                        xLabel: "voices requested", yLabel: "% of one core", logX: true, lines: lines)
                ],
                caption: (ratios + [Machine.caption]).joined(separator: "; ")), to: path)
    }

    static func write(_ plot: SVGPlot, to path: String) throws {
        do { try AtomicFile.write(Array(plot.document().utf8), to: path) } catch {
            throw ToolFailure("\(path): cannot be written (\(error))")
        }
    }
}
