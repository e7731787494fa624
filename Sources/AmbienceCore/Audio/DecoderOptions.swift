import AmbiencePlatform
import Glibc

/// How the decoders that synthesize their audio render it: tracker modules (libopenmpt) and MIDI (libfluidsynth).
/// Files that carry samples (WAV, Ogg, MP3, FLAC, Opus, MP4) ignore it. `EngineConfiguration.decoding` holds the
/// engine's; the C API's `ambience_engine_config` has the same fields.
public struct DecoderOptions: Sendable, Equatable {
    /// libopenmpt's interpolation filter: how a module's samples are resampled to the output rate.
    public enum ModuleInterpolation: Int, Sendable, CaseIterable {
        /// Nearest sample (1 tap): the hard, aliased sound of early trackers.
        case nearest = 1
        /// Linear (2 taps).
        case linear = 2
        /// Cubic (4 taps).
        case cubic = 4
        /// Windowed sinc (8 taps): libopenmpt's own default and `openmpt123`'s.
        case windowedSinc = 8
    }

    /// The module's interpolation; `.windowedSinc` by default. Its cost is measured in docs/ARCHITECTURE.md
    /// ("Tracker modules and MIDI"): every filter renders a module at hundreds of times real time, and the
    /// 8-tap filter is the only one without audible aliasing on high notes, so the default is the best one.
    public var moduleInterpolation = ModuleInterpolation.windowedSinc
    /// The module's stereo separation in percent, 0 (mono) to 200; 100 by default, the panning the module's author
    /// wrote (libopenmpt's and `openmpt123`'s default). Amiga MODs pan hard left and right: a game that wants them
    /// softer on headphones sets a lower value.
    public var moduleStereoSeparation = 100
    /// The General MIDI SoundFont (an SF2 file) MIDI files are played with. Nil: `fluid-soundfont-gm`'s when it is
    /// installed, else `timgm6mb-soundfont`'s (`DecoderOptions.defaultSoundFonts`).
    public var soundFont: String?
    /// The rate modules and MIDI are rendered at: the engine's mixing rate, so they are never resampled.
    package var sampleRate = 48_000
    /// Play the song's own loop forever: a module's order list jumping back (libopenmpt's repeat count -1), a MIDI
    /// file from its end to its start. The stream then never ends, and `AudioInfo.frames` is
    /// `AudioInfo.maximumFrames`. The music player sets it while it repeats one item; formats that carry samples
    /// ignore it (they have no loop of their own), and `Sound`s never set it (they are decoded whole).
    /// `AudioDecoder.endLoopAfterThisPass` lets such a stream end after all.
    package var loopsForever = false
    /// Only `info` is wanted (`AudioFile.info`): a MIDI decoder then counts its length but makes no synth to play
    /// it, and reads nothing.
    package var infoOnly = false
    /// With `infoOnly`, for the library: a MIDI file's length is its tempo map's, read without libfluidsynth or a
    /// SoundFont (which a scan of thousands of files should not load for each, and a machine may not have), rather
    /// than the synth's count, which also holds the last notes' release.
    package var lengthFromTempoMap = false

    /// The default options.
    public init() {}

    /// The SoundFonts looked for when none is given, best first: Debian's `fluid-soundfont-gm` (FluidR3, 140 MB) and
    /// `timgm6mb-soundfont` (6 MB).
    public static let defaultSoundFonts = [
        "/usr/share/sounds/sf2/FluidR3_GM.sf2", "/usr/share/sounds/sf2/TimGM6mb.sf2"
    ]

    /// The stereo separations `moduleStereoSeparation` may take.
    public static let stereoSeparations = 0...200

    /// The SoundFont MIDI is played with: the configured one, or the first default that `exists`. Pure: the caller
    /// says which paths exist. Nil when none does.
    package static func soundFont(configured: String?, exists: (String) -> Bool) -> String? {
        if let configured { return configured }
        return defaultSoundFonts.first(where: exists)
    }

    /// The SoundFont to load, or why there is none: a configured file that is not there is named, and either way
    /// the message names the Debian packages that provide one (a game's configured path is often a guess at theirs).
    package func resolvedSoundFont(for path: String) throws(DecodingError) -> String {
        let install = "install Debian's timgm6mb-soundfont or fluid-soundfont-gm"
        guard let font = Self.soundFont(configured: soundFont, exists: FilePaths.isReadable) else {
            throw .unavailable(
                path,
                reason: "no General MIDI SoundFont: \(install), "
                    + "or name an SF2 file in EngineConfiguration.decoding.soundFont")
        }
        do throws(Errno) { try FilePaths.checkReadable(font) } catch {
            throw .unavailable(
                path,
                reason: "the SoundFont \(font) cannot be read (\(error)): \(install), or name another SF2 file")
        }
        return font
    }
}
