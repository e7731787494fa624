import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport
@testable import AmbienceTool

/// The `ambience` command as a black box: outputs, exit statuses, and one clear line for every bad input.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct CommandTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    @Test func infoJSONHasExactlyTheContractKeys() throws {
        let ogg = try fixtures.sineOgg(
            "t.ogg", seconds: 1, tags: ["TITLE=Tëst", "ARTIST=Ambience", "ALBUM=Al", "GENRE=Game", "TRACKNUMBER=4"])
        let result = try ToolRunner.run(["info", ogg, "--json"])
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(
            Set(object.keys) == [
                "format", "sampleRate", "channels", "frames", "duration", "title", "artist", "album", "genre",
                "trackNumber", "hasArtwork"
            ])
        #expect(object["format"] as? String == "ogg")
        #expect(object["frames"] as? Int == 48_000)
        #expect(object["title"] as? String == "Tëst")
        #expect(object["trackNumber"] as? Int == 4)
        #expect(object["hasArtwork"] as? Bool == false)
    }

    @Test(arguments: [false, true])
    func decodeWritesTheFileAtItsOwnRateAndChannels(float: Bool) throws {
        let mp3 = try fixtures.sineMP3("t.mp3", seconds: 1, rate: 44_100, channels: 2)
        let out = fixtures.path("out.wav")
        let result = try ToolRunner.run(["decode", mp3, "--out", out] + (float ? ["--float"] : []))
        #expect(result.status == 0, "\(result.stderr)")
        let decoded = try AudioFile.decode(out)
        #expect(decoded.sampleRate == 44_100)
        #expect(decoded.channels == 2)
        #expect(decoded.frames == 44_100)
        #expect(abs(Signal(decoded).dominantFrequency(in: 1_000..<40_000) - 440) < 1)
    }

    @Test func renderPlacesEachEffectAtItsSecondAndPansIt() throws {
        let beep = try fixtures.sineWAV("beep.wav", hz: 440, seconds: 0.2)
        let out = fixtures.path("mix.wav")
        let result = try ToolRunner.run([
            "render", "--out", out, "--seconds", "2", "--sfx", "\(beep)@1.0,pan=1,gain=0.8"
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let mix = Signal(try AudioFile.decode(out))
        #expect(mix.frames == 96_000)
        #expect(abs((mix.firstFrame(above: 0.01) ?? 0) - 48_000) <= 1)
        #expect(mix.rms(48_500..<57_000, channel: 1) > 2 * mix.rms(48_500..<57_000, channel: 0))
    }

    @Test func renderQueuesMusicGaplesslyInOrder() throws {
        let a = try fixtures.sineWAV("a.wav", hz: 300, seconds: 0.5)
        let b = try fixtures.sineWAV("b.wav", hz: 600, seconds: 0.5)
        let out = fixtures.path("music.wav")
        let result = try ToolRunner.run(["render", "--out", out, "--seconds", "1.5", "--music", a, "--music", b])
        #expect(result.status == 0, "\(result.stderr)")
        let mix = Signal(try AudioFile.decode(out))
        #expect(abs(mix.dominantFrequency(in: 1_000..<23_000) - 300) < 1)
        #expect(abs(mix.dominantFrequency(in: 25_000..<47_000) - 600) < 1)
        #expect(mix.rms(23_500..<24_500) > 0.3)  // no gap at the join
        #expect(mix.peak(48_100..<72_000) == 0)
    }

    @Test func everySubcommandHasHelp() throws {
        for command in ["info", "decode", "render"] {
            let result = try ToolRunner.run([command, "--help"])
            #expect(result.status == 0)
            #expect(result.stdout.contains(command))
        }
        #expect(try ToolRunner.run([]).status == 2)
        #expect(try ToolRunner.run(["frobnicate"]).status == 2)
    }

    @Test(arguments: [
        ["render", "--out", "x.wav"],
        ["render", "--out", "x.wav", "--seconds", "abc"],
        ["render", "--out", "x.wav", "--seconds", "1", "--sfx", "beep.wav"],
        ["render", "--out", "x.wav", "--seconds", "1", "--sfx", "beep.wav@1,pan=3"],
        ["render", "--out", "x.wav", "--seconds", "1", "--sfx", "beep.wav@1,volume=3"],
        ["decode", "a.wav"],
        ["info"],
        ["info", "a", "b"],
        ["info", "--bogus", "a"]
    ])
    func usageErrorsExitTwo(arguments: [String]) throws {
        let result = try ToolRunner.run(arguments)
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("ambience:"))
    }

    /// The list of bad input. Each gives exit 1 and one `ambience:` line naming the file and the reason,
    /// never a signal, never a partial output file.
    func badInputs() throws -> [(String, String)] {
        let ogg = try fixtures.sineOgg("good.ogg", seconds: 2)
        let bytes = try fixtures.bytes(of: ogg)
        var flipped = bytes
        for i in (bytes.count / 2)..<(bytes.count / 2 + 64) { flipped[i] ^= 0xFF }
        var random = SplitMix64(seed: 42)
        let id3Only: [UInt8] =
            Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, 17] + Array("TIT2".utf8) + [0, 0, 0, 7, 0, 0, 0]
            + Array("Nothing".utf8)
        func wav(channels: UInt16, rate: UInt32) -> [UInt8] {
            func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
            func le32(_ v: UInt32) -> [UInt8] { le16(UInt16(v & 0xFFFF)) + le16(UInt16(v >> 16)) }
            let fmt = le16(1) + le16(channels) + le32(rate) + le32(rate &* 2) + le16(2) + le16(16)
            let data = [UInt8](repeating: 0, count: 400)
            let body = Array("WAVE".utf8) + Array("fmt ".utf8) + le32(16) + fmt + Array("data".utf8) + le32(400) + data
            return Array("RIFF".utf8) + le32(UInt32(body.count)) + body
        }
        try FileManager.default.createDirectory(atPath: fixtures.path("folder"), withIntermediateDirectories: true)
        return [
            (try fixtures.write("empty.wav", bytes: []), "empty"),
            (try fixtures.write("truncated.ogg", bytes: Array(bytes.prefix(bytes.count / 2))), "truncated"),
            (try fixtures.write("flipped.ogg", bytes: flipped), "checksum"),
            (
                try fixtures.write(
                    "random.ogg", bytes: (0..<4096).map { _ in UInt8(truncatingIfNeeded: random.next()) }),
                "not a WAV, Ogg Vorbis, Ogg Opus, FLAC, MP3, MP4 (AAC, ALAC), tracker module or MIDI"
            ),
            (try fixtures.write("tag-only.mp3", bytes: id3Only), "no MPEG audio frames"),
            (try fixtures.write("zero-channels.wav", bytes: wav(channels: 0, rate: 48_000)), "channels"),
            (try fixtures.write("zero-rate.wav", bytes: wav(channels: 1, rate: 0)), "sample rate"),
            (try fixtures.write("giga-rate.wav", bytes: wav(channels: 1, rate: 1_000_000_000)), "sample rate"),
            (fixtures.path("folder"), "Is a directory"),
            (fixtures.path("missing.wav"), "No such file"),
            // Root can read any file, so "unreadable" is a path that cannot be opened: a file used as a directory.
            (ogg + "/inside.wav", "Not a directory")
        ]
    }

    @Test func badInputFailsClearlyThroughEveryCommand() throws {
        for (path, reason) in try badInputs() {
            for template in [
                ["info", path], ["info", path, "--json"], ["decode", path, "--out", "OUT"],
                ["render", "--out", "OUT", "--seconds", "1", "--music", path],
                ["render", "--out", "OUT", "--seconds", "1", "--sfx", "\(path)@0"]
            ] {
                let out = fixtures.path("out-\(UUID().uuidString).wav")
                let arguments = template.map { $0 == "OUT" ? out : $0 }
                let result = try ToolRunner.run(arguments)
                #expect(!result.killedBySignal, "\(arguments)")
                // A bad music file fails the render as a bad sound effect does, before any output exists: a render
                // of silence in its place would be a success that is not one.
                #expect(result.status == 1, "\(arguments): \(result.stderr)")
                #expect(result.stderrLines.count == 1, "\(arguments): \(result.stderr)")
                #expect(result.stderr.hasPrefix("ambience: \(path)"), "\(arguments): \(result.stderr)")
                #expect(result.stderr.localizedCaseInsensitiveContains(reason), "\(arguments): \(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: out), "\(arguments) left a partial output")
            }
        }
        // No temporary files are left beside the outputs either.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: fixtures.directory.path).filter {
            $0.hasPrefix(".")
        }
        #expect(leftovers.isEmpty)
    }

    @Test func badInputThroughTheAPIIsATypedErrorAndLoadedAudioKeepsPlaying() throws {
        let engine = try AudioEngine(.offline())
        let good = try engine.makeSound(tone(hz: 440, seconds: 1), name: "good")
        engine.play(good, PlayOptions(loop: true))
        for (path, _) in try badInputs() {
            #expect(throws: EngineError.self) { try engine.load(path) }
        }
        #expect(try Signal(engine.render(frames: 9_600)).rms(512..<9_600) > 0.1)
    }

    @Test func sfxCueParsing() throws {
        let cue = try SFXCue(parsing: "odd@name,with,commas.wav@2.5,gain=0.5,pan=-1,pitch=1.5")
        #expect(
            cue
                == (try {
                    var c = try SFXCue(parsing: "x@0"); c.path = "odd@name,with,commas.wav"; c.time = 2.5; c.gain = 0.5;
                    c.pan = -1; c.pitch = 1.5; return c
                }()))
        #expect(throws: UsageError.self) { try SFXCue(parsing: "@1") }
        #expect(throws: UsageError.self) { try SFXCue(parsing: "a.wav@-1") }
        #expect(throws: UsageError.self) { try SFXCue(parsing: "a.wav@nan") }
        #expect(throws: UsageError.self) { try SFXCue(parsing: "a.wav@1,gain") }
    }
}
