import AmbienceHost
import CAmbience
import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceC
@testable import AmbienceCore
@testable import AmbienceLibrary
@testable import GravityWaveCore

/// The system music player's now-playing item carries the player's cover (`mpris:artUrl`) and file (`xesam:url`):
/// parsed from data shaped exactly as mpv-mpris 0.7 and VLC 3 send it (pure), and read from the real players.
@Suite(.offTheCooperativePool) struct SystemMusicItemTests {
    func info(url: String?, art: String?) -> MPRISPlayerInfo {
        var info = MPRISPlayerInfo(name: "org.mpris.MediaPlayer2.mpv", uniqueName: ":1.9")
        info.title = "song.wav"
        info.trackID = "/0"
        info.url = url
        info.artURL = art
        return info
    }

    /// mpv-mpris names a `cover.png` beside the file, percent-encoded as GLib's `g_filename_to_uri` writes it.
    @Test func mpvsPercentEncodedFileURLsBecomePaths() throws {
        let item = try #require(
            SystemMusicPlayer.item(
                info(
                    url: "file:///tmp/artexp/M%C3%BC%20sic/song.wav",
                    art: "file:///tmp/artexp/M%C3%BC%20sic/cover.png")))
        #expect(item.url == "/tmp/artexp/Mü sic/song.wav" && item.pathBytes == nil)
        #expect(item.artworkLocation == .file("/tmp/artexp/Mü sic/cover.png"))
        #expect(item.hasArtwork)
    }

    /// VLC names the picture it extracted from the file's tags into its art cache.
    @Test func vlcsArtCacheURLBecomesAPath() throws {
        let item = try #require(
            SystemMusicPlayer.item(
                info(
                    url: "file:///tmp/artexp/M%C3%BC%20sic/song.flac",
                    art: "file:///tmp/artexp/home/.cache/vlc/art/artistalbum/Artist/Album/art.png")))
        #expect(item.artworkLocation == .file("/tmp/artexp/home/.cache/vlc/art/artistalbum/Artist/Album/art.png"))
    }

    /// A web cover is noted as it is, never fetched: the item has no local artwork.
    @Test func anHTTPCoverIsKeptAsAURLAndNotFetched() throws {
        let art = "https://i.ytimg.com/vi/abc_DEF-123/hqdefault.jpg"
        let item = try #require(SystemMusicPlayer.item(info(url: "https://www.youtube.com/watch?v=abc", art: art)))
        #expect(item.artworkLocation == .remote(art))
        #expect(!item.hasArtwork && item.url.isEmpty)
        #expect(item.artwork == nil)
    }

    /// A path that is not UTF-8 is kept as bytes; what is no file URL, or a malformed one, is dropped, never a crash.
    @Test(
        arguments: [
            ("file:///music/%FFbad.wav", [UInt8]("/music/".utf8) + [0xFF] + [UInt8]("bad.wav".utf8)),
            ("file://localhost/a%2Fb.wav?x=1#t", [UInt8]("/a/b.wav".utf8)), ("FILE:///x", [UInt8]("/x".utf8)),
            ("file:///a%2", nil), ("file:///a%zz", nil), ("file:///a%00b", nil), ("file://host/a", nil),
            ("file:relative", nil), ("data:image/png;base64,iVBOR", nil), ("", nil), ("file://", nil)
        ] as [(String, [UInt8]?)])
    func fileURLsParseToBytesOrNothing(url: String, expected: [UInt8]?) {
        #expect(FileURL.pathBytes(url) == expected)
    }

    @Test func artURLsOfOtherKindsAreDropped() {
        // VLC names an embedded cover `attachment://0` when it cannot write its art cache: its own, unreadable here.
        for url in [
            "attachment://0", "data:image/png;base64,iVBORw0KGgo=", "ftp://x/y.png", "file:///%FF.png", "http://a b", ""
        ] {
            #expect(ArtworkLocation(mprisArtURL: url) == nil, "\(url)")
        }
        #expect(ArtworkLocation(mprisArtURL: "HTTP://example.com/a.png") == .remote("HTTP://example.com/a.png"))
    }

    /// Whatever picture file a player names, reading it neither hangs nor reads without a bound: a FIFO with no
    /// writer, a device, a folder, a missing file and a file that is no picture give no artwork.
    @Test func aNamedCoverThatIsNoPictureGivesNoArtworkAtOnce() throws {
        let fixtures = try Fixtures()
        let fifo = fixtures.path("cover.fifo")
        try #require(mkfifo(fifo, 0o644) == 0)
        let text = try fixtures.write("cover.png", bytes: Array("not a picture".utf8))
        let start = monotonicSeconds()
        for path in [fifo, "/dev/zero", fixtures.path(""), fixtures.path("missing.png"), text] {
            var item = MediaItem(persistentID: 1, url: "")
            item.artworkLocation = .file(path)
            #expect(item.artwork == nil, "\(path)")
        }
        #expect(monotonicSeconds() - start < 5)
    }

    @Test func aNonUTF8PathIsKeptAsBytes() throws {
        let item = try #require(SystemMusicPlayer.item(info(url: "file:///m/%FF.wav", art: nil)))
        #expect(item.pathBytes == [UInt8]("/m/".utf8) + [0xFF] + [UInt8](".wav".utf8))
        #expect(item.artworkLocation == nil)
    }
}

