import AmbienceCore
import AmbiencePlatform
import CFluidSynth
import Glibc

package typealias LibFluidSynth = ambience_fluidsynth_functions

/// A Standard MIDI File (type 0 or 1) rendered by libfluidsynth with a General MIDI SoundFont. Nothing else in the
/// project touches libfluidsynth, which it opens at run time.
///
/// Rendering is `fluidsynth -F`'s: a `fluid_player` timed by the samples the synth writes, 64 frames at a time, the
/// player's state checked before each block, and the stream ending when the player says it is done (after the
/// file's last event). Output is stereo at `DecoderOptions.sampleRate`, with libfluidsynth's defaults (gain 0.2,
/// reverb and chorus on), so it matches `fluidsynth -F out.wav -r RATE FONT FILE` sample for sample.
///
/// The file is checked by `StandardMIDIFile` before libfluidsynth sees it. Its exact length is counted when it opens
/// (`countFrames`), since the player ends only once the last notes have died away, which depends on the SoundFont.
package final class MIDIDecoder: AudioDecoder {
    package let info: AudioInfo
    private let path: String
    private let file: StandardMIDIFile
    private let bytes: [UInt8]
    /// Nil when only the info was wanted (`DecoderOptions.infoOnly`).
    private let synth: FluidSynth?
    /// Whether the file plays again from its start when it ends; `endLoopAfterThisPass` turns it off.
    private var loopsForever: Bool
    /// Frames in one pass of the file.
    private let songFrames: Int64
    package private(set) var position: Int64 = 0
    /// The block the synth rendered last, and how much of it is still to be handed out.
    private var block = [Float](repeating: 0, count: MIDIDecoder.blockFrames * 2)
    private var blockLeft = 0

    /// libfluidsynth, opened the first time a MIDI file is; its log is silenced (it writes to stderr by default).
    package static let library = OptionalLibrary<LibFluidSynth>(
        name: "libfluidsynth.so.3", feature: "MIDI (General MIDI through a SoundFont)",
        names: String(cString: ambience_fluidsynth_function_names())
    ) { fluid in
        for level in [FLUID_PANIC, FLUID_ERR, FLUID_WARN, FLUID_INFO, FLUID_DBG] {
            _ = fluid.fluid_set_log_function(Int32(level.rawValue), nil, nil)
        }
        return nil
    }

    /// The largest MIDI file read: 4 MiB (a busy one is tens of kilobytes).
    static let maximumFileSize: Int64 = 4 << 20
    /// Frames the synth renders at a time: `fluidsynth -F`'s period, so the player's end falls where it does there.
    static let blockFrames = 64

    init(path: String, options: DecoderOptions = DecoderOptions()) throws(DecodingError) {
        let bytes = try Self.readFile(path)
        let file: StandardMIDIFile
        do throws(MIDIFileError) { file = try StandardMIDIFile(bytes) } catch {
            throw .corrupt(path, reason: error.description)
        }
        let rate: Int
        do {
            rate = try options.sampleRate.checked(Int.self, in: 8_000...192_000, "MIDI sample rate")
        } catch {
            throw .corrupt(path, reason: error.description)
        }
        let song: Int64
        var synth: FluidSynth?
        if options.lengthFromTempoMap {
            // The library's account: the tempo map's length (without the last notes' release), no synth, no SoundFont.
            song = (file.duration * Double(rate)).rounded(.up).saturated(Int64.self)
        } else {
            let fluid = try Self.functions(for: path)
            let font = try options.resolvedSoundFont(for: path)
            song = try Self.countFrames(bytes, font: font, rate: rate, bound: file.duration + 60, fluid, path: path)
            if !options.infoOnly {
                let playing = try FluidSynth(fluid, rate: rate, effects: true, path: path)
                try playing.load(font, path: path)
                try playing.start(bytes, loop: options.loopsForever, path: path)
                synth = playing
            }
        }
        self.path = path
        self.file = file
        self.bytes = bytes
        self.synth = synth
        self.loopsForever = options.loopsForever
        self.songFrames = song
        self.info = AudioInfo(
            format: .midi, sampleRate: rate, channels: 2,
            frames: options.loopsForever ? AudioInfo.maximumFrames : song, tags: file.text.tags)
    }

    package func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(DecodingError) -> Int {
        guard let synth else { throw .corrupt(path, reason: "opened for its information only") }
        let wanted = Int(min(Int64(max(frames, 0)), max(info.frames - position, 0)))
        var written = 0
        while written < wanted {
            if blockLeft == 0 {
                guard synth.isPlaying else { break }
                block.withUnsafeMutableBufferPointer { synth.render(into: $0.baseAddress!) }
                blockLeft = Self.blockFrames
            }
            let take = min(blockLeft, wanted - written)
            let from = Self.blockFrames - blockLeft
            block.withUnsafeBufferPointer {
                (buffer + written * 2).update(from: $0.baseAddress! + from * 2, count: take * 2)
            }
            blockLeft -= take
            written += take
        }
        // The player ended before the length counted when it opened (it never has on the tests' files): the stated
        // length holds, as silence.
        if written < wanted, info.frames == songFrames {
            (buffer + written * 2).update(repeating: 0, count: (wanted - written) * 2)
            written = wanted
        }
        position += Int64(written)
        // libfluidsynth's loop starts the file again: past it, the playhead counts from the file's start again.
        if loopsForever && songFrames > 0 { position %= songFrames }
        return written
    }

    /// libfluidsynth's loop count, set to 0 mid-file, ends the player at the file's end; what it rendered up to
    /// there is the stream's end.
    package func endLoopAfterThisPass() {
        guard loopsForever, let synth else { return }
        loopsForever = false
        synth.setLoops(false)
    }

    /// Silences what sounds, starts the file again and seeks its player to the tick at `frame` (through the tempo
    /// map); libfluidsynth replays the events before it (programs, controllers) without their notes.
    package func seek(toFrame frame: Int64) throws(DecodingError) {
        guard let synth else { throw .corrupt(path, reason: "opened for its information only") }
        let target = min(max(frame, 0), songFrames)
        synth.silence()
        try synth.start(bytes, loop: loopsForever, path: path)
        let tick = file.tick(atSeconds: Double(target) / Double(info.sampleRate))
        if tick > 0 { try synth.seek(toTick: tick, path: path) }
        blockLeft = 0
        position = target
    }

    // MARK: - Opening

    /// The stream's exact length: libfluidsynth's player ends when the file has and every voice is silent, so the
    /// same player runs once on a synth with the same SoundFont, without reverb, chorus or interpolation (none of
    /// which changes when a voice ends), its blocks counted: about a third of what playing costs. At most `bound`
    /// seconds (the tempo map's length plus a minute) are counted.
    private static func countFrames(
        _ bytes: [UInt8], font: String, rate: Int, bound: Double, _ fluid: LibFluidSynth, path: String
    ) throws(DecodingError) -> Int64 {
        let counter = try FluidSynth(fluid, rate: rate, effects: false, path: path)
        try counter.load(font, path: path)
        counter.interpolateNothing()
        try counter.start(bytes, loop: false, path: path)
        let most = (bound * Double(rate)).saturated(Int64.self) / Int64(blockFrames)
        var blocks: Int64 = 0
        while counter.isPlaying, blocks < most {
            counter.render(into: nil)
            blocks += 1
        }
        guard blocks < most else { throw .corrupt(path, reason: "libfluidsynth does not end it") }
        return try AudioInfo.checkedLength(blocks * Int64(blockFrames), path: path)
    }

    private static func functions(for path: String) throws(DecodingError) -> LibFluidSynth {
        do throws(SharedLibraryError) { return try library.functions() } catch {
            throw .unavailable(path, reason: "\(error.description); install Debian's libfluidsynth3 to play MIDI")
        }
    }

    private static func readFile(_ path: String) throws(DecodingError) -> [UInt8] {
        let (file, size) = try AudioFile.openRegularFile(path)
        guard size > 0 else { throw .empty(path) }
        guard size <= maximumFileSize else {
            throw .corrupt(path, reason: "\(size) bytes is more than the \(maximumFileSize) a MIDI file may take")
        }
        do throws(Errno) { return try file.readBytes(Int(size)) } catch {
            throw .unreadable(path, errno: error.code)
        }
    }
}

