import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// HDR mixing heard through the real OpenAL Soft, offline (docs/HDR.md): each sound a tone of its own, measured band
/// by band in the samples, as the ducking test does. Windows of a whole number of tenths of a second hold a whole
/// number of cycles of every tone here (300, 500 and 1250 Hz), so no band leaks into another.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct HDRRenderTests {
    static let footstepsHz = 500.0, ambienceHz = 300.0, explosionHz = 1250.0
    /// 10^(−35/20) = 1/56.23: at 56.23 m (inverse distance, reference 1 m) a 120 dB explosion reaches the listener
    /// at 85 dB, so a window 40 dB wide keeps the footsteps (50) and culls the ambience (40).
    static let explosionDistance: Float = 56.234

    /// Footsteps at 50 dB and an ambience at 40 dB under a window 40 dB wide (attack 50 ms, release 0.5 s); a 120 dB
    /// explosion arrives at 85 dB and plays 1 s. The footsteps fall 35 dB within the attack and the ambience is
    /// culled; both are back within the release once the explosion has ended, the ambience where its time says.
    @Test func anExplosionPushesTheFootstepsDownAndCullsTheAmbienceUntilItEnds() throws {
        let engine = try AudioEngine(.offline())
        let world = engine.makeBus(named: "world", parent: engine.sfx)
        try world.setHDR(HDRSettings(width: 40, threshold: 0, attack: 0.05, release: 0.5))
        let footsteps = try engine.makeSound(tone(hz: Self.footstepsHz, seconds: 2), name: "footsteps")
        footsteps.loudness = 50
        let ambience = try engine.makeSound(tone(hz: Self.ambienceHz, seconds: 2), name: "ambience")
        ambience.loudness = 40
        let explosion = try engine.makeSound(tone(hz: Self.explosionHz, seconds: 1), name: "explosion")
        let steps = engine.play(footsteps, PlayOptions(loop: true, bus: world))
        let air = engine.play(ambience, PlayOptions(loop: true, bus: world))

        let calm = try Signal(engine.render(frames: 24_000))
        let stepsBefore = calm.amplitude(of: Self.footstepsHz, in: 4_800..<24_000)
        let airBefore = calm.amplitude(of: Self.ambienceHz, in: 4_800..<24_000)
        #expect(stepsBefore > 0.1)
        #expect(abs(decibels(airBefore, over: stepsBefore) + 10) < 0.3, "40 dB under a top of 50: −10 dB")
        #expect(world.hdrWindowTop.map { abs($0 - 50) < 0.01 } == true)

        let boom = engine.play(
            explosion,
            PlayOptions(bus: world, placement: .world(x: 0, y: 0, z: -Self.explosionDistance), loudness: 120))
        // The attack (50 ms) and the block it ends in; then 0.3 s to measure.
        let attack = try Signal(engine.render(frames: 4_800))
        #expect(world.hdrWindowTop.map { abs($0 - 85) < 0.05 } == true)
        #expect(!air.isReal && air.isPlaying, "culled: virtual, and still playing")
        #expect(steps.isReal && boom.isReal)
        let loud = try Signal(engine.render(frames: 14_400))
        let stepsDrop = decibels(loud.amplitude(of: Self.footstepsHz, in: 0..<14_400), over: stepsBefore)
        let airDrop = decibels(loud.amplitude(of: Self.ambienceHz, in: 0..<14_400), over: airBefore)
        #expect(abs(stepsDrop + 35) < 0.5, "footsteps 35 dB down: \(stepsDrop)")
        #expect(airDrop < -80, "the ambience is culled: \(airDrop) dB")
        #expect(loud.amplitude(of: Self.explosionHz, in: 0..<14_400) > 0.2, "the explosion at full scale")
        // Within the attack the footsteps were already falling: their last tenth there is well under the calm.
        #expect(decibels(attack.amplitude(of: Self.footstepsHz, in: 0..<4_800), over: stepsBefore) < -6)

        // The explosion ends 1 s after it started (48,000 frames; 19,200 so far). Then the release (0.5 s) and
        // 50 ms for the end to be seen and the window measured.
        _ = try engine.render(frames: 28_800)
        _ = try engine.render(frames: 26_400)
        #expect(!boom.isAlive)
        #expect(world.hdrWindowTop.map { abs($0 - 50) < 0.01 } == true)
        #expect(air.isReal, "back from culling once the window fell")
        let after = try Signal(engine.render(frames: 14_400))
        #expect(abs(decibels(after.amplitude(of: Self.footstepsHz, in: 0..<14_400), over: stepsBefore)) < 0.3)
        #expect(abs(decibels(after.amplitude(of: Self.ambienceHz, in: 0..<14_400), over: airBefore)) < 0.3)
        // 112,800 frames since the ambience started: 2.35 s into a 2 s loop. It kept its time while culled.
        let elapsed = try #require(air.elapsed)
        #expect(abs(elapsed - 0.35) < 0.03, "the ambience's playhead: \(elapsed) s")
    }

    /// A crowd under a window with fewer sources than voices (the ranked path): the culled voices are the first
    /// made virtual, and the loudest keep their sources, whatever the priorities say.
    @Test func aCrowdUnderAWindowKeepsTheLoudestRealAndTheCulledVirtual() throws {
        let engine = try AudioEngine(.offline(realVoices: 4))
        try engine.sfx.setHDR(HDRSettings(width: 30, threshold: 0, attack: 0, release: 0))
        let hum = try engine.makeSound(tone(hz: 400, seconds: 1), name: "hum")
        // Twelve voices at 10…120 dB, the quietest with the highest priority.
        var crowd: [Voice] = []
        for i in 1...12 {
            let options = PlayOptions(loop: true, priority: UInt8(255 - i * 10), loudness: Float(i * 10))
            crowd.append(engine.play(hum, options))
        }
        _ = try engine.render(frames: 9_600)  // several ranks (every 40 ms while voices compete)
        #expect(engine.sfx.hdrWindowTop == 120)
        // Bottom 90: 100, 110 and 120 are heard; the rest are culled, 90 too: it is at the bottom, not under it,
        // but it was virtual when the top reached 120, and a voice without a source comes back only 1 dB above the
        // bottom (hysteresis). So three of the four sources play.
        let realAtFirst: [Bool] = crowd.map { $0.isReal }
        #expect(realAtFirst == Array(repeating: false, count: 9) + Array(repeating: true, count: 3))
        crowd[11].stop()
        crowd[10].stop()
        _ = try engine.render(frames: 9_600)
        // The top falls to 100 at once (no release): 80 and 90 come back where their time says, more than 1 dB above
        // the bottom (70); 70 at the bottom and 10…60 under it stay culled.
        #expect(engine.sfx.hdrWindowTop == 100)
        let realAfter: [Bool] = crowd[0..<10].map { $0.isReal }
        #expect(realAfter == Array(repeating: false, count: 7) + Array(repeating: true, count: 3))
        #expect(engine.stats.realVoices == 3)
    }

    /// Hostile numbers through a whole render: loudness ±200, gain 64 and 0, a voice a billion metres away, a window
    /// 0 dB wide down to -200 and one 200 dB wide, settings changed while voices play. Nothing traps, every sample
    /// is finite, no voice under the window plays above full scale, and refused settings change nothing.
    @Test func hostileNumbersUnderAWindowRenderFiniteSamples() throws {
        let engine = try AudioEngine(.offline())
        let world = engine.makeBus(named: "world", parent: engine.sfx)
        try world.setHDR(HDRSettings(width: 0, threshold: -200, attack: 0, release: 0))
        let loud = try engine.makeSound(tone(hz: 700, seconds: 0.5), name: "loud")
        loud.loudness = 1e30
        #expect(loud.loudness == 200)
        loud.loudness = .nan
        #expect(loud.loudness == 200)
        #expect(throws: InvalidNumber.self) { try loud.setLoudness(-.infinity) }
        let quiet = try engine.makeSound(tone(hz: 300, seconds: 0.5), name: "quiet")
        quiet.loudness = -1e30
        engine.play(loud, PlayOptions(gain: 64, loop: true, bus: world))
        engine.play(loud, PlayOptions(gain: 0, loop: true, bus: world))
        engine.play(quiet, PlayOptions(loop: true, bus: world, placement: .world(x: 1e9, y: -1e9, z: 1e9)))
        #expect(engine.play(quiet, PlayOptions(bus: world, loudness: .nan)) == .none)
        #expect(engine.play(quiet, PlayOptions(bus: world, loudness: .infinity)) == .none)
        var samples = try engine.render(frames: 4_800).samples
        world.hdr = HDRSettings(width: .nan)
        #expect(world.hdr == HDRSettings(width: 0, threshold: -200, attack: 0, release: 0))
        world.hdr = HDRSettings(width: 1e30, threshold: 1e30, attack: 1e300, release: -1)
        #expect(world.hdr == HDRSettings(width: 200, threshold: 200, attack: 86_400, release: 0))
        samples += try engine.render(frames: 4_800).samples
        world.hdr = nil
        samples += try engine.render(frames: 4_800).samples
        let finite = samples.allSatisfy { $0.isFinite }
        #expect(finite)
        #expect(Signal(Array(samples[0..<9_600]), channels: 2, sampleRate: 48_000).peak() <= 1.5)
    }

    /// HDR off is unchanged to the sample, against the build before HDR existed: `ambience render` of five of the
    /// game's sounds (gains, pans, a pitch, overlapping) gave these 144,000 float samples at de9bdba (FNV-1a 64 of
    /// their little-endian bytes, twice the same). This build must give the same bytes.
    @Test func hdrOffRendersWhatTheBuildBeforeHDRRendered() throws {
        let fixtures = try Fixtures()
        let out = fixtures.path("scene.wav")
        let sfx = BuildProducts.root + "/Assets/SFX/"
        let result = try ToolRunner.run([
            "render", "--out", out, "--seconds", "1.5", "--sfx", sfx + "thrust-loop.wav@0,gain=0.5",
            "--sfx", sfx + "laser.wav@0.1,pan=-0.6", "--sfx", sfx + "pickup.wav@0.35,pitch=1.5,gain=0.8",
            "--sfx", sfx + "explosion.wav@0.5,gain=0.7,pan=0.4", "--sfx", sfx + "ui-click.wav@1.2"
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let data = try Self.dataChunk(ofWAV: out)
        #expect(data.count == 576_000)
        #expect(Self.fnv1a(data) == 0xd4a2_1c98_d4df_b424)
    }

    /// The same scene rendered three times in this build: with no HDR field touched; with every loudness set and a
    /// window put on a bus and taken off again (HDR off, fields touched); and under a window left on with its
    /// defaults and no loudness set, gains up to 1 (the default a game that turns HDR on starts from). All three
    /// give the same samples, bit for bit.
    @Test func hdrFieldsLeftOffOrAtTheirDefaultsChangeNoSample() throws {
        enum Variant { case untouched, touchedButOff, windowWithDefaults }
        func render(_ variant: Variant) throws -> [Float] {
            let engine = try AudioEngine(.offline())
            let world = engine.makeBus(named: "world", parent: engine.sfx)
            world.gain = 0.8
            let a = try engine.makeSound(tone(hz: 440, seconds: 0.6), name: "a")
            let b = try engine.makeSound(tone(hz: 660, seconds: 1), name: "b")
            var loudness: Float? = nil
            switch variant {
            case .untouched: break
            case .touchedButOff:
                a.loudness = 90
                b.loudness = -30
                loudness = 75
                try world.setHDR(HDRSettings(width: 10, threshold: 20, attack: 0, release: 0))
                try world.setHDR(nil)
            case .windowWithDefaults:
                try world.setHDR(HDRSettings())
            }
            engine.play(a, PlayOptions(gain: 0.7, bus: world, placement: .pan(-0.3), loudness: loudness))
            engine.play(b, PlayOptions(gain: 0.4, loop: true, bus: world, placement: .world(x: 2, y: 0, z: -3)))
            engine.play(b, PlayOptions(gain: 0.9, pitch: 1.3, bus: engine.sfx, fadeIn: 0.2))
            var samples = try engine.render(frames: 24_000).samples
            engine.play(a, PlayOptions(bus: world, placement: .world(x: -1, y: 0, z: 0), loudness: loudness))
            samples += try engine.render(frames: 36_000).samples
            return samples
        }
        let untouched = try render(.untouched)
        #expect(untouched.contains { $0 != 0 })
        #expect(try render(.touchedButOff) == untouched)
        #expect(try render(.windowWithDefaults) == untouched)
    }

    /// The bytes of a WAV's data chunk: here, 32-bit float samples.
    static func dataChunk(ofWAV path: String) throws -> [UInt8] {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var position = 12
        while position + 8 <= bytes.count {
            let size =
                Int(bytes[position + 4]) | Int(bytes[position + 5]) << 8 | Int(bytes[position + 6]) << 16
                | Int(bytes[position + 7]) << 24
            if bytes[position..<position + 4].elementsEqual("data".utf8) {
                return Array(bytes[(position + 8)..<min(position + 8 + size, bytes.count)])
            }
            position += 8 + size + (size & 1)
        }
        return []
    }

    static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }
}
