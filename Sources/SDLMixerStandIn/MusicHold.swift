import Ambience

// Mix_HookMusic and Mix_PlayMusic's music (issue #33). SDL_mixer mixes the hook instead of the music while a hook is
// set, and the music waits: Mix_PlayingMusic says 1, its position and a fade do not move, it does not end (so no
// finished hook), pause and resume act on it, and Mix_HaltMusic ends it with the finished hook. Once the hook is
// removed it goes on from where it was. (Seen on Debian's libSDL2_mixer 2.6.2 from C; its documentation: "while a
// callback is set through this function, SDL_mixer will not mix any playing music".) Here the player pauses, and a
// fade under way is kept as its level and the time it had left; the music bus goes back to full gain meanwhile, as
// the hook plays on it and SDL_mixer does not fade the hook.

/// A fade of the music held by Mix_HookMusic: the music bus's gain when it was held, the gain it was going to, and
/// the nanoseconds it had left.
struct HeldFade: Equatable {
    var gain: Float
    var target: Float
    var left: Int
}

extension MixerState {
    /// Holds the music for a hook set (`hooked`), or lets it go when the hook is removed.
    mutating func setMusicHooked(_ hooked: Bool) {
        guard music.hooked != hooked else { return }
        music.hooked = hooked
        if hooked { holdMusic() } else { releaseMusic() }
    }

    /// The music playing waits where it is, unheard: the player pauses (music started while held has not been
    /// started on it); a fade under way stops where it is (its state frozen: the update thread leaves held music
    /// alone) and the bus is at full gain for the hook.
    mutating func holdMusic() {
        guard music.current != nil, let device else { return }
        device.engine.musicPlayer.pause()
        let now = monotonicNanoseconds()
        let gain = device.engine.music.gain
        switch music.fade {
        case .fadingIn(let until) where until > now:
            music.heldFade = HeldFade(gain: gain, target: 1, left: until - now)
            music.fade = .fadingIn(until: .max)
        case .fadingOut(let until) where until > now:
            music.heldFade = HeldFade(gain: gain, target: 0, left: until - now)
            music.fade = .fadingOut(until: .max)
        case .fadingIn: music.fade = .none
        default: break
        }
        try? device.engine.music.setGain(1)
    }

    /// Mix_FadeOutMusic while the music is held: the fade starts when the music is let go, from the level the music
    /// had.
    mutating func holdFadeOut(nanoseconds: Int) {
        let gain = music.heldFade?.gain ?? 1
        music.heldFade = HeldFade(gain: gain, target: 0, left: nanoseconds)
        music.fade = .fadingOut(until: .max)
    }

    /// The held music goes on from where it was (unless the program paused it meanwhile), and a held fade from the
    /// level it had, over the time it had left.
    mutating func releaseMusic() {
        guard music.current != nil, let device else { return }
        let now = monotonicNanoseconds()
        if let held = music.heldFade {
            try? device.engine.music.setGain(held.gain)
            try? device.engine.music.fade(to: held.target, over: Double(held.left) / 1e9)
            music.fade = held.target > 0 ? .fadingIn(until: now + held.left) : .fadingOut(until: now + held.left)
            music.heldFade = nil
        }
        if !music.paused { device.engine.musicPlayer.play() }
    }
}
