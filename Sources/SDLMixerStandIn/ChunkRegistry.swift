import Ambience
import CSDLMixerABI
import Glibc

/// The engine sound made from a chunk's bytes, and what it was made from: a program may write into `abuf` (pygame's
/// sndarray does) or point it elsewhere, and the next play must sound like the bytes. Before each play the chunk's
/// `abuf` pointer and `alen` are compared with these, and its bytes with `bytes` (one `memcmp`, outside the
/// stand-in's lock: about 0.2 ms per MB, so a one-second chunk costs tens of microseconds and a 120 MB one about
/// 20 ms; a sampled or hashed check would be no faster for the bytes it must read, or would miss a write). Any
/// change makes a fresh sound.
final class MadeSound: Sendable {
    let sound: Sound
    let generation: Int
    let abuf: UInt
    let bytes: [UInt8]

    init(sound: Sound, generation: Int, abuf: UnsafeMutablePointer<UInt8>, bytes: [UInt8]) {
        self.sound = sound
        self.generation = generation
        self.abuf = UInt(bitPattern: abuf)
        self.bytes = bytes
    }

    /// Whether the sound still plays what `chunk` holds (read outside the lock: see `ChunkRecord.readers`).
    func matches(_ chunk: ChunkBytes, generation: Int) -> Bool {
        self.generation == generation && abuf == UInt(bitPattern: chunk.abuf) && bytes.count == chunk.length
            && bytes.withUnsafeBytes { memcmp($0.baseAddress!, chunk.abuf, chunk.length) == 0 }
    }

    /// A sound playing `chunk`'s bytes in `spec`, made outside the stand-in's lock (SDL converts; the engine copies).
    /// `copy` is the chunk's bytes when the caller already holds them.
    static func make(
        _ chunk: ChunkBytes, engine: AudioEngine, spec: OutputSpec, generation: Int, copy: [UInt8]? = nil
    ) -> Result<MadeSound, ChunkProblem> {
        let source = UnsafeRawBufferPointer(start: chunk.abuf, count: chunk.length)
        let layout = AudioLayout(format: spec.format.rawValue, channels: spec.channels)
        guard
            let samples = AudioConverter.floats(source, from: layout, channels: spec.channels, rate: spec.frequency)
        else { return .failure(.engine("SDL could not convert the chunk: \(String(cString: SDL_GetError()))")) }
        let pcm = PCMBuffer(sampleRate: spec.frequency, channels: spec.channels, samples: samples)
        do {
            let sound = try engine.makeSound(pcm, name: "Mix_Chunk")
            return .success(
                MadeSound(sound: sound, generation: generation, abuf: chunk.abuf, bytes: copy ?? copied(source)))
        } catch {
            return .failure(.engine(error.description))
        }
    }
}

/// `source`'s bytes in an array, by one copy (a byte loop is slow in a debug build).
private func copied(_ source: UnsafeRawBufferPointer) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: source.count) { buffer, count in
        if let base = buffer.baseAddress, let from = source.baseAddress { memcpy(base, from, source.count) }
        count = source.count
    }
}

/// A chunk's samples as a play reads them: `abuf` and its whole frames.
struct ChunkBytes: @unchecked Sendable {
    let abuf: UnsafeMutablePointer<UInt8>
    let length: Int
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
    /// Plays reading the chunk's bytes outside the lock right now. Mix_FreeChunk leaves freeing our `abuf` to the
    /// last of them (`abufToFree`), so a play never reads freed memory.
    var readers = 0
    var abufToFree: UnsafeMutablePointer<UInt8>?

    init(_ chunk: UnsafeMutablePointer<Mix_Chunk>, ours: Bool) {
        self.chunk = chunk
        self.ours = ours
    }

    /// The chunk's bytes as they are now, in `spec`'s whole frames; `.badFrame` when there is not one frame.
    func bytes(_ spec: OutputSpec) -> Result<ChunkBytes, ChunkProblem> {
        let frameBytes = spec.format.width * spec.channels
        let length = Int(chunk.pointee.alen) / frameBytes * frameBytes
        guard let abuf = chunk.pointee.abuf, length > 0 else { return .failure(.badFrame) }
        return .success(ChunkBytes(abuf: abuf, length: length))
    }

    /// Ends one outside read (`readers`); returns the `abuf` to free when the chunk was freed meanwhile.
    func endRead() -> UnsafeMutablePointer<UInt8>? {
        readers -= 1
        guard readers == 0, let abuf = abufToFree else { return nil }
        abufToFree = nil
        return abuf
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

/// Every chunk pointer the stand-in has handed out or been given, and those of its own it has freed. A freed pointer
/// is refused, never read; a pointer never seen is a program's own struct, read as SDL_mixer reads it.
///
/// A freed struct of ours is not given back to the allocator at once: the last `quarantineSize` stay allocated
/// (their bytes poisoned), so no program struct can be at a refused address, and a program's Mix_Chunk is never
/// taken for one of ours that was freed. A struct leaving the quarantine is freed and its address forgotten: a
/// double free that late is not caught (it is then read as a program's struct).
struct ChunkRegistry {
    private var live: [ChunkPointer: ChunkRecord] = [:]
    private var freed: Set<ChunkPointer> = []
    /// Freed structs of ours, oldest first from `quarantineStart`.
    private var quarantine: [ChunkPointer] = []
    private var quarantineStart = 0
    /// Freed structs kept allocated (a Mix_Chunk is 16 bytes).
    static let quarantineSize = 4_096

    /// Registers a chunk this library allocated.
    mutating func add(_ chunk: ChunkPointer, made: MadeSound? = nil) -> ChunkRecord {
        let record = ChunkRecord(chunk.raw, ours: true)
        record.made = made
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

    /// Whether `record` is still the live record of its pointer.
    func isLive(_ record: ChunkRecord) -> Bool { live[ChunkPointer(raw: record.chunk)] === record }

    /// Forgets a chunk: later uses of its pointer are refused when the struct is ours (it goes into the
    /// quarantine); a program's struct is only forgotten. Returns the record and a struct of ours leaving the
    /// quarantine, for the caller to free.
    mutating func remove(_ chunk: ChunkPointer) -> (record: ChunkRecord?, release: ChunkPointer?) {
        guard let record = live.removeValue(forKey: chunk) else { return (nil, nil) }
        guard record.ours else { return (record, nil) }
        freed.insert(chunk)
        quarantine.append(chunk)
        guard quarantine.count - quarantineStart > Self.quarantineSize else { return (record, nil) }
        let oldest = quarantine[quarantineStart]
        quarantineStart += 1
        if quarantineStart >= Self.quarantineSize {
            quarantine.removeFirst(quarantineStart)
            quarantineStart = 0
        }
        freed.remove(oldest)
        return (record, oldest)
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
