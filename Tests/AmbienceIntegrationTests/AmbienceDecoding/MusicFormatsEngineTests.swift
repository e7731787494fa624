import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// Modules and MIDI everywhere music goes: the music player streams them (rendered on the streaming thread), `Sound`
/// loads them whole, the library reads their tags and length, and `ambience info` shows them.
@Suite(.onTheComputeThread, .timeLimit(.minutes(10))) struct MusicFormatsEngineTests {
    static func engine() throws -> AudioEngine {
        var configuration = EngineConfiguration.offline(sampleRate: 48_000)
        configuration.decoding.soundFont = MusicFormatFiles.timGM
        return try AudioEngine(configuration)
    }

    /// What the music player plays is what the decoder renders: the first two seconds, sample for sample, through the
    /// streaming thread and the mixer.
    @Test(arguments: [MusicFormatFiles.modules[3], MusicFormatFiles.midiFiles[0]])
    func theMusicPlayerPlaysThem(file: String) throws {
        let engine = try Self.engine()
        defer { engine.shutdown() }
        try engine.musicPlayer.setQueue(paths: [file])
        engine.musicPlayer.play()
        let out = try engine.render(frames: 96_000)
        var options = DecoderOptions()
        options.soundFont = MusicFormatFiles.timGM
        let decoder = try AudioFile.open(file, options: options)
        let expected = try decoder.readFrames(96_000)
        let ratio = snr(out.samples[...], expected[...])
        #expect(ratio >= 60, "\(file): SNR \(ratio) dB through the engine")
        #expect(Signal(out).rms(channel: 0) > 0.01)
    }

    @Test func aSoundLoadsAModuleWhole() throws {
        let engine = try Self.engine()
        defer { engine.shutdown() }
        let module = MusicFormatFiles.modules[3]
        let sound = try engine.load(module)
        #expect(Int64(sound.frames) == (try AudioFile.info(module).frames))
        #expect(sound.channels == 2 && sound.sampleRate == 48_000)
    }

    @Test func theLibraryReadsTheirTagsAndLength() throws {
        let module = MusicFormatFiles.modules[3]
        guard case .success(let found) = LibraryFileReader.read(Array(module.utf8)) else {
            Issue.record("\(module) not read")
            return
        }
        #expect(found.format == .module && found.tags.title == "Matthias")
        #expect(abs(found.duration - 2_953_920 / 48_000) < 1e-9)
        let midi = MusicFormatFiles.midiFiles[1]
        guard case .success(let song) = LibraryFileReader.read(Array(midi.utf8)) else {
            Issue.record("\(midi) not read")
            return
        }
        #expect(song.format == .midi && song.tags.title == "coconut_run2")
        #expect(song.duration > 10)
    }

    @Test func infoShowsAModule() throws {
        let result = try ToolRunner.run(["info", MusicFormatFiles.modules[3]])
        #expect(result.status == 0)
        #expect(result.stdout.contains("format       module"))
        #expect(result.stdout.contains("title        Matthias"))
        #expect(result.stdout.contains("frames       2953920"))
    }

    @Test func aStereoSeparationOutOfRangeIsRefused() throws {
        var configuration = EngineConfiguration.offline()
        configuration.decoding.moduleStereoSeparation = 201
        #expect(throws: EngineError.self) { try configuration.validated() }
        configuration.decoding.moduleStereoSeparation = 200
        #expect(try configuration.validated().decoding.moduleStereoSeparation == 200)
    }

    @Test func bothLibrariesAreInTheCapabilitiesReport() {
        let names = AudioCapabilities.systemLibraryReport.filter(\.isAvailable).map(\.name)
        #expect(names.contains("libopenmpt.so.0") && names.contains("libfluidsynth.so.3"))
    }
}
