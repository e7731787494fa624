import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceTestSupport

@Suite(.offTheCooperativePool) struct EventQueueTests {
    @Test func aFullDropNewestQueueRefusesTheNewAndKeepsTheFirst() {
        var queue = EventQueue<Int>(capacity: 4, overflow: .dropNewest)
        let kept = (1...10).map { queue.push($0) }
        #expect(kept == [true, true, true, true, false, false, false, false, false, false])
        #expect(queue.dropped == 6 && queue.count == 4)
        #expect(queue.drain() == [1, 2, 3, 4])
        #expect(queue.isEmpty && queue.dropped == 6, "draining empties the queue but keeps the count of what it lost")
        #expect(queue.push(11) && queue.drain() == [11] && queue.dropped == 6)
    }

    @Test func aFullDropOldestQueueKeepsTheLatest() {
        var queue = EventQueue<Int>(capacity: 4, overflow: .dropOldest)
        let kept = (1...10).map { queue.push($0) }
        #expect(kept.allSatisfy { $0 }, "the pushed event itself is always kept")
        #expect(queue.dropped == 6 && queue.count == 4)
        #expect(queue.drain() == [7, 8, 9, 10])
        #expect(queue.isEmpty && queue.dropped == 6)
    }

    @Test func popTakesTheOldestAcrossTheRingsEnd() {
        var queue = EventQueue<String>(capacity: 3, overflow: .dropOldest)
        for word in ["a", "b", "c"] { queue.push(word) }
        #expect(queue.pop() == "a")
        queue.push("d")  // lands in the slot "a" left, at the ring's start
        queue.push("e")  // full: "b" gives way
        #expect(queue.dropped == 1)
        #expect(queue.pop() == "c" && queue.pop() == "d" && queue.pop() == "e")
        #expect(queue.pop() == nil && queue.isEmpty)
    }

    @Test func itGrowsWhileItsOldestIsMidRingAndKeepsTheOrder() {
        var queue = EventQueue<Int>(capacity: 1_000, overflow: .dropNewest)
        for n in 0..<10 { queue.push(n) }
        for n in 0..<5 { #expect(queue.pop() == n) }
        for n in 10..<1_005 { queue.push(n) }  // grows from 16 several times with its head at 5
        #expect(queue.dropped == 0 && queue.count == 1_000)
        #expect(queue.drain() == Array(5..<1_005))
    }

    @Test func aCapacityBelowOneIsOne() {
        var queue = EventQueue<Int>(capacity: -5, overflow: .dropNewest)
        #expect(queue.capacity == 1)
        #expect(queue.push(1) && !queue.push(2))
        #expect(queue.drain() == [1] && queue.dropped == 1)
    }

    /// Thousands of rounds of pushes, pops and drains, against the plainest model of the documented rule: order is
    /// kept, the documented end gives way, and `dropped` counts exactly what the model lost.
    @Test(arguments: [EventQueue<Int>.Overflow.dropNewest, .dropOldest])
    func manyCyclesMatchTheModel(overflow: EventQueue<Int>.Overflow) {
        let capacity = 7
        var queue = EventQueue<Int>(capacity: capacity, overflow: overflow)
        var model: [Int] = [], modelDropped = 0, next = 0
        // A fixed-seed xorshift64, so every run plays the same rounds (Core's SplitMix64 is a layer above).
        var state: UInt64 = 15
        func nextRandom() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        for _ in 0..<5_000 {
            switch nextRandom() % 4 {
            case 0, 1:
                for _ in 0..<Int(nextRandom() % 12) {
                    let kept = queue.push(next)
                    if model.count < capacity {
                        model.append(next)
                        #expect(kept)
                    } else if overflow == .dropNewest {
                        modelDropped += 1
                        #expect(!kept)
                    } else {
                        model.removeFirst()
                        model.append(next)
                        modelDropped += 1
                        #expect(kept)
                    }
                    next += 1
                }
            case 2:
                for _ in 0..<Int(nextRandom() % 5) {
                    #expect(queue.pop() == (model.isEmpty ? nil : model.removeFirst()))
                }
            default:
                #expect(queue.drain() == model)
                model.removeAll()
            }
            #expect(queue.count == model.count && queue.dropped == modelDropped)
        }
        #expect(modelDropped > 1_000, "the rounds overflowed the queue often")
    }

    @Test func totalsSaturate() {
        #expect(Int.max.addingSaturated(1) == Int.max)
        #expect(3.addingSaturated(4) == 7)
    }
}
