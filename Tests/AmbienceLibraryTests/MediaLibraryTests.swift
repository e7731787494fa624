import Foundation
import Glibc
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

/// The media library against folders of real files made by oggenc and lame: tags in several scripts, albums and a
/// compilation, playlists, artwork from every source, incremental rescans, inotify notifications, every kind of bad
/// input, and a damaged index. Each test has its own temporary folder.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct MediaLibraryTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    var music: String { fixtures.path("music") }
    var databasePath: String { fixtures.path("index/library.sqlite") }

    func openLibrary(busyTimeout: Double = 2) throws -> MediaLibrary {
        try MediaLibrary(folders: [music], databasePath: databasePath, busyTimeout: busyTimeout)
    }

    /// Two albums, a compilation (one album, two artists) and a single, in Ogg and MP3, with non-ASCII tags.
    func makeCollection() throws { try fixtures.libraryCollection() }

    // MARK: - Tags, grouping, sections

    @Test func scanReadsTagsInEveryScriptWithExactDurations() throws {
        try makeCollection()
        let library = try openLibrary()
        let report = try library.scan()
        #expect(report.files == 7)
        #expect(report.added == 7)
        #expect(report.failed.isEmpty, "\(report.failed)")
        #expect(report.description == "7 files, 7 added, 0 updated, 0 removed, 0 failed")

        let items = library.items
        #expect(
            items.map(\.title) == [
                "An Ending", "Army of Me", "Hyperballad", "Starálfur", "Svefn-g-englar", "Xtal", "99 Luftballons"
            ])
        let sigur = try #require(items.first { $0.title == "Svefn-g-englar" })
        #expect(sigur.artist == "Sigur Rós")
        #expect(sigur.albumTitle == "Ágætis byrjun")
        #expect(sigur.genre == "Post-Rock")
        #expect(sigur.trackNumber == 1)
        #expect(sigur.playbackDuration == 0.5)  // lame's gapless header: exactly the frames encoded
        #expect(sigur.persistentID == MediaItem.stableID(sigur.url))
        #expect(sigur.url == music + "/Sigur Rós/Ágætis byrjun/1.mp3")
        let hyperballad = try #require(items.first { $0.title == "Hyperballad" })
        #expect(hyperballad.playbackDuration == 0.5)
        #expect(hyperballad.composer == "Björk")
        #expect(hyperballad.genre == "Électronique")
        #expect(items.first { $0.title == "Army of Me" }?.trackNumber == 1)
        #expect(items.first { $0.title == "Starálfur" }?.trackNumber == 2)
        #expect(library.item(persistentID: sigur.persistentID) == sigur)
        #expect(library.item(persistentID: 12345) == nil)
    }

    @Test func predicatesIgnoreCaseAndDiacritics() throws {
        try makeCollection()
        let library = try openLibrary()
        try library.scan()
        func titles(_ predicates: MediaPropertyPredicate...) -> [String?] {
            MediaQuery(library: library, filterPredicates: Set(predicates)).items.map(\.title)
        }
        #expect(
            titles(MediaPropertyPredicate(value: "SIGUR ROS", forProperty: .artist)) == ["Starálfur", "Svefn-g-englar"])
        #expect(titles(MediaPropertyPredicate(value: "bjork", forProperty: .artist)) == ["Army of Me", "Hyperballad"])
        #expect(titles(MediaPropertyPredicate(value: "sigur", forProperty: .artist)).isEmpty)
        #expect(
            titles(MediaPropertyPredicate(value: "rós", forProperty: .artist, comparisonType: .contains)) == [
                "Starálfur", "Svefn-g-englar"
            ])
        #expect(
            titles(MediaPropertyPredicate(value: "ALFUR", forProperty: .title, comparisonType: .contains)) == [
                "Starálfur"
            ])
        #expect(titles(MediaPropertyPredicate(value: "electronique", forProperty: .genre)) == ["Hyperballad"])
        #expect(
            titles(MediaPropertyPredicate(value: "agætis byrjun", forProperty: .albumTitle)) == [
                "Starálfur", "Svefn-g-englar"
            ])
        // Several predicates must all match.
        #expect(
            titles(
                MediaPropertyPredicate(value: "björk", forProperty: .artist),
                MediaPropertyPredicate(value: 2, forProperty: .trackNumber)) == ["Hyperballad"])
        // Values that look like SQL are just values.
        #expect(titles(MediaPropertyPredicate(value: "x' OR 1=1 --", forProperty: .artist)).isEmpty)
        #expect(titles(MediaPropertyPredicate(value: "%", forProperty: .artist, comparisonType: .contains)).isEmpty)
        let sigur = try #require(library.items.first { $0.title == "Starálfur" })
        #expect(titles(MediaPropertyPredicate(value: sigur.persistentID, forProperty: .persistentID)) == ["Starálfur"])
        #expect(
            titles(MediaPropertyPredicate(value: sigur.albumPersistentID, forProperty: .albumPersistentID)) == [
                "Starálfur", "Svefn-g-englar"
            ])
    }

    @Test func albumsCompilationsArtistsAndSections() throws {
        try makeCollection()
        let library = try openLibrary()
        try library.scan()

        let songs = try MediaQuery.songs(in: library).results()
        #expect(
            songs.itemSections == [
                MediaQuerySection(title: "A", range: 0..<2), MediaQuerySection(title: "H", range: 2..<3),
                MediaQuerySection(title: "S", range: 3..<5), MediaQuerySection(title: "X", range: 5..<6),
                MediaQuerySection(title: "#", range: 6..<7)
            ])

        let albums = try MediaQuery.albums(in: library).results()
        #expect(
            albums.collections.map { $0.representativeItem?.albumTitle } == [
                "Ágætis byrjun", "Now Ambient", "Post", "99 Luftballons"
            ])
        #expect(albums.collections.map(\.count) == [2, 2, 2, 1])
        #expect(albums.collections[2].items.map(\.title) == ["Army of Me", "Hyperballad"])  // by track number
        #expect(
            albums.collectionSections == [
                MediaQuerySection(title: "A", range: 0..<1), MediaQuerySection(title: "N", range: 1..<2),
                MediaQuerySection(title: "P", range: 2..<3), MediaQuerySection(title: "#", range: 3..<4)
            ])
        let albumGroups = try MediaQuery.albums(in: library).groups()
        #expect(albumGroups.map(\.name) == ["Ágætis byrjun", "Now Ambient", "Post", "99 Luftballons"])
        #expect(albumGroups.map(\.count) == [2, 2, 2, 1])
        #expect(albumGroups.map(\.isCompilation) == [false, true, false, false])
        #expect(albumGroups[0].persistentID == albums.collections[0].representativeItem?.albumPersistentID)

        let compilations = MediaQuery.compilations(in: library).collections
        #expect(compilations.count == 1)
        #expect(compilations.first?.items.map(\.artist) == ["Aphex Twin", "Brian Eno"])
        #expect(library.items.filter(\.isCompilation).count == 2)

        let artists = try MediaQuery.artists(in: library).groups()
        #expect(artists.map(\.name) == ["Aphex Twin", "Björk", "Brian Eno", "Nena", "Sigur Rós"])
        #expect(artists.map(\.count) == [1, 2, 1, 1, 2])
        let artistCollections = MediaQuery.artists(in: library).collections
        #expect(
            artistCollections.map { $0.representativeItem?.artist } == [
                "Aphex Twin", "Björk", "Brian Eno", "Nena", "Sigur Rós"
            ])

        // Without an album artist tag, a compilation files under "Various Artists".
        let albumArtists = try MediaQuery.albumArtists(in: library).groups()
        #expect(albumArtists.map(\.name) == ["Björk", "Nena", "Sigur Rós", "Various Artists"])

        let genres = try MediaQuery.genres(in: library).groups()
        #expect(genres.map(\.name) == ["Électronique", "Pop", "Post-Rock", nil])
        #expect(genres.last?.count == 4)

        var filtered = MediaQuery.albums(in: library)
        filtered.addFilterPredicate(MediaPropertyPredicate(value: "bjork", forProperty: .artist))
        #expect(filtered.collections.map(\.count) == [2])
        #expect(filtered.groupingType == .album)
    }

    @Test func podcastsAreNotSongs() throws {
        try fixtures.libraryOgg("music/show.ogg", ["TITLE=Episode 1", "GENRE=Podcast"])
        try fixtures.libraryOgg("music/song.ogg", ["TITLE=Song"])
        let library = try openLibrary()
        try library.scan()
        #expect(MediaQuery.songs(in: library).items.map(\.title) == ["Song"])
        #expect(MediaQuery(library: library).items.count == 2)
        let podcasts = MediaQuery(
            library: library, filterPredicates: [MediaPropertyPredicate(value: MediaType.podcast)])
        #expect(podcasts.items.map(\.mediaType) == [.podcast])
    }

    // MARK: - Playlists

    @Test func playlistsResolveRelativeAbsoluteAndFileURLEntriesAndSkipTheRest() throws {
        let one = try fixtures.libraryOgg("music/A/one.ogg", ["TITLE=One"])
        try fixtures.libraryOgg("music/A/two wörds.ogg", ["TITLE=Two"])
        let three = try fixtures.libraryMP3("music/B/three.mp3", ["--tt", "Three"])
        try fixtures.libraryOgg("outside.ogg", ["TITLE=Outside"])
        try fixtures.folder("music/Lists")
        let mix = """
            #EXTM3U
            #EXTINF:1,Someone - One
            ../A/one.ogg

            #EXTINF:-1,Missing
            ../A/missing.ogg
            \(three)
            ../../outside.ogg
            file://\(music)/A/two%20w%C3%B6rds.ogg
            http://example.com/stream.mp3
            ../A/one.ogg
            """
        _ = try fixtures.write("music/Lists/Mix.m3u", bytes: Array(mix.utf8))
        // A UTF-8 playlist with a byte-order mark, CRLF lines and a #PLAYLIST name.
        let road = "\u{FEFF}#EXTM3U\r\n#PLAYLIST:Road Trip\r\n..\\B\\three.mp3\r\n#EXTINF:5,Ünïcode\r\n\(one)\r\n"
        _ = try fixtures.write("music/Lists/ünïcode.m3u8", bytes: Array(road.utf8))

        let library = try openLibrary()
        let report = try library.scan()
        #expect(report.playlists == 2)
        let mixWarnings = report.warnings.filter { $0.path.hasSuffix("Mix.m3u") }.map(\.reason)
        #expect(
            mixWarnings == [
                "line 6: \(music)/A/missing.ogg not found; skipped",
                "line 8: \(fixtures.path("outside.ogg")) is outside the library; skipped",
                "line 10: http://example.com/stream.mp3 is not a local file; skipped"
            ])

        let playlists = library.playlists
        #expect(playlists.map(\.name) == ["Mix", "Road Trip"])
        #expect(playlists[0].items.map(\.title) == ["One", "Three", "Two", "One"])
        #expect(playlists[1].items.map(\.title) == ["Three", "One"])
        #expect(playlists[0].url == music + "/Lists/Mix.m3u")

        let query = MediaQuery.playlists(in: library)
        #expect(query.collections.map(\.count) == [4, 2])
        #expect(
            query.collectionSections == [
                MediaQuerySection(title: "M", range: 0..<1), MediaQuerySection(title: "R", range: 1..<2)
            ])
        #expect(try query.groups().map(\.name) == ["Mix", "Road Trip"])
        var filtered = query
        filtered.addFilterPredicate(MediaPropertyPredicate(value: "two", forProperty: .title))
        #expect(try filtered.groups().map(\.name) == ["Mix"])

        // A playlist that is deleted disappears; an edited one is read again.
        try FileManager.default.removeItem(atPath: fixtures.path("music/Lists/ünïcode.m3u8"))
        _ = try fixtures.write("music/Lists/Mix.m3u", bytes: Array("../B/three.mp3\n".utf8))
        let rescan = try library.scan()
        #expect(rescan.playlists == 1)
        #expect(library.playlists.map { $0.items.map(\.title) } == [["Three"]])
    }

    // MARK: - Artwork

    @Test func artworkFromID3PictureVorbisPictureAndCoverFiles() throws {
        let png = try fixtures.write("red.png", bytes: redPNG)
        try fixtures.libraryMP3("music/apic/song.mp3", ["--tt", "APIC", "--ti", png])
        let block = Data(flacPictureBlock(type: 3, mime: "image/png", image: redPNG)).base64EncodedString()
        try fixtures.libraryOgg("music/vorbis/song.ogg", ["TITLE=Vorbis", "METADATA_BLOCK_PICTURE=\(block)"])
        try fixtures.libraryOgg("music/cover/song.ogg", ["TITLE=Cover"])
        _ = try fixtures.write("music/cover/Cover.PNG", bytes: redPNG)
        // A damaged cover.png is passed over for folder.png (the bundled 64×64 cover).
        try fixtures.libraryOgg("music/folder/song.ogg", ["TITLE=Folder"])
        _ = try fixtures.write("music/folder/cover.png", bytes: Array(redPNG.prefix(20)))
        try FileManager.default.copyItem(atPath: bundledCover, toPath: fixtures.path("music/folder/folder.png"))
        try fixtures.libraryOgg("music/none/song.ogg", ["TITLE=None"])

        let library = try openLibrary()
        let report = try library.scan()
        #expect(report.failed.isEmpty)
        let items = Dictionary(uniqueKeysWithValues: library.items.map { ($0.title ?? "", $0) })
        #expect(
            items.mapValues(\.hasArtwork) == [
                "APIC": true, "Vorbis": true, "Cover": true, "Folder": true, "None": false
            ])

        for name in ["APIC", "Vorbis"] {
            let artwork = try #require(items[name]?.artwork, "\(name)")
            #expect(artwork.source == .embedded(mimeType: "image/png"))
            #expect(artwork.bounds == ArtworkSize(width: 2, height: 2))
            let image = try #require(artwork.image(size: ArtworkSize(width: 4, height: 3)))
            #expect(image.width == 4 && image.height == 3 && image.pixels.count == 4 * 3 * 4)
            #expect((0..<12).allSatisfy { image.pixel(x: $0 % 4, y: $0 / 4) == (255, 0, 0, 255) })
        }
        let cover = try #require(items["Cover"]?.artwork)
        #expect(cover.source == .file(music + "/cover/Cover.PNG"))
        let onePixel = try #require(cover.image(size: ArtworkSize(width: 1, height: 1)))
        #expect(onePixel.pixel(x: 0, y: 0) == (255, 0, 0, 255))

        let folder = MediaItemArtwork.lookup(forFileAt: Array(music.utf8) + Array("/folder/song.ogg".utf8))
        #expect(folder.artwork?.source == .file(music + "/folder/folder.png"))
        #expect(folder.artwork?.bounds == ArtworkSize(width: 64, height: 64))
        #expect(folder.ignored.count == 1)
        if case .undecodable(let path, let reason)? = folder.ignored.first {
            #expect(path == music + "/folder/cover.png")
            // Its header is read before anything decodes it: cut short, it is refused there.
            #expect(reason == "PNG header is cut short or does not start with IHDR")
        } else {
            Issue.record("expected the damaged cover.png to be reported, got \(folder.ignored)")
        }
        #expect(folder.artwork?.image(size: ArtworkSize(width: 0, height: 10)) == nil)
        #expect(items["None"]?.artwork == nil)
    }

    @Test func imagesOver16MBAreIgnoredWithAReason() throws {
        try fixtures.libraryOgg("music/big/song.ogg", ["TITLE=Big"])
        let big = fixtures.path("music/big/cover.jpg")
        #expect(FileManager.default.createFile(atPath: big, contents: nil))
        #expect(truncate(big, 17 << 20) == 0)  // sparse: 17 MB claimed, nothing written
        let library = try openLibrary()
        let report = try library.scan()
        #expect(report.warnings.contains { $0.path == big && $0.reason.contains("over the 16 MB limit") })
        let item = try #require(library.items.first)
        #expect(!item.hasArtwork)
        let lookup = MediaItemArtwork.lookup(forFileAt: item.fileSystemPath)
        #expect(lookup.artwork == nil)
        #expect(lookup.ignored == [.tooLarge(big, bytes: 17 << 20)])
        #expect(throws: ArtworkError.tooLarge("x", bytes: (16 << 20) + 1)) {
            try MediaItemArtwork(data: [UInt8](repeating: 0, count: (16 << 20) + 1), source: .file("x"), name: "x")
        }
    }

    // MARK: - Bad input

    @Test func badInputIsRecordedPerFileAndTheScanGoesOn() throws {
        let good = try fixtures.libraryOgg("music/good.ogg", ["TITLE=Good"])
        let goodBytes = try fixtures.bytes(of: good)
        var random = SplitMix64(seed: 7)
        _ = try fixtures.write(
            "music/garbage.ogg", bytes: (0..<4096).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        _ = try fixtures.write("music/truncated.ogg", bytes: Array(goodBytes.prefix(goodBytes.count / 2)))
        _ = try fixtures.write("music/empty.mp3", bytes: [])
        #expect(mkfifo(fixtures.path("music/fifo.ogg"), 0o644) == 0)
        #expect(symlink("nowhere.mp3", fixtures.path("music/dangling.mp3")) == 0)
        #expect(symlink("self.ogg", fixtures.path("music/self.ogg")) == 0)
        // A folder symlink back up the tree: walked once, reported, not followed forever.
        try fixtures.folder("music/deep")
        #expect(symlink("..", fixtures.path("music/deep/back")) == 0)
        // A file name that is not UTF-8 ("caf\xE9.ogg" in Latin-1): indexed under its exact bytes.
        let latin1Name = Array(music.utf8) + Array("/caf".utf8) + [0xE9] + Array(".ogg".utf8)
        try fixtures.libraryOgg("latin1-source.ogg", ["TITLE=Café"])
        #expect(RawPath.withCString(latin1Name) { rename(fixtures.path("latin1-source.ogg"), $0) } == 0)
        // A tag in a broken encoding, an absurdly long tag, and a picture block whose length lies.
        let broken = try fixtures.libraryOgg("music/broken-tag.ogg", ["TITLE=Bad XYZ bytes"])
        try fixtures.patchOgg(broken, replacing: Array("XYZ".utf8), with: [0xFF, 0xFE, 0xC3])
        let long = try fixtures.libraryOgg("music/long-tag.ogg")
        try fixtures.rewriteOggComments(long, lines: ["TITLE=Long", "ARTIST=" + String(repeating: "A", count: 200_000)])
        var lying = flacPictureBlock(type: 3, mime: "image/png", image: redPNG)
        let lengthAt = lying.count - redPNG.count - 4
        lying.replaceSubrange(lengthAt..<(lengthAt + 4), with: [0x7F, 0xFF, 0xFF, 0xFF])
        try fixtures.libraryOgg(
            "music/lying-picture.ogg", ["TITLE=Lying", "METADATA_BLOCK_PICTURE=\(Data(lying).base64EncodedString())"])

        let library = try openLibrary()
        let report = try library.scan()
        let failed = Dictionary(
            uniqueKeysWithValues: report.failed.map { (($0.path as NSString).lastPathComponent, $0.reason) })
        #expect(
            failed["garbage.ogg"]
                == "not a WAV, Ogg Vorbis, Ogg Opus, FLAC, MP3, MP4 (AAC, ALAC), tracker module or MIDI file")
        #expect(failed["truncated.ogg"]?.contains("truncated") == true)
        #expect(failed["empty.mp3"] == "empty file")
        #expect(failed["fifo.ogg"]?.hasPrefix("cannot read") == true)
        #expect(failed["dangling.mp3"] == "broken symlink (its target does not exist)")
        #expect(failed["self.ogg"] == "symlink loop (too many levels of symbolic links)")
        #expect(failed.count == 6, "\(report.failed)")
        #expect(report.files == 11)
        #expect(report.added == 5)

        #expect(report.warnings.contains { $0.path == music + "/deep/back" && $0.reason.contains("symlink loop") })
        let latin1 = try #require(library.items.first { $0.title == "Café" })
        #expect(latin1.pathBytes == latin1Name)
        #expect(latin1.url == music + "/caf\u{FFFD}.ogg")
        #expect(latin1.fileSystemPath == latin1Name)
        #expect(latin1.persistentID == RawPath.stableID(latin1Name))
        #expect(latin1.playbackDuration == 0.5)
        #expect(report.warnings.contains { $0.path == latin1.url && $0.reason.contains("not valid UTF-8") })

        let badTag = try #require(library.items.first { $0.url == broken })
        #expect(badTag.title?.hasPrefix("Bad \u{FFFD}") == true)
        #expect(report.warnings.contains { $0.path == broken && $0.reason.contains("title tag is not valid text") })
        let longTag = try #require(library.items.first { $0.url == long })
        #expect(longTag.artist?.count == MediaLibrary.maximumTagLength)
        #expect(
            report.warnings.contains {
                $0.path == long && $0.reason == "artist tag is 200000 characters; cut to the first 1024"
            })
        let lyingItem = try #require(library.items.first { $0.title == "Lying" })
        #expect(!lyingItem.hasArtwork)
        #expect(
            report.warnings.contains { $0.path == lyingItem.url && $0.reason.contains("embedded picture is unusable") })

        // Unchanged failures are reported again without being read again; nothing else changes.
        let again = try library.scan()
        #expect(Set(again.failed) == Set(report.failed))
        #expect((again.added, again.updated, again.removed) == (0, 0, 0))
    }
}

/// The 64×64 cover in the repository's assets.
private let bundledCover = BuildProducts.root + "/Assets/Music/cover.png"

/// A 2×2 red PNG, complete with valid CRCs.
private let redPNG: [UInt8] = [
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x02,
    0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0xFD, 0xD4, 0x9A, 0x73, 0x00, 0x00, 0x00, 0x10, 0x49, 0x44,
    0x41,
    0x54, 0x78, 0xDA, 0x63, 0xF8, 0xCF, 0xC0, 0x00, 0x44, 0x0C, 0x10, 0x0A, 0x00, 0x1F, 0xEE, 0x03, 0xFD, 0x63, 0x5E,
    0xBB,
    0x5B, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82
]

private func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }

/// A FLAC picture block as Vorbis comments carry it (before base64).
private func flacPictureBlock(type: UInt32, mime: String, image: [UInt8]) -> [UInt8] {
    bigEndian(type) + bigEndian(UInt32(mime.utf8.count)) + Array(mime.utf8) + bigEndian(0)
        + bigEndian(2) + bigEndian(2) + bigEndian(24) + bigEndian(0) + bigEndian(UInt32(image.count)) + image
}
