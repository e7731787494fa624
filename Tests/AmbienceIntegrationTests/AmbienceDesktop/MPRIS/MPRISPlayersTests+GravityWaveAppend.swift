import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceDesktop
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport
@testable import GravityWaveCore

/// Gravity Wave in System mode adds picked songs through `SystemMusicPlayer.append`: the song playing and its place
/// are kept, with mpv (a playlist handed over, then put back at its time) and VLC (its TrackList).
extension MPRISPlayersTests {
    /// Picks the library's songs whose file name is in `names`, through the game's picker, and presses Done.
    func pick(_ names: [String], in game: GravityWave, from library: MediaLibrary) throws {
        game.openPicker(library: library)
        let items = MediaQuery.songs(in: library).items.filter {
            names.contains(($0.url as NSString).lastPathComponent)
        }
        try #require(items.count == names.count, "the library has \(MediaQuery.songs(in: library).items.map(\.url))")
        for item in items { game.perform(.pickerToggle(item)) }
        game.perform(.pickerDone)
    }

    @Test(arguments: ["mpv", "vlc"])
    func gravityWaveAppendsPickedSongsKeepingTheSongAndItsPlace(player short: String) throws {
        if short == "vlc" { try bus.startVLC(playing: songs[2]) } else { try bus.startMPV(playing: songs[2]) }
        let client = try MPRISClient(busAddress: bus.address, timeout: .seconds(2))
        defer { client.close() }
        _ = try #require(waitFor(short, in: client))
        let library = try MediaLibrary(folders: [bus.folder], databasePath: fixtures.path("library-\(short).sqlite"))
        _ = try library.scan()
        let settings = fixtures.path("config/gravity-wave-\(short).conf")
        var saved = GameSettings()
        saved.player = .system
        try saved.save(to: settings)
        let engine = try engine("gravity-wave-append-\(short)")
        defer { engine.shutdown() }
        engine.systemMusicPlayer.preferredPlayer = short
        let game = try GravityWave(
            engine: engine, options: GravityWave.Options(assets: BuildProducts.assets, settingsPath: settings))
        func tick() {
            game.update(dt: 1.0 / 60)
            _ = try? engine.render(frames: 800)
            game.handleAudioEvents(engine.update())
        }
        for _ in 0..<3 { tick() }

        try pick(["One.wav", "Two.wav"], in: game, from: library)
        #expect(eventually { title(short) == "One" && bus.playerctl("-p", short, "status") == "Playing" })
        // Asked again until it holds: a seek sent while the player is still opening the file is lost.
        #expect(
            eventually {
                if (Double(bus.playerctl("-p", short, "position") ?? "") ?? 0) >= 6 { return true }
                _ = bus.playerctl("-p", short, "position", "6")
                return false
            })
        #expect(
            eventually {
                tick(); return engine.systemMusicPlayer.currentPlayer?.url?.hasSuffix("One.wav") == true
            })

        try pick(["Three.wav"], in: game, from: library)
        engine.flushDesktopCommands()
        for _ in 0..<3 { tick() }
        #expect(game.statusMessage == nil, "\(game.statusMessage ?? "")")
        #expect(game.userCollection?.items.count == 3)
        #expect(title(short) == "One", "the song playing was replaced")
        let position = Double(bus.playerctl("-p", short, "position") ?? "") ?? 0
        print("GravityWaveAppend(\(short)): position after the append \(position) s")
        #expect(position >= 5.5 && position < 12, "the song restarted or jumped: \(position) s")
        #expect(eventually { bus.playerctl("-p", short, "status") == "Playing" })
        _ = bus.playerctl("-p", short, "next")
        #expect(eventually { title(short) == "Two" }, "after next: \(title(short) ?? "nothing")")
        // The appended song is really in the player's queue, after the two already there.
        _ = bus.playerctl("-p", short, "next")
        #expect(eventually { title(short) == "Three" }, "after next again: \(title(short) ?? "nothing")")
    }
}
