import Glibc

/// The bus tree and its rules, as values: gain ramps, mutes, ducking and the effective gain of every bus down the
/// chain. Pure: no OpenAL, no locks, no clock but the seconds it is advanced by. The mixer applies the gains it
/// computes to sources; tests drive it directly.
struct BusGraph {
    /// One bus's own settings. Parents always come before their children, so one pass computes the chain.
    struct Node {
        var name: String
        var parent: Int?
        var gain: Float = 1
        var gainRamp: Ramp?
        var muted = false
        /// The ducking multiplier, 1 when nothing ducks this bus.
        var duck: Float = 1
    }

    /// "While `trigger` has audible voices, `target` goes down by `depth` dB", by bus index: holding `Bus` handles
    /// here would keep the mixer alive forever.
    struct Ducking: Equatable {
        var trigger: Int
        var target: Int
        var depth: Float
        var attack: Double
        var release: Double
    }

    private(set) var nodes: [Node]
    private(set) var ducking: [Ducking] = []
    /// Own gain × ducking × every parent's, 0 under a mute: what reaches the output. Kept apart from `nodes` so that
    /// ranking thousands of voices reads a dense array of floats.
    private(set) var effective: [Float]

    /// A tree of `names`, the first the root and every other its child.
    init(root: String, children: [String]) {
        nodes = [Node(name: root, parent: nil)] + children.map { Node(name: $0, parent: 0) }
        effective = Array(repeating: 1, count: nodes.count)
    }

    var count: Int { nodes.count }

    /// Adds a bus under `parent` (the root when nil); returns its index.
    mutating func add(named name: String, parent: Int?) -> Int {
        nodes.append(Node(name: name, parent: parent ?? 0))
        effective.append(1)
        recompute()
        return nodes.count - 1
    }

    /// Sets a bus's own gain, at once (`seconds` 0) or as a ramp the next `advance` calls move. Returns whether
    /// effective gains changed now. The numbers are the caller's, already checked against `MixerLimits`.
    mutating func setGain(_ bus: Int, to gain: Float, over seconds: Double) -> Bool {
        if seconds > 0 {
            nodes[bus].gainRamp = Ramp(from: nodes[bus].gain, to: gain, duration: seconds)
            return false
        }
        nodes[bus].gainRamp = nil
        nodes[bus].gain = gain
        recompute()
        return true
    }

    mutating func setMuted(_ bus: Int, _ muted: Bool) {
        nodes[bus].muted = muted
        recompute()
    }

    /// Replaces the ducking rules. Without rules nothing stays ducked.
    mutating func setDucking(_ rules: [Ducking]) {
        ducking = rules.filter { nodes.indices.contains($0.trigger) && nodes.indices.contains($0.target) }
        if ducking.isEmpty { for i in nodes.indices { nodes[i].duck = 1 } }
        recompute()
    }

    /// Advances gain ramps and ducking by `seconds`; `isSounding(bus, graph)` says whether a bus (or one under it in
    /// `graph`) has audible voices now. Returns whether any effective gain changed.
    mutating func advance(_ seconds: Double, isSounding: (Int, BusGraph) -> Bool) -> Bool {
        var changed = false
        for i in nodes.indices {
            guard var ramp = nodes[i].gainRamp else { continue }
            ramp.advance(seconds)
            nodes[i].gain = ramp.value
            nodes[i].gainRamp = ramp.isDone ? nil : ramp
            changed = true
        }
        for rule in ducking {
            let triggered = isSounding(rule.trigger, self)
            let floor = Float(pow(10, Double(-rule.depth) / 20))
            var duck = nodes[rule.target].duck
            // Move in decibels so attack and release sound linear to the ear.
            let currentDB = 20 * log10(Double(max(duck, 1e-6)))
            if triggered && duck > floor {
                let step = rule.attack > 0 ? Double(rule.depth) * seconds / rule.attack : Double(rule.depth)
                duck = max(Float(pow(10, (currentDB - step) / 20)), floor)
                changed = true
            } else if !triggered && duck < 1 {
                let step = rule.release > 0 ? Double(rule.depth) * seconds / rule.release : Double(rule.depth)
                duck = min(Float(pow(10, (currentDB + step) / 20)), 1)
                changed = true
            }
            nodes[rule.target].duck = duck
        }
        if changed { recompute() }
        return changed
    }

    /// Whether `bus` is `ancestor` or lies under it.
    func isBus(_ bus: Int, under ancestor: Int) -> Bool {
        var current: Int? = bus
        while let c = current {
            if c == ancestor { return true }
            current = nodes[c].parent
        }
        return false
    }

    private mutating func recompute() {
        for i in nodes.indices {
            let own = nodes[i].muted ? 0 : nodes[i].gain * nodes[i].duck
            effective[i] = own * (nodes[i].parent.map { effective[$0] } ?? 1)
        }
    }
}

/// A linear ramp of one value, advanced by the mixer's clock.
struct Ramp {
    var from: Float
    var to: Float
    var duration: Double
    var elapsed: Double = 0

    var value: Float {
        duration <= 0 ? to : from + (to - from) * Float(min(elapsed / duration, 1))
    }
    var isDone: Bool { elapsed >= duration }

    mutating func advance(_ seconds: Double) { elapsed += seconds }
}
