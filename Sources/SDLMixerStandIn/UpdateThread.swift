import Ambience
import AmbiencePlatform
import CSDLMixerABI
import Glibc

// The stand-in's update thread ("sdlmixer-update": the system keeps 15 bytes of a thread's name, and refuses a
// longer one): SDL_mixer programs have no game loop that calls the engine's `update()`, so this thread does, when
// something can have changed (UpdateSchedule.swift), and then does what SDL_mixer's mixer does between blocks:
// applies the session's rule for the program's music (MusicRule.swift), halts timed plays, replays finite loops that
// could not have a stream voice, and reports ended plays to Mix_ChannelFinished's callback (and their effects' done
// callbacks), on this thread, with no lock of the stand-in's held: those it found and those the game's calls found
// (ChannelEnds.swift). The same goes for the music (its end, its fade-out, Mix_HookMusicFinished). It also answers the
// session after a route change for the program (RouteRule.swift).

/// How often the thread runs while a fade steps, or a play whose end it cannot foresee plays (UpdateSchedule.swift).
let updatePeriod = 0.010
/// The longest wait, music playing or not: the engine's update (the session, the output, the desktop's players) and
/// the session's music rule still run that often. A change that needs the thread sooner wakes it (`MixerState.wakeUpdates`).
let idleUpdatePeriod = 0.100

/// The thread's loop, for the engine of one opening (`generation`): it stops when asked (Mix_CloseAudio).
func runUpdates(_ control: WorkerThread.Control, engine: AudioEngine, generation: Int) {
    // A new opening is a new output: its pace is measured afresh, not taken from the device before.
    StandIn.shared.state.withLock { state in
        state.updateThread = currentThreadIdentity()
        state.renderPace = 1
    }
    var routeRule = RouteRule()
    var renderClock = RenderClock()
    var plannedWake = 0
    while !control.isStopRequested {
        // Woken before its time by a change (`wakeUpdates`): only the wait is planned again, with the change in it.
        if monotonicNanoseconds() < plannedWake - 1_000_000 {
            plannedWake = planWake()
            control.wait(seconds: Double(max(plannedWake - monotonicNanoseconds(), 0)) / 1e9)
            continue
        }
        // Of the engine's events only route changes are needed (RouteRule.swift): each channel's voice is looked at
        // directly below, which also covers events a full queue would have lost.
        routeRule.observe(engine.update(), engine: engine)
        let (finished, musicEnded) = StandIn.shared.state.withLock { state -> ([Int32], Bool) in
            guard let device = state.device, device.generation == generation else { return ([], false) }
            let now = monotonicNanoseconds()
            // Two periods after a streamed play's halt, the engine has let its voice go.
            if let halted = state.channels.streamStoppedAt, now - halted >= 2 * updatePeriodNanoseconds {
                state.channels.streamStoppedAt = nil
            }
            if let measured = renderClock.pace(engine: engine, now: now) { state.renderPace = measured }
            // The session's hold starts and ends in the engine's update above: its end makes every one-shot's end
            // due, to be planned again from where each stands.
            let held = engine.mixer.isSuspended
            if state.voicesHeld && !held { state.channels.replanEnds(rendered: engine.renderedFrames) }
            state.voicesHeld = held
            let ended = state.channels.advance(engine: engine, now: now, pace: state.renderPace)
            state.reporting.formUnion(ended)
            // Ends the game's calls found since the last step ended first.
            let settled = state.settledEnds
            state.settledEnds = []
            return (settled + ended, state.advanceMusic(engine: engine, now: now))
        }
        applyMusicRule(engine)
        deliverFinished(finished, reporting: true)
        if musicEnded { deliverMusicFinished() }
        // Planned after the callbacks, which may have played again.
        plannedWake = planWake()
        control.wait(seconds: Double(max(plannedWake - monotonicNanoseconds(), 0)) / 1e9)
    }
}

/// When the thread wakes next, kept in the state so that a change that needs it sooner wakes it.
private func planWake() -> Int {
    StandIn.shared.state.withLock { state in
        state.updatesWakeAt = state.nextUpdate(now: monotonicNanoseconds())
        return state.updatesWakeAt
    }
}

extension ChannelTable {
    /// One step of the channel table at `now`: timed plays past their time end; fades step the voice's gain and a
    /// faded-out play ends; channels whose voice ended replay when loops are left, else end, and a one-shot past its
    /// planned end whose voice the engine has not let go yet ends if it has played out (`settleIfPlayedOut`). A paused
    /// channel's deadline and fade wait (Mix_Resume moves them on by the pause). Returns the channels that ended.
    mutating func advance(engine: AudioEngine, now: Int, pace: Double) -> [Int32] {
        var ended: [Int32] = []
        let rendered = engine.renderedFrames
        // Asked of the engine at once: one voice at a time (a lock and an OpenAL context switch each) was 4 % of the
        // stand-in's CPU with 32 channels playing.
        let alive = engine.areAlive(slots.map { $0.voice ?? .none })
        for i in slots.indices {
            guard slots[i].voice != nil else { continue }
            if !slots[i].paused {
                if let deadline = slots[i].expiresAt, deadline <= now {
                    if end(i) { ended.append(Int32(clamping: i)) }
                    continue
                }
                if slots[i].fade != .none {
                    let over = slots[i].fade.isOver(at: now)
                    if case .fadingOut = slots[i].fade, over {
                        if end(i) { ended.append(Int32(clamping: i)) }
                        continue
                    }
                    slots[i].fadeLevel = slots[i].fade.level(at: now)
                    if over { slots[i].fade = .none }
                    applyGain(i)
                }
            }
            guard !alive[i] else {
                if settleIfPlayedOut(i, rendered: rendered, engine: engine) { ended.append(Int32(clamping: i)) }
                continue
            }
            if slots[i].loopsLeft > 0, let sound = slots[i].made?.sound {
                // Only when no stream voice was left for the play (finite loops are streamed, gapless): a replay
                // starts within one period of the end, a gap of up to 10 ms.
                let renderedBefore = engine.renderedFrames
                let again = engine.play(
                    sound, PlayOptions(gain: slots[i].gain, placement: slots[i].placement.placement))
                if again != .none {
                    slots[i].voice = again
                    slots[i].endsAt = now + Int(Double(sound.durationNanoseconds) / pace)
                    slots[i].endFrame = endFrame(of: sound, from: renderedBefore, engine: engine)
                    slots[i].loopsLeft -= 1
                    continue
                }
            }
            if end(i) { ended.append(Int32(clamping: i)) }
        }
        return ended
    }
}
