import AmbienceCore
import AmbienceDecoding
import AmbiencePlatform
import Dispatch
import Glibc
import Synchronization

/// Sounds loaded from files, shared by path, with a memory budget: sounds nobody holds are evicted least recently used
/// first. A `Sound` the game keeps (or a voice plays) is never evicted, so a held sound always plays; the budget bounds
/// what the cache keeps on its own account, and what the game holds may go past it.
final class SoundCache: Sendable {
    let budget: Int
    private let state = Lock<State>(State())
    private let preloadQueue = DispatchQueue(label: "ambience.preload", qos: .utility)

    private struct State {
        var byPath: [String: Sound] = [:]
        var memory = 0
    }

    /// How modules and MIDI files are rendered.
    private let decoding: DecoderOptions

    init(budget: Int, decoding: DecoderOptions = DecoderOptions()) {
        self.budget = budget
        self.decoding = decoding
    }

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
        do { pcm = try AudioFile.decode(path, limit: soundLimit, options: decoding) } catch { throw .decoding(error) }
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

    /// Unloads sounds that only the cache holds, least recently used first, until the cache fits its budget.
    private func evict(mixer: Mixer) {
        let order = state.withLock { state -> [String] in
            guard state.memory > budget else { return [] }
            return state.byPath.map { (key: $0.key, used: mixer.lastUsed($0.value)) }.sorted { $0.used < $1.used }.map(
                \.key)
        }
        for key in order {
            let evicted = state.withLock { state -> Sound? in
                // Only the cache's own reference left: nobody can play it, so it can go. The reference is checked in
                // place, with no copy of it alive (a voice holds its sound too, so a playing one stays).
                guard state.memory > budget, state.byPath[key] != nil, isKnownUniquelyReferenced(&state.byPath[key]!)
                else { return nil }
                let sound = state.byPath.removeValue(forKey: key)!
                state.memory -= sound.memoryCost
                return sound
            }
            if let evicted { _ = mixer.unloadIfIdle(evicted) }
        }
    }

    /// Paths name the same file however they are spelled.
    private static func key(_ path: String) -> String { FilePaths.resolved(path) ?? path }
}

extension Sound {
    fileprivate func isLoadedNow(in mixer: Mixer) -> Bool { mixer.isLoaded(self) }
}
