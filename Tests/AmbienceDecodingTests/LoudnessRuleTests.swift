import Foundation
import Testing

@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceTestSupport

/// Loudness tags and the gain decision, as pure logic (no OpenAL).
@Suite(.offTheCooperativePool) struct LoudnessRuleTests {
    @Test(arguments: [
        ("-6.52 dB", -6.52), ("+1.20 dB", 1.2), ("3", 3), ("  -0.5dB ", -0.5), ("\u{2212}4.5 dB", -4.5), (".5 dB", 0.5),
        ("-60.00 dB", -60)
    ])
    func replayGainTextIsRead(text: String, gain: Double) {
        #expect(LoudnessTags.replayGain(text) == gain)
    }

    @Test(arguments: [
        "+900 dB", "-61 dB", "nan", "NaN dB", "inf", "-inf dB", "", " ", "dB", "1e3", "0x10", "--3", "3.2.1",
        "1,5 dB", "+", ".", "- 3 dB", "3 dB dB", String(repeating: "1", count: 400), "12 LUFS", "٣ dB"
    ])
    func absurdOrMalformedGainsAreRefused(text: String) {
        #expect(LoudnessTags.replayGain(text) == nil)
        #expect(LoudnessTags.peak(text) == nil)
        #expect(LoudnessTags.r128Gain(text) == nil)
    }

    @Test func peaksAndR128GainsAreRead() {
        #expect(LoudnessTags.peak("0.988831") == 0.988831)
        #expect(LoudnessTags.peak("1.5") == 1.5)
        #expect(LoudnessTags.peak("-0.5") == nil)
        #expect(LoudnessTags.peak("101") == nil)
        #expect(LoudnessTags.r128Gain("-1280") == -5)
        #expect(LoudnessTags.r128Gain("+256") == 1)
        #expect(LoudnessTags.r128Gain("32768") == nil)  // past Q7.8's 16 bits
        #expect(LoudnessTags.r128Gain("-32768") == nil)  // -128 dB: outside the ±60 dB taken
        #expect(LoudnessTags.r128Gain("1.5") == nil)  // an integer only
    }

    @Test func aMeasurementComesFromTheKeysInAnyCase() {
        let found = LoudnessTags.measurement(from: [
            (key: "replaygain_track_gain", value: "-3.00 dB"), (key: "REPLAYGAIN_TRACK_PEAK", value: "0.5"),
            (key: "ReplayGain_Album_Gain", value: "+2 dB"), (key: "REPLAYGAIN_ALBUM_PEAK", value: "0.9")
        ])
        #expect(found == LoudnessMeasurement(trackLoudness: -15, trackPeak: 0.5, albumLoudness: -20, albumPeak: 0.9))
        // R128 (relative to -23 LUFS) wins over ReplayGain in the same file.
        let opus = LoudnessTags.measurement(from: [
            (key: "REPLAYGAIN_TRACK_GAIN", value: "-3 dB"), (key: "R128_TRACK_GAIN", value: "-1280")
        ])
        #expect(opus?.trackLoudness == -18)
        #expect(LoudnessTags.measurement(from: [(key: "REPLAYGAIN_TRACK_GAIN", value: "+900 dB")]) == nil)
        #expect(LoudnessTags.measurement(from: [(key: "TITLE", value: "-3 dB")]) == nil)
    }

