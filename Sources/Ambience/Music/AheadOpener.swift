import Foundation

/// Opens the item that will follow the current one, on a thread of its own, so that neither the game nor the
/// feeder's refills wait on the disk: the feeder keeps the current item flowing while the next one opens, and at
/// the join takes the decoder that is ready (waiting only for an open already under way).
///
/// Without its thread (offline engines, which pump as they render) it opens in `prepare`, on the caller's thread.
/// A decoder is handed from one thread to the other through `state`, and used by one thread at a time.
final class AheadOpener: @unchecked Sendable {
    private struct State {
        var opener: MusicFeeder.Opener
        var wanted: (entryID: UInt64, item: MediaItem)?
        var opening: UInt64?
        var ready: (entryID: UInt64, decoder: Result<any AudioDecoder, DecodingError>)?
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

    /// Opens `item` now, on the caller's thread.
    func open(_ item: MediaItem) throws(DecodingError) -> any AudioDecoder {
        let opener = locked { $0.opener }
        return try opener(item)
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

    /// Makes sure the entry `entryID` is open, or being opened, for the next `take`.
    func prepare(_ entryID: UInt64, _ item: MediaItem) {
        let isNew = locked { state -> Bool in
            guard state.ready?.entryID != entryID, state.wanted?.entryID != entryID, state.opening != entryID else {
                return false
            }
            state.ready = nil
            state.wanted = (entryID, item)
            return true
        }
        guard isNew else { return }
        if let worker { worker.wake() } else { openWanted() }
    }

    /// The decoder for `entryID`: the one opened ahead, else the one being opened (waited for), else opened now.
    func take(_ entryID: UInt64, _ item: MediaItem) -> Result<any AudioDecoder, DecodingError> {
        condition.lock()
        while state.ready?.entryID != entryID
            && (state.opening == entryID || state.hasThread && state.wanted?.entryID == entryID)
        {
            condition.wait()
        }
        if state.wanted?.entryID == entryID { state.wanted = nil }
        let taken = state.ready?.entryID == entryID ? state.ready?.decoder : nil
        if taken != nil { state.ready = nil }
        let opener = state.opener
        condition.unlock()
        return taken ?? Result { () throws(DecodingError) in try opener(item) }
    }

    /// Opens what is wanted, outside the lock; keeps it unless something else is wanted by then.
    private func openWanted() {
        let job = locked { state -> (UInt64, MediaItem, MusicFeeder.Opener)? in
            guard let wanted = state.wanted else { return nil }
            state.wanted = nil
            state.opening = wanted.entryID
            return (wanted.entryID, wanted.item, state.opener)
        }
        guard let (entryID, item, opener) = job else { return }
        let decoder = Result { () throws(DecodingError) in try opener(item) }
        condition.lock()
        state.opening = nil
        if state.wanted == nil { state.ready = (entryID, decoder) }
        condition.broadcast()
        condition.unlock()
    }
}
