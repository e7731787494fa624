import AmbiencePlatform

// The stand-in's update thread plans when to look at a channel (SDLMixerStandIn/UpdateSchedule.swift). The arithmetic
// is here, on its own and with no engine, so that unit tests reach it: no test target may link the stand-in itself
// (its soname flag would reach the test binary).

/// The engine's rendered-frame count once a sound of `frames` frames at `soundRate`, started after `rendered`
/// frames at `outputRate`, has had its last frame rendered (OpenAL Soft starts it with the next block). Rounded up:
/// a part of an output frame still has to be rendered. `Int.max` when it overflows; a rate below 1 counts as 1.
package func endFrame(frames: Int, soundRate: Int, outputRate: Int, from rendered: Int) -> Int {
    let soundRate = max(soundRate, 1)
    let (product, overflow) = max(frames, 0).multipliedReportingOverflow(by: max(outputRate, 1))
    guard !overflow else { return .max }
    let output = product / soundRate + (product % soundRate == 0 ? 0 : 1)
    let (end, past) = rendered.addingReportingOverflow(output)
    return past ? .max : end
}

/// How far the output has rendered, and how long a block takes at its measured pace. A one-shot's end is looked for
/// once the block holding its last frame has been rendered: the engine sees a voice end only then (OpenAL Soft says
/// the source stopped), so a look planned from the play's start and the clock alone came early whenever the output
/// ran slower than the pace measured (SDL's disk driver under load: 5 to 12 of 32 to 47 wakes a second found nothing).
/// Planned afresh at each wake from the frames left, the estimate's error is that of the last wait only.
package struct RenderPosition: Equatable, Sendable {
    package let frames: Int
    package let blockFrames: Int
    package let blockNanoseconds: Double

    package init(frames: Int, blockFrames: Int, blockNanoseconds: Double) {
        self.frames = max(frames, 0)
        self.blockFrames = max(blockFrames, 1)
        self.blockNanoseconds = blockNanoseconds
    }

    /// When the block that renders `frame` will have been rendered, planned from `now`, plus a millisecond for the
    /// render itself; nil once it has been. Usually late by less than a block (the last block may have been rendered
    /// up to a block before `now`). It can be early: the count grows only once a render returns, so a play started
    /// during a render may begin a block later than its end frame says, and an output slower than its measured pace
    /// renders late; then the look finds the voice still sounding, and the channel is looked at again a tick later.
    package func look(forFrame frame: Int, now: Int) -> Int? {
        guard frame > frames else { return nil }
        let blocks = (frame - frames) / blockFrames + ((frame - frames) % blockFrames == 0 ? 0 : 1)
        return now.saturatingAdd((Double(blocks) * blockNanoseconds).saturated(Int.self)).saturatingAdd(1_000_000)
    }
}

/// What a playing, unpaused channel asks of the update thread.
package enum PlannedPlay: Equatable, Sendable {
    /// A fade steps, a stream or a replay plays: looked at every tick.
    case everyTick
    /// One play to its end: at its end frame with a render position, else at `endsAt` (its end at the output's
    /// pace, from the clock), or every tick once that is past or unknown.
    case oneShot(endFrame: Int?, endsAt: Int?)
    /// Loops forever: nothing ends by itself.
    case forever
}

/// When the update thread must next look at a channel playing `play` (monotonic nanoseconds), or nil when nothing
/// there can change by itself: the earlier of its deadline (`expiresAt`, Mix_ExpireChannel) and its play's next look.
/// `tick` is the update period.
package func nextLook(expiresAt: Int?, play: PlannedPlay, now: Int, tick: Int, render: RenderPosition?) -> Int? {
    var look = expiresAt ?? .max
    let nextTick = now.saturatingAdd(tick)
    switch play {
    case .everyTick:
        look = min(look, nextTick)
    case .oneShot(let endFrame, let endsAt):
        if let endFrame, let render {
            look = min(look, render.look(forFrame: endFrame, now: now) ?? nextTick)
        } else {
            let due = endsAt ?? now
            look = min(look, due > now ? due : nextTick)
        }
    case .forever:
        break
    }
    return look == .max ? nil : look
}

/// When to look for ends planned at `looks` (monotonic nanoseconds) so that ends close together are found in one wake:
/// the latest of them within `window` of the earliest (nil for none). The earliest is found up to `window` late, the
/// others sooner; an end past the window gets a wake of its own (or joins the next batch).
package func batchedLook(_ looks: [Int], window: Int) -> Int? {
    guard let first = looks.min() else { return nil }
    let until = first.saturatingAdd(max(window, 0))
    var latest = first
    for look in looks where look <= until && look > latest { latest = look }
    return latest
}

extension Int {
    fileprivate func saturatingAdd(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
