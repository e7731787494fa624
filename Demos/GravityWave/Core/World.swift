import Glibc

/// A 2D vector in screen pixels.
public struct Vector: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public init(_ x: Double, _ y: Double) { self.x = x; self.y = y }
    public static let zero = Vector(0, 0)

    public static func + (a: Vector, b: Vector) -> Vector { Vector(a.x + b.x, a.y + b.y) }
    public static func - (a: Vector, b: Vector) -> Vector { Vector(a.x - b.x, a.y - b.y) }
    public static func * (a: Vector, k: Double) -> Vector { Vector(a.x * k, a.y * k) }
    public static func += (a: inout Vector, b: Vector) { a = a + b }
    public var length: Double { (x * x + y * y).squareRoot() }
    public var normalized: Vector { let l = length; return l > 0 ? Vector(x / l, y / l) : .zero }
    /// The unit vector pointing at `angle` radians, 0 being straight up the screen, clockwise positive.
    public static func heading(_ angle: Double) -> Vector { Vector(sin(angle), -cos(angle)) }
    /// The angle `heading` would need to point this way.
    public var angle: Double { atan2(x, -y) }
}

/// A small, seedable random generator (SplitMix64), so a seed always plays the same game.
public struct GameRandom: Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform in `range`.
    public mutating func double(in range: ClosedRange<Double>) -> Double {
        range.lowerBound + Double(next() >> 11) / Double(1 << 53) * (range.upperBound - range.lowerBound)
    }
}

/// What the player (or the pilot) does this step.
public struct ShipControls: Sendable, Equatable {
    /// -1 turns left (anticlockwise), 1 right.
    public var turn: Double = 0
    /// 0…1 of full thrust.
    public var thrust: Double = 0
    public var brake = false
    public var fire = false
    public init(turn: Double = 0, thrust: Double = 0, brake: Bool = false, fire: Bool = false) {
        self.turn = turn
        self.thrust = thrust
        self.brake = brake
        self.fire = fire
    }
}

/// The kinds of sound the game makes, by the asset that plays them.
public enum SoundKind: String, Sendable, CaseIterable, Comparable {
    case laser, pickup, explosion
    case appSound = "app-sound"
    case uiClick = "ui-click"
    case thrust = "thrust-loop"
    public static func < (a: SoundKind, b: SoundKind) -> Bool { a.order < b.order }
    private var order: Int { Self.allCases.firstIndex(of: self)! }
}

/// A sound the world asks for, at a place on the screen (nil: not placed, e.g. the interface).
public struct SoundCue: Sendable, Equatable {
    public var kind: SoundKind
    public var position: Vector?
    public var gain: Float = 1
    public var pitch: Float = 1
}

public struct Ship: Sendable {
    public var position: Vector
    public var velocity = Vector.zero
    /// Radians; 0 points up the screen.
    public var angle = 0.0
    /// The engine's output, smoothed (0…1): what the thrust sound follows.
    public var thrustLevel = 0.0
    public var isAlive = true
    /// Seconds until a dead ship comes back.
    public var respawnIn = 0.0
    /// Seconds a new ship cannot be hurt.
    public var shield = 0.0
    public static let radius = 11.0
}

public struct Well: Sendable {
    public var position: Vector
    /// Gravity strength: acceleration is `mass / (distance² + softening²)` pixels/s².
    public var mass: Double
    public var coreRadius: Double
}

public struct Pickup: Sendable {
    public var position: Vector
    public var age = 0.0
    public static let radius = 10.0
}

public struct Mine: Sendable {
    public var position: Vector
    public var velocity: Vector
    public var radius: Double
    public var spin: Double
}

public struct Bolt: Sendable {
    public var position: Vector
    public var velocity: Vector
    public var life: Double
}

public struct Particle: Sendable {
    public var position: Vector
    public var velocity: Vector
    public var life: Double
    public var hue: Double
}

/// The game's world: a ship, gravity wells, pickups, drifting mines and laser bolts, on a screen that wraps at the
/// edges. Pure: no audio, no drawing, no clocks; `step` advances it by a fixed time and returns the sounds it made.
public struct World: Sendable {
    public static let width = 960.0
    public static let height = 600.0
    public static let thrustAcceleration = 280.0
    public static let turnRate = 3.6
    public static let maxSpeed = 430.0
    public static let softening = 40.0
    public static let laserCooldown = 0.22
    public static let boltSpeed = 560.0

