import Glibc

/// How close a rendered mix is to a reference of the same scene: the signal-to-noise ratio of the difference, after
/// the best alignment within a few frames, and the same on short-time magnitude spectra. Pure: arrays in, numbers out.
///
/// The spectral figure is there because a sample-wise SNR also counts timing: OpenAL Soft 1.19 steps through a source
/// in fixed point (12 fractional bits), so at another mixing rate each voice plays up to ~120 ppm fast or slow, a
/// drift of a few frames a second that no single lag undoes and nobody hears. Magnitudes over 1024-frame windows
/// ignore it and still show what is lost or added: the band above a lower Nyquist, aliasing, a limiter's gain.
struct SignalComparison: Sendable, Equatable {
    /// 10·log10(reference energy / difference energy), in dB; +infinity when the two are identical over the range.
    var snrDB: Double
    /// 10·log10(Σ|R|² / Σ(|S| − |R|)²) over the Hann-windowed 1024-point spectra of both (hop 512, both channels),
    /// at the best lag; +infinity when every magnitude is the same.
    var spectralSNRDB: Double
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
        let spectral = spectralSNR(
            reference: reference, signal: signal, channels: channels, lag: best.lag, frames: first..<end)
        return SignalComparison(snrDB: snr, spectralSNRDB: spectral, lagFrames: best.lag, frames: end - first)
    }

    static let window = 1024

    /// The spectral SNR over `frames` of the reference, the signal taken `lag` frames later.
    static func spectralSNR(reference: [Float], signal: [Float], channels: Int, lag: Int, frames: Range<Int>)
        -> Double
    {
        let hann = (0..<window).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(window)) }
        var energy = 0.0, error = 0.0
        var start = frames.lowerBound
        while start + window <= frames.upperBound {
            for channel in 0..<channels {
                let r = magnitudes((0..<window).map { Double(reference[(start + $0) * channels + channel]) * hann[$0] })
                let s = magnitudes(
                    (0..<window).map { Double(signal[(start + $0 + lag) * channels + channel]) * hann[$0] })
                for bin in r.indices {
                    energy += r[bin] * r[bin]
                    error += (s[bin] - r[bin]) * (s[bin] - r[bin])
                }
            }
            start += window / 2
        }
        guard energy > 0 else { return 0 }
        return error == 0 ? .infinity : 10 * log10(energy / error)
    }

    /// |X[k]| for k in 0...n/2 of a real block whose length is a power of two (iterative radix-2 FFT).
    static func magnitudes(_ block: [Double]) -> [Double] {
        let n = block.count
        var re = block, im = [Double](repeating: 0, count: n)
        var j = 0
        for i in 1..<n {
            var bit = n >> 1
            while j & bit != 0 { j ^= bit; bit >>= 1 }
            j |= bit
            if i < j { re.swapAt(i, j) }
        }
        var length = 2
        while length <= n {
            let angle = -2 * Double.pi / Double(length)
            for offset in stride(from: 0, to: n, by: length) {
                for k in 0..<(length / 2) {
                    let wr = cos(angle * Double(k)), wi = sin(angle * Double(k))
                    let a = offset + k, b = a + length / 2
                    let tr = re[b] * wr - im[b] * wi, ti = re[b] * wi + im[b] * wr
                    re[b] = re[a] - tr; im[b] = im[a] - ti
                    re[a] += tr; im[a] += ti
                }
            }
            length <<= 1
        }
        return (0...(n / 2)).map { (re[$0] * re[$0] + im[$0] * im[$0]).squareRoot() }
    }
}
