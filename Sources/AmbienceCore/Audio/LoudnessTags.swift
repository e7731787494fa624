/// What a file's tags, or an analysis of its audio, say about its loudness. Loudness is in LUFS of the audio as it
/// decodes (for Opus: with the header's output gain already applied), peaks are linear (1.0 is full scale).
///
/// Every field is optional: a file may carry any subset, and an analysis fills the track's two.
public struct LoudnessMeasurement: Sendable, Hashable {
    /// Integrated loudness of the track (EBU R128 / ITU-R BS.1770), in LUFS.
    public var trackLoudness: Double?
    /// The track's highest peak, linear: a true peak where an analysis measured one, else what the tag says.
    public var trackPeak: Double?
    /// Integrated loudness of the whole album the track belongs to, in LUFS.
    public var albumLoudness: Double?
    /// The album's highest peak, linear.
    public var albumPeak: Double?

    /// Figures as known; any left out is unknown.
    public init(
        trackLoudness: Double? = nil, trackPeak: Double? = nil, albumLoudness: Double? = nil, albumPeak: Double? = nil
    ) {
        self.trackLoudness = trackLoudness
        self.trackPeak = trackPeak
        self.albumLoudness = albumLoudness
        self.albumPeak = albumPeak
    }

    /// True when no field is set.
    public var isEmpty: Bool { trackLoudness == nil && trackPeak == nil && albumLoudness == nil && albumPeak == nil }

    /// Each field from `self` where set, else from `other`: tags win over analysis field by field.
    package func filled(from other: LoudnessMeasurement?) -> LoudnessMeasurement {
        guard let other else { return self }
        return LoudnessMeasurement(
            trackLoudness: trackLoudness ?? other.trackLoudness, trackPeak: trackPeak ?? other.trackPeak,
            albumLoudness: albumLoudness ?? other.albumLoudness, albumPeak: albumPeak ?? other.albumPeak)
    }
}

/// The one parser of loudness tags, whatever carried them: Vorbis comments (Ogg Vorbis, FLAC, Opus), ID3v2 `TXXX`
/// frames (MP3, WAV), MP4 `----:com.apple.iTunes:replaygain_*` atoms. Text from a file is a claim: anything that is
/// not a plain decimal number within the stated limits is refused (as if the tag were absent), never trusted.
package enum LoudnessTags {
    /// ReplayGain 2.0's reference: a gain tag of `g` dB says the track plays at `-18 - g` LUFS.
    package static let replayGainReference = -18.0
    /// Ogg Opus (RFC 7845): `R128_*_GAIN` is the gain to reach -23 LUFS, on top of the header's output gain.
    package static let r128Reference = -23.0
    /// Gains outside ±60 dB are damage, not music: ReplayGain scanners stay well within ±52 dB.
    package static let gains = -60.0...60.0
    /// Peaks over 100 (+40 dBFS) cannot come from a real decoder's float output.
    package static let peaks = 0.0...100.0
    /// The longest number text taken: digits past this are padding or an attack.
    static let maximumLength = 32

    /// The measurement in `entries` (keys in any case), or nil when none of the loudness keys parses. R128 gains
    /// win over ReplayGain gains where both are present (RFC 7845 asks Opus writers to use only R128).
    package static func measurement<S: Sequence>(from entries: S) -> LoudnessMeasurement?
    where S.Element == (key: String, value: String) {
        var found = LoudnessMeasurement()
        var r128Track: Double?, r128Album: Double?
        for (rawKey, value) in entries {
            switch rawKey.uppercased() {
            case "REPLAYGAIN_TRACK_GAIN":
                if found.trackLoudness == nil, let gain = replayGain(value) {
                    found.trackLoudness = replayGainReference - gain
                }
            case "REPLAYGAIN_ALBUM_GAIN":
                if found.albumLoudness == nil, let gain = replayGain(value) {
                    found.albumLoudness = replayGainReference - gain
                }
            case "REPLAYGAIN_TRACK_PEAK":
                if found.trackPeak == nil { found.trackPeak = peak(value) }
            case "REPLAYGAIN_ALBUM_PEAK":
                if found.albumPeak == nil { found.albumPeak = peak(value) }
            case "R128_TRACK_GAIN":
                if r128Track == nil { r128Track = r128Gain(value) }
            case "R128_ALBUM_GAIN":
                if r128Album == nil { r128Album = r128Gain(value) }
            default:
                continue
            }
        }
        if let r128Track { found.trackLoudness = r128Reference - r128Track }
        if let r128Album { found.albumLoudness = r128Reference - r128Album }
        return found.isEmpty ? nil : found
    }

    /// A ReplayGain gain: "-6.52 dB", "+1.2 dB", "3", "−4,5 dB" is refused (a comma is not a decimal point here).
    package static func replayGain(_ text: String) -> Double? {
        guard let value = decimal(text, unit: "db") else { return nil }
        return gains.contains(value) ? value : nil
    }

    /// A ReplayGain peak: a plain non-negative decimal, "0.988831".
    package static func peak(_ text: String) -> Double? {
        guard let value = decimal(text, unit: nil) else { return nil }
        return peaks.contains(value) ? value : nil
    }

    /// An R128 gain: a signed Q7.8 integer ("-1280" is -5 dB), within a 16-bit signed range.
    package static func r128Gain(_ text: String) -> Double? {
        let trimmed = text.trimmingSpaces
        guard trimmed.utf8.count <= maximumLength else { return nil }
        var digits = Substring(trimmed)
        var negative = false
        if let sign = digits.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
            let magnitude = Int(digits), magnitude <= 32768
        else { return nil }
        let value = negative ? -magnitude : magnitude
        guard value <= Int(Int16.max) else { return nil }
        let gain = Double(value) / 256
        return gains.contains(gain) ? gain : nil
    }

    /// `[+-]digits[.digits][ unit]`: no exponents, no "nan" or "inf", no hex, nothing Swift's `Double(_:)` would
    /// take beyond plain decimals. The unit, when given, is optional in the text and matched without regard to case.
    static func decimal(_ text: String, unit: String?) -> Double? {
        var body = text.trimmingSpaces
        guard !body.isEmpty, body.utf8.count <= maximumLength else { return nil }
        if let unit, body.lowercased().hasSuffix(unit) {
            body = String(body.dropLast(unit.count)).trimmingSpaces
        }
        var sign = 1.0
        var rest = Substring(body)
        if let first = rest.first, first == "-" || first == "+" || first == "\u{2212}" {
            sign = first == "+" ? 1 : -1
            rest = rest.dropFirst()
        }
        let parts = rest.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !(whole.isEmpty && (parts.count < 2 || parts[1].isEmpty)) else { return nil }
        let isDigits: (Substring) -> Bool = { $0.allSatisfy { $0.isASCII && $0.isNumber } }
        guard isDigits(whole), parts.count < 2 || isDigits(parts[1]) else { return nil }
        // Digits only: Double's parser cannot meet anything but a plain decimal here.
        guard
            let magnitude = Double(
                (whole.isEmpty ? "0" : String(whole)) + (parts.count == 2 ? "." + parts[1] + "0" : "")),
            magnitude.isFinite
        else { return nil }
        return sign * magnitude
    }
}
