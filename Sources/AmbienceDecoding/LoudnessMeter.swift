import AmbienceCore
import CEBUR128
import Glibc

/// An EBU R128 / ITU-R BS.1770 loudness meter: the only file that calls libebur128. It owns one `ebur128_state`.
///
/// Why libebur128: it is the reference open implementation (what ffmpeg's `ebur128` filter, loudgain and rsgain
/// measure with), it does the K-weighting, gating and 4× true-peak oversampling the standard asks for, and Debian
/// ships it. Writing those filters again would only add a way to disagree with every other tool's numbers.
package final class LoudnessMeter {
    private var state: UnsafeMutablePointer<ebur128_state>?
    package let channels: Int
    private let truePeak: Bool

    /// A meter for interleaved float audio of `channels` channels at `sampleRate`. `truePeak` measures the 4×
    /// oversampled peak (ReplayGain 2.0's choice) instead of the sample peak; it costs about as much again.
    package init(channels: Int, sampleRate: Int, truePeak: Bool = true) throws(DecodingError) {
        guard (1...AudioInfo.maximumChannels).contains(channels), AudioInfo.sampleRates.contains(sampleRate) else {
            throw .corrupt("loudness meter", reason: "\(channels) channels at \(sampleRate) Hz cannot be measured")
        }
        let mode = Int32(
            bitPattern: EBUR128_MODE_I.rawValue
                | (truePeak ? EBUR128_MODE_TRUE_PEAK.rawValue : EBUR128_MODE_SAMPLE_PEAK.rawValue))
        // Checked above: both fit their C types.
        guard let made = ebur128_init(UInt32(channels), UInt(sampleRate), mode) else {
            throw .corrupt("loudness meter", reason: "libebur128 could not start a meter (out of memory)")
        }
        state = made
        self.channels = channels
        self.truePeak = truePeak
        if channels == 1 {
            // A mono file plays on both speakers: measured as dual mono, the way a stereo render of it measures.
            _ = ebur128_set_channel(made, 0, Int32(EBUR128_DUAL_MONO.rawValue))
        }
    }

    deinit { ebur128_destroy(&state) }

    /// Adds `frames` interleaved frames (`frames × channels` floats).
    package func add(_ samples: UnsafePointer<Float>, frames: Int) {
        guard let state, frames > 0 else { return }
        _ = ebur128_add_frames_float(state, samples, frames)
    }

    /// Adds interleaved samples from an array (whole frames only).
    package func add(_ samples: [Float]) {
        samples.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            add(base, frames: buffer.count / channels)
        }
    }

    /// The integrated loudness so far, in LUFS; nil for silence (or anything under the -70 LUFS absolute gate).
    package var integratedLoudness: Double? {
        guard let state else { return nil }
        var value = 0.0
        guard ebur128_loudness_global(state, &value) == Int32(EBUR128_SUCCESS.rawValue), value.isFinite else {
            return nil
        }
        return value
    }

    /// The highest peak of any channel so far, linear: the true peak if the meter measures it, else the sample peak.
    package var peak: Double {
        guard let state else { return 0 }
        var highest = 0.0
        for channel in 0..<channels {
            var value = 0.0
            let status =
                truePeak
                ? ebur128_true_peak(state, UInt32(channel), &value)
                : ebur128_sample_peak(state, UInt32(channel), &value)
            if status == Int32(EBUR128_SUCCESS.rawValue), value.isFinite { highest = max(highest, value) }
        }
        return highest
    }

    /// Loudness of several meters' audio taken together (an album measured in one go), in LUFS.
    package static func integratedLoudness(of meters: [LoudnessMeter]) -> Double? {
        var states = meters.compactMap(\.state).map { Optional($0) }
        guard !states.isEmpty else { return nil }
        var value = 0.0
        let status = states.withUnsafeMutableBufferPointer {
            ebur128_loudness_global_multiple($0.baseAddress, $0.count, &value)
        }
        return status == Int32(EBUR128_SUCCESS.rawValue) && value.isFinite ? value : nil
    }
}

/// Measuring a whole file: decoded as the player decodes it, so the figures describe what would be heard.
package enum LoudnessAnalysis {
    /// Decodes the file at `fileSystemPath` to its end through a meter. Throws what the decoder throws; returns a
    /// measurement with the track's loudness (nil for silence) and peak.
    package static func measure(fileSystemPath: [UInt8], name: String, truePeak: Bool = true) throws(DecodingError)
        -> LoudnessMeasurement
    {
        let decoder = try AudioFile.open(fileSystemPath: fileSystemPath, name: name)
        return try measure(decoder, truePeak: truePeak)
    }

    package static func measure(_ decoder: any AudioDecoder, truePeak: Bool = true) throws(DecodingError)
        -> LoudnessMeasurement
    {
        let meter = try LoudnessMeter(
            channels: decoder.info.channels, sampleRate: decoder.info.sampleRate, truePeak: truePeak)
        let blockFrames = 8192
        var buffer = [Float](repeating: 0, count: blockFrames * meter.channels)
        while true {
            let got = try buffer.withUnsafeMutableBufferPointer { (pointer) throws(DecodingError) -> Int in
                // Non-empty: blockFrames × at least one channel.
                try decoder.read(into: pointer.baseAddress!, frames: blockFrames)
            }
            if got <= 0 { break }
            buffer.withUnsafeBufferPointer { meter.add($0.baseAddress!, frames: got) }
        }
        return LoudnessMeasurement(trackLoudness: meter.integratedLoudness, trackPeak: meter.peak)
    }

    /// An album's loudness from its tracks' (loudness, seconds): the power mean weighted by duration. It matches
    /// a joint measurement closely when the tracks' gating removes little, and lets one changed track be measured
    /// again without reading its album (which is what keeps a rescan incremental).
    package static func albumLoudness(_ tracks: [(loudness: Double, seconds: Double)]) -> Double? {
        var power = 0.0, seconds = 0.0
        for track in tracks where track.loudness.isFinite && track.seconds.isFinite && track.seconds > 0 {
            power += track.seconds * LoudnessGain.pow10(track.loudness / 10)
            seconds += track.seconds
        }
        guard seconds > 0, power > 0 else { return nil }
        return 10 * log10(power / seconds)
    }
}
