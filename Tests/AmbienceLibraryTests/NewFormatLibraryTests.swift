import Foundation
import Glibc
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

/// The library indexes M4A (AAC and ALAC) and WAV files whose tags and covers were set by ffmpeg and lame: every
/// field, every cover, the exact durations.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct NewFormatLibraryTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    @Test func scanIndexesEveryFieldAndCoverOfM4AAndWAV() throws {
        let source = try fixtures.sineWAV("source.wav", seconds: 0.5, rate: 44_100, bits: 16)
        let cover = BuildProducts.root + "/Assets/Music/cover.png"
        try fixtures.folder("music/Sigur Rós/Ágætis byrjun")
        try fixtures.folder("music/Björk/Post")
        func ffmpegTags(_ title: String, _ artist: String, _ album: String, track: String, disc: String) -> [String] {
            [
                "-metadata", "title=\(title)", "-metadata", "artist=\(artist)", "-metadata", "album=\(album)",
                "-metadata", "album_artist=\(artist)", "-metadata", "genre=Post-Rock", "-metadata",
                "composer=Jón Þór Birgisson",
                "-metadata", "track=\(track)", "-metadata", "disc=\(disc)"
            ]
        }
        try fixtures.run(
            "ffmpeg",
            [
                "-v", "error", "-i", source, "-i", cover, "-map", "0", "-map", "1", "-c:a", "aac",
                "-c:v", "copy", "-disposition:v", "attached_pic"
            ]
                + ffmpegTags("Svefn-g-englar", "Sigur Rós", "Ágætis byrjun", track: "1/9", disc: "1/2")
                + [fixtures.path("music/Sigur Rós/Ágætis byrjun/1.m4a")])
        try fixtures.run(
            "ffmpeg",
            ["-v", "error", "-i", source, "-c:a", "alac"]
                + ffmpegTags("Starálfur", "Sigur Rós", "Ágætis byrjun", track: "2/9", disc: "2/2")
                + [fixtures.path("music/Sigur Rós/Ágætis byrjun/2.m4a")])
        let mp3 = fixtures.path("tag.mp3")
        try fixtures.run(
            "lame",
            [
                "--quiet", "--id3v2-only", "--id3v2-utf16", "--tt", "Hyperballad", "--ta", "Björk",
                "--tl", "Post", "--tg", "Électronique", "--tn", "3/11", "--tv", "TPE2=Björk",
                "--tv", "TCOM=Björk Guðmundsdóttir", "--tv", "TPOS=1/1", "--ti", cover, source, mp3
            ])
        _ = try fixtures.write(
            "music/Björk/Post/3.wav",
            bytes: appendingChunk(
                "id3 ", try id3v2Tag(ofMP3: mp3),
                toWAV: try fixtures.bytes(of: source)))
        let library = try MediaLibrary(
            folders: [fixtures.path("music")], databasePath: fixtures.path("index/library.sqlite"))
        let report = try library.scan()
        #expect(report.files == 3 && report.added == 3)
        #expect(report.failed.isEmpty, "\(report.failed)")
        let items = Dictionary(uniqueKeysWithValues: library.items.map { ($0.title ?? "", $0) })
        #expect(Set(items.keys) == ["Svefn-g-englar", "Starálfur", "Hyperballad"])
        for name in ["Svefn-g-englar", "Starálfur"] {
            let item = try #require(items[name])
            #expect(item.artist == "Sigur Rós" && item.albumArtist == "Sigur Rós" && item.albumTitle == "Ágætis byrjun")
            #expect(item.genre == "Post-Rock" && item.composer == "Jón Þór Birgisson")
            #expect(item.playbackDuration == 0.5)
        }
        #expect(items["Svefn-g-englar"]?.trackNumber == 1 && items["Svefn-g-englar"]?.discNumber == 1)
        #expect(items["Starálfur"]?.trackNumber == 2 && items["Starálfur"]?.discNumber == 2)
        let wav = try #require(items["Hyperballad"])
        #expect(
            wav.artist == "Björk" && wav.albumArtist == "Björk" && wav.albumTitle == "Post"
                && wav.genre == "Électronique")
        #expect(wav.composer == "Björk Guðmundsdóttir" && wav.trackNumber == 3 && wav.discNumber == 1)
        #expect(wav.playbackDuration == 0.5)

        #expect(items.mapValues(\.hasArtwork) == ["Svefn-g-englar": true, "Starálfur": false, "Hyperballad": true])
        for name in ["Svefn-g-englar", "Hyperballad"] {
            let artwork = try #require(items[name]?.artwork, "\(name)")
            #expect(artwork.source == .embedded(mimeType: "image/png"))
            #expect(artwork.bounds == ArtworkSize(width: 64, height: 64))
            #expect(artwork.image(size: ArtworkSize(width: 8, height: 8)) != nil)
        }
        // The new formats are in queries like any other.
        let sigur = MediaQuery(
            library: library, filterPredicates: [MediaPropertyPredicate(value: "sigur ros", forProperty: .artist)])
        #expect(sigur.items.map(\.title) == ["Starálfur", "Svefn-g-englar"])
    }
}
