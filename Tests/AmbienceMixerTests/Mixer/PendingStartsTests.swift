import Foundation
import Synchronization
import Testing

@testable import AmbienceCore
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// The record of starts between `play()` and the next block (`PendingStarts`), alone: its sources are ids that no
/// OpenAL call ever sees, and a batch is handed to a closure. `DeferredStartTests` listens to the whole.
@Suite(.offTheCooperativePool) struct PendingStartsTests {
    /// A record over `count` sources whose ids are 100, 101…
    static func starts(_ count: Int) -> PendingStarts {
        PendingStarts(sources: (0..<count).map { ALSource(id: UInt32(100 + $0)) })
    }

    /// The ids one `apply` plays.
    func applied(_ starts: PendingStarts) -> [UInt32] {
        var ids: [UInt32] = []
        starts.apply { batch in ids += batch.map(\.id) }
        return ids
    }

    @Test func recordedStartsAreAppliedOnceInOneBatchInTheirOrder() {
        let starts = Self.starts(8)
        #expect(!starts.hasRecorded)
        #expect(starts.record(5))
        #expect(starts.record(3))
        #expect(starts.hasRecorded)
        #expect(starts.isPending(5) && starts.isPending(3) && !starts.isPending(4))
        var batches = 0
        #expect(starts.apply { _ in batches += 1 } == 2)
        #expect(batches == 1)
        #expect(!starts.isPending(5) && !starts.isPending(3))
        #expect(!starts.hasRecorded)
        #expect(applied(starts).isEmpty)
        #expect(starts.record(7))
        #expect(applied(starts) == [107])
    }

    @Test func aStartTakenBackIsNeverApplied() {
        let starts = Self.starts(4)
        #expect(starts.record(1))
        #expect(starts.record(2))
        #expect(starts.takeBack(1))
        #expect(!starts.takeBack(1))  // nothing left to take back
        #expect(!starts.isPending(1))
        #expect(applied(starts) == [102])
        #expect(!starts.takeBack(2))  // applied: it plays
    }

    @Test func aSourceRecordedAgainAfterATakeBackIsAppliedOnce() {
        let starts = Self.starts(4)
        #expect(starts.record(0))
        #expect(starts.takeBack(0))
        #expect(starts.record(0))  // its old entry is still in the ring
        #expect(applied(starts) == [100])
        #expect(!starts.isPending(0))
    }

    @Test func aFullRecordRefusesUntilTheNextBatch() {
        let starts = Self.starts(8)
        // Starts recorded and taken back keep their place in the ring until a batch passes over them.
        for i in 0..<starts.capacity {
            #expect(starts.record(Int32(i % 8)))
            #expect(starts.takeBack(Int32(i % 8)))
        }
        #expect(!starts.record(0))
        #expect(!starts.isPending(0))
        #expect(applied(starts).isEmpty)
        #expect(starts.record(0))
        #expect(applied(starts) == [100])
    }

    @Test func indicesOutsideThePoolAreRefused() {
        let starts = Self.starts(4)
        #expect(!starts.record(-1))
        #expect(!starts.record(4))
        #expect(!starts.isPending(Int32.max))
        #expect(!starts.takeBack(-7))
        #expect(!starts.hasRecorded)
        let none = Self.starts(0)
        #expect(!none.record(0))
        #expect(applied(none).isEmpty)
    }

    /// The game thread records starts and takes some back while another thread applies batches, as the audio thread
    /// does: every start recorded is either applied once or taken back once, never both and never neither.
    @Test func everyStartIsAppliedOrTakenBackExactlyOnceAcrossThreads() {
        let sources = 64
        let starts = Self.starts(sources)
        final class Applier: Sendable {
            let stop = Atomic<Bool>(false)
            let batches = Atomic<Int>(0)
        }
        let shared = Applier()
        // Written by the applying thread only, read after it has been joined.
        nonisolated(unsafe) var appliedCounts = [Int](repeating: 0, count: sources)
        let finished = DispatchSemaphore(value: 0)
        let applier = Thread {
            while !shared.stop.load(ordering: .acquiring) {
                starts.apply { batch in
                    for source in batch { appliedCounts[Int(source.id) - 100] += 1 }
                    shared.batches.add(1, ordering: .relaxed)
                }
            }
            finished.signal()
        }
        applier.start()
        var recorded = [Int](repeating: 0, count: sources)
        var takenBack = [Int](repeating: 0, count: sources)
        var rng = SplitMix64(seed: 46)
        // On two busy cores the other thread may start late: the game side goes on until it has seen many batches.
        var steps = 0
        while steps < 200_000 || (shared.batches.load(ordering: .relaxed) < 1_000 && steps < 100_000_000) {
            steps += 1
            let source = Int32.random(in: 0..<Int32(sources), using: &rng)
            if starts.isPending(source) {
                if Bool.random(using: &rng), starts.takeBack(source) { takenBack[Int(source)] += 1 }
            } else if starts.record(source) {
                recorded[Int(source)] += 1
            }
        }
        shared.stop.store(true, ordering: .releasing)
        finished.wait()
        starts.apply { batch in for source in batch { appliedCounts[Int(source.id) - 100] += 1 } }
        for source in 0..<sources {
            #expect(recorded[source] == appliedCounts[source] + takenBack[source], "source \(source)")
            #expect(!starts.isPending(Int32(source)))
        }
        #expect(shared.batches.load(ordering: .relaxed) >= 1_000)
        #expect(takenBack.reduce(0, +) > 0)
    }
}
