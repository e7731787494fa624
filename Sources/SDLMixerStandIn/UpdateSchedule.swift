import Ambience
import SDLMixerStandInSchedule

// When the update thread runs next (UpdateThread.swift). It used to step every 10 ms while anything played; its
// wake-ups were a third of the stand-in's CPU in `bench --sdl-mixer-stand-in` (each one a context switch, the
// engine's update and the channel table's step). Now it wakes when something can have changed: a one-shot's end (the
// block that renders its last frame, planned from the engine's rendered frames: `RenderPosition`), a deadline, every
// tick only while a fade steps, a stream or replay plays, or finite music plays, and at the latest every 50 ms while
// music or a hook plays (the session's music rule) or 100 ms otherwise (the session, the output, an end nobody
// foresaw: a voice the engine stole). A call that needs it sooner wakes it (`MixerState.wakeUpdates`).

/// The update period, in nanoseconds.
let updatePeriodNanoseconds = Int(updatePeriod * 1e9)
/// The longest wait while music or a hook plays: the session's music rule (MusicRule.swift) is applied then, and the
/// engine looks at the desktop's players every 50 ms.
let musicUpdatePeriod = 0.050

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

extension ChannelTable {
    /// When the update thread must next look at channel `i` (monotonic nanoseconds), or nil when nothing there can
    /// change by itself: no play, a paused one (its deadline and fade wait), or a sound looping forever. A one-shot is
    /// looked at once the block with its last frame has been rendered (`render`; after a pause, when its sound's end
    /// is due at the output's pace), then every tick while it still sounds (a session's pause holds it); fades,
    /// streams and replays every tick, as before.
    func nextLook(_ i: Int, now: Int, render: RenderPosition?) -> Int? {
        let slot = slots[i]
        guard slot.voice != nil, !slot.paused else { return nil }
        let play: PlannedPlay =
            if slot.fade != .none || slot.stream != nil || slot.loopsLeft > 0 {
                .everyTick
            } else if slot.loopsLeft == 0 {
                .oneShot(endFrame: slot.endFrame, endsAt: slot.endsAt)
            } else {
                .forever
            }
        return SDLMixerStandInSchedule.nextLook(
            expiresAt: slot.expiresAt, play: play, now: now, tick: updatePeriodNanoseconds, render: render)
    }

    /// The earliest `nextLook` of every channel.
    func nextLook(now: Int, render: RenderPosition?) -> Int? {
        var earliest: Int?
        for i in slots.indices {
            guard let look = nextLook(i, now: now, render: render) else { continue }
            earliest = min(earliest ?? look, look)
        }
        return earliest
    }
}

extension MixerState {
    /// When the update thread wakes next, after a step at `now`: the channels' next look, a tick while the music fades
    /// or plays a finite number of times (its end and its queue's top-up), else the longest wait.
    func nextUpdate(now: Int) -> Int {
        let musicOn = music.current != nil || hook.function != nil
        var next = now + Int((musicOn ? musicUpdatePeriod : idleUpdatePeriod) * 1e9)
        guard device != nil else { return next }
        if let look = channels.nextLook(now: now, render: renderPosition()) { next = min(next, look) }
        if channels.streamStoppedAt != nil { next = min(next, now + updatePeriodNanoseconds) }
        if music.current != nil, !music.hooked, music.fade != .none || music.passes != nil {
            next = min(next, now + updatePeriodNanoseconds)
        }
        // Never a busy loop, whatever a clock or a deadline says.
        return max(next, now + 1_000_000)
    }
}
