/// The mixer's EFX objects: a reverb per bus that has one, the reverb zones of the world, and a low-pass filter
/// per real source for occlusion. Used under the mixer's lock, with its context current, and only where the mixer
/// has effects (`Mixer.effectsAvailable`: ALC_EXT_EFX, at `Mixer.lowestEffectsSampleRate` or above).
struct EffectRack {
    private var busReverbs: [Int: ALEffectSlot] = [:]
    private var zones: [(zone: ReverbZone, slot: ALEffectSlot)] = []
    /// One low-pass filter per real source, made the first time that source carries an occluded voice.
    private var filters: [ALFilter?]

    init(sources: Int) {
        filters = Array(repeating: nil, count: sources)
    }

    /// The reverb a voice sends to: its zone's when it stands in one, else the nearest up its bus chain.
    func reverb(for placement: Placement, bus: Int, in graph: BusGraph) -> ALEffectSlot? {
        if case .world(let position, _) = placement, let zone = zones.first(where: { $0.zone.contains(position) }) {
            return zone.slot
        }
        var current: Int? = bus
        while let b = current {
            if let reverb = busReverbs[b] { return reverb }
            current = graph.nodes[b].parent
        }
        return nil
    }

    /// Sends a real voice to its reverb and filters it for occlusion (0 clear, 1 behind a wall).
    mutating func apply(
        to source: Int, placement: Placement, bus: Int, occlusion: Float, graph: BusGraph,
        sources: inout SourcePool
    ) {
        var wanted = sources.settings[source]
        wanted.reverb = reverb(for: placement, bus: bus, in: graph)
        sources.configure(source, wanted)
        let al = sources[Int32(source)]
        if occlusion > 0 {
            if filters[source] == nil { filters[source] = ALFilter.makeLowPass() }
            // Walls take the highs first: at full occlusion, -6 dB overall and -26 dB above the reference.
            filters[source]?.setLowPass(gain: 1 - 0.5 * occlusion, gainHF: 1 - 0.95 * occlusion)
            // OpenAL copies a filter's parameters when it is set, so an occluded voice sets it every time.
            al.setDirectFilter(filters[source])
            sources.noteFiltered(source, true)
        } else if sources.settings[source].filtered {
            al.setDirectFilter(nil)
            sources.noteFiltered(source, false)
        }
    }

    /// Puts a reverb on a bus, or takes it off (nil). False when it could not be made.
    mutating func setReverb(_ parameters: ReverbParameters?, bus: Int, sources: inout SourcePool) -> Bool {
        if let parameters {
            if let existing = busReverbs[bus] {
                existing.set(parameters)
            } else {
                guard let made = ALEffectSlot.makeReverb(parameters) else { return false }
                busReverbs[bus] = made
            }
        } else if let existing = busReverbs.removeValue(forKey: bus) {
            sources.detach(existing)
            existing.delete()
        }
        return true
    }

    /// Replaces the reverb zones. False when some could not be made (the others are in place).
    mutating func setZones(_ newZones: [ReverbZone], sources: inout SourcePool) -> Bool {
        for zone in zones {
            sources.detach(zone.slot)
            zone.slot.delete()
        }
        zones = newZones.compactMap { zone in ALEffectSlot.makeReverb(zone.reverb).map { (zone, $0) } }
        return zones.count == newZones.count
    }

    func deleteAll() {
        for filter in filters { filter?.delete() }
        for slot in busReverbs.values { slot.delete() }
        for zone in zones { zone.slot.delete() }
    }
}
