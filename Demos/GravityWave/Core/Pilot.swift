import Glibc

/// A scripted pilot for headless runs and demos: flies toward the nearest pickup, steers clear of the wells' cores,
/// and shoots mines that come close. Deterministic: the same world always gets the same controls.
public struct Pilot: Sendable {
    public init() {}

    public func controls(for world: World) -> ShipControls {
        let ship = world.ship
        guard ship.isAlive else { return ShipControls() }
        var controls = ShipControls()

        // Shoot the nearest mine when it is close, turning toward it.
        if let mine = world.mines.min(by: {
            $0.position.distance(to: ship.position) < $1.position.distance(to: ship.position)
        }),
            mine.position.distance(to: ship.position) < 190
        {
            let lead = mine.position + mine.velocity * 0.2 - ship.position
            let error = Self.angleDifference(lead.angle, ship.angle)
            controls.turn = max(-1, min(1, error * 4))
            controls.fire = abs(error) < 0.25
            controls.brake = ship.velocity.length > 160
            return controls
        }

        // Where to go: toward the nearest pickup at a cruising speed, away from any well core that is near.
        var desired = Vector.zero
        if let pickup = world.pickups.min(by: {
            $0.position.distance(to: ship.position) < $1.position.distance(to: ship.position)
        }) {
            desired = (pickup.position - ship.position).normalized * 210
        }
        for well in world.wells {
            let away = ship.position - well.position
            let distance = away.length
            if distance < 120 { desired += away.normalized * (260 * (120 - distance) / 120 + 120) }
        }
        // Cancel the wells' pull too: steer by the velocity still needed.
        let needed = desired - ship.velocity - world.gravity(at: ship.position) * 0.25
        guard needed.length > 25 else { return controls }
        let error = Self.angleDifference(needed.angle, ship.angle)
        controls.turn = max(-1, min(1, error * 4))
        controls.thrust = abs(error) < 0.6 ? min(1, needed.length / 150) : 0
        controls.brake = abs(error) > 2.2 && ship.velocity.length > 120
        // Now and then take a shot straight ahead, as a player would.
        controls.fire = Int(world.time * 60) % 97 == 0
        return controls
    }

    /// `a - b`, wrapped into -π…π.
    static func angleDifference(_ a: Double, _ b: Double) -> Double {
        var d = (a - b).truncatingRemainder(dividingBy: 2 * Double.pi)
        if d > Double.pi { d -= 2 * Double.pi } else if d < -Double.pi { d += 2 * Double.pi }
        return d
    }
}
