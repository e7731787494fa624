/// The listener and the world's distance settings.
public struct ListenerState: Sendable, Equatable {
    /// Where the listener stands in world space.
    public var position = Vector3.zero
    /// How the listener moves, in world units per second (for doppler).
    public var velocity = Vector3.zero
    /// The direction the listener faces (any length but zero).
    public var forward = Vector3(x: 0, y: 0, z: -1)
    /// The direction of the top of the listener's head (any length but zero).
    public var up = Vector3(x: 0, y: 1, z: 0)
    /// Distance at which a world voice plays at its own gain.
    public var referenceDistance: Float = 1
    /// Beyond this a world voice gets no quieter.
    public var maxDistance: Float = 1000
    /// How fast gain falls with distance (inverse-distance model).
    public var rolloff: Float = 1
    /// How strongly velocities shift pitch (0 turns doppler off, 1 is physical).
    public var dopplerFactor: Float = 1

    /// Inverse-distance-clamped attenuation of a point, as OpenAL computes it: what ranking weighs world voices by.
    func attenuation(_ point: Vector3) -> Float {
        let dx = point.x - position.x, dy = point.y - position.y, dz = point.z - position.z
        let distance = min(max((dx * dx + dy * dy + dz * dz).squareRoot(), referenceDistance), maxDistance)
        let denominator = referenceDistance + rolloff * (distance - referenceDistance)
        return denominator > 0 ? referenceDistance / denominator : 1
    }
}

extension ListenerState {
    /// Whether `other` attenuates every point as this one does: the same position and distance model, bit for bit
    /// (velocity and orientation do not attenuate).
    func attenuatesAlike(_ other: ListenerState) -> Bool {
        position.x.bitPattern == other.position.x.bitPattern && position.y.bitPattern == other.position.y.bitPattern
            && position.z.bitPattern == other.position.z.bitPattern
            && referenceDistance.bitPattern == other.referenceDistance.bitPattern
            && maxDistance.bitPattern == other.maxDistance.bitPattern && rolloff.bitPattern == other.rolloff.bitPattern
    }

    /// Whether doppler can change how fast a voice placed so plays: then its end cannot be predicted.
    func dopplerApplies(to placement: Placement) -> Bool {
        guard dopplerFactor > 0 else { return false }
        if case .world(_, let voiceVelocity) = placement, voiceVelocity != .zero { return true }
        return velocity != .zero
    }
}
