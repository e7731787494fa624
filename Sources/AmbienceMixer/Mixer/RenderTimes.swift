import Synchronization

/// How long each rendered block took, as a histogram the audio thread fills without locks or allocation, for the
/// callback-time percentiles of `ambience stress --realtime`. 1 µs buckets up to 1 ms, 10 µs up to 10 ms, 100 µs up
/// to 100 ms; a longer block counts in the last bucket. (Unchecked: the buckets are atomics, reached only through
/// the pointer, so sharing it between threads is safe.)
package final class RenderTimes: @unchecked Sendable {
    private let counts: UnsafeMutablePointer<Atomic<Int>>
    package static let bucketCount = 1_000 + 900 + 900 + 1

    package init() {
        counts = .allocate(capacity: Self.bucketCount)
        for i in 0..<Self.bucketCount { (counts + i).initialize(to: Atomic(0)) }
    }

    deinit {
        counts.deinitialize(count: Self.bucketCount)
        counts.deallocate()
    }

    /// Counts one block of `nanoseconds`. Any thread; never blocks.
    package func record(nanoseconds: Int) {
        counts[Self.bucket(microseconds: max(nanoseconds, 0) / 1_000)].add(1, ordering: .relaxed)
    }

    /// Every bucket's count, in bucket order.
    package func snapshot() -> [Int] { (0..<Self.bucketCount).map { counts[$0].load(ordering: .relaxed) } }

    /// The bucket a duration falls in.
    package static func bucket(microseconds us: Int) -> Int {
        if us < 1_000 { return us }
        if us < 10_000 { return 1_000 + (us - 1_000) / 10 }
        if us < 100_000 { return 1_900 + (us - 10_000) / 100 }
        return bucketCount - 1
    }

    /// The upper edge of a bucket, in microseconds: what a percentile that lands in it reports (never an underestimate).
    package static func upperMicroseconds(ofBucket index: Int) -> Double {
        if index < 1_000 { return Double(index + 1) }
        if index < 1_900 { return Double(1_000 + (index - 1_000 + 1) * 10) }
        if index < bucketCount - 1 { return Double(10_000 + (index - 1_900 + 1) * 100) }
        return .infinity
    }

    /// The `q` quantile (0…1) of the counted blocks, in microseconds, by nearest rank; nil when nothing was counted.
    package static func quantile(_ q: Double, of counts: [Int]) -> Double? {
        let total = counts.reduce(0, +)
        guard total > 0, q.isFinite else { return nil }
        let rank = max(1, Int((min(max(q, 0), 1) * Double(total)).rounded(.up)))
        var seen = 0
        for (index, count) in counts.enumerated() {
            seen += count
            if seen >= rank { return upperMicroseconds(ofBucket: index) }
        }
        return nil
    }
}
