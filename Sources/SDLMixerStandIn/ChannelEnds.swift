import Ambience

// A one-shot's end, found where it is needed rather than by a wake of the update thread for each end (issue #33: 32
// channels of one-shots retriggered made about 30 wakes a second, each a context switch and an engine update). What an
// end needs on our side is the channel's state (Mix_Playing and channel -1 read it), the engine voice let go (its
// source back in the pool), and, only when the program set one, the Mix_ChannelFinished callback. So the calls that
// read a channel's state end a play whose sound has played out (`MixerState.settle`): asked of the engine only once
// the output has rendered past the play's planned end frame, so a game loop asking every frame costs a comparison per
// channel until then. The callback stays the update thread's to call (README: on that thread, with no lock held),
// which wakes for ends only while a callback is set (UpdateSchedule.swift). Without calls or a callback, the thread's
// wake for the session (every 50 or 100 ms) ends what played out meanwhile.

extension ChannelTable {
    /// Ends channel `i`'s play when its sound has played out, once the output has rendered past its planned end frame
    /// (`rendered`): only a sound's voice playing its last pass, unpaused (a stream or a replay is the update thread's
    /// to end). A play found still sounding has its end planned again from the frames it has left (it started a block
    /// late, or was held); one held by the session is asked again after the update thread's idle period at the soonest,
    /// and at once when the hold ends (`replanEnds`). Returns whether the play ended here.
    mutating func settleIfPlayedOut(_ i: Int, rendered: Int, engine: AudioEngine) -> Bool {
        guard let endFrame = slots[i].endFrame, rendered >= endFrame, let voice = slots[i].voice, !slots[i].paused,
            slots[i].stream == nil, slots[i].loopsLeft == 0
        else { return false }
        // A voice found played out is let go by the same call (one hold of the engine's lock, not two).
        guard let progress = engine.mixer.stopIfPlayedOut(voice) else {
            slots[i].endFrame = nil  // a voice with no end of its own: the update thread's to look at
            return false
        }
        if progress.framesLeft == 0 { return end(i, voiceStopped: true) }
        var left = progress.framesLeft
        if progress.isHeld {
            left = max(
                left,
                (idleUpdatePeriod * Double(max(engine.configuration.sampleRate, 1))).saturated(Int.self, rounding: .up))
        }
        let (next, overflow) = rendered.addingReportingOverflow(left)
        slots[i].endFrame = overflow ? .max : next
        return false
    }

    /// After the session's hold: every one-shot's planned end is due now, so that the next look (a game's call, or
    /// the update thread's step) plans it again from what it has left.
    mutating func replanEnds(rendered: Int) {
        for i in slots.indices where slots[i].voice != nil && slots[i].stream == nil && slots[i].loopsLeft == 0 {
            slots[i].endFrame = min(slots[i].endFrame ?? rendered, rendered)
        }
    }
}

extension MixerState {
    /// Ends the plays that have played out on the channels `channel` names (-1: every channel), before a call reads
    /// their state.
    mutating func settle(_ channel: Int32) {
        guard let engine = device?.engine else { return }
        let rendered = engine.renderedFrames
        if channel == -1 {
            for i in channels.slots.indices { settle(i, rendered: rendered, engine: engine) }
        } else if let i = channels.index(channel) {
            settle(i, rendered: rendered, engine: engine)
        }
    }

    /// Ends the play on channel `i` if it has played out; with a finished callback set, leaves its report to the
    /// update thread, whose wake for it is planned already (`LookPlan.reportsEnds`).
    mutating func settle(_ i: Int, rendered: Int, engine: AudioEngine) {
        guard channels.settleIfPlayedOut(i, rendered: rendered, engine: engine),
            channelFinished != nil
        else { return }
        let channel = Int32(clamping: i)
        reporting.insert(channel)
        settledEnds.append(channel)
        wakeUpdates(by: monotonicNanoseconds() + endBatchWindow)
    }

    /// The first channel past the reserved ones with no play on it, ending plays that have played out on the way.
    mutating func firstFreeChannel() -> Int? {
        guard let engine = device?.engine else { return channels.firstFree() }
        let rendered = engine.renderedFrames
        for i in channels.slots.indices where i >= channels.reserved {
            if channels.isPlaying(i) { settle(i, rendered: rendered, engine: engine) }
            if !channels.isPlaying(i) { return i }
        }
        return nil
    }

    /// Takes channel `channel`'s end that waits for the update thread's report, for the caller to report (a play
    /// there, a shrink dropping it); false when none waits.
    mutating func takeSettledEnd(_ channel: Int32) -> Bool {
        guard let index = settledEnds.firstIndex(of: channel) else { return false }
        settledEnds.remove(at: index)
        reporting.remove(channel)
        return true
    }
}
