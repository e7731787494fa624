/// What ranking needs besides the voices: the buses' effective gains and the listener, and the HDR windows'
/// levels by bus (`BusGraph.hdrOwner`, `hdrScale`, `hdrFloor`; empty when no bus has a window).
struct Audibility {
    var busGains: [Float]
    var listener: ListenerState
    var hdrOwner: [Int] = []
    var hdrScale: [Float] = []
    var hdrFloor: [Float] = []
}

extension VoicePool {
    /// The listener's distance attenuation of a voice: 1 for a panned one.
    static func attenuation(of slot: UnsafePointer<VoiceSlot>, _ listener: ListenerState) -> Float {
        guard case .world(let position, _) = slot.pointee.placement else { return 1 }
        return listener.attenuation(position)
    }
}