    public private(set) var ship: Ship
    /// Where the ship was before the last step, for drawing between steps.
    public private(set) var previousShipPosition: Vector
    public private(set) var wells: [Well] = []
    public private(set) var pickups: [Pickup] = []
    public private(set) var mines: [Mine] = []
    public private(set) var bolts: [Bolt] = []
    public private(set) var particles: [Particle] = []
    public private(set) var score = 0
    public private(set) var deaths = 0
    public private(set) var time = 0.0
    private var random: GameRandom
    private var fireCooldown = 0.0
    private var mineRespawns: [Double] = []

    public init(seed: UInt64) {
        random = GameRandom(seed: seed)
        let centre = Vector(World.width / 2, World.height / 2)
        ship = Ship(position: centre)
        previousShipPosition = centre
        // Three wells around the centre, never on it.
        for i in 0..<3 {
            let a = Double(i) / 3 * 2 * Double.pi + random.double(in: -0.4...0.4)
            let r = random.double(in: 170...230)
            wells.append(
                Well(
                    position: Vector(centre.x + r * 1.45 * sin(a), centre.y - r * cos(a) * 0.95),
                    mass: random.double(in: 520_000...700_000), coreRadius: 16))
        }
        for _ in 0..<3 { pickups.append(Pickup(position: freeSpot(awayFrom: centre, distance: 120))) }
        for _ in 0..<4 { mines.append(newMine()) }
    }

    /// Advances the world by `dt` seconds under `controls`; returns the sounds that happened.
    public mutating func step(dt: Double, controls: ShipControls) -> [SoundCue] {
        var cues: [SoundCue] = []
        time += dt
        previousShipPosition = ship.position
        fireCooldown = max(fireCooldown - dt, 0)

        if ship.isAlive {
            ship.shield = max(ship.shield - dt, 0)
            ship.angle += max(-1, min(1, controls.turn)) * World.turnRate * dt
            let thrust = max(0, min(1, controls.thrust))
            ship.velocity += Vector.heading(ship.angle) * (thrust * World.thrustAcceleration * dt)
            ship.velocity += gravity(at: ship.position) * dt
            if controls.brake { ship.velocity = ship.velocity * max(0, 1 - 1.8 * dt) }
            if ship.velocity.length > World.maxSpeed { ship.velocity = ship.velocity.normalized * World.maxSpeed }
            ship.position = wrap(ship.position + ship.velocity * dt)
            // The engine spools up and down over about a tenth of a second.
            ship.thrustLevel += (thrust - ship.thrustLevel) * min(1, dt * 12)
            if ship.position.distance(to: previousShipPosition) > World.width / 2 {
                previousShipPosition = ship.position
            }

            if controls.fire && fireCooldown == 0 {
                fireCooldown = World.laserCooldown
                let nose = ship.position + Vector.heading(ship.angle) * (Ship.radius + 4)
                bolts.append(
                    Bolt(
                        position: nose, velocity: ship.velocity + Vector.heading(ship.angle) * World.boltSpeed,
                        life: 1.1))
                cues.append(SoundCue(kind: .laser, position: nose, gain: 0.7))
            }
        } else {
            ship.thrustLevel += (0 - ship.thrustLevel) * min(1, dt * 12)
            ship.respawnIn -= dt
            if ship.respawnIn <= 0 { respawn() }
        }

        stepBolts(dt: dt, cues: &cues)
        stepMines(dt: dt, cues: &cues)
        stepPickups(dt: dt, cues: &cues)
        if ship.isAlive && ship.shield == 0 {
            if wells.contains(where: { ship.position.distance(to: $0.position) < $0.coreRadius + Ship.radius }) {
                crash(cues: &cues)
            }
        }
        for i in particles.indices {
            particles[i].position += particles[i].velocity * dt
            particles[i].velocity = particles[i].velocity * max(0, 1 - 1.5 * dt)
            particles[i].life -= dt
        }
        particles.removeAll { $0.life <= 0 }
        return cues
    }

    /// The pull of every well at `point`, in pixels/s².
    public func gravity(at point: Vector) -> Vector {
        var total = Vector.zero
        for well in wells {
            let d = well.position - point
            let r2 = d.x * d.x + d.y * d.y + World.softening * World.softening
            total += d.normalized * (well.mass / r2)
        }
        return total
    }

    // MARK: Parts of a step

