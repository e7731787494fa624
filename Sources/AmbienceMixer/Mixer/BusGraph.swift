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
    /// HDR windows by bus (nil: off, the default), and the linear factors that ranking and gains read of them
    /// (`HDRWindow.topScale`, `bottomLevel`) kept in dense arrays beside them. docs/HDR.md.
    private(set) var hdr: [HDRWindow?]
    private(set) var hdrScale: [Float]
    private(set) var hdrFloor: [Float]
    /// The bus whose HDR window a bus's voices answer to: the nearest up the chain with one (itself included), or
    /// -1.
    private(set) var hdrOwner: [Int]
    /// Whether any bus has an HDR window: without one the mixer does exactly what it did before HDR existed.
    private(set) var hasHDR = false

    /// A tree of `names`, the first the root and every other its child.
    init(root: String, children: [String]) {
        nodes = [Node(name: root, parent: nil)] + children.map { Node(name: $0, parent: 0) }
        effective = Array(repeating: 1, count: nodes.count)
        hdr = Array(repeating: nil, count: nodes.count)
        hdrScale = Array(repeating: 1, count: nodes.count)
        hdrFloor = Array(repeating: 0, count: nodes.count)
        hdrOwner = Array(repeating: -1, count: nodes.count)
    }

    var count: Int { nodes.count }

    /// Adds a bus under `parent` (the root when nil); returns its index.
    mutating func add(named name: String, parent: Int?) -> Int {
        nodes.append(Node(name: name, parent: parent ?? 0))
        effective.append(1)
        hdr.append(nil)
        hdrScale.append(1)
        hdrFloor.append(0)
        hdrOwner.append(hdrOwner[parent ?? 0])
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

    // MARK: HDR

    /// Puts an HDR window on a bus (nil takes it off). A window already there keeps where its top stands.
    mutating func setHDR(_ bus: Int, _ settings: HDRSettings?) {
        if let settings {
            if hdr[bus] == nil { hdr[bus] = HDRWindow(settings) } else { hdr[bus]!.change(to: settings) }
        } else {
            hdr[bus] = nil
        }
        hasHDR = hdr.contains { $0 != nil }
        for i in nodes.indices {
            hdrOwner[i] = hdr[i] != nil ? i : nodes[i].parent.map { hdrOwner[$0] } ?? -1
        }
        refreshHDRLevels(bus)
    }

    /// Aims each window at the loudest linear level under it (`peaks`, by bus; 0 when nothing plays there).
    /// Returns whether a top moved already (a window with no attack or release jumps).
    mutating func followHDR(peaks: [Float]) -> Bool {
        var moved = false
        for i in hdr.indices where hdr[i] != nil {
            let top = hdr[i]!.top
            hdr[i]!.follow(loudest: HDRWindow.decibels(peaks[i]))
            if hdr[i]!.top != top {
                refreshHDRLevels(i)
                moved = true
            }
        }
        return moved
    }

    /// Aims a window at a new voice's linear level if it is louder than what the window aims at, so that the
    /// attack starts with the voice rather than at the next measure. Returns whether the top moved already.
    /// Puts a window back as it was (a play refused after it raised the window).
    mutating func restoreHDR(_ bus: Int, _ window: HDRWindow) {
        guard hdr.indices.contains(bus), hdr[bus] != nil else { return }
        hdr[bus] = window
        refreshHDRLevels(bus)
    }

    mutating func raiseHDR(_ bus: Int, toLevel level: Float) -> Bool {
        guard let window = hdr[bus] else { return false }
        let decibels = HDRWindow.decibels(level)
        guard decibels > window.target else { return false }
        hdr[bus]!.follow(loudest: decibels)
        guard hdr[bus]!.top != window.top else { return false }
        refreshHDRLevels(bus)
        return true
    }

    /// Moves every window on by `seconds`; returns whether any top moved.
    mutating func advanceHDR(_ seconds: Double) -> Bool {
        var moved = false
        for i in hdr.indices where hdr[i] != nil {
            if hdr[i]!.advance(seconds) {
                refreshHDRLevels(i)
                moved = true
            }
        }
        return moved
    }

    private mutating func refreshHDRLevels(_ bus: Int) {
        hdrScale[bus] = hdr[bus]?.topScale ?? 1
        hdrFloor[bus] = hdr[bus]?.bottomLevel ?? 0
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
