import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceIntegrationSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct SoundCacheTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    @Test func loadingTheSamePathTwiceSharesOneSound() throws {
        let engine = try AudioEngine(.offline())
        let path = try fixtures.sineWAV("a.wav", seconds: 0.5)
        let first = try engine.load(path)
        let second = try engine.load(fixtures.directory.appendingPathComponent("./a.wav").path)
        #expect(first === second)
        #expect(engine.soundMemory == first.memoryCost)
        #expect(first.memoryCost == 24_000 * 4)
    }

    @Test func soundsNobodyHoldsAreEvictedLeastRecentlyUsedFirstWithinTheBudget() throws {
        // Each one-second mono sound costs 192,000 bytes; the budget holds two.
        var configuration = EngineConfiguration.offline()
        configuration.soundMemoryBudget = 400_000
        let engine = try AudioEngine(configuration)
        let paths = try (0..<4).map { try fixtures.sineWAV("s\($0).wav", seconds: 1) }
        weak var a: Sound?, b: Sound?
        a = try engine.load(paths[0])  // loaded and let go, as `preload` does
        b = try engine.load(paths[1])
        _ = try engine.load(paths[0])  // a is now more recent than b
        let c = try engine.load(paths[2])  // over budget: b, the least recent sound nobody holds, goes
        #expect(engine.soundMemory <= 400_000)
        #expect(b == nil, "an evicted sound is freed")
        #expect(a.map { engine.mixer.isLoaded($0) } == true && engine.mixer.isLoaded(c))
        // A sound the game holds is never evicted, however far past the budget: it plays when asked.
        let d = try engine.load(paths[3])
        let e = try engine.load(paths[1])
        #expect(a == nil, "a, held by nobody, made room")
        #expect(engine.mixer.isLoaded(c) && engine.mixer.isLoaded(d) && engine.mixer.isLoaded(e))
        #expect(engine.soundMemory == 3 * 192_000)
        let voice = engine.play(c, PlayOptions(loop: true))
        #expect(voice.isAlive)
        #expect(try Signal(engine.render(frames: 4_800)).rms(512..<4_800) > 0.1)
    }

    /// A sound made from memory and let go gives its OpenAL buffer back at the next tick; one whose voice still
    /// plays keeps it until the voice ends. (Before, every made sound kept its buffer for the engine's life.)
    @Test func aSoundNobodyHoldsGivesItsBufferBack() throws {
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let pcm = PCMBuffer(sampleRate: 48_000, channels: 1, samples: [Float](repeating: 0.1, count: 4_800))
        let dropped = try (0..<50).map { _ in try engine.makeSound(pcm, name: "dropped").buffer }
        _ = try engine.render(frames: 512)
        #expect(dropped.allSatisfy { !engine.mixer.exists($0) })

        var held: Sound? = try engine.makeSound(pcm, name: "held")
        let buffer = held!.buffer
        let voice = engine.play(held!, PlayOptions(loop: true))
        held = nil
        _ = try engine.render(frames: 512)
        #expect(voice.isAlive && engine.mixer.exists(buffer), "a playing voice keeps its sound")
        voice.stop()
        _ = try engine.render(frames: 1_024)
        #expect(!engine.mixer.exists(buffer))
    }

    @Test func preloadDecodesInTheBackground() throws {
        let engine = try AudioEngine(.offline())
        let paths = try (0..<4).map { try fixtures.sineWAV("p\($0).wav", seconds: 0.5) }
        engine.preload(paths)
        let deadline = Date().addingTimeInterval(waitBound)
        while engine.soundMemory < 4 * 24_000 * 4 && Date() < deadline { usleep(5_000) }
        #expect(engine.soundMemory == 4 * 24_000 * 4)
        let sound = try engine.load(paths[2])
        #expect(sound.frames == 24_000)
    }

    @Test func unloadStopsItsVoicesAndFreesTheMemory() throws {
        let engine = try AudioEngine(.offline())
        let sound = try engine.load(try fixtures.sineWAV("u.wav", seconds: 1))
        let voice = engine.play(sound, PlayOptions(loop: true))
        engine.unload(sound)
        #expect(!voice.isAlive)
        #expect(engine.soundMemory == 0)
        #expect(try Signal(engine.render(frames: 2_048)).peak() == 0)
    }
}
