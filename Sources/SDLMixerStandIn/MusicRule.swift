import Ambience

// The session's rule for the program's music (issue #33, UtopiaGL's rule): in the ambient category, while the user's
// music plays (`AudioSession.secondaryAudioShouldBeSilencedHint`), the program's music stays quiet and its sound
// effects play. Both kinds of the program's music play on the engine's music bus, Mix_PlayMusic's (the engine's music
// player) and Mix_HookMusic's (a stream voice), so the rule mutes that bus. Muting is apart from the bus's gain,
// which Mix_FadeInMusic and Mix_FadeOutMusic ramp: the music keeps running underneath (Mix_PlayingMusic says 1, the
// position moves, a fade goes on), and is heard again where it has got to when the user's music stops. In
// solo-ambient and playback the program's music plays. The update thread applies the rule at each wake (at least every
// 100 ms: UpdateSchedule.swift), and says each change on stderr.

/// Whether the program's music is to be silent now: an ambient program while the user's music plays.
func programMusicSilenced(_ session: AudioSession) -> Bool {
    session.category == .ambient && session.secondaryAudioShouldBeSilencedHint
}

/// Applies the rule to the music bus; each change is one line on stderr.
func applyMusicRule(_ engine: AudioEngine) {
    let quiet = programMusicSilenced(engine.session)
    guard engine.music.isMuted != quiet else { return }
    engine.music.isMuted = quiet
    announce(quiet ? "the user's music plays: the program's music is quiet" : "the program's music is heard again")
}
