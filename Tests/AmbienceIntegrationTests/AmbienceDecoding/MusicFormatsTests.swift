import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceTestSupport

/// Tracker modules (libopenmpt) and MIDI (libfluidsynth), against their libraries' own command-line tools as
/// references: `openmpt123 --render` and `fluidsynth -F`, with the same rate, interpolation, stereo separation and
/// SoundFont. The modules and MIDI files come from Debian packages (scripts/install-deps.sh): tecnoballz-data (MOD),
/// ballz-data (XM), pingus-data (S3M, IT) and openttd-openmsx (MIDI); the rest are made here.
@Suite(.onTheComputeThread, .timeLimit(.minutes(10))) struct MusicFormatsTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    /// The module rendered by `openmpt123` with these settings, as float samples.
    func openmpt123(_ module: String, _ options: DecoderOptions) throws -> PCMBuffer {
        let copy = fixtures.path((module as NSString).lastPathComponent)
        if !FileManager.default.fileExists(atPath: copy) {
            try FileManager.default.copyItem(atPath: module, toPath: copy)
        }
        try fixtures.run(
            "openmpt123",
            [
                "--quiet", "--render", "--force", "--float", "--samplerate", "\(options.sampleRate)",
                "--filter", "\(options.moduleInterpolation.rawValue)", "--stereo",
                "\(options.moduleStereoSeparation)", "--", copy
            ])
        return try AudioFile.decode(copy + ".wav")
    }

    /// The MIDI file rendered by `fluidsynth -F` with `font` at 48 kHz, as float samples.
    func fluidsynth(_ midi: String, font: String = MusicFormatFiles.timGM) throws -> PCMBuffer {
        let out = fixtures.path("fluidsynth-\(UUID().uuidString).wav")
        try fixtures.run("fluidsynth", ["-q", "-n", "-i", "-O", "float", "-r", "48000", "-F", out, font, midi])
        return try AudioFile.decode(out)
    }

    func options(interpolation: DecoderOptions.ModuleInterpolation = .windowedSinc, separation: Int = 100)
        -> DecoderOptions
    {
        var options = DecoderOptions()
        options.moduleInterpolation = interpolation
        options.moduleStereoSeparation = separation
        options.soundFont = MusicFormatFiles.timGM
        return options
    }

    // MARK: - Modules

    @Test(arguments: MusicFormatFiles.modules)
    func moduleDecodesLikeOpenmpt123(module: String) throws {
        let info = try AudioFile.info(module)
        #expect(info.format == .module && info.sampleRate == 48_000 && info.channels == 2)
        let reference = try openmpt123(module, options())
        let decoded = try AudioFile.decode(module, options: options())
        // The same length to the frame (libopenmpt renders the last row's ticks past its stated duration), and
        // the same samples: both are libopenmpt with the same settings.
        #expect(info.frames == Int64(reference.frames), "\(module): \(info.frames) vs \(reference.frames)")
        #expect(decoded.frames == reference.frames)
        let ratio = snr(decoded.samples[...], reference.samples[...])
        #expect(ratio >= 60, "\(module): SNR \(ratio) dB")
        #expect(Signal(decoded).rms(channel: 0) > 0.01)
    }

    /// The interpolation and stereo separation reach libopenmpt: other settings match `openmpt123` given the same
    /// ones, and differ from the defaults by design (a nearest-sample render is not a sinc render).
    @Test(arguments: [
        (MusicFormatFiles.modules[0], DecoderOptions.ModuleInterpolation.nearest, 50),
        (MusicFormatFiles.modules[1], .linear, 200),
        (MusicFormatFiles.modules[3], .cubic, 0)
    ])
    func moduleSettingsMatchOpenmpt123(
        module: String, interpolation: DecoderOptions.ModuleInterpolation, separation: Int
    )
        throws
    {
        let settings = options(interpolation: interpolation, separation: separation)
        let reference = try openmpt123(module, settings)
        let decoded = try AudioFile.decode(module, options: settings)
        #expect(decoded.frames == reference.frames)
        let same = snr(decoded.samples[...], reference.samples[...])
        #expect(same >= 60, "\(module): SNR \(same) dB against openmpt123 with the same settings")
        let defaults = try AudioFile.decode(module, options: options())
        let other = snr(decoded.samples[...], defaults.samples[...])
        #expect(other < 40, "\(module): SNR \(other) dB against the default settings")
        if separation == 0 {
            let left = stride(from: 0, to: decoded.samples.count, by: 2).map { decoded.samples[$0] }
            let right = stride(from: 1, to: decoded.samples.count, by: 2).map { decoded.samples[$0] }
            #expect(maxDifference(left, right) < 1e-6, "0 % separation is mono")
        }
    }

    @Test func moduleTagsComeFromLibopenmpt() throws {
        #expect(try AudioFile.info(MusicFormatFiles.modules[3]).tags.title == "Matthias")
        #expect(try AudioFile.info(MusicFormatFiles.modules[2]).tags.title == "Goose in Israel")
        #expect(try AudioFile.info(MusicFormatFiles.modules[0]).tags.title == "high-score")
        // An IT's song message is its comment (libopenmpt's `message`).
        let path = fixtures.path("message.it")
        var bytes = try fixtures.bytes(of: MusicFormatFiles.modules[3])
        try #require(Array(bytes[0..<4]) == Array("IMPM".utf8))
        let message = Array("Made for the test\r".utf8)
        // IT header: special flags at 0x2E (bit 0: a message), message length at 0x36, its offset at 0x38.
        bytes[0x2E] |= 1
        bytes[0x36] = UInt8(message.count)
        bytes[0x37] = 0
        let offset = bytes.count
        for i in 0..<4 { bytes[0x38 + i] = UInt8(truncatingIfNeeded: offset >> (8 * i)) }
        _ = try fixtures.write("message.it", bytes: bytes + message + [0])
        #expect(try AudioFile.info(path).tags.comment == "Made for the test")
    }

    @Test(arguments: [MusicFormatFiles.modules[1], MusicFormatFiles.modules[3]])
    func moduleSeekIsExact(module: String) throws {
        let full = try AudioFile.decode(module, options: options())
        let decoder = try AudioFile.open(module, options: options())
        for target in [480_000, 1_234_567, 96_123, 0] {
            try decoder.seek(toFrame: Int64(target))
            #expect(decoder.position == Int64(target))
            let chunk = try decoder.readFrames(48_000)
            let expected = full.samples[(target * 2)..<((target + 48_000) * 2)]
            let ratio = snr(chunk[...], expected)
            #expect(ratio >= 60, "\(module) after a seek to \(target): SNR \(ratio) dB")
        }
    }

    @Test func moduleEndsOrLoopsAsAsked() throws {
        let module = MusicFormatFiles.modules[3]
        let once = try AudioFile.open(module, options: options())
        let song = once.info.frames
        try once.seek(toFrame: song - 1_000)
        #expect(try once.readFrames(5_000).count == 1_000 * 2)
        #expect(try once.readFrames(5_000).isEmpty)
        var looping = options()
        looping.loopsForever = true
        let forever = try AudioFile.open(module, options: looping)
        #expect(forever.info.frames == AudioInfo.maximumFrames)
        try forever.seek(toFrame: song - 1_000)
        _ = try forever.readFrames(1_000)
        // Past the song's end the module's own loop goes on playing: audio, not silence.
        let after = try forever.readFrames(96_000)
        #expect(after.count == 96_000 * 2)
        #expect(Signal(PCMBuffer(sampleRate: 48_000, channels: 2, samples: after)).rms(channel: 0) > 0.01)
        // Whole, a looping stream is refused as too large rather than decoded for ever.
        #expect(decodingError { try PCMBuffer(decodingAllOf: forever) } != nil)
    }

    // MARK: - MIDI

    @Test(arguments: MusicFormatFiles.midiFiles)
    func midiDecodesLikeFluidsynth(midi: String) throws {
        let reference = try fluidsynth(midi)
        let info = try AudioFile.info(midi, options: options())
        #expect(info.format == .midi && info.sampleRate == 48_000 && info.channels == 2)
        // fluidsynth's player ends once its last voices have died away, in 64-frame blocks: the same count.
        #expect(info.frames == Int64(reference.frames), "\(midi): \(info.frames) vs \(reference.frames)")
        let decoded = try AudioFile.decode(midi, options: options())
        #expect(decoded.frames == reference.frames)
        let ratio = snr(decoded.samples[...], reference.samples[...])
        #expect(ratio >= 60, "\(midi): SNR \(ratio) dB")
        #expect(Signal(decoded).rms(channel: 0) > 0.01)
    }

    /// Type 0 and type 1 files made here, with a tempo change halfway: the length follows the tempo map, and the
    /// samples match fluidsynth's.
    @Test(arguments: [0, 1])
    func midiTempoChangesMatchFluidsynth(format: Int) throws {
        let bytes = MIDIBytes.tempoChange(format: format)
        let file = try StandardMIDIFile(bytes)
        #expect(file.format == format && file.tracks == (format == 0 ? 1 : 2))
        // 960 ticks at 120 BPM, then 960 at 240 BPM (480 ticks a quarter): 1 s + 0.5 s.
        #expect(abs(file.duration - 1.5) < 1e-9)
        #expect(file.tick(atSeconds: 1.25) == 1_440)
        let path = try fixtures.write("tempo\(format).mid", bytes: bytes)
        let reference = try fluidsynth(path)
        let decoded = try AudioFile.decode(path, options: options())
        #expect(decoded.frames == reference.frames)
        #expect(decoded.frames >= 72_000)
        let ratio = snr(decoded.samples[...], reference.samples[...])
        #expect(ratio >= 60, "SNR \(ratio) dB")
    }

    @Test func midiSeekLandsWhereTheReferenceDoes() throws {
        let midi = MusicFormatFiles.midiFiles[0]
        let reference = try fluidsynth(midi)
        let decoder = try AudioFile.open(midi, options: options())
        let target = 30 * 48_000
        try decoder.seek(toFrame: Int64(target))
        #expect(decoder.position == Int64(target))
        let chunk = try decoder.readFrames(10 * 48_000)
        #expect(chunk.count == 10 * 48_000 * 2)
        // The notes struck before the seek are not heard after it (fluidsynth replays programs and controllers, not
        // notes), so the first seconds differ; once those would have ended, the two agree in time: the loudness of
        // each 100 ms of the last 5 s matches the reference's within 1 dB where there is music.
        let from = 5 * 48_000
        var compared = 0
        for block in stride(from: from, to: 10 * 48_000 - 4_800, by: 4_800) {
            let ours = rms(chunk[(block * 2)..<((block + 4_800) * 2)])
            let theirs = rms(reference.samples[((target + block) * 2)..<((target + block + 4_800) * 2)])
            guard theirs > 0.003 else { continue }
            compared += 1
            #expect(abs(20 * log10(ours / theirs)) < 1, "block at \(Double(block) / 48_000) s after the seek")
        }
        #expect(compared > 20)
    }

    @Test func midiLoopsWhenAsked() throws {
        var looping = options()
        looping.loopsForever = true
        let midi = MusicFormatFiles.midiFiles[1]
        let once = try AudioFile.info(midi, options: options())
        let forever = try AudioFile.open(midi, options: looping)
        #expect(forever.info.frames == AudioInfo.maximumFrames)
        var total = 0
        while total < Int(once.frames) + 48_000 {
            total += try forever.readFrames(48_000).count / 2
        }
        let after = try forever.readFrames(3 * 48_000)
        #expect(after.count == 3 * 48_000 * 2)
        #expect(rms(after[...]) > 0.003, "the file plays again from its start")
    }

    @Test func missingSoundFontIsNamed() throws {
        var settings = options()
        settings.soundFont = fixtures.path("none.sf2")
        let error = decodingError { try AudioFile.open(MusicFormatFiles.midiFiles[0], options: settings) }
        guard case .unavailable(_, let reason) = error else {
            Issue.record("not unavailable: \(String(describing: error))")
            return
        }
        #expect(reason.contains("none.sf2"))
        // The default: FluidR3 when installed, else TimGM6mb; none of them names the Debian packages.
        let fluid = DecoderOptions.defaultSoundFonts[0], tim = DecoderOptions.defaultSoundFonts[1]
        #expect(DecoderOptions.soundFont(configured: nil, exists: { _ in true }) == fluid)
        #expect(DecoderOptions.soundFont(configured: nil, exists: { $0 == tim }) == tim)
        #expect(DecoderOptions.soundFont(configured: "/x.sf2", exists: { _ in true }) == "/x.sf2")
        #expect(DecoderOptions.soundFont(configured: nil, exists: { _ in false }) == nil)
    }

}

private func rms(_ samples: ArraySlice<Float>) -> Double {
    guard !samples.isEmpty else { return 0 }
    return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
}
