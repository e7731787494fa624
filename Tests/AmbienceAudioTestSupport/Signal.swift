import AmbienceCore
import AmbiencePlatform
import Foundation

/// Measurements that tests make on rendered or decoded audio. Interleaved float samples throughout.
struct Signal {
    var samples: [Float]
    var channels: Int
    var sampleRate: Int

    init(_ samples: [Float], channels: Int, sampleRate: Int) {
        self.samples = samples
        self.channels = channels
        self.sampleRate = sampleRate
    }

    init(_ buffer: PCMBuffer) {
        self.init(buffer.samples, channels: buffer.channels, sampleRate: buffer.sampleRate)
    }

    var frames: Int { samples.count / channels }

    /// One channel's samples over a range of frames.
    func channel(_ c: Int, _ range: Range<Int>? = nil) -> [Float] {
        let r = (range ?? 0..<frames).clamped(to: 0..<frames)
        return r.map { samples[$0 * channels + c] }
    }

    /// Root mean square of one channel (or of all channels when `channel` is nil).
    func rms(_ range: Range<Int>? = nil, channel: Int? = nil) -> Double {
        let r = (range ?? 0..<frames).clamped(to: 0..<frames)
        guard !r.isEmpty else { return 0 }
        var sum = 0.0, count = 0
        for f in r {
            for c in 0..<channels where channel == nil || channel == c {
                let v = Double(samples[f * channels + c]); sum += v * v; count += 1
            }
        }
        return (sum / Double(count)).squareRoot()
    }

    /// Root mean square of channel 0's difference from `reference` (a sample a frame) over `range`: how far a render
    /// strays from the one signal it should follow (both sides of a join in the music tests).
    func rmsError(against reference: [Float], _ range: Range<Int>) -> Double {
        guard !range.isEmpty else { return 0 }
        let sum = range.reduce(0.0) { $0 + pow(Double(samples[$1 * channels] - reference[$1]), 2) }
        return (sum / Double(range.count)).squareRoot()
    }

    func peak(_ range: Range<Int>? = nil) -> Float {
        let r = (range ?? 0..<frames).clamped(to: 0..<frames)
        var p: Float = 0
        for i in (r.lowerBound * channels)..<(r.upperBound * channels) { p = max(p, abs(samples[i])) }
        return p
    }

    /// The first frame at which any channel's magnitude exceeds `threshold`.
    func firstFrame(above threshold: Float) -> Int? {
        for f in 0..<frames {
            for c in 0..<channels where abs(samples[f * channels + c]) > threshold { return f }
        }
        return nil
    }

    /// Frequency of a steady tone from interpolated upward zero crossings of one channel. Exact to well under 1 Hz for a clean sine.
    func dominantFrequency(in range: Range<Int>? = nil, channel: Int = 0) -> Double {
        let x = self.channel(channel, range)
        var crossings: [Double] = []
        for i in 1..<max(x.count, 1) where x[i - 1] < 0 && x[i] >= 0 {
            let t = Double(i - 1) + Double(-x[i - 1]) / Double(x[i] - x[i - 1])
            crossings.append(t)
        }
        guard crossings.count >= 2 else { return 0 }
        let periods = Double(crossings.count - 1)
        return periods * Double(sampleRate) / (crossings.last! - crossings.first!)
    }

    /// Amplitude of the `hz` component of one channel over a range (projection on sine and cosine).
    func amplitude(of hz: Double, in range: Range<Int>, channel: Int = 0) -> Double {
        var re = 0.0, im = 0.0
        for f in range {
            let phase = 2 * Double.pi * hz * Double(f) / Double(sampleRate)
            re += Double(samples[f * channels + channel]) * cos(phase)
            im += Double(samples[f * channels + channel]) * sin(phase)
        }
        return 2 * (re * re + im * im).squareRoot() / Double(range.count)
    }

    /// The largest sample-to-sample jump of one channel: a click or a phase break shows up here.
    func maxStep(in range: Range<Int>? = nil, channel: Int = 0) -> Float {
        let x = self.channel(channel, range)
        var m: Float = 0
        for i in 1..<max(x.count, 1) { m = max(m, abs(x[i] - x[i - 1])) }
        return m
    }
}

/// `20 log10(a / b)`.
func decibels(_ a: Double, over b: Double) -> Double { 20 * log10(a / b) }

/// A mono sine made in memory.
func tone(hz: Double, seconds: Double, rate: Int = 48_000, amplitude: Float = 0.5) -> PCMBuffer {
    let frames = Int(seconds * Double(rate))
    let samples = (0..<frames).map { amplitude * Float(sin(2 * Double.pi * hz * Double($0) / Double(rate))) }
    return PCMBuffer(sampleRate: rate, channels: 1, samples: samples)
}
