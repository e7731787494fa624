import Glibc

/// Charts for `ambience bench --plot`, written as SVG by hand: a line chart (cost against voices) and a range chart
/// (latency p50 to p99, and the max, per group and series).
public struct SVGPlot: Sendable {
    /// One series of a line chart: its name and points, drawn in order.
    public struct Line: Sendable {
        public var name: String
        public var points: [(x: Double, y: Double)]
        public init(name: String, points: [(x: Double, y: Double)]) { self.name = name; self.points = points }
    }

    /// One range of a range chart: a bar from `low` to `high` and a tick at `top`, in series `series` of group `group`.
    public struct Range: Sendable {
        public var group: String
        public var series: String
        public var low: Double
        public var high: Double
        public var top: Double
        public init(group: String, series: String, low: Double, high: Double, top: Double) {
            self.group = group; self.series = series; self.low = low; self.high = high; self.top = top
        }
    }

    public enum Panel: Sendable {
        /// x on a log2 scale when `logX`.
        case lines(title: String, xLabel: String, yLabel: String, logX: Bool, lines: [Line])
        case ranges(title: String, yLabel: String, ranges: [Range])
    }

    public var panels: [Panel]
    /// A line under the charts: machine, date, commit.
    public var caption: String

    public init(panels: [Panel], caption: String) {
        self.panels = panels
        self.caption = caption
    }

