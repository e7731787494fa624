import AmbienceHost
import CAmbience
import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceC
@testable import AmbienceCore
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport
@testable import GravityWaveCore

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
                "--import-picture-from=\(BuildProducts.assets)/Music/cover.png", flac
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
