import Testing

@testable import GravityWaveCore

/// The HDR plot's samples over a run of any length: a point a frame while they fit, then merged pairs that keep the
/// peaks, so that a long run's plot stays the same size.
@Suite struct HDRPlotTests {
    @Test func aShortRunKeepsAPointAFrame() {
        var plot = HDRPlot()
        for frame in 0..<600 { plot.record(.init(time: Double(frame) / 60, top: Float(frame % 7), culled: frame % 3)) }
        #expect(plot.samples.count == 600)
        #expect(plot.framesPerSample == 1)
        #expect(plot.samples[7] == .init(time: 7.0 / 60, top: 0, culled: 1))
    }

    /// A run of 28 minutes at 60 frames a second (100,000 frames): at most `mostSamples` points, in time order, the
    /// first frame's time first, and the one loud frame and the one crowded frame still there.
    @Test func aLongRunStaysBoundedAndKeepsItsPeaks() throws {
        var plot = HDRPlot()
        let frames = 100_000
        for frame in 0..<frames {
            plot.record(
                .init(
                    time: Double(frame) / 60, top: frame == 61_234 ? 42 : 3,
                    culled: frame == 77_777 ? 50 : frame % 2))
        }
        #expect(plot.samples.count < HDRPlot.mostSamples)
        #expect(plot.samples.count > HDRPlot.mostSamples / 4)
        #expect(plot.framesPerSample == 32, "100,000 frames halved five times: \(plot.framesPerSample)")
        #expect(plot.samples.first?.time == 0)
        #expect(zip(plot.samples, plot.samples.dropFirst()).allSatisfy { $0.time < $1.time })
        #expect(plot.samples.map(\.top).max() == 42)
        #expect(plot.samples.filter { $0.top == 42 }.count == 1)
        #expect(plot.samples.map(\.culled).max() == 50)
        let loud = try #require(plot.samples.last { $0.top == 42 })
        #expect(loud.time <= 61_234.0 / 60 && loud.time > 61_234.0 / 60 - 32.0 / 60)
        // The frames not yet merged into a sample still reach the drawing.
        let svg = plot.document()
        let points = svg.components(separatedBy: "points=\"")[1].prefix { $0 != "\"" }.split(separator: " ")
        #expect(points.count == plot.samples.count + (frames % 32 == 0 ? 0 : 1))
    }
}
