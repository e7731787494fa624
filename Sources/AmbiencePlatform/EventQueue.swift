/// A bounded first-in-first-out queue of events that counts what it drops: the one shape of every queue that holds
/// events until `update()` (or another consumer) takes them.
///
/// A value, with no lock of its own: a queue shared across threads lives inside its site's existing lock
/// (`Lock<EventQueue<…>>`, or state the owner already guards), so ThreadSanitizer sees every access. The storage is
/// a ring that grows by doubling up to `capacity`, so a queue that never fills costs little; `push` and `pop` are
/// O(1) amortised and `drain` is linear only in what it returns. Its hot calls are `@inlinable`: the queue is generic
/// and used from the modules above, where an unspecialized call would box every event (the type is
/// `@usableFromInline` so that they are inlined at all: see `Lock`).
@usableFromInline package struct EventQueue<Event> {
    /// Which end gives way when the queue is full.
    @usableFromInline package enum Overflow: Sendable, Equatable {
        /// The new event is refused: the consumer sees every event up to the first one lost. For events that are
        /// each a fact of their own (a voice finished or was stolen), where the earliest keep their meaning.
        case dropNewest
        /// The oldest waiting event makes room: the consumer sees the latest. For state-like events (a route, a
        /// playback state, sleep or wake), where the newest says how things are now.
        case dropOldest
    }

    /// The most events the queue holds (at least 1).
    @usableFromInline package let capacity: Int
    @usableFromInline package let overflow: Overflow
    /// Events lost to overflow since the queue was made (saturating; draining does not reset it).
    @usableFromInline package internal(set) var dropped = 0
    /// Events waiting.
    @usableFromInline package internal(set) var count = 0
    @usableFromInline var ring: [Event?] = []
    /// Index in `ring` of the oldest waiting event.
    @usableFromInline var head = 0

    /// A queue of at most `capacity` events (an engine constant; anything below 1 is taken as 1).
    package init(capacity: Int, overflow: Overflow) {
        self.capacity = max(capacity, 1)
        self.overflow = overflow
    }

    @inlinable package var isEmpty: Bool { count == 0 }

    /// Adds `event` at the end. Returns whether the event itself was kept: false only when the queue is full and
    /// drops the newest. A full `.dropOldest` queue keeps it and drops its oldest instead; both count in `dropped`.
    @discardableResult
    @inlinable package mutating func push(_ event: Event) -> Bool {
        if count == capacity {
            if dropped < Int.max { dropped += 1 }
            switch overflow {
            case .dropNewest:
                return false
            case .dropOldest:
                // Full means the ring is exactly `capacity` long and the next free slot is the oldest one's.
                ring[head] = event
                head = successor(of: head)
                return true
            }
        }
        if count == ring.count { grow() }
        var tail = head + count
        if tail >= ring.count { tail -= ring.count }
        ring[tail] = event
        count += 1
        return true
    }

    /// Takes the oldest waiting event, or nil when there is none.
    @inlinable package mutating func pop() -> Event? {
        guard count > 0 else { return nil }
        let event = ring[head].take()
        head = successor(of: head)
        count -= 1
        if count == 0 { head = 0 }
        return event
    }

    /// Takes every waiting event, oldest first. The storage is kept for the next ones.
    @inlinable package mutating func drain() -> [Event] {
        var events: [Event] = []
        events.reserveCapacity(count)
        var index = head
        for _ in 0..<count {
            if let event = ring[index].take() { events.append(event) }
            index = successor(of: index)
        }
        head = 0
        count = 0
        return events
    }

    @inlinable func successor(of index: Int) -> Int { index + 1 == ring.count ? 0 : index + 1 }

    /// Doubles the ring (from 16, up to `capacity`), the waiting events moved to its start in order.
    @usableFromInline mutating func grow() {
        let size = min(max(ring.count * 2, 16), capacity)
        var larger = [Event?](repeating: nil, count: size)
        var index = head
        for slot in 0..<count {
            larger[slot] = ring[index].take()
            index = successor(of: index)
        }
        ring = larger
        head = 0
    }
}

extension EventQueue: Sendable where Event: Sendable {}

extension Int {
    /// `self + other` that stops at `Int.max`: for totals of counters that only grow (drops summed over queues).
    @inlinable package func addingSaturated(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other < 0 ? Int.min : Int.max) : sum
    }
}