    static let width = 760.0, panelHeight = 320.0
    static let colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]

    /// The whole SVG document.
    public func document() -> String {
        let height = Double(panels.count) * Self.panelHeight + 30
        var svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        svg +=
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(n(Self.width))\" height=\"\(n(height))\" "
            + "viewBox=\"0 0 \(n(Self.width)) \(n(height))\" font-family=\"sans-serif\" font-size=\"12\">\n"
        svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        for (index, panel) in panels.enumerated() {
            svg += "<g transform=\"translate(0,\(n(Double(index) * Self.panelHeight)))\">\n"
            switch panel {
            case .lines(let title, let xLabel, let yLabel, let logX, let lines):
                svg += lineChart(title: title, xLabel: xLabel, yLabel: yLabel, logX: logX, lines: lines)
            case .ranges(let title, let yLabel, let ranges):
                svg += rangeChart(title: title, yLabel: yLabel, ranges: ranges)
            }
            svg += "</g>\n"
        }
        svg += text(x: 10, y: height - 10, caption, size: 11, fill: "#555")
        svg += "</svg>\n"
        return svg
    }

    // The plotting area inside a panel.
    static let left = 70.0, right = 170.0, top = 34.0, bottom = 50.0
    var plotWidth: Double { Self.width - Self.left - Self.right }
    var plotHeight: Double { Self.panelHeight - Self.top - Self.bottom }

    func lineChart(title: String, xLabel: String, yLabel: String, logX: Bool, lines: [Line]) -> String {
        let all = lines.flatMap(\.points).filter { $0.x.isFinite && $0.y.isFinite && (!logX || $0.x > 0) }
        var svg = frame(title: title, xLabel: xLabel, yLabel: yLabel)
        guard let minX = all.map(\.x).min(), let maxX = all.map(\.x).max() else { return svg }
        let fx: (Double) -> Double = logX ? { log2($0) } : { $0 }
        let (x0, x1) = (fx(minX), max(fx(maxX), fx(minX) + 1e-9))
        let yMax = niceCeiling(all.map(\.y).max() ?? 1)
        func px(_ x: Double) -> Double { Self.left + (fx(x) - x0) / (x1 - x0) * plotWidth }
        func py(_ y: Double) -> Double { Self.top + plotHeight - y / yMax * plotHeight }
        svg += yAxis(max: yMax)
        for x in Set(all.map(\.x)).sorted() {
            svg += text(x: px(x), y: Self.top + plotHeight + 16, n(x), anchor: "middle")
        }
        for (i, line) in lines.enumerated() {
            let colour = Self.colours[i % Self.colours.count]
            let points = line.points.filter { $0.x.isFinite && $0.y.isFinite && (!logX || $0.x > 0) }
            let path = points.map { "\(n(px($0.x))),\(n(py($0.y)))" }.joined(separator: " ")
            svg += "<polyline fill=\"none\" stroke=\"\(colour)\" stroke-width=\"2\" points=\"\(path)\"/>\n"
            for p in points {
                svg += "<circle cx=\"\(n(px(p.x)))\" cy=\"\(n(py(p.y)))\" r=\"3\" fill=\"\(colour)\"/>\n"
            }
            svg += legend(i, line.name)
        }
        return svg
    }

    func rangeChart(title: String, yLabel: String, ranges: [Range]) -> String {
        var svg = frame(title: title, xLabel: "", yLabel: yLabel)
        let kept = ranges.filter { $0.low.isFinite && $0.high.isFinite && $0.top.isFinite }
        guard !kept.isEmpty else { return svg }
        var groups: [String] = [], series: [String] = []
        for r in kept {
            if !groups.contains(r.group) { groups.append(r.group) }
            if !series.contains(r.series) { series.append(r.series) }
        }
        let yMax = niceCeiling(kept.map(\.top).max() ?? 1)
        func py(_ y: Double) -> Double { Self.top + plotHeight - max(y, 0) / yMax * plotHeight }
        svg += yAxis(max: yMax)
        let groupWidth = plotWidth / Double(groups.count)
        let barWidth = groupWidth * 0.8 / Double(series.count)
        for (g, group) in groups.enumerated() {
            let gx = Self.left + Double(g) * groupWidth
            svg += text(x: gx + groupWidth / 2, y: Self.top + plotHeight + 16, group, anchor: "middle")
            for (s, name) in series.enumerated() {
                guard let r = kept.first(where: { $0.group == group && $0.series == name }) else { continue }
                let colour = Self.colours[s % Self.colours.count]
                let x = gx + groupWidth * 0.1 + Double(s) * barWidth
                let (yLow, yHigh) = (py(r.low), py(r.high))
                svg +=
                    "<rect x=\"\(n(x + 1))\" y=\"\(n(yHigh))\" width=\"\(n(barWidth - 2))\" height=\"\(n(max(yLow - yHigh, 1)))\" "
                    + "fill=\"\(colour)\" fill-opacity=\"0.75\"/>\n"
                svg +=
                    "<line x1=\"\(n(x + 1))\" x2=\"\(n(x + barWidth - 1))\" y1=\"\(n(py(r.top)))\" y2=\"\(n(py(r.top)))\" "
                    + "stroke=\"\(colour)\" stroke-width=\"2\"/>\n"
            }
        }
        for (s, name) in series.enumerated() { svg += legend(s, name) }
        svg += text(
            x: Self.width - Self.right + 12, y: Self.top + Double(series.count) * 18 + 20,
            "bar: p50 to p99; line: max", size: 10, fill: "#555")
        return svg
    }

    func frame(title: String, xLabel: String, yLabel: String) -> String {
        var svg = text(x: Self.left, y: 20, title, size: 14, weight: "bold")
        svg +=
            "<line x1=\"\(n(Self.left))\" y1=\"\(n(Self.top + plotHeight))\" x2=\"\(n(Self.left + plotWidth))\" "
            + "y2=\"\(n(Self.top + plotHeight))\" stroke=\"black\"/>\n"
        svg +=
            "<line x1=\"\(n(Self.left))\" y1=\"\(n(Self.top))\" x2=\"\(n(Self.left))\" y2=\"\(n(Self.top + plotHeight))\" stroke=\"black\"/>\n"
        svg += text(x: Self.left + plotWidth / 2, y: Self.panelHeight - 14, xLabel, anchor: "middle")
        svg +=
            "<text x=\"16\" y=\"\(n(Self.top + plotHeight / 2))\" text-anchor=\"middle\" "
            + "transform=\"rotate(-90 16 \(n(Self.top + plotHeight / 2)))\">\(escaped(yLabel))</text>\n"
        return svg
    }

    func yAxis(max yMax: Double) -> String {
        var svg = ""
        for step in 0...4 {
            let value = yMax * Double(step) / 4
            let y = Self.top + plotHeight - Double(step) / 4 * plotHeight
            svg +=
                "<line x1=\"\(n(Self.left))\" x2=\"\(n(Self.left + plotWidth))\" y1=\"\(n(y))\" y2=\"\(n(y))\" stroke=\"#ddd\"/>\n"
            svg += text(x: Self.left - 6, y: y + 4, n(value), anchor: "end")
        }
        return svg
    }

    func legend(_ index: Int, _ name: String) -> String {
        let y = Self.top + Double(index) * 18
        let x = Self.width - Self.right + 12
        return
            "<rect x=\"\(n(x))\" y=\"\(n(y))\" width=\"12\" height=\"12\" fill=\"\(Self.colours[index % Self.colours.count])\"/>\n"
            + text(x: x + 18, y: y + 10, name)
    }

    func text(
        x: Double, y: Double, _ content: String, size: Int = 12, anchor: String = "start", weight: String = "normal",
        fill: String = "black"
    ) -> String {
        "<text x=\"\(n(x))\" y=\"\(n(y))\" font-size=\"\(size)\" text-anchor=\"\(anchor)\" font-weight=\"\(weight)\" "
            + "fill=\"\(fill)\">\(escaped(content))</text>\n"
    }

    /// A number for an attribute or a label: at most three decimals, no exponent.
    func n(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        // Held within a range Int holds after scaling: a label past it says nothing more.
        let scaled = (min(max(value, -1e12), 1e12) * 1000).rounded()
        if scaled == (scaled / 1000).rounded() * 1000 { return String(Int(scaled / 1000)) }
        var text = String(Int(abs(scaled)) / 1000) + "." + String(String(Int(abs(scaled)) % 1000 + 1000).dropFirst())
        while text.hasSuffix("0") { text.removeLast() }
        return (scaled < 0 ? "-" : "") + text
    }

    /// The next 1, 2 or 5 times a power of ten at or above `value`.
    func niceCeiling(_ value: Double) -> Double {
        guard value.isFinite, value > 0 else { return 1 }
        let power = pow(10, (log10(value)).rounded(.down))
        for step in [1.0, 2, 5, 10] where step * power >= value { return step * power }
        return 10 * power
    }

    func escaped(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}
