import AmbiencePlatform
import Glibc

/// The effects' HDR window over a run (`--hdr-plot OUT.svg`): where its top stood and how many voices it culled,
/// frame by frame, with the explosions marked. docs/HDR.md shows one.
///
/// A time series of hundreds of points, drawn here rather than with the bench's `SVGPlot`: that one marks and labels
/// every point (made for a handful of voice counts), and the demo would have to link the bench, SDL_mixer and all.
public struct HDRPlot: Sendable {
    /// One frame's end.
    public struct Sample: Sendable, Equatable {
        /// Seconds of game time.
        public var time: Double
        /// The window's top, in the game's loudness scale (dB).
        public var top: Float
        /// Voices under the window that it culls.
        public var culled: Int

        /// One sample for this one and a later one: this one's time, the higher top and the more voices culled.
        func merged(with later: Sample) -> Sample {
            Sample(time: time, top: max(top, later.top), culled: max(culled, later.culled))
        }
    }

    /// The window over the run, in order: one sample a frame, until there are `mostSamples`. Then each pair is merged
    /// into one (the earlier time, the higher top, the more voices culled) and later frames are merged as many to a
    /// sample, so that an hour's run keeps a plot's worth of points and its peaks, not a point per frame.
    public private(set) var samples: [Sample] = []
    /// Seconds at which explosions started.
    public var explosions: [Double] = []
    /// The most samples kept: more points than the plot's width has pixels say nothing more.
    public static let mostSamples = 4_096
    /// Frames merged into each sample from now on: 1 until the first halving, then doubled at each.
    public private(set) var framesPerSample = 1
    /// The frames of the sample being merged, not yet in `samples`.
    private var pending: (sample: Sample, frames: Int)?

    public init() {}

    /// Adds the window at the end of a frame.
    public mutating func record(_ sample: Sample) {
        let merged = pending.map { ($0.sample.merged(with: sample), $0.frames + 1) } ?? (sample, 1)
        guard merged.1 >= framesPerSample else {
            pending = merged
            return
        }
        pending = nil
        samples.append(merged.0)
        guard samples.count >= Self.mostSamples else { return }
        samples = stride(from: 0, to: samples.count, by: 2).map { index in
            index + 1 < samples.count ? samples[index].merged(with: samples[index + 1]) : samples[index]
        }
        framesPerSample *= 2
    }

    static let width = 760.0, panelHeight = 230.0, left = 60.0, right = 20.0, top = 30.0, bottom = 40.0

    /// The whole SVG document: the top over time above, the culled voices below.
    public func document() -> String {
        let samples = samples + (pending.map { [$0.sample] } ?? [])
        let endTime = max(samples.last?.time ?? 1, 1)
        // Scales of whole multiples of 20 dB and 4 voices, so that the five grid lines fall on round labels.
        let topMax = 20 * (Double(max(samples.map(\.top).max() ?? 0, 20)) / 20).rounded(.up)
        let culledMax = 4 * (Double(max(samples.map(\.culled).max() ?? 0, 4)) / 4).rounded(.up)
        var svg =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"760\" "
            + "height=\"\(Int(2 * Self.panelHeight))\" font-family=\"sans-serif\" font-size=\"12\">\n"
            + "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        let loudness = Int(GameAudio.explosionLoudness)
        svg += panel(
            at: 0, title: "Gravity Wave: the effects' HDR window top, dB (explosions dashed, +\(loudness) dB)",
            yMax: topMax, endTime: endTime, values: samples.map { ($0.time, Double($0.top)) }, colour: "#1f77b4")
        svg += panel(
            at: Self.panelHeight, title: "Voices culled by the window", yMax: culledMax, endTime: endTime,
            values: samples.map { ($0.time, Double($0.culled)) }, colour: "#d62728")
        return svg + "</svg>\n"
    }

    /// Writes the document to `path` through a temporary file.
    func write(to path: String) throws(AtomicFileError) {
        try AtomicFile.write(Array(document().utf8), to: path)
    }

    private func panel(
        at y0: Double, title: String, yMax: Double, endTime: Double, values: [(Double, Double)], colour: String
    ) -> String {
        let plotWidth = Self.width - Self.left - Self.right, plotHeight = Self.panelHeight - Self.top - Self.bottom
        func px(_ t: Double) -> String { f(Self.left + t / endTime * plotWidth) }
        func py(_ v: Double) -> String { f(y0 + Self.top + plotHeight - min(max(v, 0), yMax) / yMax * plotHeight) }
        var svg = "<text x=\"\(f(Self.left))\" y=\"\(f(y0 + 20))\" font-weight=\"bold\">\(title)</text>\n"
        for step in 0...4 {
            let value = yMax * Double(step) / 4
            svg +=
                "<line x1=\"\(f(Self.left))\" x2=\"\(f(Self.left + plotWidth))\" y1=\"\(py(value))\" y2=\"\(py(value))\" "
                + "stroke=\"#ddd\"/><text x=\"\(f(Self.left - 6))\" y=\"\(py(value))\" text-anchor=\"end\">"
                + "\(f(value))</text>\n"
        }
        // A label a second, or ten in all over a long run (an hour's plot with 3,600 labels says nothing).
        let lastSecond = endTime.saturated(Int.self, rounding: .down)
        for second in stride(from: 0, through: lastSecond, by: max(1, lastSecond / 10)) {
            svg +=
                "<text x=\"\(px(Double(second)))\" y=\"\(f(y0 + Self.top + plotHeight + 16))\" "
                + "text-anchor=\"middle\">\(second) s</text>\n"
        }
        for time in explosions {
            svg +=
                "<line x1=\"\(px(time))\" x2=\"\(px(time))\" y1=\"\(py(yMax))\" y2=\"\(py(0))\" stroke=\"#ff7f0e\" "
                + "stroke-dasharray=\"4 3\"/>\n"
        }
        let points = values.map { "\(px($0.0)),\(py($0.1))" }.joined(separator: " ")
        svg += "<polyline fill=\"none\" stroke=\"\(colour)\" stroke-width=\"1.5\" points=\"\(points)\"/>\n"
        return svg
    }

    /// A coordinate or a label: two decimals at most, 0 for anything not finite.
    private func f(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let hundredths = Int((min(max(value, -1e9), 1e9) * 100).rounded())
        let whole = String(abs(hundredths) / 100), part = abs(hundredths) % 100
        return (hundredths < 0 ? "-" : "") + whole + (part == 0 ? "" : "." + String(100 + part).dropFirst())
    }
}
