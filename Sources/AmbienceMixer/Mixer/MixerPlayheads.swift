import AmbiencePlatform

// How far a one-shot voice has left to play, for a caller that plans around its end rather than waiting for the tick
// that reports it: the SDL_mixer stand-in ends a channel whose sound has played out when the game asks (Mix_Playing),
// with no thread woken for each end. Read from OpenAL (the source's state and playhead) or, for a virtual voice, from
// the voice clock, which moves at each tick.

/// A one-shot voice's way to its end.
package struct VoiceProgress: Equatable, Sendable {
    /// Output frames still to render until its last frame is out (at its pitch and rate): 0 once it has played to the
    /// end or was let go.
    package let framesLeft: Int
    /// Whether it stands still: paused, or every voice is, by the session (`setSuspended`).
    package let isHeld: Bool
}

extension Mixer {
    /// Where `voice` stands on its way to its end; nil when it has no end of its own: a stream voice, a looping one, or
    /// another mixer's.
    package func progress(of voice: Voice) -> VoiceProgress? {
        guard !voice.isStream, voice.mixer === self else { return nil }
        return withLock { progressUnderLock(voice) }
    }

    /// `progress(of:)`, and when the voice has played out, its end as `Voice.stop()` makes it, in the same hold of the
    /// lock: one lock and one switch of OpenAL's context, where the two calls took two each (the SDL_mixer stand-in
    /// ends a one-shot this way when the game asks Mix_Playing past its planned end, 180 times a second in its bench).
    package func stopIfPlayedOut(_ voice: Voice) -> VoiceProgress? {
        guard !voice.isStream, voice.mixer === self else { return nil }
        return withLock {
            let progress = progressUnderLock(voice)
            if progress?.framesLeft == 0, isCurrent(slot: voice.slot, generation: voice.generation) {
                release(voice.slot, event: nil)
            }
            return progress
        }
    }

    /// `progress(of:)`'s answer, under the lock.
    private func progressUnderLock(_ voice: Voice) -> VoiceProgress? {
        guard isCurrent(slot: voice.slot, generation: voice.generation) else {
            return VoiceProgress(framesLeft: 0, isHeld: false)
        }
        let index = Int(voice.slot)
        guard !voices.slots[index].loop else { return nil }
        let held = voices.slots[index].paused || suspended
        let source = voices.slots[index].source
        let position: Double
        if source >= 0, sources.starts.isPending(source) {
            position = sources.startFrames[Int(source)]  // not played yet: OpenAL would read 0
        } else if source >= 0 {
            // The playhead first: a source that stops in between reads 0 there, and is then seen stopped below.
            let offset = sources[source].sampleOffset
            if sourceHasPlayedOut(source, looping: false) { return VoiceProgress(framesLeft: 0, isHeld: held) }
            position = Double(offset)
        } else {
            position = voices.virtualPlayhead(voice.slot)
        }
        let left = voices.slots[index].outputFramesToEnd(from: position)
        return VoiceProgress(framesLeft: left.saturated(Int.self, rounding: .up), isHeld: held)
    }

    /// `SourcePool.hasPlayedOut` of one of the pool's sources, its fields read in place (under the lock).
    @inline(__always)
    func sourceHasPlayedOut(_ source: Int32, looping: Bool) -> Bool {
        SourcePool.hasPlayedOut(
            looping: looping, startPending: sources.starts.isPending(source), state: sources[source].state)
    }
}
