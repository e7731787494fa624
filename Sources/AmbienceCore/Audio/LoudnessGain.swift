import Glibc

/// How the music player evens out loudness from item to item (the iPod's Sound Check).
public enum LoudnessMatching: String, Sendable, CaseIterable {
    /// Every item plays as it was mastered. The default.
    case off
    /// Every item is brought to the target loudness on its own.
    case track
    /// Every item is brought to the target by its album's gain, so an album's quiet and loud tracks stay as they
    /// were mastered relative to each other. An item without album figures falls back to its own.
    case album
    /// Album gain while the queue plays an album: the item before or after it in the play order is from the same
    /// album. Track gain otherwise (shuffled songs, a playlist of singles).
    case automatic
}

/// The gain an item plays at: a pure function of its loudness figures and the settings, no I/O.
package enum LoudnessGain {
    /// The loudness every item is brought to: -18 LUFS, ReplayGain 2.0's reference. Loud enough that most music is
    /// turned down, not up (so the peak limit rarely bites), and what ReplayGain tags are written against.
    package static let target = -18.0
    /// The highest a peak may reach after the gain: full scale. A boost stops where `peak × gain` would pass it.
    package static let ceiling = 1.0
    /// A boost beyond +24 dB (a near-silent track with no peak known) is noise floor, not music: capped there.
    package static let maximumBoost = 24.0
    /// The most a loud track is turned down.
    package static let maximumCut = -60.0

    /// Which figures were used, for tests and the `play` command's log.
    package enum Basis: Equatable, Sendable { case none, track, album }

    package struct Decision: Equatable, Sendable {
        /// The linear gain to multiply every sample by.
        package var gain: Float
        /// The gain in dB before the peak limit (0 when nothing was known).
        package var requestedDecibels: Double
        package var basis: Basis
        /// The peak limit lowered the gain.
        package var limitedByPeak: Bool
    }

    /// The gain for one item. `tags` win over `analysis` field by field; `albumNeighbour` says whether the item next to
    /// it in the play order is from its album (what `.automatic` goes by). Unknown loudness means unity gain: an item
    /// nobody measured is played as it is rather than guessed at.
    package static func decide(
        tags: LoudnessMeasurement?, analysis: LoudnessMeasurement?, mode: LoudnessMatching,
        albumNeighbour: Bool
    ) -> Decision {
        let unity = Decision(gain: 1, requestedDecibels: 0, basis: .none, limitedByPeak: false)
        guard mode != .off else { return unity }
        let figures = (tags ?? LoudnessMeasurement()).filled(from: analysis)
        let wantsAlbum = mode == .album || (mode == .automatic && albumNeighbour)
        let loudness: Double
        let basis: Basis
        if wantsAlbum, let album = finite(figures.albumLoudness) {
            (loudness, basis) = (album, .album)
        } else if let track = finite(figures.trackLoudness) {
            (loudness, basis) = (track, .track)
        } else {
            return unity
        }
        let decibels = min(max(target - loudness, maximumCut), maximumBoost)
        var gain = pow10(decibels / 20)
        // The peak that the gain lifts: the album's in album mode (the loudest the album gets), and the track's own
        // too, so that no track of it clips even if the album figure was made without it.
        let peaks =
            (basis == .album ? [figures.albumPeak, figures.trackPeak] : [figures.trackPeak ?? figures.albumPeak])
            .compactMap { finite($0) }.filter { $0 > 0 }
        var limited = false
        if let peak = peaks.max() {
            if peak * gain > ceiling {
                gain = ceiling / peak
                limited = true
            }
        } else if gain > 1 {
            // No peak is known (Opus R128 tags never carry one; a ReplayGain gain may come without its peak): any
            // boost could clip, so such an item is only ever turned down.
            gain = 1
            limited = true
        }
        return Decision(gain: Float(gain), requestedDecibels: decibels, basis: basis, limitedByPeak: limited)
    }

    private static func finite(_ value: Double?) -> Double? { value.flatMap { $0.isFinite ? $0 : nil } }

    /// 10^x without Foundation.
    package static func pow10(_ x: Double) -> Double { exp(x * 2.302585092994046) }
}

/// Another decoder's samples times a fixed gain: how the music player applies a loudness-matching gain, before the
/// samples reach the stream (and before any resampling or crossfade, so both see the matched levels).
package final class GainedDecoder: AudioDecoder {
    private let source: any AudioDecoder
    package let gain: Float

    package init(_ source: any AudioDecoder, gain: Float) {
        self.source = source
        self.gain = gain
    }

    package var info: AudioInfo { source.info }
    package var position: Int64 { source.position }

    package func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(DecodingError) -> Int {
        let got = try source.read(into: buffer, frames: frames)
        let samples = got * max(source.info.channels, 1)
        for index in 0..<samples { buffer[index] *= gain }
        return got
    }

    package func seek(toFrame frame: Int64) throws(DecodingError) { try source.seek(toFrame: frame) }
    package func endLoopAfterThisPass() { source.endLoopAfterThisPass() }
}
