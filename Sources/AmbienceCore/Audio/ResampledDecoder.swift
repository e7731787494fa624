/// Another decoder's stream at a different sample rate, by linear interpolation (the same interpolation OpenAL Soft
/// applies by default when it plays a buffer at a rate other than the output's).
///
/// The music player uses it when an item's rate differs from the one its stream is playing: an OpenAL queue holds
/// one rate only, so without it the next item would wait for the queue to drain and leave a gap.
/// Positions and lengths are in output frames; the arithmetic is exact integer ratios, so long streams do not drift.
package final class ResampledDecoder: AudioDecoder {
    package let info: AudioInfo
    package private(set) var position: Int64 = 0
    private let source: any AudioDecoder
    private let sourceRate: Int64
    private let rate: Int64
    private let channels: Int
    /// Source frames `windowStart ..< windowStart + windowFrames`, interleaved.
    private var window: [Float]
    private var windowStart: Int64 = 0
    private var windowFrames = 0
    private var sourceEnded = false

    static let chunkFrames = 4096

    /// Rates are taken within `AudioInfo.sampleRates` and the source's length within `AudioInfo.maximumFrames`,
    /// which every decoder already guarantees: inside those bounds no product below can overflow.
    package init(_ source: any AudioDecoder, rate: Int) {
        self.source = source
        let rates = AudioInfo.sampleRates
        sourceRate = Int64(min(max(source.info.sampleRate, rates.lowerBound), rates.upperBound))
        self.rate = Int64(min(max(rate, rates.lowerBound), rates.upperBound))
        channels = max(source.info.channels, 1)
        var info = source.info
        info.sampleRate = Int(self.rate)
        let sourceFrames = min(max(source.info.frames, 0), AudioInfo.maximumFrames)
        info.frames = (sourceFrames * self.rate + sourceRate - 1) / sourceRate
        self.info = info
        window = Array(repeating: 0, count: (Self.chunkFrames + 1) * channels)
        windowStart = source.position
        // Start at the first output frame that lies at or after where the source stands.
        let start = min(max(source.position, 0), sourceFrames)
        position = (start * self.rate + sourceRate - 1) / sourceRate
    }

    package func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(DecodingError) -> Int {
        var written = 0
        while written < frames && position < info.frames {
            // Output frame n sits at source frame n × sourceRate / rate: index `whole`, fraction `part / rate`.
            let exact = position * sourceRate
            let whole = exact / rate
            let fraction = Float(exact % rate) / Float(rate)
            // The window only moves forward; seek keeps the playhead at or after it, and this keeps any slip from
            // reaching an index.
            guard whole >= windowStart, try load(whole) else { break }
            let next = try load(whole + 1) ? whole + 1 : whole
            let a = Int(whole - windowStart) * channels, b = Int(next - windowStart) * channels
            for c in 0..<channels {
                let from = window[a + c]
                buffer[written * channels + c] = from + (window[b + c] - from) * fraction
            }
            written += 1
            position += 1
        }
        return written
    }

    package func seek(toFrame frame: Int64) throws(DecodingError) {
        let target = min(max(frame, 0), info.frames)
        try source.seek(toFrame: target * sourceRate / rate)
        windowStart = source.position
        windowFrames = 0
        sourceEnded = false
        // A source may stand after where it was asked to (an MP3 that seeks by frames, a stream shorter than its
        // header said): go on from the first output frame at or after where it stands, never before it.
        position = max(target, (max(windowStart, 0) * rate + sourceRate - 1) / sourceRate)
    }

    package func endLoopAfterThisPass() { source.endLoopAfterThisPass() }

    /// Makes source frame `frame` available in the window; false past the end of the source. Only ever asked for
    /// frames at or after the window's start (the playhead moves forward), and keeps the window's last frame when
    /// it slides, for the interpolation across the boundary.
    private func load(_ frame: Int64) throws(DecodingError) -> Bool {
        while frame >= windowStart + Int64(windowFrames) {
            guard !sourceEnded else { return false }
            var kept = 0
            if windowFrames > 0 {
                let last = (windowFrames - 1) * channels
                for c in 0..<channels { window[c] = window[last + c] }
                windowStart += Int64(windowFrames - 1)
                kept = 1
            }
            windowFrames = kept  // what the window holds if the read below fails
            let got = try window.withUnsafeMutableBufferPointer { (room) throws(DecodingError) -> Int in
                try source.read(into: room.baseAddress! + kept * channels, frames: Self.chunkFrames)
            }
            if got == 0 { sourceEnded = true }
            windowFrames = kept + got
        }
        return true
    }
}
