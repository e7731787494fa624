/// A point, velocity or direction in the game's world space, in the game's own units (OpenAL's right-handed axes:
/// x to the right, y up, z towards the listener, so a listener facing forward looks down −z).
public struct Vector3: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// To the right.
    public var x: Float
    /// Up.
    public var y: Float
    /// Towards the listener that faces forward.
    public var z: Float

    /// The point (`x`, `y`, `z`).
    public init(x: Float, y: Float, z: Float) { (self.x, self.y, self.z) = (x, y, z) }

    /// The origin; no velocity.
    public static let zero = Vector3(x: 0, y: 0, z: 0)

    public var description: String { "(\(x), \(y), \(z))" }
}
