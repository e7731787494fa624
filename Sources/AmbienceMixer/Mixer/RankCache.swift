/// What the last rank knew, kept so that the next one looks only at what changed (docs/ARCHITECTURE.md, "The
/// crowd"): every live voice's score, the voices whose score may have changed since, the voices at or above the
/// last threshold, and the global inputs the scores were made with. Pure, fixed capacity: a rank allocates nothing.
///
/// While the global inputs hold, a voice's score changes only through the pool's methods, which mark it dirty: a
/// start, a pause, a gain, a fade step, a placement, a source given or taken. The next rank rescores those alone.
/// The `k`-th largest score is then among the members (the voices at or above the last threshold, and not culled or
/// paused: scoring 0 or more) unless fewer than `k` are left there; only then are all the scores read (an array of
/// floats, never the slots).
struct RankCache {
    /// Each live voice's score at the last rank, by slot (a dirty slot's is out of date).
    private(set) var scores: [Float]
    /// Slots whose score may have changed since the last rank, each once (`isDirty`); freed slots stay listed.
    private var dirty: [Int32] = []
    private var isDirty: [Bool]
    /// The live slots whose score is at or above `bar`, and where each is in that list (by slot; -1: not in it): the
    /// only voices that can be real after the rank.
    private(set) var members: [Int32] = []
    private var memberIndex: [Int32]
    /// The last rank's threshold; NaN when there is none to start from.
    private(set) var threshold: Float = .nan
    /// What a member scores at least: the threshold, or 0 when it is below (a culled or paused voice is never real,
    /// and under a window that culls most of the crowd they would be thousands).
    private var bar: Float { max(threshold, 0) }
    /// Whether `scores` of clean slots and `members` hold: false until a full rank, and after `invalidate`.
    private(set) var isValid = false
    /// Full ranks made (the cache built again), for tests and measurements.
    private(set) var fullRanks = 0
    /// The global inputs of the last rank's scores: when one differs, every score is made again.
    private var busGains: [Float] = []
    private var hdrOwner: [Int] = []
    private var hdrScale: [Float] = []
    private var hdrFloor: [Float] = []
    private var keep = -1
    private var listenerEpoch: UInt16 = 0
    /// Members by active order (active index in the high half, slot in the low), sorted for the mixer's walk.
    private var order: [Int64] = []

    init(capacity: Int) {
        scores = Array(repeating: 0, count: capacity)
        isDirty = Array(repeating: false, count: capacity)
        memberIndex = Array(repeating: -1, count: capacity)
        dirty.reserveCapacity(capacity)
        members.reserveCapacity(capacity)
        order.reserveCapacity(capacity)
    }

    /// Notes that a slot's score may have changed.
    mutating func markDirty(_ slot: Int32) {
        guard !isDirty[Int(slot)] else { return }
        isDirty[Int(slot)] = true
        dirty.append(slot)
    }

    /// Forgets a freed slot's membership (its dirty mark, if any, is dropped at the next rank).
    mutating func remove(_ slot: Int32) {
        let position = Int(memberIndex[Int(slot)])
        guard position >= 0 else { return }
        let moved = members.removeLast()
        if moved != slot {
            members[position] = moved
            memberIndex[Int(moved)] = Int32(position)
        }
        memberIndex[Int(slot)] = -1
    }

    /// The next full rank makes every score again.
    mutating func invalidate() {
        isValid = false
        threshold = .nan
    }

    /// Whether the global inputs are those of the last rank: then clean scores hold. Records them for the next rank.
    mutating func globalsHold(_ audibility: Audibility, keep: Int, listenerEpoch epoch: UInt16) -> Bool {
        var same = isValid && keep == self.keep && epoch == listenerEpoch
        same = Self.record(audibility.busGains, in: &busGains) && same
        same = Self.record(audibility.hdrOwner, in: &hdrOwner) && same
        same = Self.record(audibility.hdrScale, in: &hdrScale) && same
        same = Self.record(audibility.hdrFloor, in: &hdrFloor) && same
        self.keep = keep
        listenerEpoch = epoch
        return same
    }

    /// Whether `values` equal `stored` bit for bit; copies them in either way (in place unless the count changed:
    /// elements, never the buffer, which shared would make the bus graph's next write copy its array).
    private static func record(_ values: [Float], in stored: inout [Float]) -> Bool {
        guard values.count == stored.count else {
            stored.removeAll(keepingCapacity: true)
            stored.append(contentsOf: values)
            return false
        }
        var same = true
        for i in values.indices where values[i].bitPattern != stored[i].bitPattern {
            same = false
            stored[i] = values[i]
        }
        return same
    }

    private static func record(_ values: [Int], in stored: inout [Int]) -> Bool {
        guard values != stored else { return true }
        stored.removeAll(keepingCapacity: true)
        stored.append(contentsOf: values)
        return false
    }

    // MARK: The rank

