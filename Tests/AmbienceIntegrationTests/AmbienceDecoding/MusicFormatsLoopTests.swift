import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// A song's own loop when the item repeats: with repeat-one the music player opens a module or MIDI file to loop
/// forever (`DecoderOptions.loopsForever`), so a module whose order list jumps back loops there instead of being
/// restarted from its first row, and turning repeat-one off lets the pass under way end.
@Suite(.onTheComputeThread, .timeLimit(.minutes(10))) struct MusicFormatsLoopTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    /// gd-matth.it: its order list jumps back to its middle at the end, so its second pass is not its first.
    static let loopingModule = MusicFormatFiles.modules[3]

    static func options(loops: Bool = false) -> DecoderOptions {
        var options = DecoderOptions()
        options.soundFont = MusicFormatFiles.timGM
        options.loopsForever = loops
        return options
    }

    /// `openmpt123` playing the module through once and then `repeats` more times (its `--repeat`), as float samples.
    func openmpt123(_ module: String, repeats: Int) throws -> PCMBuffer {
        let copy = fixtures.path("repeat\(repeats)-" + (module as NSString).lastPathComponent)
        try FileManager.default.copyItem(atPath: module, toPath: copy)
        try fixtures.run(
            "openmpt123",
            ["--quiet", "--render", "--force", "--float", "--samplerate", "48000", "--repeat", "\(repeats)", "--", copy]
        )
        return try AudioFile.decode(copy + ".wav")
    }

    /// The decoder's loop is libopenmpt's: past the song's end it plays what `openmpt123 --repeat 1` plays there,
    /// which is not the song's start; told to end its loop, it ends where that render ends.
    @Test func aModulesLoopIsOpenmpt123sRepeat() throws {
        let song = Int(try AudioFile.info(Self.loopingModule).frames)
        let twice = try openmpt123(Self.loopingModule, repeats: 1)
        let forever = try AudioFile.open(Self.loopingModule, options: Self.options(loops: true))
        try forever.seek(toFrame: Int64(song - 48_000))
        let across = try forever.readFrames(3 * 48_000)
        let expected = twice.samples[((song - 48_000) * 2)..<((song + 96_000) * 2)]
        #expect(snr(across[...], expected) >= 60, "\(snr(across[...], expected)) dB against openmpt123 --repeat 1")
        let start = try AudioFile.open(Self.loopingModule).readFrames(96_000)
        #expect(snr(across[(96_000)...], start[...]) < 10, "the loop is not a restart from the first row")
        forever.endLoopAfterThisPass()
        var total = song + 96_000
        while true {
            let got = try forever.readFrames(48_000).count / 2
            if got == 0 { break }
            total += got
            #expect(total <= 2 * song + 48_000, "the loop's pass under way ends")
            if total > 2 * song + 48_000 { break }
        }
        #expect(total == twice.frames, "ends with openmpt123 --repeat 1: \(total) vs \(twice.frames)")
    }

    /// A MIDI file told to end its loop ends at the end of the pass under way, not at once and not never.
    @Test func aMIDILoopEndsWhenAsked() throws {
        let midi = MusicFormatFiles.midiFiles[1]
        let once = Int(try AudioFile.info(midi, options: Self.options()).frames)
        let forever = try AudioFile.open(midi, options: Self.options(loops: true))
        var total = 0
        while total < once + 48_000 {
            let got = try forever.readFrames(48_000).count / 2
            try #require(got > 0, "the looping file ended after \(total) frames")
            total += got
        }
        forever.endLoopAfterThisPass()
        let afterEnd = total
        while true {
            let got = try forever.readFrames(48_000).count / 2
            if got == 0 { break }
            total += got
            if total > 3 * once { break }
        }
        #expect(total > afterEnd + 48_000 && total <= 2 * once + 48_000, "\(total) frames, one pass is \(once)")
    }

    static func engine() throws -> AudioEngine {
        var configuration = EngineConfiguration.offline(sampleRate: 48_000)
        configuration.decoding.soundFont = MusicFormatFiles.timGM
        return try AudioEngine(configuration)
    }

    /// Repeat-one through the engine: past the song's length the player plays the module's own loop (what the
    /// looping decoder renders there, frame for frame), not the song again from its first row.
    @Test func repeatOnePlaysAModulesOwnLoop() throws {
        let song = Int(try AudioFile.info(Self.loopingModule).frames)
        let engine = try Self.engine()
        defer { engine.shutdown() }
        engine.musicPlayer.repeatMode = .one
        try engine.musicPlayer.setQueue(paths: [Self.loopingModule])
        engine.musicPlayer.play()
        _ = try engine.render(frames: song - 48_000)
        let across = try engine.render(frames: 3 * 48_000)
        let forever = try AudioFile.open(Self.loopingModule, options: Self.options(loops: true))
        try forever.seek(toFrame: Int64(song - 48_000))
        let expected = try forever.readFrames(3 * 48_000)
        let ratio = snr(across.samples[...], expected[...])
        #expect(ratio >= 60, "SNR \(ratio) dB against the looping decoder across the song's end")
        let start = try AudioFile.open(Self.loopingModule).readFrames(96_000)
        let restart = snr(across.samples[(96_000)...], start[...])
        #expect(restart < 10, "not restarted from the first row (SNR \(restart) dB against the song's start)")
        #expect(engine.musicPlayer.playbackState == .playing)
    }

    /// Repeat-one turned on mid-song applies from the song's next start: the first pass ends and the song starts
    /// again from its first row (opened ahead to loop), and from then on its end goes on at its loop point.
    @Test func repeatOneTurnedOnMidSongLoopsFromTheNextStart() throws {
        let song = Int(try AudioFile.info(Self.loopingModule).frames)
        let engine = try Self.engine()
        defer { engine.shutdown() }
        try engine.musicPlayer.setQueue(paths: [Self.loopingModule])
        engine.musicPlayer.play()
        _ = try engine.render(frames: 48_000)
        engine.musicPlayer.repeatMode = .one
        _ = try engine.render(frames: song - 96_000)
        let firstEnd = try engine.render(frames: 96_000)
        _ = try engine.render(frames: song - 96_000)
        let secondEnd = try engine.render(frames: 96_000)
        let forever = try AudioFile.open(Self.loopingModule, options: Self.options(loops: true))
        let start = try forever.readFrames(48_000)
        try forever.seek(toFrame: Int64(song - 48_000))
        let across = try forever.readFrames(96_000)
        // The first end: the song again from its first row.
        let restart = snr(firstEnd.samples[(96_000)...], start[...])
        #expect(restart >= 60, "restarted from the first row: SNR \(restart) dB")
        // The second end: the loop point, as the looping decoder plays it.
        let looped = snr(secondEnd.samples[...], across[...])
        #expect(looped >= 60, "looped at the loop point: SNR \(looped) dB")
        #expect(engine.musicPlayer.playbackState == .playing)
    }

    /// Repeat-one turned off while a MIDI file loops: the pass under way ends and the queue goes on (here: ends).
    @Test func turningRepeatOneOffEndsTheLoop() throws {
        let midi = MusicFormatFiles.midiFiles[1]
        let once = Int(try AudioFile.info(midi, options: Self.options()).frames)
        let engine = try Self.engine()
        defer { engine.shutdown() }
        engine.musicPlayer.repeatMode = .one
        try engine.musicPlayer.setQueue(paths: [midi])
        engine.musicPlayer.play()
        _ = try engine.render(frames: once + 48_000)
        #expect(engine.musicPlayer.playbackState == .playing, "still looping after one pass")
        engine.musicPlayer.repeatMode = .none
        var rendered = once + 48_000
        while engine.musicPlayer.playbackState == .playing && rendered < 3 * once {
            _ = try engine.render(frames: 24_000)
            rendered += 24_000
        }
        #expect(engine.musicPlayer.playbackState == .stopped)
        #expect(rendered > once + 96_000 && rendered <= 2 * once + 96_000, "\(rendered) frames, one pass is \(once)")
    }

    /// Past a loop the playhead is inside the song, counted from its start again, and a pause and play resume
    /// there, for a module and a MIDI file alike.
    @Test func thePlayheadOfALoopingSongStaysInsideIt() throws {
        let song = Int(try AudioFile.info(Self.loopingModule).frames)
        let engine = try Self.engine()
        defer { engine.shutdown() }
        engine.musicPlayer.repeatMode = .one
        try engine.musicPlayer.setQueue(paths: [Self.loopingModule])
        engine.musicPlayer.play()
        _ = try engine.render(frames: song + 2 * 48_000)
        let time = engine.musicPlayer.currentPlaybackTime
        // Where the looping decoder is, 2 s into its second pass; the playhead trails the decoder by the stream's
        // queue, under a second.
        let forever = try AudioFile.open(Self.loopingModule, options: Self.options(loops: true))
        _ = try forever.readFrames(song + 2 * 48_000)
        let expected = Double(forever.position) / 48_000
        #expect(time < Double(song) / 48_000, "\(time) s is past the song's \(Double(song) / 48_000) s")
        #expect(abs(time - expected) < 1, "\(time) s, the loop says \(expected) s")
        engine.musicPlayer.pause()
        _ = try engine.render(frames: 24_000)
        engine.musicPlayer.play()
        _ = try engine.render(frames: 24_000)
        let resumed = engine.musicPlayer.currentPlaybackTime
        #expect(resumed >= time && resumed < time + 1.5, "resumed at \(resumed) s after pausing at \(time) s")

        let midi = MusicFormatFiles.midiFiles[1]
        let once = Int(try AudioFile.info(midi, options: Self.options()).frames)
        engine.musicPlayer.stop()
        try engine.musicPlayer.setQueue(paths: [midi])
        engine.musicPlayer.play()
        _ = try engine.render(frames: once + 3 * 48_000)
        let midiTime = engine.musicPlayer.currentPlaybackTime
        #expect(midiTime > 1.5 && midiTime < 3.5, "\(midiTime) s, 3 s into the second pass")
    }
}
