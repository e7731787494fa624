/// The mixer's part of HDR mixing (docs/HDR.md): measuring the loudest voice under each window, moving the windows,
/// the gain a window gives a real voice, and keeping culled voices virtual. Under the mixer's lock, as the rest.
extension Mixer {
    /// Measures the loudest voices (every block while the pool is small, else every 40 ms: a crowd costs in
    /// proportion to its size) and moves the windows on by `seconds`. Returns whether a window's top moved.
    func advanceHDR(_ seconds: Double, frames: Int) -> Bool {
        framesSinceHDRMeasure += frames
        var jumped = false
        if voices.active.count <= sources.count || framesSinceHDRMeasure * 25 >= configuration.sampleRate {
            framesSinceHDRMeasure = 0
            voices.loudestLevels(into: &hdrPeaks, audibility)
            jumped = buses.followHDR(peaks: hdrPeaks)
        }
        return buses.advanceHDR(seconds) || jumped
    }

    /// What a real voice's window multiplies its gain by (1 outside any window).
    func hdrGain(_ slot: Int32) -> Float {
        let index = Int(slot)
        let owner = buses.hdrOwner[voices.slots[index].bus]
        guard owner >= 0, let window = buses.hdr[owner] else { return 1 }
        let heard = voices.slots.withUnsafeBufferPointer { VoicePool.heard($0.baseAddress! + index, listener) }
        return window.gain(loudnessGain: voices.slots[index].loudnessGain, heard: heard)
    }

    /// With a source for every voice: the culled real voices go virtual, and every other unpaused one is real.
    func rebalanceUnderHDR() {
        let audibility = self.audibility
        var i = voices.active.count - 1
        while i >= 0 {
            let slot = voices.active[i]
            i -= 1
            let culled = voices.isCulled(slot, audibility)
            if voices.slots[Int(slot)].source >= 0 {
                if culled { demote(slot) }
            } else if !culled && !voices.slots[Int(slot)].paused, let source = takeSource(for: slot) {
                attach(slot, to: source)
                counters.madeReal += 1
            }
        }
        voices.forgetRank()
    }

    /// Lets the window of a new voice's bus aim at it at once (its `loudnessGain` set) when it is the loudest, so
    /// that the voices it pushes under the bottom are culled, and the first it may take a slot from. Returns the
    /// window as it was, for `undoHDR` if the play is refused all the same.
    func prepareHDR(_ fresh: inout VoiceSlot) -> (bus: Int, window: HDRWindow)? {
        guard buses.hasHDR else { return nil }
        let owner = buses.hdrOwner[fresh.bus]
        guard owner >= 0, let before = buses.hdr[owner] else { return nil }
        let heard = withUnsafePointer(to: &fresh) { VoicePool.heard($0, listener) }
        if buses.raiseHDR(owner, toLevel: heard * fresh.loudnessGain) {
            // No attack: the others drop now, and those under the new bottom go virtual at the next tick.
            refreshGains()
            voices.needsRank = true
        }
        return (owner, before)
    }

    /// Puts a window back as `prepareHDR` found it, when the play was refused after all: a voice that never played
    /// moves no window (it would have pushed the others down for the whole release).
    func undoHDR(_ before: (bus: Int, window: HDRWindow)?) {
        guard let before, buses.hdr[before.bus] != before.window else { return }
        buses.restoreHDR(before.bus, before.window)
        refreshGains()
        voices.needsRank = true
    }

    // MARK: Buses

    func busHDR(_ index: Int) -> HDRSettings? { withLock { buses.hdr[index]?.settings } }
    func busHDRTop(_ index: Int) -> Float? { withLock { buses.hdr[index]?.top } }

    /// The live voices that answer to bus `index`'s window and are culled by it now (0 without a window). Visits
    /// every live voice: for a game's display or a measurement, not for every block.
    func busHDRCulled(_ index: Int) -> Int {
        withLock {
            guard buses.hdr.indices.contains(index), buses.hdr[index] != nil else { return 0 }
            let audibility = self.audibility
            var culled = 0
            for slot in voices.active
            where buses.hdrOwner[voices.slots[Int(slot)].bus] == index && voices.isCulled(slot, audibility) {
                culled += 1
            }
            return culled
        }
    }

    func setBusHDR(_ index: Int, _ requested: HDRSettings?) throws(InvalidNumber) {
        let settings = try requested.map { settings throws(InvalidNumber) in try settings.validated() }
        withLock {
            buses.setHDR(index, settings)
            voices.needsRank = true
            refreshGains()
        }
    }
}
