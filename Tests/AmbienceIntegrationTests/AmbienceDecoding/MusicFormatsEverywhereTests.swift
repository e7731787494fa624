import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

/// Modules and MIDI files where music goes beyond the decoder and the player (issue #29, item 3): the CLI's `decode`
/// and `render`, and the library's scan, query and loudness analysis. Each is checked against the decoder itself.
@Suite(.onTheComputeThread, .timeLimit(.minutes(10))) struct MusicFormatsEverywhereTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    /// gd-matth.it (pingus-data) and coconut_run2.mid (openttd-openmsx).
    static let files = [MusicFormatFiles.modules[3], MusicFormatFiles.midiFiles[1]]

    /// `ambience decode` writes what the decoder renders with the engine's defaults: the same length and samples.
    @Test(arguments: files)
    func decodeWritesWhatTheDecoderRenders(file: String) throws {
        let out = fixtures.path("decoded.wav")
        let result = try ToolRunner.run(["decode", file, "--out", out, "--float"])
        #expect(result.status == 0, "\(result.stderr)")
        let written = try AudioFile.decode(out)
        let expected = try PCMBuffer(decodingAllOf: AudioFile.open(file, options: DecoderOptions()), limit: 1 << 30)
        #expect(written.frames == expected.frames && written.channels == 2)
        let ratio = snr(written.samples[...], expected.samples[...])
        #expect(ratio >= 60, "\(file): SNR \(ratio) dB")
    }

    /// `ambience render --music` plays them through the offline engine: sound, not the silence of a refused file.
    @Test(arguments: files)
    func renderPlaysThem(file: String) throws {
        let out = fixtures.path("rendered.wav")
        let result = try ToolRunner.run(["render", "--out", out, "--seconds", "2", "--music", file])
        #expect(result.status == 0, "\(result.stderr)")
        let rendered = try AudioFile.decode(out)
        #expect(rendered.frames > 0)
        // A file the engine refused renders exact silence; the MIDI file opens softly.
        #expect(Signal(rendered).rms(channel: 0) > 0.001, "\(file) rendered silence")
    }

    /// The library reads a MIDI file's tags and length from its bytes alone: a SoundFont that is not there does not
    /// stop it (playing would need one), and the length is the tempo map's, short of the synth's count by at most the
    /// last notes' release.
    @Test func theLibraryReadsMIDIWithoutASoundFont() throws {
        let midi = Self.files[1]
        var options = DecoderOptions()
        options.infoOnly = true
        options.soundFont = fixtures.path("missing.sf2")
        #expect(throws: DecodingError.self) { try AudioFile.open(midi, options: options) }
        options.lengthFromTempoMap = true
        let info = try AudioFile.open(midi, options: options).info
        #expect(info.format == .midi && info.channels == 2)
        let counted = try AudioFile.info(midi).frames
        #expect(info.frames <= counted && counted - info.frames < 5 * 48_000, "\(info.frames) against \(counted)")
    }

    /// A folder with one of each: the scan finds both with their tags and lengths, a query finds each by title, and
    /// the loudness analysis measures both (finite, in the range of real music).
    @Test func theLibraryScansQueriesAndMeasuresThem() throws {
        let folder = fixtures.path("music")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for file in Self.files {
            try FileManager.default.copyItem(
                atPath: file, toPath: folder + "/" + (file as NSString).lastPathComponent)
        }
        let library = try MediaLibrary(folders: [folder], databasePath: fixtures.path("index.sqlite"))
        let scan = try library.scan()
        #expect(scan.added == 2 && scan.failed.isEmpty, "\(scan.failed)")
        let byTitle = Dictionary(
            uniqueKeysWithValues: library.items.compactMap { item in item.title.map { ($0, item) } })
        #expect(Set(byTitle.keys) == ["Matthias", "coconut_run2"])
        #expect(abs((byTitle["Matthias"]?.playbackDuration ?? 0) - 2_953_920 / 48_000) < 1e-6)
        for title in byTitle.keys {
            var query = MediaQuery(library: library)
            query.addFilterPredicate(MediaPropertyPredicate(value: title, forProperty: .title))
            #expect(query.items.compactMap(\.title) == [title])
        }

        let report = try library.analyzeLoudness()
        #expect(report.measured == 2 && report.failed.isEmpty, "\(report)")
        for item in library.items {
            let loudness = try #require(item.loudness?.trackLoudness, "\(item.url) was not measured")
            #expect(loudness.isFinite && loudness > -50 && loudness < 0, "\(item.url): \(loudness) LUFS")
        }
    }
}
