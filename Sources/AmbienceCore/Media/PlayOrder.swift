/// The order the queue plays in, as queue indices: the queue's own order, or shuffled by songs or by albums. Pure
/// (no locks, no I/O): the player keeps one under its lock, and `PlayOrderTests` test it by tables.
///
/// Its collection accessors are `@inlinable` (and the type `@usableFromInline`, without which Swift 6.3 silently
/// calls them): the player (another module) walks it on every feeder round, where a call per index cost more than
/// the index.
@usableFromInline package struct PlayOrder: RandomAccessCollection, Equatable {
    /// Order index → queue index.
    @usableFromInline package private(set) var queueIndices: [Int]

    /// An order as given: empty for a new player; tests build their own.
    package init(queueIndices: [Int] = []) { self.queueIndices = queueIndices }

    @inlinable package var startIndex: Int { 0 }
    @inlinable package var endIndex: Int { queueIndices.count }
    @inlinable package subscript(orderIndex: Int) -> Int { queueIndices[orderIndex] }

    /// Builds the order for `items`. A shuffle is seeded, so it is the same each time; albums keep their disc and
    /// track order. The item at queue index `current`, if given, keeps playing: a shuffled order starts with it, as
    /// on iOS. Returns `current`'s new order index.
    package mutating func rebuild(for items: [MediaItem], shuffle: ShuffleMode, seed: UInt64, keeping current: Int?)
        -> Int?
    {
        var rng = SplitMix64(seed: seed)
        switch shuffle {
        case .off:
            queueIndices = Array(items.indices)
        case .songs:
            queueIndices = Array(items.indices)
            queueIndices.shuffle(using: &rng)
        case .albums:
            var albums: [String: [Int]] = [:]
            var albumOrder: [String] = []
            for (i, item) in items.enumerated() {
                let key = item.albumTitle ?? ""
                if albums[key] == nil { albumOrder.append(key) }
                albums[key, default: []].append(i)
            }
            albumOrder.shuffle(using: &rng)
            queueIndices = albumOrder.flatMap { key in
                albums[key]!.sorted {
                    (items[$0].discNumber ?? 0, items[$0].trackNumber ?? 0, $0) < (
                        items[$1].discNumber ?? 0, items[$1].trackNumber ?? 0, $1
                    )
                }
            }
        }
        guard let current, let at = queueIndices.firstIndex(of: current) else { return nil }
        guard shuffle != .off else { return at }
        queueIndices.remove(at: at)
        queueIndices.insert(current, at: 0)
        return 0
    }

    /// After `count` items were inserted into the queue at `at`: they play right after order index `next` when it is
    /// given ("play next"), else in queue order when `inQueueOrder` (no shuffle), else last.
    package mutating func insert(queueIndex at: Int, count: Int, after next: Int?, inQueueOrder: Bool) {
        guard count > 0 else { return }
        for i in queueIndices.indices where queueIndices[i] >= at { queueIndices[i] += count }
        let added = Array(at..<(at + count))
        if let next {
            queueIndices.insert(contentsOf: added, at: next + 1)
        } else if inQueueOrder {
            queueIndices.insert(
                contentsOf: added, at: queueIndices.firstIndex { $0 > added.last! } ?? queueIndices.count)
        } else {
            queueIndices.append(contentsOf: added)
        }
    }

    /// After the queue lost its item at `queueIndex`: returns the order index it had.
    package mutating func remove(queueIndex: Int) -> Int? {
        guard let orderIndex = queueIndices.firstIndex(of: queueIndex) else { return nil }
        queueIndices.remove(at: orderIndex)
        for i in queueIndices.indices where queueIndices[i] > queueIndex { queueIndices[i] -= 1 }
        return orderIndex
    }

    /// The order index that follows `p`; `natural` means the item ended by itself (so repeat-one replays it).
    package func next(after p: Int, natural: Bool, repeating mode: RepeatMode) -> Int? {
        if natural && mode == .one { return p }
        if p + 1 < count { return p + 1 }
        return mode == .all && !isEmpty ? 0 : nil
    }
}

/// A small, seedable random generator, so shuffles are reproducible.
package struct SplitMix64: RandomNumberGenerator {
    package var state: UInt64
    package init(seed: UInt64) { state = seed }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
