/// p50, p99 and max of a set of measurements, by nearest rank.
public struct Percentiles: Sendable, Equatable {
    public var count: Int
    public var p50: Double
    public var p99: Double
    public var max: Double

    /// Nil for no values; non-finite values are left out.
    public init?(_ values: [Double]) {
        let sorted = values.filter(\.isFinite).sorted()
        guard !sorted.isEmpty else { return nil }
        count = sorted.count
        p50 = Self.nearestRank(0.5, sorted)
        p99 = Self.nearestRank(0.99, sorted)
        max = sorted[sorted.count - 1]
    }

    public init(count: Int, p50: Double, p99: Double, max: Double) {
        self.count = count
        self.p50 = p50
        self.p99 = p99
        self.max = max
    }

    /// The smallest value with at least `q` of the values at or below it.
    static func nearestRank(_ q: Double, _ sorted: [Double]) -> Double {
        let rank = Swift.max(1, Int((q * Double(sorted.count)).rounded(.up)))
        return sorted[Swift.min(rank, sorted.count) - 1]
    }
}

/// Finds clicks in a recording of the sink's monitor and turns them into trigger-to-sound delays.
///
/// The recording is silence between clicks. A click's onset is the first sample above `threshold`; after it, the
/// detector ignores `refractoryFrames` (the click's own length and ring) before it looks for the next.
public struct ClickDetector: Sendable {
    public var threshold: Float
    public var refractoryFrames: Int

    public init(threshold: Float = 0.05, refractoryFrames: Int = 2_400) {
        self.threshold = threshold
        self.refractoryFrames = Swift.max(refractoryFrames, 1)
    }

    /// Frame indexes of the onsets in `samples` (mono), each `offset` frames on.
    public func onsets(in samples: UnsafeBufferPointer<Float>, offset: Int = 0) -> [Int] {
        var found: [Int] = []
        var i = 0
        while i < samples.count {
            if abs(samples[i]) > threshold {
                found.append(offset + i)
                i += refractoryFrames
            } else {
                i += 1
            }
        }
        return found
    }

    public func onsets(in samples: [Float]) -> [Int] { samples.withUnsafeBufferPointer { onsets(in: $0) } }
}

/// When each recorded frame reached the recorder, on CLOCK_MONOTONIC, from the reads that delivered them.
///
/// A read that returns at time t with N frames recorded so far says frame n arrived no later than t - (N - n) / rate.
/// The earliest such bound among the reads near a frame (the read that waited least behind the server) is the
/// estimate: a read delayed by the scheduler only makes its own bound later, never earlier.
public struct RecordingClock: Sendable {
    /// (frames recorded after the read, monotonic nanoseconds when it returned), in the order read.
    public var reads: [(frames: Int, nanoseconds: Int)]
    public var sampleRate: Int
    /// How far around a frame to look for the read that bounds it best.
    public var windowFrames: Int

    public init(reads: [(frames: Int, nanoseconds: Int)], sampleRate: Int, windowFrames: Int? = nil) {
        self.reads = reads
        self.sampleRate = Swift.max(sampleRate, 1)
        self.windowFrames = windowFrames ?? Swift.max(sampleRate, 1)
    }

    /// The monotonic time at which `frame` reached the recorder; nil with no read near it.
    public func nanoseconds(atFrame frame: Int) -> Int? {
        // Reads are in frame order: binary search for the first read at or after the frame.
        var low = 0, high = reads.count
        while low < high {
            let mid = (low + high) / 2
            if reads[mid].frames < frame { low = mid + 1 } else { high = mid }
        }
        var best: Int? = nil
        var i = low
        while i < reads.count, reads[i].frames <= frame + windowFrames {
            let bound = reads[i].nanoseconds - (reads[i].frames - frame) * 1_000_000_000 / sampleRate
            best = Swift.min(best ?? bound, bound)
            i += 1
        }
        return best
    }
}

/// Pairs trigger times with click onsets: each trigger takes the first onset not yet taken that comes after it and
/// within `window`. Triggers and onsets are monotonic nanoseconds, triggers in the order made.
public enum ClickMatcher {
    /// The delay of each trigger that found its click, in nanoseconds, and how many found none.
    public static func delays(triggers: [Int], onsets: [Int], windowNanoseconds: Int) -> (delays: [Int], missed: Int) {
        let sortedOnsets = onsets.sorted()
        var delays: [Int] = []
        var missed = 0
        var next = 0
        for trigger in triggers {
            // Onsets before this trigger belong to no later trigger either: skip them.
            while next < sortedOnsets.count, sortedOnsets[next] < trigger { next += 1 }
            if next < sortedOnsets.count, sortedOnsets[next] - trigger <= windowNanoseconds {
                delays.append(sortedOnsets[next] - trigger)
                next += 1
            } else {
                missed += 1
            }
        }
        return (delays, missed)
    }
}
