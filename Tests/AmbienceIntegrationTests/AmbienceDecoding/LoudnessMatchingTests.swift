import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

/// Loudness matching heard: real encoders make the files, the library measures them with libebur128, the engine
/// renders through OpenAL Soft's loopback device, and libebur128 measures what came out.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct LoudnessMatchingTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    /// A stereo 1 kHz sine of `seconds` at `amplitude`, encoded by `encoder` ("oggenc", "flac", "lame") with tags.
    @discardableResult
    func encoded(_ relative: String, amplitude: Double, seconds: Double = 3, encoder: String, tags: [String] = [])
        throws -> String
    {
        let wav = try fixtures.sineWAV(
            relative.replacingOccurrences(of: "/", with: "_") + ".src.wav", hz: 1000, seconds: seconds,
            channels: 2, amplitude: amplitude)
        let out = fixtures.path(relative)
        try FileManager.default.createDirectory(
            atPath: (out as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        switch encoder {
        case "oggenc": try fixtures.run("oggenc", ["-Q", "-q", "6"] + tags.flatMap { ["-c", $0] } + ["-o", out, wav])
        case "flac": try fixtures.run("flac", ["-s", "-f"] + tags.map { "--tag=\($0)" } + ["-o", out, wav])
        default:
            try fixtures.run("lame", ["--quiet", "-b", "192"] + tags.flatMap { ["--tv", "TXXX=\($0)"] } + [wav, out])
        }
        return out
    }

    /// The library's items for `folder`, measured, in path order.
    func measuredLibrary(_ folder: String) throws -> [MediaItem] {
        let library = try MediaLibrary(
            folders: [folder], databasePath: fixtures.path("index-\(UUID().uuidString).sqlite"))
        try library.scan()
        let report = try library.analyzeLoudness()
        #expect(report.failed.isEmpty, "\(report.failed)")
        return library.items.sorted { $0.url < $1.url }
    }

    /// Plays `items` in order with `mode` and returns each item's rendered integrated loudness (LUFS), measured over
    /// its own `seconds` (less a 0.25 s margin either side of the join).
    func renderedLoudness(_ items: [MediaItem], mode: LoudnessMatching, seconds: Double = 3) throws -> (
        loudness: [Double], peak: Float
    ) {
        let engine = try AudioEngine(.offline(sampleRate: 48_000))
        engine.musicPlayer.loudnessMatching = mode
        engine.musicPlayer.setQueue(with: MediaItemCollection(items: items))
        engine.musicPlayer.play()
        let out = try Signal(engine.render(seconds: seconds * Double(items.count) + 0.5))
        let start = try #require(out.firstFrame(above: 0.0005))
        let perItem = Int(seconds * 48_000)
        var result: [Double] = []
        for index in items.indices {
            let from = start + index * perItem + 12_000, to = start + (index + 1) * perItem - 12_000
            let meter = try LoudnessMeter(channels: 2, sampleRate: 48_000)
            meter.add(Array(out.samples[(from * 2)..<(to * 2)]))
            result.append(try #require(meter.integratedLoudness))
        }
        return (result, out.peak())
    }

    @Test func twoFiles12dBApartPlayWithin1LUWithMatchingOnAnd12dBApartWithItOff() throws {
        try encoded("music/a-loud.ogg", amplitude: 0.4, encoder: "oggenc")
        try encoded("music/b-quiet.flac", amplitude: 0.1, encoder: "flac")
        let items = try measuredLibrary(fixtures.path("music"))
        try #require(items.count == 2)
        let loud = try #require(items[0].loudness?.trackLoudness),
            quiet = try #require(items[1].loudness?.trackLoudness)
        #expect(abs(loud - quiet - 12.04) < 0.3, "analysis: \(loud) and \(quiet) LUFS")
        let matched = try renderedLoudness(items, mode: .track)
        #expect(abs(matched.loudness[0] - matched.loudness[1]) < 1, "matched: \(matched.loudness)")
        let plain = try renderedLoudness(items, mode: .off)
        #expect(abs(plain.loudness[0] - plain.loudness[1] - 12.04) < 0.5, "off: \(plain.loudness)")
        // Matching brings both to the target through the loopback device (a stereo stream plays at unity).
        #expect(matched.loudness.allSatisfy { abs($0 - LoudnessGain.target) < 1 }, "\(matched.loudness)")
    }

    /// A ReplayGain tag says the quiet file is 6 dB louder than it is: the tag wins over the library's analysis.
    @Test func tagsWinOverAnalysis() throws {
        // Measured near -21 LUFS; the tag claims -15 (gain -3 dB against -18), so it plays 3 dB down: near -24.
        try encoded("music/a.ogg", amplitude: 0.1, encoder: "oggenc", tags: ["REPLAYGAIN_TRACK_GAIN=-3.00 dB"])
        try encoded("music/b.ogg", amplitude: 0.1, encoder: "oggenc")
        let items = try measuredLibrary(fixtures.path("music"))
        let measured = try #require(items[0].loudness?.trackLoudness)
        let out = try renderedLoudness(items, mode: .track)
        #expect(abs(out.loudness[0] - (measured - 3)) < 0.5, "tagged: \(out.loudness[0]), measured \(measured)")
        #expect(abs(out.loudness[1] - LoudnessGain.target) < 0.5, "analysed: \(out.loudness[1])")
    }

    /// Two tracks of one album, 12 dB apart: album gain (and automatic, playing them in a row) keeps them apart.
    @Test func anAlbumsTracksKeepTheirRelativeLevel() throws {
        try encoded(
            "music/album/1.flac", amplitude: 0.4, encoder: "flac", tags: ["ALBUM=Pair", "ARTIST=Duo", "TRACKNUMBER=1"])
        try encoded(
            "music/album/2.flac", amplitude: 0.1, encoder: "flac", tags: ["ALBUM=Pair", "ARTIST=Duo", "TRACKNUMBER=2"])
        let items = try measuredLibrary(fixtures.path("music"))
        try #require(items.count == 2 && items[0].loudness?.albumLoudness != nil)
        #expect(items[0].loudness?.albumLoudness == items[1].loudness?.albumLoudness)
        for mode in [LoudnessMatching.album, .automatic] {
            let out = try renderedLoudness(items, mode: mode)
            #expect(abs(out.loudness[0] - out.loudness[1] - 12.04) < 0.5, "\(mode): \(out.loudness)")
            #expect(abs(out.loudness[0] - LoudnessGain.target) < 3, "\(mode): \(out.loudness)")
        }
        // Track mode evens them out.
        let track = try renderedLoudness(items, mode: .track)
        #expect(abs(track.loudness[0] - track.loudness[1]) < 1, "track: \(track.loudness)")
    }

    /// A quiet track with one loud burst: the gain stops where the burst reaches full scale, so nothing clips.
    @Test func thePeakLimitHolds() throws {
        // Quiet (about -35 LUFS) with a 1 ms burst at 0.9: short enough that BS.1770's gating still hears the quiet.
        let quiet = try fixtures.sineWAV("quiet.wav", hz: 1000, seconds: 3, channels: 2, amplitude: 0.02)
        let burst = try fixtures.sineWAV("burst.wav", hz: 1000, seconds: 0.001, channels: 2, amplitude: 0.9)
        let joined = fixtures.path("joined.wav")
        try fixtures.run("sox", [quiet, burst, quiet, joined])
        try fixtures.folder("music")
        try fixtures.run("flac", ["-s", "-f", "-o", fixtures.path("music/peaky.flac"), joined])
        let items = try measuredLibrary(fixtures.path("music"))
        let figures = try #require(items.first?.loudness)
        let decision = LoudnessGain.decide(tags: nil, analysis: figures, mode: .track, albumNeighbour: false)
        #expect(decision.limitedByPeak && decision.requestedDecibels > 10, "\(decision) from \(figures)")
        let out = try renderedLoudness(items, mode: .track, seconds: 6.001)
        #expect(out.peak <= 1.0, "peak \(out.peak)")
        #expect(out.peak > 0.9, "the limit lifts it to just under full scale: \(out.peak)")
    }

    /// Absurd, NaN and empty gain tags are refused: the file plays, at its analysed gain.
    @Test func badGainTagsAreRefusedNotTrusted() throws {
        let bad = ["+900 dB", "nan", "", "-inf", "1e400", String(repeating: "9", count: 5000)]
        for (index, gain) in bad.enumerated() {
            let file = try encoded(
                "bad/\(index).ogg", amplitude: 0.1, seconds: 1, encoder: "oggenc",
                tags: ["REPLAYGAIN_TRACK_GAIN=\(gain)", "REPLAYGAIN_TRACK_PEAK=\(gain)", "R128_TRACK_GAIN=\(gain)"])
            #expect(try AudioFile.info(file).tags.loudness == nil, "\(gain)")
        }
        let items = try measuredLibrary(fixtures.path("bad"))
        #expect(items.count == bad.count)
        let out = try renderedLoudness(items, mode: .track, seconds: 1)
        #expect(out.loudness.allSatisfy { abs($0 - LoudnessGain.target) < 1 }, "\(out.loudness)")
    }

    /// Each format's tag carrier reaches the same parser.
    @Test func everyFormatsLoudnessTagsAreRead() throws {
        let ogg = try encoded(
            "t/a.ogg", amplitude: 0.1, seconds: 0.5, encoder: "oggenc",
            tags: ["REPLAYGAIN_TRACK_GAIN=-2.5 dB", "REPLAYGAIN_ALBUM_GAIN=+1 dB"])
        #expect(try AudioFile.info(ogg).tags.loudness == LoudnessMeasurement(trackLoudness: -15.5, albumLoudness: -19))
        let flac = try encoded(
            "t/a.flac", amplitude: 0.1, seconds: 0.5, encoder: "flac",
            tags: ["REPLAYGAIN_TRACK_GAIN=-2.5 dB", "REPLAYGAIN_TRACK_PEAK=0.25"])
        #expect(try AudioFile.info(flac).tags.loudness == LoudnessMeasurement(trackLoudness: -15.5, trackPeak: 0.25))
        let mp3 = try encoded(
            "t/a.mp3", amplitude: 0.1, seconds: 0.5, encoder: "lame",
            tags: ["replaygain_track_gain=-2.5 dB", "replaygain_track_peak=0.25"])
        #expect(try AudioFile.info(mp3).tags.loudness == LoudnessMeasurement(trackLoudness: -15.5, trackPeak: 0.25))
        let opus = fixtures.path("t/a.opus")
        try fixtures.run(
            "opusenc",
            ["--quiet", "--comment", "R128_TRACK_GAIN=-1280", try fixtures.sineWAV("o.wav", seconds: 0.5), opus])
        #expect(try AudioFile.info(opus).tags.loudness == LoudnessMeasurement(trackLoudness: -18))
        let m4a = fixtures.path("t/a.m4a")
        try fixtures.run(
            "ffmpeg", ["-v", "error", "-i", try fixtures.sineWAV("m.wav", seconds: 0.5), "-c:a", "aac", m4a])
        // iTunes' freeform atoms, as foobar2000 and rsgain write them (ffmpeg's muxer writes no `----` atoms).
        try fixtures.run(
            "/usr/bin/python3",
            [
                "-c",
                """
                import sys
                from mutagen.mp4 import MP4, MP4FreeForm
                f = MP4(sys.argv[1])
                f['----:com.apple.iTunes:replaygain_track_gain'] = [MP4FreeForm(b'-2.5 dB')]
                f['----:com.apple.iTunes:replaygain_track_peak'] = [MP4FreeForm(b'0.25')]
                f.save()
                """, m4a
            ])
        #expect(try AudioFile.info(m4a).tags.loudness == LoudnessMeasurement(trackLoudness: -15.5, trackPeak: 0.25))
    }

    /// A rescan measures only what changed: an unchanged file keeps its figures, a changed one is measured again.
    @Test func analysisIsIncremental() throws {
        try encoded("music/album/1.ogg", amplitude: 0.4, seconds: 1, encoder: "oggenc", tags: ["ALBUM=Inc", "ARTIST=X"])
        let second = try encoded(
            "music/album/2.ogg", amplitude: 0.1, seconds: 1, encoder: "oggenc", tags: ["ALBUM=Inc", "ARTIST=X"])
        let library = try MediaLibrary(folders: [fixtures.path("music")], databasePath: fixtures.path("index.sqlite"))
        try library.scan()
        #expect(try library.analyzeLoudness().measured == 2)
        let before = library.items.sorted { $0.url < $1.url }
        try library.scan()
        #expect(try library.analyzeLoudness().measured == 0)
        // The second track is now as loud as the first: measured again, and the album with it.
        Thread.sleep(forTimeInterval: 1.1)  // a new mtime second
        try fixtures.run(
            "oggenc",
            [
                "-Q", "-q", "6", "-c", "ALBUM=Inc", "-c", "ARTIST=X", "-o", second,
                try fixtures.sineWAV("loud.wav", hz: 1000, seconds: 1, channels: 2, amplitude: 0.4)
            ])
        try library.scan()
        let report = try library.analyzeLoudness()
        #expect(report.measured == 1 && report.albums == 1)
        let after = library.items.sorted { $0.url < $1.url }
        #expect(after[0].loudness?.trackLoudness == before[0].loudness?.trackLoudness)
        #expect(abs((after[1].loudness?.trackLoudness ?? 0) - (before[1].loudness?.trackLoudness ?? 0) - 12) < 0.5)
        // From about -10.6 LUFS (one track 12 dB down) to about -7.9 (both loud).
        #expect((after[0].loudness?.albumLoudness ?? 0) > (before[0].loudness?.albumLoudness ?? 0) + 2)
    }

    /// Removing a track, or a file becoming unreadable, works the album's loudness out again from the tracks left.
    /// One-second Ogg tracks of one album in music/ (1.ogg loud, the rest 12 dB down), scanned and measured: their
    /// paths, the library and a reader of 1.ogg's figures.
    func measuredAlbum(_ album: String, tracks: Int) throws -> (
        paths: [String], library: MediaLibrary, first: () throws -> LoudnessMeasurement
    ) {
        let paths = try (1...tracks).map { n in
            try encoded(
                "music/\(n).ogg", amplitude: n == 1 ? 0.4 : 0.1, seconds: 1, encoder: "oggenc",
                tags: ["ALBUM=\(album)", "ARTIST=X"])
        }
        let library = try MediaLibrary(folders: [fixtures.path("music")], databasePath: fixtures.path("index.sqlite"))
        try library.scan()
        try library.analyzeLoudness()
        return (paths, library, { try #require(library.items.first { $0.url.hasSuffix("/1.ogg") }?.loudness) })
    }

    @Test func removingATrackWorksTheAlbumOutAgain() throws {
        let (paths, library, first) = try measuredAlbum("Shrinks", tracks: 3)
        let (second, third) = (paths[1], paths[2])
        let loudTrack = try #require(try first().trackLoudness)
        let withThree = try #require(try first().albumLoudness)
        #expect(withThree < loudTrack - 3)
        // Removed from the folder: the album is worked out from the two left, louder than with three.
        try FileManager.default.removeItem(atPath: second)
        #expect(try library.scan().removed == 1)
        let withTwo = try #require(try first().albumLoudness)
        #expect(withTwo > withThree + 0.5 && withTwo < loudTrack - 1)
        // Unreadable now: removed from the index too, and the album is the loud track alone.
        try Data(repeating: 0x55, count: 4_000).write(to: URL(fileURLWithPath: third))
        try library.scan()
        #expect(library.items.count == 1)
        #expect(try #require(try first().albumLoudness).isApproximately(loudTrack, within: 1e-9))
        #expect(try first().albumPeak == first().trackPeak)
    }

    /// A track retagged into another album leaves the first album's loudness at once, before any new analysis.
    @Test func aTrackRetaggedIntoAnotherAlbumLeavesTheFirst() throws {
        let (paths, library, first) = try measuredAlbum("First", tracks: 2)
        let moved = paths[1]
        let loudTrack = try #require(try first().trackLoudness)
        // Two tracks of a second, 12 dB apart: the album is 10·log10((1 + 10^-1.2) / 2) ≈ -2.7 dB from the loud one.
        #expect(try #require(try first().albumLoudness) < loudTrack - 2)
        Thread.sleep(forTimeInterval: 1.1)  // a new mtime second
        try fixtures.run(
            "oggenc",
            [
                "-Q", "-q", "6", "-c", "ALBUM=Second", "-c", "ARTIST=X", "-o", moved,
                try fixtures.sineWAV("moved.wav", hz: 1000, seconds: 1, channels: 2, amplitude: 0.1)
            ])
        #expect(try library.scan().updated == 1)
        #expect(try #require(try first().albumLoudness).isApproximately(loudTrack, within: 1e-9))
        #expect(library.items.first { $0.url.hasSuffix("/2.ogg") }?.loudness?.albumLoudness == nil)
    }

    /// The background analysis measures the library and says so through the library's notifications.
    @Test func theBackgroundAnalysisMeasuresAndNotifies() throws {
        try encoded("music/1.ogg", amplitude: 0.2, seconds: 1, encoder: "oggenc")
        let library = try MediaLibrary(folders: [fixtures.path("music")], databasePath: fixtures.path("index.sqlite"))
        try library.scan()
        library.beginGeneratingLibraryChangeNotifications()
        defer { library.endGeneratingLibraryChangeNotifications() }
        library.startLoudnessAnalysis()
        #expect(eventually { library.items.first?.loudness != nil })
        #expect(eventually { library.drainEvents().contains(.libraryDidChange) })
        library.stopLoudnessAnalysis()
        #expect(!library.isAnalyzingLoudness)
    }
}
