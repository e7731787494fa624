import AmbienceCore
import Testing

@testable import AmbienceMixer

/// The heap of virtual endings and the rounding of an ending's clock, as values.
@Suite struct VirtualEndingsTests {
    /// Random pushes and due pops come out in clock order, each entry once, against a sorted reference.
    @Test(arguments: [0x5EED_0001, 0x5EED_0002, 0x5EED_0003] as [UInt64])
    func popsEveryDueEndingInClockOrder(seed: UInt64) {
        var rng = SplitMix64(seed: seed)  // a failure names its seed, so it can be replayed
        var heap = VirtualEndings(capacity: 4096)
        var reference: [VoiceEnding] = []
        var now = 0
        for round in 0..<200 {
            for _ in 0..<Int.random(in: 0...30, using: &rng) {
                let ending = VoiceEnding(
                    clock: now + Int.random(in: -5...2000, using: &rng), slot: Int32(round), timing: UInt32(round))
                heap.push(ending)
                reference.append(ending)
            }
            now += Int.random(in: 0...300, using: &rng)
            var popped: [VoiceEnding] = []
            while let ending = heap.popDue(atOrBefore: now) { popped.append(ending) }
            #expect(popped.map(\.clock) == popped.map(\.clock).sorted())
            #expect(popped.allSatisfy { $0.clock <= now })
            let due = reference.filter { $0.clock <= now }
            #expect(popped.count == due.count)
            #expect(Set(popped.map { "\($0.clock) \($0.slot)" }) == Set(due.map { "\($0.clock) \($0.slot)" }))
            reference.removeAll { $0.clock <= now }
            #expect(heap.count == reference.count)
            #expect(heap.first.map(\.clock) == reference.map(\.clock).min())
        }
    }

    /// `removeAll` drops what it picks and leaves a heap: the rest still come out in order.
    @Test func removeAllKeepsTheHeapInOrder() {
        var heap = VirtualEndings(capacity: 64)
        for i in 0..<64 { heap.push(VoiceEnding(clock: (i * 37) % 101, slot: Int32(i), timing: UInt32(i % 3))) }
        #expect(heap.isFull)
        heap.removeAll { $0.timing == 1 }
        #expect(heap.count == 43)
        #expect(!heap.isFull)
        var clocks: [Int] = []
        while let ending = heap.popDue(atOrBefore: .max) {
            #expect(ending.timing != 1)
            clocks.append(ending.clock)
        }
        #expect(clocks == clocks.sorted() && clocks.count == 43)
        #expect(heap.isEmpty && heap.popDue(atOrBefore: .max) == nil)
    }

    /// `removeAll` that takes every entry, or leaves one or two, still leaves a heap.
    @Test(arguments: [0, 1, 2]) func removeAllLeavingFewKeepsTheHeap(kept: Int) {
        var heap = VirtualEndings(capacity: 8)
        for i in 0..<8 { heap.push(VoiceEnding(clock: 100 - i * 7, slot: Int32(i), timing: i < kept ? 0 : 1)) }
        heap.removeAll { $0.timing == 1 }
        #expect(heap.count == kept)
        var slots: [Int32] = []
        while let ending = heap.popDue(atOrBefore: .max) { slots.append(ending.slot) }
        #expect(slots == Array((0..<Int32(kept)).reversed()))  // the later slot has the earlier clock
        #expect(heap.isEmpty)
    }

    /// Nothing is due before its clock.
    @Test func nothingIsDueEarly() {
        var heap = VirtualEndings(capacity: 4)
        heap.push(VoiceEnding(clock: 10, slot: 0, timing: 0))
        #expect(heap.popDue(atOrBefore: 9) == nil)
        #expect(heap.popDue(atOrBefore: 10)?.slot == 0)
    }

    /// The fast rounding agrees with the generic saturating one, including NaN, infinities and the edges of Int.
    @Test func framesRoundUpAndSaturateAsTheGenericConversion() {
        let edges: [Double] = [
            0, -0.0, 0.2, 1, 1.5, -1.5, 1e18, 9.2e18, 9_223_372_036_854_774_784, 9_223_372_036_854_775_808,
            -9_223_372_036_854_775_808, -1e19, 1e300, .infinity, -.infinity, .nan, .ulpOfOne, 4_503_599_627_370_497
        ]
        var rng = SplitMix64(seed: 0xF4A3_E5)
        let random = (0..<1000).map { _ in Double.random(in: -1e7...1e7, using: &rng) }
        for frames in edges + random {
            #expect(VoicePool.framesUp(frames) == frames.saturated(Int.self, rounding: .up), "\(frames)")
        }
    }
}
