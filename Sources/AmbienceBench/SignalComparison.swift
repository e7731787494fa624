import Glibc

/// How close a rendered mix is to a reference of the same scene: the signal-to-noise ratio of the difference, after
/// the best alignment within a few frames. Pure: arrays in, numbers out.
struct SignalComparison: Sendable, Equatable {
    /// 10·log10(reference energy / difference energy), in dB; +infinity when the two are identical over the range.
    var snrDB: Double
    /// Frames by which `signal` lags the reference at the best alignment (positive: the signal is late).
    var lagFrames: Int
    /// Frames compared.
    var frames: Int

    /// Whether the two were sample for sample the same over the range.
    var isIdentical: Bool { snrDB == .infinity }

    /// Compares two interleaved signals of `channels` channels at the same rate. Every lag in -maxLag...maxLag is
    /// tried, and the one with the least difference energy is kept. Only frames `edgeFrames` in from both ends of the
    /// shorter signal (less the lag) are compared, so that a resampler's first and last frames, which see padding,
    /// do not count. Nil when no frame is left to compare, or the reference is silent there.
    static func compare(
        reference: [Float], signal: [Float], channels: Int = 2, maxLag: Int = 64, edgeFrames: Int = 1024
    ) -> SignalComparison? {
        guard channels > 0, maxLag >= 0, edgeFrames >= 0 else { return nil }
        let frames = min(reference.count, signal.count) / channels
        let first = edgeFrames + maxLag
        let end = frames - edgeFrames - maxLag
        guard end > first else { return nil }
        var best: (error: Double, lag: Int, energy: Double)? = nil
        reference.withUnsafeBufferPointer { ref in
            signal.withUnsafeBufferPointer { sig in
                for lag in -maxLag...maxLag {
                    var energy = 0.0, error = 0.0
                    for i in (first * channels)..<(end * channels) {
                        let r = Double(ref[i])
                        let d = Double(sig[i + lag * channels]) - r
                        energy += r * r
                        error += d * d
                    }
                    // Ties go to the smaller shift, so an exact match at lag 0 is reported as 0.
                    if best == nil || error < best!.error || (error == best!.error && abs(lag) < abs(best!.lag)) {
                        best = (error, lag, energy)
                    }
                }
            }
        }
        guard let best, best.energy > 0 else { return nil }
        let snr = best.error == 0 ? Double.infinity : 10 * log10(best.energy / best.error)
        return SignalComparison(snrDB: snr, lagFrames: best.lag, frames: end - first)
    }
}