/// One libfluidsynth synth with its settings and its MIDI player: owns all three, and frees them in order.
private final class FluidSynth {
    private let fluid: LibFluidSynth
    private let settings: OpaquePointer
    private let synth: OpaquePointer
    private var player: OpaquePointer?

    /// A synth at `rate`, timed by its samples; `effects` false turns reverb and chorus off (the length count).
    init(_ fluid: LibFluidSynth, rate: Int, effects: Bool, path: String) throws(DecodingError) {
        guard let settings = fluid.new_fluid_settings() else {
            throw .corrupt(path, reason: "libfluidsynth cannot make its settings (out of memory?)")
        }
        let set =
            fluid.fluid_settings_setnum(settings, "synth.sample-rate", Double(rate)) == FLUID_OK
            && fluid.fluid_settings_setstr(settings, "player.timing-source", "sample") == FLUID_OK
            && fluid.fluid_settings_setint(settings, "synth.lock-memory", 0) == FLUID_OK
            && fluid.fluid_settings_setint(settings, "synth.reverb.active", effects ? 1 : 0) == FLUID_OK
            && fluid.fluid_settings_setint(settings, "synth.chorus.active", effects ? 1 : 0) == FLUID_OK
        guard set, let synth = fluid.new_fluid_synth(settings) else {
            fluid.delete_fluid_settings(settings)
            throw .corrupt(path, reason: "libfluidsynth cannot make a synth at \(rate) Hz")
        }
        self.fluid = fluid
        self.settings = settings
        self.synth = synth
    }

