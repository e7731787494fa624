import Dispatch
import Glibc
import Synchronization

/// Sounds loaded from files, shared by path, with a memory budget: idle sounds are evicted least recently used first.
final class SoundCache: Sendable {
    let budget: Int
    private let state = Lock<State>(State())
    private let preloadQueue = DispatchQueue(label: "ambience.preload", qos: .utility)

    private struct State {
        var byPath: [String: Sound] = [:]
        var memory = 0
    }

    init(budget: Int) { self.budget = budget }

    var memoryInUse: Int { state.withLock { $0.memory } }

    /// The most decoded bytes one sound may take: the whole budget, and never more than one OpenAL buffer holds.
    var soundLimit: Int64 { min(Int64(max(budget, 0)), AudioFile.maximumDecodedBytes) }

    /// The cached sound for `path`, decoding and uploading it on a miss. A file whose decoded size is over
    /// `soundLimit` is refused with `DecodingError.tooLarge` before any of it is decoded.
    func sound(for path: String, mixer: Mixer) throws(EngineError) -> Sound {
        let key = SoundCache.key(path)
        if let hit = state.withLock({ $0.byPath[key] }), hit.isLoadedNow(in: mixer) {
            mixer.touch(hit)
            return hit
        }
        let pcm: PCMBuffer
        do { pcm = try AudioFile.decode(path, limit: soundLimit) } catch { throw .decoding(error) }
        guard let sound = mixer.makeSound(pcm, name: path) else { throw .outOfMixerMemory(path) }
        let kept = state.withLock { state -> Sound in
            if let raced = state.byPath[key], raced.isLoadedNow(in: mixer) { return raced }
            state.byPath[key] = sound
            state.memory += sound.memoryCost
            return sound
        }
        if kept !== sound { mixer.unload(sound) }
        mixer.touch(kept)
        evict(mixer: mixer)
        return kept
    }

    func preload(_ paths: [String], mixer: Mixer) {
        preloadQueue.async { [self] in
            for path in paths { _ = try? sound(for: path, mixer: mixer) }
        }
    }

    func forget(_ sound: Sound) {
        state.withLock { state in
            if let key = state.byPath.first(where: { $0.value === sound })?.key {
                state.byPath[key] = nil
                state.memory -= sound.memoryCost
            }
        }
    }

    /// Unloads idle sounds, least recently used first, until the cache fits its budget.
    private func evict(mixer: Mixer) {
        let candidates = state.withLock { state -> [Sound] in
            guard state.memory > budget else { return [] }
            return state.byPath.values.sorted { mixer.lastUsed($0) < mixer.lastUsed($1) }
        }
        for sound in candidates {
            guard memoryInUse > budget else { return }
            if mixer.unloadIfIdle(sound) { forget(sound) }
        }
    }

    /// Paths name the same file however they are spelled.
    private static func key(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

extension Sound {
    fileprivate func isLoadedNow(in mixer: Mixer) -> Bool { mixer.isLoaded(self) }
}
