import Ambience
import AmbienceDecoding
import AmbiencePlatform

struct RenderCommand: Command {
    static let name = "render"
    static let usage = """
        render --out OUT.wav --seconds S [--rate R] [--music FILE]...
               [--sfx FILE@T[,gain=G][,pan=P][,pitch=X][,loudness=DB]]... [--hdr BUS=WIDTH,ATTACK,RELEASE]...
                                            an offline mix through the full engine
          --out      the WAV to write (32-bit float stereo; a file is written whole or not at all, a device
                     or a FIFO such as /dev/null or /dev/stdout straight through)
          --seconds  length of the mix
          --rate     output rate in Hz (default 48000)
          --music    a music file; several play one after another, gaplessly, in the order given (one that
                     cannot be read fails the render, as a bad --sfx does)
          --sfx      a sound effect starting at T seconds, with optional gain, pan (-1…1), pitch and loudness
                     (dB, heard under an HDR window; docs/HDR.md)
          --hdr      an HDR window on a built-in bus (master, music, sfx, ui, dialogue): WIDTH dB, its top
                     rising in ATTACK seconds and falling in RELEASE (the sound effects play on sfx)
        """

    static func run(_ arguments: inout Arguments) throws {
        guard let out = try arguments.option("--out") else { throw UsageError("render needs --out OUT.wav") }
        guard let seconds = try arguments.duration("--seconds") else { throw UsageError("render needs --seconds S") }
        guard seconds > 0, seconds <= 86_400 else { throw UsageError("--seconds must be above 0 and at most 86400") }
        let rate = try arguments.integer("--rate") ?? 48_000
        guard (8_000...192_000).contains(rate) else { throw UsageError("--rate must be from 8000 to 192000 Hz") }
        let music = try arguments.options("--music")
        let cues = try arguments.options("--sfx").map { (text) throws(UsageError) in try SFXCue(parsing: text) }
        let windows = try arguments.options("--hdr").map { (text) throws(UsageError) in try HDROption(parsing: text) }
        guard try arguments.finish().isEmpty else { throw UsageError("render takes no positional arguments") }

        // Each music file is opened here as the player will open it, so a missing, unreadable or foreign one fails
        // the command, as a bad --sfx does, instead of being skipped into silence.
        for path in music { _ = try AudioFile.open(path) }
        let engine = try AudioEngine(.offline(sampleRate: rate))
        defer { engine.shutdown() }
        engine.musicPlayer.beginGeneratingPlaybackNotifications()
        for window in windows { try window.bus(of: engine).setHDR(window.settings) }
        // Load everything first, so a bad file fails before any output exists.
        let sounds = try cues.map { cue in try engine.load(cue.path) }
        if !music.isEmpty {
            try engine.musicPlayer.setQueue(paths: music)
            engine.musicPlayer.play()
        }
        let schedule = zip(cues, sounds).sorted { $0.0.time < $1.0.time }
        let totalFrames = Int((seconds * Double(rate)).rounded())
        let writer = try WAVWriter(path: out, sampleRate: rate, channels: 2, encoding: .float32)
        do {
            var frame = 0, next = 0
            while frame < totalFrames {
                try Interrupt.check()
                // Start each cue at its exact frame by ending the chunk there.
                while next < schedule.count, Int((schedule[next].0.time * Double(rate)).rounded()) <= frame {
                    let (cue, sound) = schedule[next]
                    engine.play(
                        sound,
                        PlayOptions(gain: cue.gain, pitch: cue.pitch, placement: .pan(cue.pan), loudness: cue.loudness))
                    next += 1
                }
                var chunkEnd = min(frame + 4096, totalFrames)
                if next < schedule.count {
                    chunkEnd = min(chunkEnd, max(Int((schedule[next].0.time * Double(rate)).rounded()), frame + 1))
                }
                let block = try engine.render(frames: chunkEnd - frame)
                try writer.write(block.samples)
                for case .music(.playbackError(_, let error)) in engine.update() { throw error }
                frame = chunkEnd
            }
            try writer.finish()
        } catch {
            writer.cancel()
            throw error
        }
        let stats = engine.stats
        // Written to stdout, the report would end up inside the WAV.
        guard !Output.isStandardOutput(out) else { return }
        Output.line(
            "rendered \(DurationText.format(seconds)) at \(rate) Hz to \(out): \(cues.count) sound effects, \(music.count) music files, \(stats.started) voices started"
        )
    }
}
