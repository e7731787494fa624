import AmbiencePlatform

/// What the server asked of the libpulse output, request by request (`AMBIENCE_PULSE_TRACE=N`: the first N
/// requests, up to 100,000): when each came and how many bytes, and how many bytes of ours were rendered but not yet
/// written when it came. Made at the open, so the write callback only stores into it; summed up in the log when the
/// stream closes. For finding out how a server paces a stream, not for games.
final class PulseRequestTrace: @unchecked Sendable {
    private let capacity: Int
    private let entries: UnsafeMutablePointer<(nanoseconds: Int, bytes: Int, held: Int)>
    /// Written by the main-loop thread only; read after it is joined.
    private var count = 0

    /// A trace of `capacity` requests, or nil when `AMBIENCE_PULSE_TRACE` asks none.
    static func configured() -> PulseRequestTrace? {
        guard let text = ProcessEnvironment.value("AMBIENCE_PULSE_TRACE"), let wanted = Int(text), wanted > 0 else {
            return nil
        }
        return PulseRequestTrace(capacity: min(wanted, 100_000))
    }

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        entries = .allocate(capacity: self.capacity)
    }

    deinit { entries.deallocate() }

    /// On the main-loop thread: one request of `bytes`, with `held` bytes rendered and not yet written.
    func record(bytes: Int, held: Int) {
        guard count < capacity else { return }
        entries[count] = (monotonicNanoseconds(), bytes, held)
        count += 1
    }

    /// Sizes and gaps of the requests traced, in frames and ms, and what was held when they came.
    func summary(frameBytes: Int) -> String {
        guard count > 1 else { return "\(count) request traced" }
        let all = UnsafeBufferPointer(start: entries, count: count)
        let frames = all.map { $0.bytes / max(frameBytes, 1) }.sorted()
        let held = all.map { $0.held / max(frameBytes, 1) }.sorted()
        let gaps = zip(all.dropFirst(), all).map { Double($0.nanoseconds - $1.nanoseconds) / 1e6 }.sorted()
        func index(_ count: Int, _ q: Double) -> Int { min(Int(Double(count - 1) * q), count - 1) }
        func at(_ sorted: [Int], _ q: Double) -> Int { sorted[index(sorted.count, q)] }
        func at(_ sorted: [Double], _ q: Double) -> Double { (sorted[index(sorted.count, q)] * 100).rounded() / 100 }
        let sizes = Dictionary(grouping: frames, by: { $0 }).map { ($0.key, $0.value.count) }.sorted { $0.1 > $1.1 }
        return "\(count) requests; frames asked p1/p50/p99 \(at(frames, 0.01))/\(at(frames, 0.5))/\(at(frames, 0.99)), "
            + "commonest \(sizes.prefix(4).map { "\($0.0)×\($0.1)" }.joined(separator: " ")); "
            + "gap ms p1/p50/p99/max \(at(gaps, 0.01))/\(at(gaps, 0.5))/\(at(gaps, 0.99))/\(at(gaps, 1)); "
            + "held frames p1/p50/p99 \(at(held, 0.01))/\(at(held, 0.5))/\(at(held, 0.99))"
    }
}