    deinit {
        if let player { fluid.delete_fluid_player(player) }
        fluid.delete_fluid_synth(synth)
        fluid.delete_fluid_settings(settings)
    }

    func load(_ font: String, path: String) throws(DecodingError) {
        guard fluid.fluid_synth_sfload(synth, font, 1) != FLUID_FAILED else {
            throw .unavailable(path, reason: "libfluidsynth cannot load the SoundFont \(font)")
        }
    }

    /// A new player for `bytes` (a checked MIDI file), playing from the start.
    func start(_ bytes: [UInt8], loop: Bool, path: String) throws(DecodingError) {
        if let player { fluid.delete_fluid_player(player) }
        player = fluid.new_fluid_player(synth)
        guard let player else { throw .corrupt(path, reason: "libfluidsynth cannot make a player") }
        let added = bytes.withUnsafeBytes { fluid.fluid_player_add_mem(player, $0.baseAddress, $0.count) }
        guard added == FLUID_OK, fluid.fluid_player_set_loop(player, loop ? -1 : 1) == FLUID_OK,
            fluid.fluid_player_play(player) == FLUID_OK
        else { throw .corrupt(path, reason: "libfluidsynth cannot play it") }
    }

    /// Whether the player plays the file again at its end: -1 forever, 0 no more passes (libfluidsynth counts down
    /// the passes left, and `start` set 1 for the one pass being played).
    func setLoops(_ loops: Bool) {
        guard let player else { return }
        _ = fluid.fluid_player_set_loop(player, loops ? -1 : 0)
    }

    /// Seeks a player just started: libfluidsynth reads the file (and so knows its length in ticks) in its first
    /// block, so one block is rendered and dropped first, and what it struck is silenced.
    func seek(toTick tick: Int64, path: String) throws(DecodingError) {
        render(into: nil)
        silence()
        guard let player, let ticks = Int32(exactly: tick), fluid.fluid_player_seek(player, ticks) == FLUID_OK else {
            throw .corrupt(path, reason: "libfluidsynth cannot seek to tick \(tick)")
        }
    }

    var isPlaying: Bool {
        guard let player else { return false }
        return fluid.fluid_player_get_status(player) == Int32(FLUID_PLAYER_PLAYING.rawValue)
    }

    /// Renders one block (`MIDIDecoder.blockFrames`) of interleaved stereo into `buffer`, or into a scratch block.
    func render(into buffer: UnsafeMutablePointer<Float>?) {
        let frames = MIDIDecoder.blockFrames
        if let buffer {
            _ = fluid.fluid_synth_write_float(synth, Int32(clamping: frames), buffer, 0, 2, buffer, 1, 2)
        } else {
            withUnsafeTemporaryAllocation(of: Float.self, capacity: frames * 2) {
                _ = fluid.fluid_synth_write_float(
                    synth, Int32(clamping: frames), $0.baseAddress!, 0, 2, $0.baseAddress!, 1, 2)
            }
        }
    }

    /// Nearest-sample interpolation on every channel: the cheapest rendering, for counting.
    func interpolateNothing() { _ = fluid.fluid_synth_set_interp_method(synth, -1, Int32(FLUID_INTERP_NONE.rawValue)) }

    /// Every voice off at once (a seek).
    func silence() { _ = fluid.fluid_synth_all_sounds_off(synth, -1) }
}