    /// (tags, analysis, mode, album neighbour) → gain in dB, the basis, limited.
    @Test func theGainFollowsTheRules() {
        func dB(_ d: LoudnessGain.Decision) -> Double { 20 * log10(Double(d.gain)) }
        let quiet = LoudnessMeasurement(trackLoudness: -30, trackPeak: 0.1, albumLoudness: -24, albumPeak: 0.4)
        // Off: unity, whatever is known.
        #expect(LoudnessGain.decide(tags: quiet, analysis: nil, mode: .off, albumNeighbour: true).gain == 1)
        // Track: to -18 LUFS.
        let track = LoudnessGain.decide(tags: quiet, analysis: nil, mode: .track, albumNeighbour: true)
        #expect(abs(dB(track) - 12) < 1e-4 && track.basis == .track && !track.limitedByPeak)
        // Album: the album's figure; automatic takes it only beside a track of the same album.
        #expect(
            abs(dB(LoudnessGain.decide(tags: quiet, analysis: nil, mode: .album, albumNeighbour: false)) - 6) < 1e-4)
        #expect(
            abs(dB(LoudnessGain.decide(tags: quiet, analysis: nil, mode: .automatic, albumNeighbour: true)) - 6) < 1e-4)
        #expect(
            abs(dB(LoudnessGain.decide(tags: quiet, analysis: nil, mode: .automatic, albumNeighbour: false)) - 12)
                < 1e-4)
        // Album mode without album figures falls back to the track's.
        let single = LoudnessMeasurement(trackLoudness: -20)
        #expect(LoudnessGain.decide(tags: single, analysis: nil, mode: .album, albumNeighbour: true).basis == .track)
        // Tags win over analysis field by field; the analysis fills what the tags lack (here the peak).
        let tagged = LoudnessGain.decide(
            tags: LoudnessMeasurement(trackLoudness: -14),
            analysis: LoudnessMeasurement(trackLoudness: -30, trackPeak: 0.5),
            mode: .track, albumNeighbour: false)
        #expect(abs(dB(tagged) + 4) < 1e-4)
        // The peak limit: a quiet track with a loud peak is lifted only to full scale.
        let peaky = LoudnessGain.decide(
            tags: LoudnessMeasurement(trackLoudness: -40, trackPeak: 0.5), analysis: nil, mode: .track,
            albumNeighbour: false)
        #expect(peaky.limitedByPeak && abs(Double(peaky.gain) * 0.5 - 1) < 1e-6 && peaky.requestedDecibels == 22)
        // Nothing known: unity. Boosts stop at +24 dB, cuts at -60 dB.
        #expect(LoudnessGain.decide(tags: nil, analysis: nil, mode: .track, albumNeighbour: false).gain == 1)
        #expect(
            abs(
                dB(
                    LoudnessGain.decide(
                        tags: LoudnessMeasurement(trackLoudness: -70, trackPeak: 0.01), analysis: nil, mode: .track,
                        albumNeighbour: false)) - 24) < 1e-4)
        // No peak known (an Opus file's R128 tag has none): no boost, since nothing says it would not clip; cuts stay.
        let unpeaked = LoudnessGain.decide(
            tags: LoudnessMeasurement(trackLoudness: -30), analysis: nil, mode: .track, albumNeighbour: false)
        #expect(unpeaked.gain == 1 && unpeaked.limitedByPeak && unpeaked.requestedDecibels == 12)
        #expect(
            abs(
                dB(
                    LoudnessGain.decide(
                        tags: LoudnessMeasurement(trackLoudness: -12), analysis: nil, mode: .track,
                        albumNeighbour: false)) + 6) < 1e-4)
        #expect(
            abs(
                dB(
                    LoudnessGain.decide(
                        tags: LoudnessMeasurement(trackLoudness: 50), analysis: nil, mode: .track, albumNeighbour: false
                    )) + 60) < 1e-4)
        // Figures that are not finite (a caller's own MediaItem) count as unknown.
        #expect(
            LoudnessGain.decide(
                tags: nil, analysis: LoudnessMeasurement(trackLoudness: .nan, trackPeak: .infinity), mode: .track,
                albumNeighbour: false
            ).gain == 1)
    }

    @Test func albumLoudnessIsTheDurationWeightedPowerMean() throws {
        #expect(try #require(LoudnessAnalysis.albumLoudness([(-20, 60), (-20, 120)])).isApproximately(-20))
        // Two equal halves 10 dB apart: 10·log10((1 + 0.1) / 2) above the louder.
        #expect(
            try #require(LoudnessAnalysis.albumLoudness([(-10, 60), (-20, 60)])).isApproximately(-10 + 10 * log10(0.55))
        )
        #expect(LoudnessAnalysis.albumLoudness([]) == nil)
        #expect(LoudnessAnalysis.albumLoudness([(.nan, 60), (-10, 0)]) == nil)
    }
}
