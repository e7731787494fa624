import Foundation
import FoundationXML
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceBench
@testable import AmbienceCore
@testable import AmbienceIntegrationSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport
@testable import AmbienceTool

// The pure parts of `bench --latency` and the plots, and one short run on the private server. No timing threshold:
// the delays themselves are the command's business.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5)), .serialized) struct LatencyBenchTests {
    @Test func percentilesAreNearestRank() throws {
        let p = try #require(Percentiles((1...200).map(Double.init).reversed()))
        #expect(p.count == 200 && p.p50 == 100 && p.p99 == 198 && p.max == 200)
        let one = try #require(Percentiles([7]))
        #expect(one.p50 == 7 && one.p99 == 7 && one.max == 7)
        #expect(Percentiles([]) == nil)
        #expect(Percentiles([.nan, .infinity]) == nil)
        #expect(Percentiles([3, .nan, 1, 2])?.count == 3)
    }

    @Test func renderTimeHistogramQuantiles() {
        #expect(RenderTimes.bucket(microseconds: 0) == 0)
        #expect(RenderTimes.bucket(microseconds: 999) == 999)
        #expect(RenderTimes.bucket(microseconds: 1_000) == 1_000)
        #expect(RenderTimes.bucket(microseconds: 2_345) == 1_134)
        #expect(RenderTimes.bucket(microseconds: 50_000) == 2_300)
        #expect(RenderTimes.bucket(microseconds: 10_000_000) == RenderTimes.bucketCount - 1)
        let times = RenderTimes()
        for us in 1...100 { times.record(nanoseconds: us * 1_000 + 500) }  // 1.5 µs … 100.5 µs
        times.record(nanoseconds: 2_345_000)
        let counts = times.snapshot()
        #expect(counts.reduce(0, +) == 101)
        // The 51st of 101 blocks took 51.5 µs: its bucket's upper edge is 52 µs.
        #expect(RenderTimes.quantile(0.5, of: counts) == 52)
        #expect(RenderTimes.quantile(0.99, of: counts) == 101)
        #expect(RenderTimes.quantile(1, of: counts) == 2_350)
        #expect(RenderTimes.quantile(0.5, of: [Int](repeating: 0, count: RenderTimes.bucketCount)) == nil)
    }

    @Test func clicksAreFoundInASyntheticRecording() {
        // Three clicks (the real one, scaled as a centred mono source comes out) in quiet noise.
        var samples = [Float](repeating: 0, count: 48_000)
        var rng = SplitMix64(seed: 7)
        for i in samples.indices { samples[i] = Float.random(in: -0.01...0.01, using: &rng) }
        let click = LatencyClient.click(sampleRate: 48_000).map { $0 * 0.6 }
        for start in [1_000, 6_000, 30_123] {
            for (i, v) in click.enumerated() { samples[start + i] += v }
        }
        #expect(ClickDetector().onsets(in: samples) == [1_000, 6_000, 30_123])
        // Two clicks closer than the refractory time are one.
        #expect(ClickDetector(refractoryFrames: 6_000).onsets(in: samples) == [1_000, 30_123])
        #expect(ClickDetector().onsets(in: [Float](repeating: 0.01, count: 1_000)).isEmpty)
        #expect(LatencyClient.click(sampleRate: 48_000).first == 0.8)
    }

    @Test func recordingClockTakesTheLeastDelayedRead() {
        // 64-frame reads, 1 ms apart; read 3 came 5 ms late, read 5 only 100 µs late.
        let period = 1_000_000  // 64 frames at 64 kHz: 1 ms exactly
        var reads = (1...10).map { (frames: $0 * 64, nanoseconds: 1_000_000_000 + $0 * period + 200_000) }
        reads[2].nanoseconds += 5_000_000
        reads[4].nanoseconds -= 100_000
        let clock = RecordingClock(reads: reads, sampleRate: 64_000)
        // Frame 0 is bounded best by read 5: 1 s + 100 µs.
        #expect(clock.nanoseconds(atFrame: 0) == 1_000_000_000 + 100_000)
        #expect(clock.nanoseconds(atFrame: 64 * 8) == 1_000_000_000 + 8 * period + 200_000)
        #expect(RecordingClock(reads: [], sampleRate: 48_000).nanoseconds(atFrame: 5) == nil)
        #expect(RecordingClock(reads: reads, sampleRate: 64_000).nanoseconds(atFrame: 10_000_000) == nil)
    }

    @Test func triggersPairWithTheFirstOnsetAfterThem() {
        let ms = 1_000_000
        let matched = ClickMatcher.delays(
            triggers: [100 * ms, 200 * ms, 300 * ms, 400 * ms],
            onsets: [50 * ms, 105 * ms, 212 * ms, 409 * ms, 1_900 * ms], windowNanoseconds: 50 * ms)
        // The onset before every trigger is nobody's; the third trigger's click never came; the last onset is too late.
        #expect(matched.delays == [5 * ms, 12 * ms, 9 * ms])
        #expect(matched.missed == 1)
        // A click lost at start-up, with the window the bench uses (the shortest gap): one miss, and every later
        // trigger still takes its own click, not the next one's.
        let triggers = (1...6).map { $0 * 120 * ms }
        let onsets = triggers.dropFirst().map { $0 + 7 * ms }
        let lost = ClickMatcher.delays(triggers: triggers, onsets: Array(onsets), windowNanoseconds: 100 * ms)
        #expect(lost.delays == Array(repeating: 7 * ms, count: 5) && lost.missed == 1)
        let schedule = LatencyClient.schedule(clicks: 50, start: 0, gaps: 100 * ms...150 * ms, seed: 3)
        #expect(schedule == LatencyClient.schedule(clicks: 50, start: 0, gaps: 100 * ms...150 * ms, seed: 3))
        #expect(zip(schedule, schedule.dropFirst()).allSatisfy { (100 * ms...150 * ms).contains($1 - $0) })
    }

    @Test func clientLinesRoundTrip() throws {
        var result = LatencyClientResult(driver: "SDL_mixer on SDL pulseaudio")
        result.triggers = [5, 17, 1 << 50]
        result.callbacks = 9
        result.lateCallbacks = nil
        let back = try #require(LatencyClientResult(lines: result.lines.joined(separator: "\n")))
        #expect(
            back.triggers == result.triggers && back.callbacks == 9 && back.lateCallbacks == nil
                && back.driver == result.driver)
        #expect(LatencyClientResult(lines: "trigger soon") == nil)
        #expect(LatencyClientResult(lines: "something else 5") == nil)
        #expect(LatencyBench.isUnderrunLine("D: [null-sink] protocol-native.c: Implicit underrun of 'Audio Stream'"))
        #expect(
            !LatencyBench.isUnderrunLine("D: [null-sink] protocol-native.c: Requesting rewind due to end of underrun."))
    }

    @Test func plotIsWellFormedSVGWithEverySeries() throws {
        let plot = SVGPlot(
            panels: [
                .lines(
                    title: "Cost <&> voices", xLabel: "voices", yLabel: "% of a core", logX: true,
                    lines: [
                        SVGPlot.Line(name: "Ambience", points: [(256, 1.5), (1024, 4.25), (4096, 17)]),
                        SVGPlot.Line(name: "raw OpenAL Soft", points: [(256, 1.4), (1024, 4.0), (4096, 16)]),
                        SVGPlot.Line(name: "SDL_mixer", points: [(256, 3), (1024, 11), (4096, .nan)])
                    ]),
                .ranges(
                    title: "Latency", yLabel: "ms",
                    ranges: [
                        SVGPlot.Range(group: "128 frames", series: "Ambience", low: 2, high: 3.4, top: 3.5),
                        SVGPlot.Range(group: "256 frames", series: "Ambience", low: 5, high: 8, top: 9),
                        SVGPlot.Range(group: "256 frames", series: "SDL_mixer", low: 6, high: 9, top: 12)
                    ])
            ], caption: "a machine; 2026-12-03; commit abc")
        let svg = plot.document()
        let parser = XMLParser(data: Data(svg.utf8))
        #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
        for name in [
            "Ambience", "raw OpenAL Soft", "SDL_mixer", "128 frames", "256 frames", "Cost &lt;&amp;&gt; voices",
            "a machine; 2026-12-03; commit abc"
        ] {
            #expect(svg.contains(">\(name)<"), "\(name) is not labelled")
        }
        // One polyline per series, the NaN point left out; one bar per range.
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 3)
        #expect(svg.components(separatedBy: "fill-opacity=\"0.75\"").count - 1 == 3)
        #expect(!svg.contains("nan") && !svg.contains("inf"))
    }
}
