import Testing

@testable import AmbienceCore
@testable import AmbienceTestSupport

/// The play order as a pure value: tables of queue edits and what follows what, without a player.
@Suite(.offTheCooperativePool) struct PlayOrderTests {
    func items(_ albums: [String?]) -> [MediaItem] {
        albums.enumerated().map { i, album in
            let path = "/music/\(i).ogg"  // no such file: the item's tags are the test's own
            var item = MediaItem(persistentID: MediaItem.stableID(path), url: path)
            item.albumTitle = album
            item.trackNumber = 10 - i  // reversed, so album order is visible
            return item
        }
    }

    @Test func inQueueOrderWithoutShuffle() {
        var order = PlayOrder()
        #expect(order.rebuild(for: items([nil, nil, nil]), shuffle: .off, seed: 1, keeping: 2) == 2)
        #expect(order.queueIndices == [0, 1, 2])
    }

    @Test(arguments: [ShuffleMode.songs, .albums])
    func aShuffleStartsWithThePlayingItemAndVisitsEveryItemOnce(mode: ShuffleMode) {
        var order = PlayOrder()
        let queue = items(["A", "B", "A", "C", "B", "A"])
        #expect(order.rebuild(for: queue, shuffle: mode, seed: 0x5EED, keeping: 3) == 0)
        #expect(order.first == 3)
        #expect(order.sorted() == Array(0..<6))
        var again = PlayOrder()
        _ = again.rebuild(for: queue, shuffle: mode, seed: 0x5EED, keeping: 3)
        #expect(again == order, "a seeded shuffle is the same each time")
    }

    @Test func albumsKeepTheirTracksTogetherInTrackOrder() {
        var order = PlayOrder()
        let queue = items(["A", "B", "A", "B", "A"])
        _ = order.rebuild(for: queue, shuffle: .albums, seed: 7, keeping: nil)
        let albums = order.map { queue[$0].albumTitle! }
        #expect(albums == ["A", "A", "A", "B", "B"] || albums == ["B", "B", "A", "A", "A"])
        let tracksOfA = order.filter { queue[$0].albumTitle == "A" }.map { queue[$0].trackNumber! }
        #expect(tracksOfA == tracksOfA.sorted())
    }

    /// (order before, inserted at queue index, count, play next after order index, in queue order) → order after.
    @Test(
        arguments: [
            ([0, 1, 2], 3, 2, nil, true, [0, 1, 2, 3, 4]),  // append
            ([0, 1, 2], 1, 1, nil, true, [0, 1, 2, 3]),  // insert in the middle, queue order kept
            ([2, 0, 1], 1, 1, nil, false, [3, 0, 2, 1]),  // shuffled: goes last, later indices shift
            ([2, 0, 1], 3, 2, 0, false, [2, 3, 4, 0, 1]),  // play next after the first
            ([0, 1], 0, 0, nil, true, [0, 1])  // nothing
        ] as [([Int], Int, Int, Int?, Bool, [Int])])
    func insertions(before: [Int], at: Int, count: Int, after: Int?, inQueueOrder: Bool, expected: [Int]) {
        var order = PlayOrder(queueIndices: before)
        order.insert(queueIndex: at, count: count, after: after, inQueueOrder: inQueueOrder)
        #expect(order.queueIndices == expected)
    }

    @Test func removalShiftsLaterIndicesAndSaysWhereItWas() {
        var order = PlayOrder(queueIndices: [2, 0, 3, 1])
        #expect(order.remove(queueIndex: 0) == 1)
        #expect(order.queueIndices == [1, 2, 0])
        #expect(order.remove(queueIndex: 7) == nil)
        #expect(order.queueIndices == [1, 2, 0])
    }

    /// (position, ended by itself, repeat mode, items) → the next order index.
    @Test(
        arguments: [
            (0, true, RepeatMode.none, 3, 1 as Int?), (2, true, .none, 3, nil), (2, true, .all, 3, 0),
            (1, true, .one, 3, 1), (1, false, .one, 3, 2), (2, false, .one, 3, nil), (0, true, .all, 1, 0)
        ] as [(Int, Bool, RepeatMode, Int, Int?)])
    func whatFollows(position: Int, natural: Bool, mode: RepeatMode, count: Int, expected: Int?) {
        let order = PlayOrder(queueIndices: Array(0..<count))
        #expect(order.next(after: position, natural: natural, repeating: mode) == expected)
    }
}
