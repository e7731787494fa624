import AmbienceHost
import CAmbience
import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceC
@testable import AmbienceCore
@testable import AmbienceDesktop
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport
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
