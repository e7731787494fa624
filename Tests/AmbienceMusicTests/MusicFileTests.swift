import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceMixer
@testable import AmbienceMusic
@testable import AmbienceTestSupport

/// `MusicFile`: music checked for playing, from a path or from bytes held in an in-memory file, with its format and
/// tags; and `MusicPlayer.soundFont`, the SoundFont MIDI items are opened with.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5)))
struct MusicFileTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    static let midi = "/usr/share/games/openttd/baseset/openmsx/train_filled_with_cash.mid"
    static let module = "/usr/share/games/tecnoballz/musics/high-score.mod"

    @Test func aFileTellsItsFormatTagsAndLength() throws {
        let ogg = try MusicFile(path: BuildProducts.root + "/Assets/Music/gravity-wave-theme.ogg")
        #expect(ogg.format == .ogg && ogg.titleTag == "Gravity Wave Theme" && ogg.item.artist == "Ambience Ensemble")
        #expect(abs(ogg.duration - 40) < 0.05 && ogg.item.title == "Gravity Wave Theme")
        let wav = try fixtures.sineWAV("untitled.wav", seconds: 0.5)
        let plain = try MusicFile(path: wav)
        #expect(plain.format == .wav && plain.titleTag == nil && plain.item.title == "untitled.wav")
        #expect(try MusicFile(path: Self.module).format == .module)
        #expect(try MusicFile(path: Self.midi).format == .midi)
    }

    @Test func bytesPlayThroughThePlayerWhileTheMusicFileLives() throws {
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: try fixtures.sineWAV("a.wav", hz: 440))))
        let music = try MusicFile(bytes: bytes, name: "a tone")
        #expect(music.format == .wav && music.titleTag == nil && music.item.title == nil)
        #expect(music.item.url.hasPrefix("/proc/self/fd/") && abs(music.duration - 1) < 0.001)
        let other = try MusicFile(bytes: bytes, name: "a tone")
        #expect(other.item.persistentID != music.item.persistentID)
        let rig = try MusicRig()
        rig.player.setQueue(with: MediaItemCollection(items: [music.item]))
        rig.player.play()
        let out = Signal(try rig.render(seconds: 0.5))
        #expect(abs(out.dominantFrequency(in: 4_800..<19_200) - 440) < 1)
        withExtendedLifetime(music) {}
    }

    @Test func badMusicIsRefusedByName() throws {
        #expect(throws: EngineError.decoding(.empty("none"))) { try MusicFile(bytes: [], name: "none") }
        #expect(throws: EngineError.self) { try MusicFile(bytes: Array("not music at all".utf8), name: "junk") }
        #expect(throws: EngineError.self) { try MusicFile(path: "/nonexistent/music.ogg") }
        var options = DecoderOptions()
        options.soundFont = "/nonexistent/missing.sf2"
        do {
            _ = try MusicFile(path: Self.midi, decoding: options)
            Issue.record("a MIDI file loaded with a SoundFont that is not there")
        } catch {
            #expect(error.description.contains("missing.sf2"))
        }
    }

    /// The player opens MIDI with the SoundFont set last: a missing one makes the item fail by name, a real one
    /// plays it.
    @Test func thePlayersSoundFontIsTheOneMIDIOpensWith() throws {
        let rig = try MusicRig()
        let player = rig.player
        #expect(player.soundFont == nil)
        player.soundFont = "/nonexistent/missing.sf2"
        player.beginGeneratingPlaybackNotifications()
        try player.setQueue(paths: [Self.midi])
        player.play()
        _ = try rig.render(seconds: 0.2)
        let failures = rig.events().compactMap { event -> String? in
            if case .playbackError(_, let error) = event { "\(error)" } else { nil }
        }
        #expect(failures.count == 1 && failures[0].contains("missing.sf2"), "\(failures)")
        player.soundFont = "/usr/share/sounds/sf2/TimGM6mb.sf2"
        try player.setQueue(paths: [Self.midi])
        player.play()
        let out = Signal(try rig.render(seconds: 2))
        #expect(out.rms() > 0.001 && player.soundFont == "/usr/share/sounds/sf2/TimGM6mb.sf2")
    }
}
