import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// The HDR window as a value (docs/HDR.md): stepped by hand, no OpenAL, no device.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct HDRWindowTests {
    func window(width: Float = 40, threshold: Float = 0, attack: Double = 0.1, release: Double = 1) -> HDRWindow {
        HDRWindow(HDRSettings(width: width, threshold: threshold, attack: attack, release: release))
    }

    /// The top ramps linearly in dB to a louder voice and gets there at the attack time, then stays.
    /// (attack, loudest, seconds advanced, expected top)
    static let attacks: [(Double, Float, Double, Float)] = [
        (0.1, 50, 0.05, 25), (0.1, 50, 0.1, 50), (0.1, 50, 0.3, 50), (0.2, 120, 0.05, 30), (0.2, 120, 0.2, 120),
        (0, 120, 0, 120), (0, 120, 0.02, 120)
    ]

    @Test(arguments: attacks)
    func theTopRisesToTheLoudestWithinTheAttack(attack: Double, loudest: Float, seconds: Double, expected: Float) {
        var w = window(attack: attack)
        w.follow(loudest: loudest)
        var left = seconds
        while left > 1e-9 {  // in blocks of 10 ms, as the mixer steps it
            _ = w.advance(min(0.01, left))
            left -= 0.01
        }
        #expect(abs(w.top - expected) < 0.01)
        #expect(abs(w.bottom - (expected - 40)) < 0.01)
    }

    /// The top falls back at the release's pace, to the next loudest voice or to the threshold when none plays.
    /// (release, from, to (nil: nothing plays), seconds, expected top)
    static let releases: [(Double, Float, Float?, Double, Float)] = [
        (1, 85, 50, 0.5, 67.5), (1, 85, 50, 1, 50), (1, 85, nil, 0.5, 42.5), (1, 85, nil, 2, 0), (0, 85, 50, 0, 50)
    ]

    @Test(arguments: releases)
    func theTopFallsBackWithinTheRelease(release: Double, from: Float, to: Float?, seconds: Double, expected: Float) {
        var w = window(attack: 0, release: release)
        w.follow(loudest: from)
        #expect(w.top == from)
        w.follow(loudest: to ?? -.infinity)
        _ = w.advance(seconds)
        #expect(abs(w.top - expected) < 0.01)
    }

    @Test func aNewTargetOnTheWayStartsFromWhereTheTopStands() {
        var w = window(attack: 0.1)
        w.follow(loudest: 100)
        let moved = w.advance(0.05)
        #expect(moved && abs(w.top - 50) < 0.01)
        w.follow(loudest: 60)  // still higher than the top: another attack of 0.1 s from 50
        _ = w.advance(0.05)
        #expect(abs(w.top - 55) < 0.01)
        _ = w.advance(0.05)
        let movedAgain = w.advance(0.05)
        #expect(w.top == 60 && !movedAgain)
    }

    /// A target that wobbles by a little at every measure (the loudest voice moving) keeps its ramp: the top
    /// arrives at the release time, linearly, instead of restarting the ramp at every measure and creeping.
    /// (wobble in dB, seconds, expected top within 0.1 dB)
    static let wobbles: [(Float, Double, Float)] = [(0.05, 0.5, 25), (0.05, 1, 10), (0.5, 1, 10), (1, 0.5, 25)]

    /// A window with no floor to speak of, at `from` and falling to `to` over a release of 1 s.
    func falling(from: Float, to: Float) -> HDRWindow {
        var w = window(threshold: -100, attack: 0, release: 1)
        w.follow(loudest: from)
        w.follow(loudest: to)
        return w
    }

    @Test(arguments: wobbles)
    func aTargetThatWobblesKeepsItsRamp(wobble: Float, seconds: Double, expected: Float) {
        var w = window(threshold: -100, attack: 0, release: 1)
        w.follow(loudest: 40)
        #expect(w.top == 40)
        for step in 0..<Int((seconds * 100).rounded()) {  // measured and advanced every 10 ms, as the mixer does
            w.follow(loudest: step.isMultiple(of: 2) ? 10 + wobble / 2 : 10 - wobble / 2)
            _ = w.advance(0.01)
        }
        #expect(abs(w.top - expected) < 0.1 + wobble / 2, "top \(w.top)")
        // A move larger than the tolerance, or the other way, is a new target: a new ramp from where the top stands.
        var jumped = falling(from: 40, to: 10)
        _ = jumped.advance(0.5)
        jumped.follow(loudest: 8)
        _ = jumped.advance(0.5)
        #expect(abs(jumped.top - 16.5) < 0.01)
        // Re-aimed a microsecond before the ramp's end: the rest of it is that microsecond, no jump anywhere.
        var late = falling(from: 40, to: 10)
        _ = late.advance(0.999_999)
        late.follow(loudest: 9.5)
        _ = late.advance(0.000_000_5)
        #expect(late.top.isFinite && late.top >= 9.5 && late.top <= 10, "top \(late.top)")
        _ = late.advance(0.01)
        #expect(late.top == 9.5)
    }

    /// The threshold is the lowest the top goes: quiet scenes are not normalised up.
    @Test func theTopNeverGoesBelowTheThreshold() {
        var w = window(threshold: 30, attack: 0, release: 0)
        #expect(w.top == 30)
        w.follow(loudest: 10)
        _ = w.advance(0.1)
        #expect(w.top == 30)
        #expect(abs(HDRWindow.decibels(w.gain(loudness: 10, heard: 1)) + 20) < 0.01)
    }

    /// The gain a voice gets: (loudness − top) dB, never so much that it plays above full scale.
    /// (top, loudness, heard (gain × distance), expected gain in dB)
    static let gains: [(Float, Float, Float, Float)] = [
        (50, 50, 1, 0), (50, 40, 1, -10), (85, 50, 1, -35), (85, 50, 0.5, -35), (50, 120, 1, 0), (50, 120, 0.5, 6.02),
        (0, 0, 1, 0), (0, 0, 0.25, 0)
    ]

    @Test(arguments: gains)
    func aVoiceIsHeardAtItsLoudnessUnderTheTop(top: Float, loudness: Float, heard: Float, expectedDB: Float) {
        var w = window(attack: 0)
        w.follow(loudest: top)
        #expect(abs(HDRWindow.decibels(w.gain(loudness: loudness, heard: heard)) - expectedDB) < 0.01)
    }

    /// With the defaults, a voice of the default loudness and a gain up to 1 gets exactly 1: no change at all.
    @Test func theDefaultsChangeNothingForADefaultVoice() {
        var w = HDRWindow(HDRSettings())
        w.follow(loudest: HDRWindow.decibels(0.7))
        _ = w.advance(1)
        #expect(w.top == 0)
        #expect(w.gain(loudnessGain: 1, heard: 0.7) == 1)
        #expect(w.gain(loudness: 0, heard: 1) == 1)
    }

    /// Culling: below the bottom, whatever the width; width 0 keeps only the loudest.
    /// (width, top, level, culled)
    static let culls: [(Float, Float, Float, Bool)] = [
        (40, 85, 50, false), (40, 85, 45, false), (40, 85, 44.9, true), (40, 85, 40, true), (0, 85, 85, false),
        (0, 85, 84.99, true), (200, 85, -100, false), (1e30, 85, -116, true)
    ]

    @Test(arguments: culls)
    func aVoiceBelowTheBottomIsCulled(width: Float, top: Float, level: Float, culled: Bool) {
        var w = window(width: width, attack: 0)
        w.follow(loudest: top)
        #expect(w.culls(level: level) == culled)
    }

    /// Nothing traps, whatever comes in: NaN counts as no voice, infinities and huge values are clamped.
    /// (loudest, expected target)
    static let hostileLevels: [(Float, Float)] = [
        (.nan, 0), (-.infinity, 0), (.infinity, 240), (1e30, 240), (-1e30, 0), (Float.greatestFiniteMagnitude, 240),
        (-Float.leastNonzeroMagnitude, 0)
    ]

    @Test(arguments: hostileLevels)
    func hostileLevelsAreClamped(loudest: Float, expected: Float) {
        var w = window(attack: 0.1)
        w.follow(loudest: loudest)
        #expect(w.target == expected)
        _ = w.advance(.infinity)
        #expect(w.top == expected)
        for loudness in [Float.nan, .infinity, -.infinity, 1e30] {
            let gain = w.gain(loudness: loudness, heard: 1)
            #expect(gain.isFinite && gain >= 0 && gain <= 1)
        }
        #expect(w.topScale.isNormal && w.bottomLevel.isNormal)
    }

    /// Absurd settings given straight to the value (the public API refuses NaN before): clamped, never a trap.
    @Test func absurdSettingsAreClampedInTheValue() {
        let w = HDRWindow(HDRSettings(width: .nan, threshold: .infinity, attack: .nan, release: -.infinity))
        #expect(w.settings == HDRSettings(width: 0, threshold: 200, attack: 0, release: 0))
        var huge = HDRWindow(HDRSettings(width: 1e30, threshold: -1e30, attack: 1e300, release: 1e300))
        #expect(huge.settings == HDRSettings(width: 200, threshold: -200, attack: 86_400, release: 86_400))
        huge.follow(loudest: 100)
        let (byNaN, byNegative) = (huge.advance(.nan), huge.advance(-1))
        #expect(!byNaN && !byNegative && huge.top == -200)
        let byInfinity = huge.advance(.infinity)
        #expect(byInfinity && huge.top == 100)
        #expect(huge.bottomLevel.isNormal)
    }

    /// What the public API does with the same numbers: NaN and infinities refused by name, the rest clamped.
    @Test func settingsAreValidatedAsEveryMixerNumberIs() throws {
        #expect(throws: InvalidNumber.self) { try HDRSettings(width: .nan).validated() }
        #expect(throws: InvalidNumber.self) { try HDRSettings(threshold: -.infinity).validated() }
        #expect(throws: InvalidNumber.self) { try HDRSettings(attack: .infinity).validated() }
        #expect(throws: InvalidNumber.self) { try HDRSettings(release: .nan).validated() }
        #expect(
            try HDRSettings(width: 1e30, threshold: 500, attack: -1, release: 1e300).validated()
                == HDRSettings(width: 200, threshold: 200, attack: 0, release: 86_400))
        #expect(throws: InvalidNumber.self) { try PlayOptions(loudness: .nan).validated() }
        #expect(try PlayOptions(loudness: 1e30).validated().loudness == 200)
        #expect(try PlayOptions().validated().loudness == nil)
    }

    /// Changing the settings keeps the top where it stands and heads for the new threshold at the new pace.
    @Test func newSettingsKeepTheTop() {
        var w = window(attack: 0)
        w.follow(loudest: 80)
        w.change(to: HDRSettings(width: 20, threshold: 0, attack: 0, release: 2))
        #expect(w.top == 80 && w.bottom == 60)
        w.follow(loudest: 40)
        _ = w.advance(1)
        #expect(abs(w.top - 60) < 0.01)
        w.change(to: HDRSettings(width: 20, threshold: 90, attack: 0.5, release: 2))
        _ = w.advance(0.25)
        #expect(abs(w.top - 75) < 0.01)
    }
}
