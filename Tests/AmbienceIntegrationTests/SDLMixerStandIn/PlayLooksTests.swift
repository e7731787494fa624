import Testing

@testable import SDLMixerStandInSchedule

/// The stand-in's update thread's planning (SDLMixerStandIn/UpdateSchedule.swift): when a play's last frame is
/// rendered, when the block holding it is done, and when a channel is looked at next. Pure arithmetic, no engine.
@Suite struct PlayLooksTests {
    @Test func theEndFrameCountsAPartFrameAsAWholeOne() {
        // A second at 44.1 kHz on a 48 kHz output: 48,000 frames after the count the play started at.
        #expect(endFrame(frames: 44_100, soundRate: 44_100, outputRate: 48_000, from: 1_000) == 49_000)
        #expect(endFrame(frames: 22_050, soundRate: 22_050, outputRate: 44_100, from: 0) == 44_100)
        // 100 frames at 44.1 kHz are 108.84 output frames: the last one is rendered with the 109th (rounded down,
        // a look planned from it came a frame early).
        #expect(endFrame(frames: 100, soundRate: 44_100, outputRate: 48_000, from: 0) == 109)
        #expect(endFrame(frames: 1, soundRate: 44_100, outputRate: 48_000, from: 7) == 9)
        #expect(endFrame(frames: 0, soundRate: 44_100, outputRate: 48_000, from: 7) == 7)
    }

    @Test func theEndFrameSurvivesNumbersAtTheEdges() {
        #expect(endFrame(frames: .max, soundRate: 44_100, outputRate: 48_000, from: 0) == .max)
        #expect(endFrame(frames: 10, soundRate: 1, outputRate: 1, from: .max - 5) == .max)
        #expect(endFrame(frames: 10, soundRate: 0, outputRate: 2, from: 0) == 20, "a rate of 0 counts as 1")
        #expect(endFrame(frames: -10, soundRate: 44_100, outputRate: 48_000, from: 3) == 3)
    }

    let position = RenderPosition(frames: 1_000, blockFrames: 512, blockNanoseconds: 10_000_000)
    let now = 5_000_000_000

    @Test func aLookWaitsForTheBlockHoldingTheFrame() {
        #expect(position.look(forFrame: 1_000, now: now) == nil, "rendered already")
        #expect(position.look(forFrame: 10, now: now) == nil)
        // One block to go (1 to 512 frames past the count), then two: each 10 ms, plus 1 ms for the render.
        #expect(position.look(forFrame: 1_001, now: now) == now + 11_000_000)
        #expect(position.look(forFrame: 1_512, now: now) == now + 11_000_000)
        #expect(position.look(forFrame: 1_513, now: now) == now + 21_000_000)
        #expect(position.look(forFrame: 3_048, now: now) == now + 41_000_000)
    }

    @Test func aLookSurvivesNumbersAtTheEdges() {
        #expect(position.look(forFrame: .max, now: now) == .max)
        let nan = RenderPosition(frames: -5, blockFrames: 0, blockNanoseconds: .nan)
        #expect(nan.frames == 0 && nan.blockFrames == 1)
        #expect(nan.look(forFrame: 3, now: now) == now + 1_000_000, "a block of NaN nanoseconds takes none")
    }

    @Test func theNextLookOfEachKindOfPlay() {
        let tick = 10_000_000
        func look(_ play: PlannedPlay, expiresAt: Int? = nil, render: RenderPosition?) -> Int? {
            nextLook(expiresAt: expiresAt, play: play, now: now, tick: tick, render: render)
        }
        #expect(look(.forever, render: position) == nil, "nothing ends by itself")
        #expect(look(.forever, expiresAt: now + 7, render: position) == now + 7)
        #expect(look(.everyTick, render: nil) == now + tick)
        #expect(look(.everyTick, expiresAt: now + 3, render: nil) == now + 3)
        // From frames when the output's position is known, whatever the clock's estimate says.
        #expect(look(.oneShot(endFrame: 1_513, endsAt: now + 2_000_000), render: position) == now + 21_000_000)
        #expect(
            look(.oneShot(endFrame: 1_513, endsAt: nil), expiresAt: now + 4_000_000, render: position)
                == now + 4_000_000)
        // Its block rendered and the voice still sounding: every tick.
        #expect(look(.oneShot(endFrame: 900, endsAt: now + 50_000_000), render: position) == now + tick)
        // No position (no device): the clock's estimate while it is ahead, then every tick.
        #expect(look(.oneShot(endFrame: 1_513, endsAt: now + 5_000_000), render: nil) == now + 5_000_000)
        #expect(look(.oneShot(endFrame: nil, endsAt: now - 1), render: position) == now + tick)
        #expect(look(.oneShot(endFrame: nil, endsAt: nil), render: nil) == now + tick)
        #expect(
            nextLook(expiresAt: nil, play: .everyTick, now: .max - 1, tick: tick, render: nil) == nil,
            "a tick past the clock's end saturates (and reads as no look), never traps")
    }

    @Test func endsCloseTogetherShareOneLook() {
        let window = 10_000_000
        #expect(batchedLook([], window: window) == nil)
        #expect(batchedLook([now + 5], window: window) == now + 5)
        // The latest within the window of the earliest: the earliest waits up to the window, the one past it later.
        #expect(batchedLook([now + 30_000_000, now + 4_000_000, now + 12_000_000], window: window) == now + 12_000_000)
        #expect(batchedLook([now + 4_000_000, now + 14_000_001], window: window) == now + 4_000_000)
        #expect(batchedLook([now + 4_000_000, now + 14_000_000], window: window) == now + 14_000_000)
        // A window of nothing, or below it, batches only equal looks; a window past the clock's end saturates.
        #expect(batchedLook([now + 1, now + 2], window: -5) == now + 1)
        #expect(batchedLook([.max - 1, .max], window: .max) == .max)
    }
}
