import Ambience
import AmbiencePlatform

// Mix_HookMusic and Mix_PlayMusic's music (issue #33). SDL_mixer mixes the hook instead of the music while a hook is
// set, and the music waits: Mix_PlayingMusic says 1, its position and a fade do not move, it does not end (so no
// finished hook), pause and resume act on it, and Mix_HaltMusic ends it with the finished hook. Once the hook is
// removed it goes on from where it was. (Seen on Debian's libSDL2_mixer 2.6.2 from C; its documentation: "while a
// callback is set through this function, SDL_mixer will not mix any playing music".) Here the engine's player is held
// (`MusicPlayer.isHeld`), never paused: the program's pause and resume, the session's and the desktop's media keys
// only record whether it is to play once the hook is gone. A fade under way is kept as its level and the time it had
// left; the music bus goes back to full gain meanwhile, as the hook plays on it and SDL_mixer does not fade the hook.

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
        wakeUpdates()
    }

    /// The music playing waits where it is, unheard: the player is held (music started while held starts once let
    /// go), a fade under way stops where it is, and the bus is at full gain for the hook.
    mutating func holdMusic() {
        guard let device else { return }
        device.engine.musicPlayer.isHeld = true
        guard music.current != nil else { return }
        freezeFade(gain: device.engine.music.gain)
        try? device.engine.music.setGain(1)
    }

    /// Whether a fade of the music stands still: while the hook holds the music, or the program paused it (SDL_mixer
    /// steps a fade only as it mixes the music).
    var musicFadeHeld: Bool { music.hooked || music.paused }

    /// A fade under way stops at `gain`, the bus's level now, keeping the time it had left (its state frozen: the
    /// update thread leaves a held fade alone). A fade already held stays as it was.
    mutating func freezeFade(gain: Float) {
        guard music.heldFade == nil else { return }
        let now = monotonicNanoseconds()
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
    }

    /// A held fade goes on from the level it had, over the time it had left, once nothing holds it.
    mutating func thawFade() {
        guard !musicFadeHeld, let held = music.heldFade, let device else { return }
        try? device.engine.music.setGain(held.gain)
        try? device.engine.music.fade(to: held.target, over: Double(held.left) / 1e9)
        let now = monotonicNanoseconds()
        music.fade = held.target > 0 ? .fadingIn(until: now + held.left) : .fadingOut(until: now + held.left)
        music.heldFade = nil
    }

    /// Mix_FadeOutMusic while the music is held or paused: the fade starts when the music goes on, from the level it
    /// had.
    mutating func holdFadeOut(nanoseconds: Int) {
        let gain = music.heldFade?.gain ?? (music.hooked ? 1 : device?.engine.music.gain ?? 1)
        music.heldFade = HeldFade(gain: gain, target: 0, left: nanoseconds)
        music.fade = .fadingOut(until: .max)
    }

    /// The held music goes on from where it was (unless it was paused meanwhile, by the program, the session or the
    /// media keys), and a held fade from the level it had, over the time it had left.
    mutating func releaseMusic() {
        guard let device else { return }
        thawFade()
        device.engine.musicPlayer.isHeld = false
    }
}
