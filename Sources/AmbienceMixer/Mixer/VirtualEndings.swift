/// A virtual one-shot's scheduled end.
struct VoiceEnding: Equatable {
    var clock: Int
    var slot: Int32
    var timing: UInt32
}

/// The virtual one-shots' scheduled ends, earliest first: a binary min-heap on `clock` of fixed capacity, so the
/// real-time tick never allocates. Entries of equal clocks come out in an unspecified order.
///
/// Walked through its buffer, an entry moved into a hole rather than swapped: through the array each step paid a
/// uniqueness check and bounds checks, a third of a virtual ending's cost (docs/bench/profile.md).
struct VirtualEndings {
    private var heap: [VoiceEnding] = []
    let capacity: Int

    /// An empty heap that holds `capacity` entries (at least 1) without reallocating.
    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        heap.reserveCapacity(self.capacity)
    }

    var count: Int { heap.count }
    var isEmpty: Bool { heap.isEmpty }
    /// Whether a push would grow the storage: the owner drops stale entries first.
    var isFull: Bool { heap.count >= capacity }
    /// The earliest end, without taking it.
    var first: VoiceEnding? { heap.first }

    /// Adds an end (past the capacity the storage grows: the owner keeps it from doing so with `removeAll`).
    mutating func push(_ ending: VoiceEnding) {
        heap.append(ending)
        let last = heap.count - 1
        heap.withUnsafeMutableBufferPointer { heap in
            var child = last
            while child > 0 {
                let parent = (child - 1) / 2
                guard ending.clock < heap[parent].clock else { break }
                heap[child] = heap[parent]
                child = parent
            }
            heap[child] = ending
        }
    }

    /// Takes off the earliest end if its clock is at or before `clock`; nil when none is due.
    mutating func popDue(atOrBefore clock: Int) -> VoiceEnding? {
        guard let first = heap.first, first.clock <= clock else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty { siftDown(last, from: 0) }
        return first
    }

    /// Drops the entries `isStale` picks and restores the heap, in place.
    mutating func removeAll(where isStale: (VoiceEnding) -> Bool) {
        heap.removeAll(where: isStale)
        heap.withUnsafeMutableBufferPointer { heap in
            for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { Self.siftDown(heap[i], from: i, in: heap) }
        }
    }

    /// Puts `entry` at `index`, a hole, and moves it down to its place.
    private mutating func siftDown(_ entry: VoiceEnding, from index: Int) {
        heap.withUnsafeMutableBufferPointer { Self.siftDown(entry, from: index, in: $0) }
    }

    private static func siftDown(
        _ entry: VoiceEnding, from index: Int, in heap: UnsafeMutableBufferPointer<VoiceEnding>
    ) {
        let count = heap.count
        var parent = index
        while true {
            let left = 2 * parent + 1
            guard left < count else { break }
            var smallest = left
            if left + 1 < count && heap[left + 1].clock < heap[left].clock { smallest = left + 1 }
            guard heap[smallest].clock < entry.clock else { break }
            heap[parent] = heap[smallest]
            parent = smallest
        }
        heap[parent] = entry
    }
}
