import Ambience
import CSDLMixerABI
import Glibc

/// The engine sound made from a chunk's bytes, and what it was made from: a program may write into `abuf` (pygame's
/// sndarray does) or point it elsewhere, and the next play must sound like the bytes. Before each play the chunk's
/// `abuf` pointer and `alen` are compared with these, and its bytes with `bytes` (one `memcmp`: gigabytes a second,
/// so a one-second chunk costs tens of microseconds); any change makes a fresh sound. `bytes` is also the copy the
/// sound was converted from, so keeping it costs no extra conversion.
struct MadeSound {
    let sound: Sound
    let generation: Int
    let abuf: UnsafeMutablePointer<UInt8>
    let bytes: [UInt8]
    let reversed: Bool
}

/// A Mix_Chunk pointer, to keep in the stand-in's state (guarded by its lock, like all the state).
struct ChunkPointer: @unchecked Sendable, Hashable {
    let raw: UnsafeMutablePointer<Mix_Chunk>
}

/// A chunk the stand-in knows. Guarded by the stand-in's lock, as all its state is.
final class ChunkRecord: @unchecked Sendable {
    let chunk: UnsafeMutablePointer<Mix_Chunk>
    /// Allocated here (Mix_LoadWAV_RW, the QuickLoads): Mix_FreeChunk frees the struct. A program may also build a
    /// Mix_Chunk itself and play it, as chocolate-doom does; such a struct is read, never freed.
    let ours: Bool
    var made: MadeSound?

    init(_ chunk: UnsafeMutablePointer<Mix_Chunk>, ours: Bool) {
        self.chunk = chunk
        self.ours = ours
    }

    /// The sound that plays the chunk's bytes as they are now, in `spec`, with left and right swapped when
    /// `reversed` (Mix_SetReverseStereo); the reason when there is none.
    func sound(
        engine: AudioEngine, spec: OutputSpec, generation: Int, reversed: Bool
    ) -> Result<Sound, ChunkProblem> {
        let frameBytes = spec.format.width * spec.channels
        let length = Int(chunk.pointee.alen) / frameBytes * frameBytes
        guard let abuf = chunk.pointee.abuf, length > 0 else { return .failure(.badFrame) }
        let swap = reversed && spec.channels >= 2
        if let made, made.generation == generation, made.abuf == abuf, made.bytes.count == length,
            made.reversed == swap, made.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, abuf, length) == 0 })
        {
            return .success(made.sound)
        }
        let bytes = Array(UnsafeRawBufferPointer(start: abuf, count: length))
        var samples = bytes.withUnsafeBytes { spec.format.floats($0) }
        if swap {
            for frame in stride(from: 0, to: samples.count, by: spec.channels) { samples.swapAt(frame, frame + 1) }
        }
        let pcm = PCMBuffer(sampleRate: spec.frequency, channels: spec.channels, samples: samples)
        do {
            let sound = try engine.makeSound(pcm, name: "Mix_Chunk")
            made = MadeSound(sound: sound, generation: generation, abuf: abuf, bytes: bytes, reversed: swap)
            return .success(sound)
        } catch {
            return .failure(.engine(error.description))
        }
    }
}

/// Why a chunk cannot play.
enum ChunkProblem: Error {
    /// No bytes, or less than one frame of them.
    case badFrame
    case engine(String)

    var description: String {
        switch self {
        case .badFrame: "Tried to play a chunk with a bad frame"
        case .engine(let reason): reason
        }
    }
}

/// Every chunk pointer the stand-in has handed out or been given, and those it has freed. A freed pointer is
/// refused, never read; a pointer never seen is a program's own struct, read as SDL_mixer reads it.
struct ChunkRegistry {
    private var live: [ChunkPointer: ChunkRecord] = [:]
    private var freed: Set<ChunkPointer> = []
    /// Freed addresses remembered at most; past this they are forgotten and counting starts again (a program that
    /// frees a million chunks and then passes an early one back is not caught).
    static let freedMemory = 1 << 20

    /// Registers a chunk this library allocated (its address may be one freed before: it is live again).
    mutating func add(_ chunk: ChunkPointer) -> ChunkRecord {
        freed.remove(chunk)
        let record = ChunkRecord(chunk.raw, ours: true)
        live[chunk] = record
        return record
    }

    /// The record for a pointer a program passed, or the reason it is refused (NULL, or freed here).
    mutating func record(_ pointer: ChunkPointer?) -> Result<ChunkRecord, ChunkLookupError> {
        guard let pointer else { return .failure(.null) }
        if let record = live[pointer] { return .success(record) }
        if freed.contains(pointer) { return .failure(.freed) }
        let record = ChunkRecord(pointer.raw, ours: false)
        live[pointer] = record
        return .success(record)
    }

    /// Forgets a chunk: later uses of its pointer are refused.
    mutating func remove(_ chunk: ChunkPointer) -> ChunkRecord? {
        guard let record = live.removeValue(forKey: chunk) else { return nil }
        if freed.count >= Self.freedMemory { freed.removeAll() }
        freed.insert(chunk)
        return record
    }

    /// Every record (for Mix_CloseAudio, which lets go of their engine sounds).
    var records: Dictionary<ChunkPointer, ChunkRecord>.Values { live.values }
}

/// Why a chunk pointer is refused.
enum ChunkLookupError: Error {
    case null
    case freed

    var description: String {
        switch self {
        case .null: "NULL chunk"
        case .freed: "the chunk was freed (Mix_FreeChunk)"
        }
    }
}
