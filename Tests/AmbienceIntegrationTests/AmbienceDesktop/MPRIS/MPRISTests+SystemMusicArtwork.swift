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

extension MPRISTests {
    /// mpv-mpris gives the `cover.png` beside the file: the item's artwork is that picture, its url the file, both
    /// percent-decoded; and Gravity Wave's HUD, in System mode, draws it instead of the no-artwork tile.
    @Test func mpvsCoverReachesTheItemAndTheHUD() throws {
        let folder = try fixtures.folder("Mü sic #1")
        let song = try fixtures.sineOgg(
            "Mü sic #1/covered.ogg", seconds: 3, tags: ["TITLE=Covered", "ARTIST=Artist", "ALBUM=Album"])
        try FileManager.default.copyItem(
            atPath: BuildProducts.assets + "/Music/cover.png", toPath: folder + "/cover.png")
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
