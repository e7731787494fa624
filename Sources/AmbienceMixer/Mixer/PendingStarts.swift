import AmbiencePlatform
import Synchronization

/// Voice starts that `play()` has recorded and that whoever renders next applies, all together, just before it mixes
/// the block (`Mixer.render`): the game's call then pays the engine's bookkeeping and no OpenAL call, and the voice
/// still starts at the first sample of the next block, where `alSourcePlay` inside the call put it.
///
/// One producer at a time, under the mixer's lock (`record`, `takeBack`); one consumer at a time, the thread that
/// renders (`apply`). A ticket per source says where its start stands: none, recorded (the game thread may still take
/// it back), or being applied (a taker-back waits the few microseconds until it has been). Whatever reads or changes a
/// source's play state on the game thread first takes a recorded start back and plays it itself
/// (`SourcePool.settle`), so no code of the mixer ever sees a source that is to play and has not.
///
/// (Unchecked: the tickets and the ring's ends are atomics; the ring's entries are written before the tail that
/// publishes them and read after it, and the rest is read-only after `init`, all reached through the pointers.)
final class PendingStarts: @unchecked Sendable {
    private static let none: UInt8 = 0, recorded: UInt8 = 1, applying: UInt8 = 2

    /// Each source's ticket, by index in the pool.
    private let tickets: UnsafeMutablePointer<Atomic<UInt8>>
    private let sources: UnsafeMutablePointer<ALSource>
    let sourceCount: Int
    /// Recorded sources by index, oldest first. A start taken back leaves its entry behind, with no ticket: skipped.
    private let ring: UnsafeMutablePointer<Int32>
    /// Room for two starts of every source between two blocks; past that a start is played at once by its caller.
    let capacity: Int
    /// The consumer's batch: the sources it plays in one call.
    private let batch: UnsafeMutablePointer<ALSource>
    /// Written by the consumer only, and by the producer only, in that order.
    private let head = Atomic<Int>(0), tail = Atomic<Int>(0)
    /// Set while a thread applies, so that a second renderer (a route change's overlap) never walks the ring too.
    private let consuming = Atomic<Bool>(false)

    init(sources list: [ALSource]) {
        sourceCount = list.count
        capacity = max(2 * list.count, 16)
        tickets = .allocate(capacity: max(list.count, 1))
        for i in 0..<list.count { (tickets + i).initialize(to: Atomic(PendingStarts.none)) }
        sources = .allocate(capacity: max(list.count, 1))
        sources.initialize(from: list, count: list.count)
        ring = .allocate(capacity: capacity)
        ring.initialize(repeating: -1, count: capacity)
        batch = .allocate(capacity: capacity)
        batch.initialize(repeating: ALSource(id: 0), count: capacity)
    }

    deinit {
        tickets.deinitialize(count: sourceCount)
        tickets.deallocate()
        sources.deinitialize(count: sourceCount)
        sources.deallocate()
        ring.deallocate()
        batch.deinitialize(count: capacity)
        batch.deallocate()
    }

    /// Records a start of source `index`, which is set up and neither playing nor recorded. False when the ring is
    /// full, or when a start of it is being applied: the caller plays it at once.
    func record(_ index: Int32) -> Bool {
        guard index >= 0, Int(index) < sourceCount else { return false }
        let end = tail.load(ordering: .relaxed)
        guard end - head.load(ordering: .acquiring) < capacity else { return false }
        // Only a source with no start of its own: a start being applied is not overwritten (it would be applied
        // again, from the top), and one recorded already is that start.
        let (exchanged, found) = tickets[Int(index)].compareExchange(
            expected: PendingStarts.none, desired: PendingStarts.recorded, ordering: .acquiringAndReleasing)
        guard exchanged else { return found == PendingStarts.recorded }
        ring[end % capacity] = index
        tail.store(end + 1, ordering: .releasing)
        return true
    }

    /// Whether a start of this source is recorded or being applied: it is about to play, and has not played out.
    func isPending(_ index: Int32) -> Bool {
        guard index >= 0, Int(index) < sourceCount else { return false }
        return tickets[Int(index)].load(ordering: .acquiring) != PendingStarts.none
    }

    /// Takes back a recorded start of this source: true when there was one (it will not be applied; the caller plays
    /// or drops it). A start being applied is waited out (false: it has been, and the source plays).
    func takeBack(_ index: Int32) -> Bool {
        guard index >= 0, Int(index) < sourceCount else { return false }
        var spins = 0
        while true {
            let (exchanged, found) = tickets[Int(index)].compareExchange(
                expected: PendingStarts.recorded, desired: PendingStarts.none, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            if found == PendingStarts.none { return false }
            // Being applied by the thread that renders, which waits on nothing of ours: a batch's one OpenAL call.
            spins += 1
            if spins > 64 { sleep(for: .microseconds(20)) }
        }
    }

    /// Whether any start is recorded since the last `apply` (the consumer's cheap check before each block).
    var hasRecorded: Bool { tail.load(ordering: .acquiring) != head.load(ordering: .relaxed) }

    /// Applies every recorded start with one call of `play` (OpenAL's `alSourcePlayv`), on the thread that renders,
    /// and returns how many. Takes no lock of ours and allocates nothing; another thread already applying: none.
    @discardableResult
    func apply(_ play: (UnsafeBufferPointer<ALSource>) -> Void) -> Int {
        guard hasRecorded, !consuming.exchange(true, ordering: .acquiring) else { return 0 }
        defer { consuming.store(false, ordering: .releasing) }
        let start = head.load(ordering: .relaxed)
        let end = tail.load(ordering: .acquiring)
        var count = 0
        for position in start..<end {
            let index = Int(ring[position % capacity])
            let (taken, _) = tickets[index].compareExchange(
                expected: PendingStarts.recorded, desired: PendingStarts.applying, ordering: .acquiringAndReleasing)
            guard taken else { continue }  // taken back, or already in this batch (recorded twice)
            batch[count] = sources[index]
            count += 1
        }
        if count > 0 { play(UnsafeBufferPointer(start: batch, count: count)) }
        for position in start..<end {
            _ = tickets[Int(ring[position % capacity])].compareExchange(
                expected: PendingStarts.applying, desired: PendingStarts.none, ordering: .releasing)
        }
        head.store(end, ordering: .releasing)
        return count
    }
}
