import Ambience
import CSDLMixerABI
import Glibc

// Chunks: loading (any SDL_RWops, a file, WAV or raw bytes already in the opened format), volume and freeing.
// A chunk's `abuf` holds its samples in the opened format (Mix_QuerySpec's), as SDL_mixer's does.

/// Mix_LoadWAV_RW: every format the engine decodes (WAV, Ogg Vorbis, Opus, FLAC, MP3, MP4, modules and MIDI when
/// their libraries load), converted to the opened format.
@_cdecl("Mix_LoadWAV_RW")
public func mixLoadWAVRW(_ source: UnsafeMutablePointer<SDL_RWops>?, _ freeSource: Int32) -> UnsafeMutablePointer<
    Mix_Chunk
>? {
    // The device first: SDL_mixer refuses before reading, and still frees the source when asked.
    guard let device = StandIn.shared.state.withLock({ $0.device }) else {
        if freeSource != 0, let source { _ = SDL_RWclose(source) }
        report(deviceNotOpen)
        return nil
    }
    let spec = device.spec
    let converted: [UInt8]
    switch decodedBytes(source, freeSource: freeSource != 0, engine: device.engine, spec: spec) {
    case .success(let bytes): converted = bytes
    case .failure(let reason):
        report(reason.text)
        return nil
    }
    guard let chunk = makeChunk(copying: converted) else {
        report("Mix_LoadWAV_RW: out of memory for \(converted.count) bytes")
        return nil
    }
    // The sound is made now (outside the lock), so the first play does not pay for it; `converted` is also the
    // copy later plays compare `abuf` with.
    let bytes = ChunkBytes(abuf: chunk.raw.pointee.abuf, length: converted.count)
    let made = try? MadeSound.make(
        bytes, engine: device.engine, spec: spec, generation: device.generation, copy: converted
    ).get()
    StandIn.shared.state.withLock { state in
        _ = state.chunks.add(chunk, made: state.device?.generation == device.generation ? made : nil)
    }
    return chunk.raw
}

/// The source's audio in `spec`'s format and channels (at its rate). The file's bytes and the decoded floats are
/// let go on return, before the chunk's sound is made, so they are not all held at once.
private func decodedBytes(
    _ source: UnsafeMutablePointer<SDL_RWops>?, freeSource: Bool, engine: AudioEngine, spec: OutputSpec
) -> Result<[UInt8], OpenRefusal> {
    let pcm: PCMBuffer
    switch RWopsReader.readAll(source, freeSource: freeSource) {
    case .success(let bytes):
        do {
            pcm = try engine.decode(bytes: bytes, name: "Mix_LoadWAV_RW", sampleRate: spec.frequency)
        } catch {
            return .failure(OpenRefusal(text: error.description))
        }
    case .failure(let error): return .failure(OpenRefusal(text: "Mix_LoadWAV_RW: \(error.description)"))
    }
    let layout = AudioLayout(format: spec.format.rawValue, channels: spec.channels)
    guard let bytes = AudioConverter.bytes(pcm.samples, channels: pcm.channels, to: layout, rate: spec.frequency)
    else {
        return .failure(OpenRefusal(text: "Mix_LoadWAV_RW: SDL could not convert: \(String(cString: SDL_GetError()))"))
    }
    return .success(bytes)
}

/// Mix_LoadWAV: a macro in older headers, a function in 2.6 (and exported): the file through an SDL_RWops.
@_cdecl("Mix_LoadWAV")
public func mixLoadWAV(_ file: UnsafePointer<CChar>?) -> UnsafeMutablePointer<Mix_Chunk>? {
    guard let file else {
        report("Mix_LoadWAV: NULL file name")
        return nil
    }
    guard let source = SDL_RWFromFile(file, "rb") else { return nil }  // SDL has set the reason
    return mixLoadWAVRW(source, 1)
}

/// Mix_QuickLoad_WAV: a WAV file's bytes in memory, already in the opened format; `abuf` points into them (they are
/// the program's, and stay so). The RIFF header is walked to its `data` chunk, at most 64 chunks in.
@_cdecl("Mix_QuickLoad_WAV")
public func mixQuickLoadWAV(_ memory: UnsafeMutablePointer<UInt8>?) -> UnsafeMutablePointer<Mix_Chunk>? {
    guard StandIn.shared.state.withLock({ $0.device != nil }) else {
        report(deviceNotOpen)
        return nil
    }
    guard let memory else {
        report("Mix_QuickLoad_WAV: NULL memory")
        return nil
    }
    func word(_ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(memory[at + $1]) << (8 * UInt32($1)) } }
    func tag(_ at: Int) -> String { String(decoding: (0..<4).map { memory[at + $0] }, as: UTF8.self) }
    guard tag(0) == "RIFF", tag(8) == "WAVE" else {
        report("Mix_QuickLoad_WAV: not a WAV file (no RIFF/WAVE header)")
        return nil
    }
    var at = 12
    for _ in 0..<64 {
        let length = word(at + 4)
        if tag(at) == "data" {
            guard let chunk = makeChunk(pointingAt: memory + at + 8, length: length) else { break }
            StandIn.shared.state.withLock { _ = $0.chunks.add(chunk) }
            return chunk.raw
        }
        // Chunks are padded to even lengths; a length that would run past 1 MiB of header is not a header.
        let next = at + 8 + Int(length) + Int(length & 1)
        guard next < 1 << 20 else { break }
        at = next
    }
    report("Mix_QuickLoad_WAV: no data chunk in the WAV header")
    return nil
}