    /// Rescores the dirty live slots with `score` (a closure over the slot, made by the pool), keeping membership
    /// against the last threshold. Clears the dirty marks.
    mutating func rescoreDirty(isLive: (Int32) -> Bool, score: (Int32) -> Float) {
        for slot in dirty {
            isDirty[Int(slot)] = false
            guard isLive(slot) else { continue }
            let value = score(slot)
            scores[Int(slot)] = value
            setMembership(slot, value >= bar)
        }
        dirty.removeAll(keepingCapacity: true)
    }

    /// Records a live slot's score in a full rank (no membership: `rebuild` follows).
    mutating func record(_ slot: Int32, _ score: Float) {
        scores[Int(slot)] = score
    }

    /// After a full rank: no slot is dirty, and the members are the live slots at or above `bar`.
    mutating func rebuild(threshold newThreshold: Float, active: [Int32]) {
        for slot in dirty { isDirty[Int(slot)] = false }
        dirty.removeAll(keepingCapacity: true)
        for slot in members { memberIndex[Int(slot)] = -1 }
        members.removeAll(keepingCapacity: true)
        threshold = newThreshold
        let bar = bar
        for slot in active where scores[Int(slot)] >= bar { setMembership(slot, true) }
        isValid = true
        fullRanks &+= 1
    }

    /// The score a slot needs to be among the `k` most important of the live `active` ones, from the members when
    /// at least `k` are there, else from every score; the members follow it. `scratch` holds at least
    /// `active.count` values.
    mutating func select(k: Int, active: [Int32], scratch: UnsafeMutableBufferPointer<Float>) -> Float {
        let old = threshold
        let oldBar = bar
        let found: Float
        if members.count >= k {
            // Every voice outside the members scores below the old bar, every member at or above it.
            for (i, slot) in members.enumerated() { scratch[i] = scores[Int(slot)] }
            found = kthLargest(scratch, count: members.count, k: k, near: old)
        } else {
            for (i, slot) in active.enumerated() { scratch[i] = scores[Int(slot)] }
            found = kthLargest(scratch, count: active.count, k: k, near: old)
        }
        threshold = found
        let newBar = bar
        if newBar > oldBar {
            var i = members.count - 1
            while i >= 0 {
                let slot = members[i]
                if scores[Int(slot)] < newBar { setMembership(slot, false) }
                i -= 1
            }
        } else if newBar < oldBar {
            for slot in active where scores[Int(slot)] >= newBar { setMembership(slot, true) }
        }
        return found
    }

    private mutating func setMembership(_ slot: Int32, _ member: Bool) {
        let position = memberIndex[Int(slot)]
        if member && position < 0 {
            memberIndex[Int(slot)] = Int32(members.count)
            members.append(slot)
        } else if !member && position >= 0 {
            remove(slot)
        }
    }

    // MARK: The mixer's walk

    /// Sorts the members by their place in the live list (`activeIndex` of each), so that the mixer gives sources
    /// in the order a walk over every live voice would (ties at the threshold go to the earlier). In place, no
    /// allocation. The list is the last rank's sorted one with a few voices added, removed or moved in the live
    /// list, so it is nearly in order: an insertion sort, unless that moves too much.
    mutating func sortMembers(activeIndex: (Int32) -> Int32) {
        order.removeAll(keepingCapacity: true)
        for slot in members { order.append(Int64(activeIndex(slot)) << 32 | Int64(UInt32(bitPattern: slot))) }
        order.withUnsafeMutableBufferPointer { sortNearlySorted($0) }
        for (i, key) in order.enumerated() {
            let slot = Int32(truncatingIfNeeded: key)
            members[i] = slot
            memberIndex[Int(slot)] = Int32(i)
        }
    }
}

/// Sorts `values` in ascending order, in place, without allocating: by insertion while that moves at most 8 values
/// per value (a list nearly in order), else by `heapsort`.
func sortNearlySorted(_ values: UnsafeMutableBufferPointer<Int64>) {
    var budget = values.count * 8
    for i in values.indices.dropFirst() {
        let value = values[i]
        var j = i
        while j > 0 && values[j - 1] > value {
            values[j] = values[j - 1]
            j -= 1
        }
        values[j] = value
        budget -= i - j
        if budget < 0 { return heapsort(values) }
    }
}

/// Sorts `values` in ascending order, in place, without allocating.
func heapsort(_ values: UnsafeMutableBufferPointer<Int64>) {
    func siftDown(_ start: Int, _ end: Int) {
        var root = start
        while 2 * root + 1 < end {
            var child = 2 * root + 1
            if child + 1 < end && values[child] < values[child + 1] { child += 1 }
            guard values[root] < values[child] else { return }
            values.swapAt(root, child)
            root = child
        }
    }
    let count = values.count
    guard count > 1 else { return }
    for start in stride(from: count / 2 - 1, through: 0, by: -1) { siftDown(start, count) }
    for end in stride(from: count - 1, to: 0, by: -1) {
        values.swapAt(0, end)
        siftDown(0, end)
    }
}
