import AmbienceCore
import AmbienceDecoding
import AmbiencePlatform

extension AudioEngine {
    /// Loads audio held in memory (a whole file's bytes: WAV, Ogg Vorbis, Ogg Opus, FLAC, MP3, MP4, a tracker module
    /// or MIDI, told apart by its content as `load(_:)` does) as a `Sound`.
    ///
    /// The bytes become an anonymous in-memory file that the engine's decoders open as they open a file on disk:
    /// nothing is written to disk. Unlike `load(_:)` the sound is not cached (there is no path to share it by): each
    /// call makes a new one, which `unload(_:)` frees. The same limits hold: a sound whose decoded size is over the
    /// `soundMemoryBudget` or one OpenAL buffer is refused with `EngineError.decoding(.tooLarge)`. `name` is how the
    /// sound and any error name the bytes.
    public func load(bytes: [UInt8], name: String) throws(EngineError) -> Sound {
        let pcm = try decode(bytes: bytes, name: name)
        guard let sound = mixer.makeSound(pcm, name: name) else { throw .outOfMixerMemory(name) }
        return sound
    }

    /// Decodes audio held in memory (any format `load(bytes:name:)` takes) to samples, at `sampleRate` when one is
    /// given (resampled linearly, as the music player does) or else at the stream's own rate. Tracker modules and
    /// MIDI files are rendered at the engine's rate before any resampling. The decoded size is held to the same
    /// limits as a sound's (`EngineError.decoding(.tooLarge)`); `sampleRate` must be within `EngineConfiguration.sampleRates`.
    public func decode(bytes: [UInt8], name: String, sampleRate: Int? = nil) throws(EngineError) -> PCMBuffer {
        if let sampleRate {
            do throws(InvalidNumber) {
                _ = try sampleRate.checked(Int.self, in: EngineConfiguration.sampleRates, "\(name): sample rate")
            } catch {
                throw .invalidNumber(error)
            }
        }
        let file = try MemoryFile.holding(bytes, name: name)
        return try withExtendedLifetime(file) { () throws(EngineError) -> PCMBuffer in
            do throws(DecodingError) {
                var decoder = try AudioFile.open(file.path, options: configuration.decodingOptions)
                if let sampleRate, sampleRate != decoder.info.sampleRate {
                    decoder = ResampledDecoder(decoder, rate: sampleRate)
                }
                return try PCMBuffer(decodingAllOf: decoder, limit: cache.soundLimit, name: name)
            } catch {
                throw .decoding(error.naming(name))
            }
        }
    }
}