/// Mix_QuickLoad_RAW: `length` bytes of samples in the opened format; `abuf` points at them (the program's).
@_cdecl("Mix_QuickLoad_RAW")
public func mixQuickLoadRAW(_ memory: UnsafeMutablePointer<UInt8>?, _ length: UInt32) -> UnsafeMutablePointer<
    Mix_Chunk
>? {
    guard StandIn.shared.state.withLock({ $0.device != nil }) else {
        report(deviceNotOpen)
        return nil
    }
    guard let memory else {
        report("Mix_QuickLoad_RAW: NULL memory")
        return nil
    }
    guard let chunk = makeChunk(pointingAt: memory, length: length) else {
        report("Mix_QuickLoad_RAW: out of memory")
        return nil
    }
    StandIn.shared.state.withLock { _ = $0.chunks.add(chunk) }
    return chunk.raw
}

/// Mix_FreeChunk: halts every channel playing it (their finished callbacks run before it returns), then frees it:
/// its `abuf` too when `allocated` says the library owns it. NULL is ignored; a freed chunk is refused (not freed
/// twice). A struct the program built itself is forgotten but not freed: it is the program's.
@_cdecl("Mix_FreeChunk")
public func mixFreeChunk(_ chunk: UnsafeMutablePointer<Mix_Chunk>?) {
    guard let pointer = chunk.map(ChunkPointer.init) else { return }
    let outcome = StandIn.shared.state.withLock { state -> ChunkRelease in
        var release = ChunkRelease()
        for i in state.channels.slots.indices where state.channels.slots[i].chunk == pointer {
            if state.channels.end(i) { release.finished.append(Int32(clamping: i)) }
            state.channels.slots[i].chunk = nil
        }
        // A callback under way for a channel a shrink dropped gets its chunk from here: NULL once freed, as for a slot.
        if state.reportingNow?.chunk == pointer { state.reportingNow?.chunk = nil }
        let removed = state.chunks.remove(pointer)
        release.known = removed.record != nil
        release.structure = removed.release
        guard let record = removed.record, record.ours else { return release }
        if record.chunk.pointee.allocated != 0, let abuf = record.chunk.pointee.abuf {
            // A play converting the bytes outside the lock frees them when it is done.
            if record.readers > 0 { record.abufToFree = abuf } else { release.abuf = abuf }
        }
        // Poisoned, in case a program reads it: the struct stays allocated a while (ChunkRegistry's quarantine).
        record.chunk.pointee = Mix_Chunk(allocated: 0, abuf: nil, alen: 0, volume: 0)
        return release
    }
    deliverFinished(outcome.finished)
    if let abuf = outcome.abuf { SDL_free(abuf) }
    if let structure = outcome.structure { SDL_free(structure.raw) }
    if !outcome.known { report("Mix_FreeChunk: not a chunk this library knows, or one already freed") }
}

/// What Mix_FreeChunk lets go of once out of the lock.
private struct ChunkRelease {
    var finished: [Int32] = []
    var known = false
    var abuf: UnsafeMutablePointer<UInt8>?
    /// A freed struct leaving the quarantine.
    var structure: ChunkPointer?
}

/// Mix_VolumeChunk: sets the chunk's volume (0...128, clamped; negative only asks) and returns the previous one.
/// Channels playing the chunk take the new volume at once. -1 for NULL or a freed chunk.
@_cdecl("Mix_VolumeChunk")
public func mixVolumeChunk(_ chunk: UnsafeMutablePointer<Mix_Chunk>?, _ volume: Int32) -> Int32 {
    let pointer = chunk.map(ChunkPointer.init)
    return StandIn.shared.state.withLock { state in
        switch state.chunks.record(pointer) {
        case .failure(let error): return refuse("Mix_VolumeChunk: \(error.description)")
        case .success(let record):
            let previous = Int32(record.chunk.pointee.volume)
            guard let volume = clampedVolume(volume) else { return previous }
            record.chunk.pointee.volume = UInt8(volume)
            for i in state.channels.slots.indices where state.channels.slots[i].chunk == pointer {
                state.channels.slots[i].chunkVolume = volume
                state.channels.applyGain(i)
            }
            return previous
        }
    }
}

/// A chunk of our own holding a copy of `bytes` (both allocated with SDL_malloc: `allocated` = 1).
private func makeChunk(copying bytes: [UInt8]) -> ChunkPointer? {
    guard let length = UInt32(exactly: bytes.count),
        let buffer = SDL_malloc(max(bytes.count, 1))?.assumingMemoryBound(to: UInt8.self)
    else { return nil }
    bytes.withUnsafeBytes {
        if let base = $0.baseAddress {
            buffer.update(from: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        }
    }
    guard let chunk = makeChunk(pointingAt: buffer, length: length) else {
        SDL_free(buffer)
        return nil
    }
    chunk.raw.pointee.allocated = 1
    return chunk
}

/// A chunk of our own whose `abuf` points at the caller's memory (`allocated` = 0).
private func makeChunk(pointingAt memory: UnsafeMutablePointer<UInt8>, length: UInt32) -> ChunkPointer? {
    guard let raw = SDL_malloc(MemoryLayout<Mix_Chunk>.size) else { return nil }
    let chunk = raw.bindMemory(to: Mix_Chunk.self, capacity: 1)
    chunk.initialize(to: Mix_Chunk(allocated: 0, abuf: memory, alen: length, volume: UInt8(STANDIN_MIX_MAX_VOLUME)))
    return ChunkPointer(raw: chunk)
}
