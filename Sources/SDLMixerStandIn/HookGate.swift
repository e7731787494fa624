import Ambience

// Mix_HookMusic replacing a hook must return only once the hook it replaced is not running and will not be called
// again: SDL_mixer holds its audio lock while it swaps them. Here the hook runs on the engine's stream thread, from
// voices that are started outside the stand-in's lock (startMusicHook), so a voice of a replaced hook may still be
// starting when Mix_HookMusic takes the voice it knows of out. The gate closes on every replaced hook at once: a call
// is made only while the hook's generation is the current one, and Mix_HookMusic waits for the calls of older ones
// under way to end.

/// Which hook may be called (`MusicHook.generation`), and the calls of the program's function under way.
final class HookGate: Sendable {
    private struct Calls {
        var current = 0
        /// Each call under way: its hook's generation and its thread.
        var running: [(generation: Int, thread: UInt)] = []
    }
    private let calls = Lock(Calls())

    /// Lets only the hook of `generation` be called from now on (under the stand-in's lock, with the hook).
    func admit(_ generation: Int) { calls.withLock { $0.current = generation } }

    /// Calls `body` if `generation` is the current hook's, and says whether it did.
    func call(_ generation: Int, _ body: () -> Void) -> Bool {
        let thread = currentThreadIdentity()
        let admitted = calls.withLock { calls -> Bool in
            guard calls.current == generation else { return false }
            calls.running.append((generation, thread))
            return true
        }
        guard admitted else { return false }
        body()
        calls.withLock { calls in
            if let index = calls.running.firstIndex(where: { $0.thread == thread }) { calls.running.remove(at: index) }
        }
        return true
    }

    /// Returns once no call of a hook older than the current one runs, on another thread: a hook calling
    /// Mix_HookMusic itself is not waited for (it returns into that call).
    func waitOutReplaced() {
        let thread = currentThreadIdentity()
        while calls.withLock({ calls in
            calls.running.contains { $0.generation != calls.current && $0.thread != thread }
        }) {
            sleep(milliseconds: 1)
        }
    }
}

/// The one gate of the stand-in's hook.
let hookGate = HookGate()
