import Ambience
import AmbiencePlatform

/// One `--sfx FILE@T[,gain=G][,pan=P][,pitch=X][,loudness=DB]` of `ambience render`.
public struct SFXCue: Equatable, Sendable {
    public var path: String
    /// Seconds from the start of the render.
    public var time: Double
    public var gain: Float = 1
    public var pan: Float = 0
    public var pitch: Float = 1
    /// The play's loudness in dB (docs/HDR.md), heard under an `--hdr` window; nil takes the sound's (0).
    public var loudness: Float? = nil

    /// Parses a cue. The file name may itself contain `@` or `,`: the last `@` starts the timing part.
    public init(parsing text: String) throws(UsageError) {
        guard let at = text.lastIndex(of: "@") else { throw UsageError("--sfx '\(text)': expected FILE@SECONDS") }
        path = String(text[..<at])
        guard !path.isEmpty else { throw UsageError("--sfx '\(text)': missing FILE before @") }
        let fields = text[text.index(after: at)...].split(separator: ",", omittingEmptySubsequences: false)
        // The same time forms as --seconds: seconds ("1.5") or clock form ("1:30").
        guard let first = fields.first, let t = DurationText.parse(String(first)), t.isFinite, t >= 0, t <= 86_400
        else {
            throw UsageError("--sfx '\(text)': the time after @ must be seconds (or m:ss) from 0 to 86400")
        }
        time = t
        for field in fields.dropFirst() {
            let pair = field.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, let value = Float(pair[1]), value.isFinite else {
                throw UsageError("--sfx '\(text)': expected key=number, not '\(field)'")
            }
            switch pair[0] {
            case "gain" where value >= 0 && value <= 16: gain = value
            case "pan" where value >= -1 && value <= 1: pan = value
            case "pitch" where value > 0 && value <= 16: pitch = value
            case "loudness" where MixerLimits.loudness.contains(value): loudness = value
            case "gain", "pan", "pitch", "loudness":
                throw UsageError(
                    "--sfx '\(text)': \(pair[0])=\(pair[1]) is out of range (gain 0…16, pan -1…1, pitch 0…16, loudness -200…200)"
                )
            default:
                throw UsageError("--sfx '\(text)': unknown key '\(pair[0])' (use gain, pan, pitch or loudness)")
            }
        }
    }
}
