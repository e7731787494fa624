import Ambience
import SDLMixerStandInSchedule

// When the update thread runs next (UpdateThread.swift). It used to step every 10 ms while anything played; its
// wake-ups were a third of the stand-in's CPU in `bench --sdl-mixer-stand-in` (each one a context switch, the
// engine's update and the channel table's step). Now it wakes when something can have changed: a deadline, every
// tick only while a fade steps, a stream or replay plays, or finite music plays, a one-shot's end only when a
// Mix_ChannelFinished callback is to be told of it (the block that renders its last frame, planned from the engine's
// rendered frames: `RenderPosition`; ends within `endBatchWindow` of each other in one wake), and at the latest every
// 100 ms (the session's music rule, the session, the output, an end nobody foresaw: a voice the engine stole; with
// music playing it was 50 ms until session 47: half the thread's wakes in a scene of one-shots and looping music, at
// about 100 µs each, for the user's music silencing the program's 50 ms sooner). While the session holds every voice
// it waits 50 ms: the hold's end is
// seen in the engine's update, so the program's sound comes back at most that late. A call that
// needs it sooner wakes it (`MixerState.wakeUpdates`). Without a callback, a one-shot's end is the game's own calls'
// to find (ChannelEnds.swift).

/// The update period, in nanoseconds.
let updatePeriodNanoseconds = Int(updatePeriod * 1e9)
/// The longest wait while the session holds every voice (the engine's mixer is suspended): the hold's end is seen in
/// the engine's update, so the program's sound comes back at most this late after a call ends.
let heldUpdatePeriod = 0.050

extension Sound {
    /// How long the sound plays once, in nanoseconds.
    var durationNanoseconds: Int { frames * 1_000_000_000 / max(sampleRate, 1) }
}

extension MixerState {
    /// When a play of `sound` started at `now` reaches the sound's end, at the output's pace.
    func endOfPlay(_ sound: Sound, from now: Int) -> Int { now + Int(Double(sound.durationNanoseconds) / renderPace) }

    /// Where the output is now, for planning looks from frames (nil with no device).
    func renderPosition() -> RenderPosition? {
        guard let engine = device?.engine else { return nil }
        // The two fields read in place: a copy of the whole configuration would retain its strings on every play.
        let block = max(engine.configuration.blockFrames, 1)
        return RenderPosition(
            frames: engine.renderedFrames, blockFrames: block,
            blockNanoseconds: Double(block) * 1e9 / Double(max(engine.configuration.sampleRate, 1)) / renderPace)
    }
}

/// The engine's rendered-frame count when a play of `sound`, started after `rendered` frames, has had its last frame
/// rendered (`SDLMixerStandInSchedule.endFrame`).
func endFrame(of sound: Sound, from rendered: Int, engine: AudioEngine) -> Int {
    SDLMixerStandInSchedule.endFrame(
        frames: sound.frames, soundRate: sound.sampleRate, outputRate: engine.configuration.sampleRate, from: rendered)
}

/// The output's pace: frames rendered over a second or more of the monotonic clock, against the engine's rate. Taken
/// at most 3 % slow: SDL's disk driver runs about 1 % slow (its sleeps overshoot), and looking at its ends at the rate
/// would miss most and look again a tick later; but a second with a stall in it would put every end foreseen after
/// it late by as much, so a slower one is looked for every tick from there on (`nextLook`).
struct RenderClock {
    private var anchor: (time: Int, frames: Int)?

    /// A new measure when a second has passed since the last one (nil otherwise), from 0.97 to 2.
    mutating func pace(engine: AudioEngine, now: Int) -> Double? {
        let frames = engine.renderedFrames
        guard let anchor, now - anchor.time >= 1_000_000_000 else {
            if anchor == nil { self.anchor = (now, frames) }
            return nil
        }
        self.anchor = (now, frames)
        let expected = Double(now - anchor.time) * Double(engine.configuration.sampleRate) / 1e9
        // No frames at all: the output is paused or stalled; its ends wait, and are looked for every tick.
        guard frames > anchor.frames else { return nil }
        return min(max(Double(frames - anchor.frames) / expected, 0.97), 2)
    }
}