    private mutating func stepBolts(dt: Double, cues: inout [SoundCue]) {
        for i in bolts.indices {
            bolts[i].velocity += gravity(at: bolts[i].position) * (0.5 * dt)
            bolts[i].position = wrap(bolts[i].position + bolts[i].velocity * dt)
            bolts[i].life -= dt
            if wells.contains(where: { bolts[i].position.distance(to: $0.position) < $0.coreRadius }) {
                bolts[i].life = 0
            }
        }
        var hitMines: [Int] = []
        for b in bolts.indices where bolts[b].life > 0 {
            if let m = mines.indices.first(where: {
                !hitMines.contains($0) && bolts[b].position.distance(to: mines[$0].position) < mines[$0].radius + 3
            }) {
                hitMines.append(m)
                bolts[b].life = 0
            }
        }
        for m in hitMines.sorted(by: >) {
            let mine = mines.remove(at: m)
            score += 25
            burst(at: mine.position, count: 24, hue: 0.08)
            cues.append(
                SoundCue(kind: .explosion, position: mine.position, gain: 0.8, pitch: Float(1.1 - mine.radius / 100)))
            mineRespawns.append(3)
        }
        bolts.removeAll { $0.life <= 0 }
    }

    private mutating func stepMines(dt: Double, cues: inout [SoundCue]) {
        for i in mines.indices {
            mines[i].velocity += gravity(at: mines[i].position) * (0.15 * dt)
            if mines[i].velocity.length > 90 { mines[i].velocity = mines[i].velocity.normalized * 90 }
            mines[i].position = wrap(mines[i].position + mines[i].velocity * dt)
            mines[i].spin += dt
        }
        for i in mineRespawns.indices { mineRespawns[i] -= dt }
        while let due = mineRespawns.firstIndex(where: { $0 <= 0 }) {
            mineRespawns.remove(at: due)
            mines.append(newMine())
        }
        guard ship.isAlive && ship.shield == 0 else { return }
        if let hit = mines.firstIndex(where: { ship.position.distance(to: $0.position) < $0.radius + Ship.radius }) {
            let mine = mines.remove(at: hit)
            burst(at: mine.position, count: 16, hue: 0.08)
            mineRespawns.append(3)
            crash(cues: &cues)
        }
    }

    private mutating func stepPickups(dt: Double, cues: inout [SoundCue]) {
        for i in pickups.indices { pickups[i].age += dt }
        guard ship.isAlive else { return }
        if let got = pickups.firstIndex(where: {
            ship.position.distance(to: $0.position) < Pickup.radius + Ship.radius + 4
        }) {
            let pickup = pickups[got]
            score += 10
            burst(at: pickup.position, count: 10, hue: 0.45)
            cues.append(SoundCue(kind: .pickup, position: pickup.position, gain: 0.9))
            pickups[got] = Pickup(position: freeSpot(awayFrom: ship.position, distance: 160))
        }
    }

    private mutating func crash(cues: inout [SoundCue]) {
        deaths += 1
        ship.isAlive = false
        ship.respawnIn = 1.2
        burst(at: ship.position, count: 36, hue: 0.02)
        cues.append(SoundCue(kind: .explosion, position: ship.position, gain: 1))
    }

    private mutating func respawn() {
        let spot = freeSpot(awayFrom: Vector(-1000, -1000), distance: 0)
        ship = Ship(position: spot)
        ship.shield = 2
        previousShipPosition = spot
    }

    private mutating func burst(at point: Vector, count: Int, hue: Double) {
        for _ in 0..<count {
            let a = random.double(in: 0...(2 * Double.pi)), speed = random.double(in: 40...220)
            particles.append(
                Particle(
                    position: point, velocity: Vector.heading(a) * speed, life: random.double(in: 0.4...1.0),
                    hue: hue + random.double(in: -0.04...0.04)))
        }
    }

    private mutating func newMine() -> Mine {
        let edge = random.double(in: 0...1) < 0.5
        let position =
            edge
            ? Vector(0, random.double(in: 60...(World.height - 60)))
            : Vector(random.double(in: 60...(World.width - 60)), 0)
        let a = random.double(in: 0...(2 * Double.pi))
        return Mine(
            position: position, velocity: Vector.heading(a) * random.double(in: 25...60),
            radius: random.double(in: 12...20), spin: 0)
    }

    /// A random place clear of the wells and at least `distance` from `point`.
    private mutating func freeSpot(awayFrom point: Vector, distance: Double) -> Vector {
        var best = Vector(World.width / 2, World.height / 2)
        for _ in 0..<40 {
            let p = Vector(random.double(in: 60...(World.width - 60)), random.double(in: 80...(World.height - 90)))
            let clear = wells.allSatisfy { p.distance(to: $0.position) > $0.coreRadius + 70 }
            best = p
            if clear && p.distance(to: point) >= distance { return p }
        }
        return best
    }

    private func wrap(_ p: Vector) -> Vector {
        var q = p
        if q.x < 0 { q.x += World.width } else if q.x >= World.width { q.x -= World.width }
        if q.y < 0 { q.y += World.height } else if q.y >= World.height { q.y -= World.height }
        return q
    }
}

extension Vector {
    public func distance(to other: Vector) -> Double { (self - other).length }
}
