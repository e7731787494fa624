extension MusicPlayer {
    // MARK: Hold

    /// Whether the player is held: silent where it is, whatever plays it or pauses it, until let go.
    ///
    /// A hold is for a game that puts music of its own in the place of the player's for a while (a cutscene's score,
    /// a stream it synthesises; the SDL_mixer stand-in's `Mix_HookMusic`): unlike `pause()`, nothing but the game
    /// lets it go. While held the player outputs nothing, and its playhead, its crossfade and its queue stand still
    /// (nothing is decoded meanwhile: a seek or a skip made while held is taken up once let go).
    /// `play()` and `pause()`, from the game, the session (an interruption and its end) or the desktop (MPRIS, the
    /// media keys), only record what the player is to do once let go, and `playbackState` reports that.
    ///
    /// Letting go plays on from where the music was held if `playbackState` is then `.playing`, unless the session is
    /// holding the app's audio (an interruption, an output gone): then the player is `.interrupted`, as if the
    /// session had paused it; the session's resume plays it if the session paused it, and `play()` does in any case.
    public var isHeld: Bool {
        get { lock.withLock { _ in held } }
        set { setHeld(newValue) }
    }

    private func setHeld(_ on: Bool) {
        lock.withLock { _ in
            guard held != on else { return }
            held = on
            // The playhead stands still while held, whatever the state says: a look then sees the jump.
            noteChange()
            if on {
                // A paused stream keeps its playhead: nothing moves until it plays again.
                if state == .playing { stream.pause() }
                return
            }
            wakeFeeder()  // it stood still while held
            guard state == .playing else { return }
            if mixer.isSuspended {
                // The session paused the app's audio and took the player's `play()` as recorded: as it would have
                // paused the player, so its resume plays it.
                resumeTime = playheadTime()
                waitsForPlay = true
                setState(.interrupted)
            } else if !stream.isEmpty {
                stream.resume()
            }
            // An empty stream plays when the feeder queues its first block (`publish`).
        }
    }
}