/// How long a found end may wait for others, so that ends close together are reported in one wake of the update
/// thread (`batchedLook`): a Mix_ChannelFinished callback comes up to this much later than the block holding the
/// play's last frame (and a millisecond) would have it.
let endBatchWindow = updatePeriodNanoseconds

/// What the update thread looks for in the channels (`ChannelTable.looks`).
struct LookPlan {
    /// A Mix_ChannelFinished callback is set: one-shots' ends are looked for, to report them. Without one, the game's
    /// own calls end them when they ask (ChannelEnds.swift), or the thread's next wake for the session does.
    var reportsEnds: Bool
    /// The session holds every voice (the engine's mixer is suspended): nothing ends or streams by itself, and only
    /// deadlines and fades are looked at until the hold ends (the engine's update, which the thread runs at its idle
    /// pace, ends it).
    var held: Bool
}

extension ChannelTable {
    /// When the update thread must next look at channel `i` (monotonic nanoseconds): for a deadline, a fade's step, a
    /// stream or a replay (`other`), and for a one-shot's end (`end`, batched with other ends); nil when nothing there
    /// can change by itself: no play, a paused one (its deadline and fade wait), a sound looping forever, a one-shot
    /// nobody is to be told of, or anything the session holds. A one-shot is looked at once the block with its last
    /// frame has been rendered (`render`; planned again from what it has left when found still sounding).
    func looks(_ i: Int, now: Int, render: RenderPosition?, plan: LookPlan) -> (other: Int?, end: Int?) {
        // Field by field in place: a copy of the slot retained and released each of its references, 32 channels
        // at every wake.
        guard slots[i].voice != nil, slots[i].pausedAt == nil else { return (nil, nil) }
        let tick = updatePeriodNanoseconds
        var other = slots[i].expiresAt
        if slots[i].fade != .none || (!plan.held && (slots[i].stream != nil || slots[i].loopsLeft > 0)) {
            other = SDLMixerStandInSchedule.nextLook(
                expiresAt: other, play: .everyTick, now: now, tick: tick, render: nil)
            return (other, nil)
        }
        guard slots[i].loopsLeft == 0, plan.reportsEnds, !plan.held else { return (other, nil) }
        let end = SDLMixerStandInSchedule.nextLook(
            expiresAt: nil, play: .oneShot(endFrame: slots[i].endFrame, endsAt: slots[i].endsAt), now: now,
            tick: tick, render: render)
        return (other, end)
    }

    /// The earliest look of every channel, ends batched (`batchedLook`).
    func nextLook(now: Int, render: RenderPosition?, plan: LookPlan) -> Int? {
        var earliest: Int?
        var ends: [Int] = []
        for i in slots.indices {
            let (other, end) = looks(i, now: now, render: render, plan: plan)
            if let other { earliest = min(earliest ?? other, other) }
            if let end { ends.append(end) }
        }
        guard let batch = batchedLook(ends, window: endBatchWindow) else { return earliest }
        return min(earliest ?? batch, batch)
    }
}

extension MixerState {
    /// What the update thread looks for now.
    var lookPlan: LookPlan { LookPlan(reportsEnds: channelFinished != nil, held: voicesHeld) }

    /// When the update thread wakes next, after a step at `now`: the channels' next look, a tick while the music fades
    /// or plays a finite number of times (its end and its queue's top-up), else the longest wait.
    func nextUpdate(now: Int) -> Int {
        var next = now + Int(idleUpdatePeriod * 1e9)
        guard device != nil else { return next }
        if let look = channels.nextLook(now: now, render: renderPosition(), plan: lookPlan) { next = min(next, look) }
        if channels.streamStoppedAt != nil { next = min(next, now + updatePeriodNanoseconds) }
        if voicesHeld { next = min(next, now + Int(heldUpdatePeriod * 1e9)) }
        if music.current != nil, !music.hooked, music.fade != .none || music.passes != nil {
            next = min(next, now + updatePeriodNanoseconds)
        }
        // Never a busy loop, whatever a clock or a deadline says.
        return max(next, now + 1_000_000)
    }
}
