import AmbienceCore
import AmbiencePlatform
import Foundation

/// Opens the item that will follow the current one, on a thread of its own, so that neither the game nor the
/// feeder's refills wait on the disk: the feeder keeps the current item flowing while the next one opens, and at
/// the join takes the decoder that is ready (waiting only for an open already under way).
///
/// Without its thread (offline engines, which pump as they render) it opens in `prepare`, on the caller's thread.
/// A decoder is handed from one thread to the other through `state`, and used by one thread at a time.
final class AheadOpener: @unchecked Sendable {
    /// One opening of an entry: a song opened to loop forever (repeat-one) is another decoder than one opened to end.
    struct Request: Equatable {
        let entryID: UInt64
        let loops: Bool
    }

    private struct State {
        var opener: MusicFeeder.Opener
        var wanted: (request: Request, item: MediaItem)?
        var opening: Request?
        var ready: (request: Request, decoder: Result<any AudioDecoder, DecodingError>)?
        var hasThread = false
    }

    // NSCondition is a pthread mutex and condition: ThreadSanitizer sees it.
    private let condition = NSCondition()
    private var state: State
    private var worker: WorkerThread?

    init(opener: @escaping MusicFeeder.Opener) { state = State(opener: opener) }

    private func locked<R>(_ body: (inout State) -> R) -> R {
        condition.lock()
        defer { condition.unlock() }
        return body(&state)
    }

    var opener: MusicFeeder.Opener {
        get { locked { $0.opener } }
        set { locked { $0.opener = newValue } }
    }

    /// Opens `item` now, on the caller's thread; `loops`: its own loop plays forever.
    func open(_ item: MediaItem, loops: Bool) throws(DecodingError) -> any AudioDecoder {
        let opener = locked { $0.opener }
        return try opener(item, loops)
    }

    /// Call only while no feeder step runs (before the streaming thread starts).
    func startThread() {
        guard worker == nil else { return }
        locked { $0.hasThread = true }
        worker = WorkerThread(name: "ambience-open", scheduling: .batch) { [self] control in
            while !control.isStopRequested {
                openWanted()
                control.wait(seconds: 1)
            }
        }
    }

    /// Call only while no feeder step runs (after the streaming thread has stopped).
    func stopThread() {
        worker?.stop()
        worker = nil
        locked { $0.hasThread = false }
    }

    /// Makes sure the entry is open, or being opened, as `request` asks, for the next `take`.
    func prepare(_ request: Request, _ item: MediaItem) {
        let isNew = locked { state -> Bool in
            guard state.ready?.request != request, state.wanted?.request != request, state.opening != request else {
                return false
            }
            state.ready = nil
            state.wanted = (request, item)
            return true
        }
        guard isNew else { return }
        if let worker { worker.wake() } else { openWanted() }
    }

    /// The decoder for `request`: the one opened ahead, else the one being opened (waited for), else opened now.
    func take(_ request: Request, _ item: MediaItem) -> Result<any AudioDecoder, DecodingError> {
        condition.lock()
        while state.ready?.request != request
            && (state.opening == request || state.hasThread && state.wanted?.request == request)
        {
            condition.wait()
        }
        if state.wanted?.request == request { state.wanted = nil }
        let taken = state.ready?.request == request ? state.ready?.decoder : nil
        if taken != nil { state.ready = nil }
        let opener = state.opener
        condition.unlock()
        return taken ?? Result { () throws(DecodingError) in try opener(item, request.loops) }
    }

    /// Opens what is wanted, outside the lock; keeps it unless something else is wanted by then.
    private func openWanted() {
        let job = locked { state -> (Request, MediaItem, MusicFeeder.Opener)? in
            guard let wanted = state.wanted else { return nil }
            state.wanted = nil
            state.opening = wanted.request
            return (wanted.request, wanted.item, state.opener)
        }
        guard let (request, item, opener) = job else { return }
        let decoder = Result { () throws(DecodingError) in try opener(item, request.loops) }
        condition.lock()
        state.opening = nil
        if state.wanted == nil { state.ready = (request, decoder) }
        condition.broadcast()
        condition.unlock()
    }
}