extension MPRISTests {
    /// mpv-mpris gives the `cover.png` beside the file: the item's artwork is that picture, its url the file, both
    /// percent-decoded; and Gravity Wave's HUD, in System mode, draws it instead of the no-artwork tile.
    @Test func mpvsCoverReachesTheItemAndTheHUD() throws {
        let folder = try fixtures.folder("Mü sic #1")
        let song = try fixtures.sineOgg(
            "Mü sic #1/covered.ogg", seconds: 3, tags: ["TITLE=Covered", "ARTIST=Artist", "ALBUM=Album"])
        try FileManager.default.copyItem(
            atPath: GravityWaveTests.assets + "/Music/cover.png", toPath: folder + "/cover.png")
        let mpv = try MPV(playing: song)
        defer { mpv.kill() }
        let client = try MPRISClient(timeout: .seconds(2))
        defer { client.close() }
        var name = ""
        #expect(
            eventually {
                let info = client.refresh().first { $0.processID == mpv.pid }
                name = info?.shortName ?? ""
                return info?.title == "Covered" && info?.artURL != nil
            })
        let sent = playerctl(["-p", name, "metadata", "mpris:artUrl"]) ?? ""
        #expect(sent.hasPrefix("file://") && sent.contains("M%C3%BC%20sic%20%231/cover.png"), "mpv sent \(sent)")

        let engine = try desktopEngine("system-artwork")
        let game = try gravityWave(on: engine, settings: try systemModeSettings())
        defer { engine.shutdown() }
        engine.systemMusicPlayer.preferredPlayer = name
        for _ in 0..<3 { tick(game, engine) }
        let item = try #require(engine.systemMusicPlayer.nowPlayingItem)
        #expect(item.url == song)
        #expect(item.artworkLocation == .file(folder + "/cover.png"))
        #expect(item.artwork?.bounds == ArtworkSize(width: 64, height: 64))

        // The C API: the same path and cover, through the tag getter.
        var config = ambience_engine_config()
        ambience_engine_config_init(&config)
        config.handle_termination_signals = false
        var made: OpaquePointer?
        try #require(ambience_engine_create(&config, &made) == AMBIENCE_OK)
        let cEngine = try #require(made)
        defer { ambience_engine_destroy(cEngine) }
        #expect(ambience_system_music_set_player(cEngine, name) == AMBIENCE_OK)
        func cTag(_ tag: ambience_tag) -> String {
            var buffer = [CChar](repeating: 0, count: 4096)
            _ = ambience_update(cEngine)
            guard ambience_system_music_get_now_playing_tag(cEngine, tag, &buffer, buffer.count, nil) == AMBIENCE_OK
            else { return "(failed)" }
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        #expect(eventually { cTag(AMBIENCE_TAG_ARTWORK) == folder + "/cover.png" }, "C: \(cTag(AMBIENCE_TAG_ARTWORK))")
        #expect(cTag(AMBIENCE_TAG_PATH) == song)

        let canvas = try Canvas(offscreenWidth: 960, height: 600)
        let differing = try drawnArtworkDifference(game, on: canvas)
        #expect(differing > 600, "the system player's cover is not drawn (\(differing) pixels differ)")
    }
}

extension MPRISPlayersTests {
    /// VLC extracts a FLAC's embedded picture into its art cache and names it: the item's artwork is that picture.
    @Test func vlcsCoverFromTheFilesTagsReachesTheItem() throws {
        let wav = try fixtures.sineWAV("covered.wav", seconds: 5, channels: 2, amplitude: 0.3)
        let flac = fixtures.path("Mü sic.flac")
        _ = try fixtures.run("flac", ["-s", "-f", "-o", flac, wav])
        _ = try fixtures.run(
            "metaflac",
            [
                "--set-tag=TITLE=Covered", "--set-tag=ARTIST=Artist", "--set-tag=ALBUM=Album",
                "--import-picture-from=\(GravityWaveTests.assets)/Music/cover.png", flac
            ])
        try bus.startVLC(playing: try bus.share(flac, as: "Mü sic.flac"))
        let engine = try engine("vlc-artwork")
        defer { engine.shutdown() }
        engine.systemMusicPlayer.preferredPlayer = "vlc"
        #expect(
            eventually {
                engine.update()
                return engine.systemMusicPlayer.nowPlayingItem?.artworkLocation != nil
            }, "VLC named no cover: \(bus.playerctl("-p", "vlc", "metadata") ?? "")")
        let item = try #require(engine.systemMusicPlayer.nowPlayingItem)
        #expect(item.title == "Covered")
        #expect(item.url == bus.folder + "/Mü sic.flac")
        guard case .file(let path)? = item.artworkLocation else {
            Issue.record("\(String(describing: item.artworkLocation))")
            return
        }
        #expect(path.hasPrefix(bus.folder + "/home/.cache/vlc/art/"), "\(path)")
        #expect(item.artwork?.bounds == ArtworkSize(width: 64, height: 64))
    }
}
