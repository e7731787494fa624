/// The listener and the world's distance settings.
public struct ListenerState: Sendable, Equatable {
    public var position: (x: Float, y: Float, z: Float) = (0, 0, 0)
    public var velocity: (x: Float, y: Float, z: Float) = (0, 0, 0)
    /// The direction the listener faces.
    public var forward: (Float, Float, Float) = (0, 0, -1)
    public var up: (Float, Float, Float) = (0, 1, 0)
    /// Distance at which a world voice plays at its own gain.
    public var referenceDistance: Float = 1
    /// Beyond this a world voice gets no quieter.
    public var maxDistance: Float = 1000
    /// How fast gain falls with distance (inverse-distance model).
    public var rolloff: Float = 1
    public var dopplerFactor: Float = 1

    public static func == (a: ListenerState, b: ListenerState) -> Bool {
        a.position == b.position && a.velocity == b.velocity && a.forward == b.forward && a.up == b.up
            && a.referenceDistance == b.referenceDistance && a.maxDistance == b.maxDistance
            && a.rolloff == b.rolloff && a.dopplerFactor == b.dopplerFactor
    }

    /// Inverse-distance-clamped attenuation of a point, as OpenAL computes it: what ranking weighs world voices by.
    func attenuation(_ x: Float, _ y: Float, _ z: Float) -> Float {
        let dx = x - position.x, dy = y - position.y, dz = z - position.z
        let distance = min(max((dx * dx + dy * dy + dz * dz).squareRoot(), referenceDistance), maxDistance)
        let denominator = referenceDistance + rolloff * (distance - referenceDistance)
        return denominator > 0 ? referenceDistance / denominator : 1
    }
}

extension ListenerState {
    /// Whether doppler can change how fast a voice placed so plays: then its end cannot be predicted.
    func dopplerApplies(to placement: Placement) -> Bool {
        guard dopplerFactor > 0 else { return false }
        if case .world(_, _, _, let voiceVelocity) = placement, voiceVelocity != (0, 0, 0) { return true }
        return velocity != (0, 0, 0)
    }
}
