import AmbienceCore
import Testing

@testable import AmbienceMixer

/// `PlayOptions.validated()`'s shortcut for options already within the limits gives what the full check gives, bit
/// for bit, and refuses what it refuses.
@Suite struct PlayOptionsLimitsTests {
    static let floats: [Float] = [
        0, -0.0, 1, -1, 0.01, 0.009, 16, 16.01, 64, 64.5, 200, 201, -200, -201, 1e9, 1.1e9, -1e9, -1.1e9, 0.5, -0.5,
        .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .infinity, -.infinity, .nan
    ]
    static let doubles: [Double] = [
        0, -0.0, 1, 86_400, 86_401, -1, .infinity, -.infinity, .nan, .leastNonzeroMagnitude
    ]

    /// Every combination of edge values in each field: the same options (compared field by field, bit for bit) or
    /// the same refusal.
    @Test func theShortcutAgreesWithTheFullCheck() {
        var rng = SplitMix64(seed: 0x0B7_1095)  // reproducible: a failure prints the options
        for _ in 0..<20_000 {
            let pick = { Self.floats.randomElement(using: &rng)! }
            let placement: Placement =
                Bool.random(using: &rng)
                ? .pan(pick())
                : .world(
                    position: Vector3(x: pick(), y: pick(), z: pick()),
                    velocity: Vector3(x: pick(), y: pick(), z: pick()))
            let options = PlayOptions(
                gain: pick(), pitch: pick(), placement: placement, fadeIn: Self.doubles.randomElement(using: &rng)!,
                loudness: Bool.random(using: &rng) ? nil : pick())
            let full = try? options.validatedInFull()
            let fast = try? options.validated()
            #expect((full == nil) == (fast == nil), "\(options)")
            guard let full, let fast else { continue }
            #expect(Self.bits(full) == Self.bits(fast), "\(options)")
            if options.isWithinLimits { #expect(Self.bits(full) == Self.bits(options), "\(options)") }
        }
    }

    /// A -0 gain is made +0 by the full check, so the shortcut does not take it.
    @Test func aNegativeZeroGainIsNotWithinTheLimits() throws {
        let options = PlayOptions(gain: -0.0)
        #expect(!options.isWithinLimits)
        #expect(try options.validated().gain.sign == .plus)
        #expect(PlayOptions().isWithinLimits)
    }

    static func bits(_ o: PlayOptions) -> [UInt64] {
        var out: [UInt64] = [
            UInt64(o.gain.bitPattern), UInt64(o.pitch.bitPattern), o.fadeIn.bitPattern,
            o.loudness.map { UInt64($0.bitPattern) } ?? .max
        ]
        switch o.placement {
        case .pan(let p): out.append(UInt64(p.bitPattern))
        case .world(let p, let v): out += [p.x, p.y, p.z, v.x, v.y, v.z].map { UInt64($0.bitPattern) }
        }
        return out
    }
}
