import Ambience

// The session's rule for the program's music (issue #33, UtopiaGL's rule): while the user's music plays
// (`AudioSession.secondaryAudioShouldBeSilencedHint`), the program's music stays quiet and its sound effects play.
// Both kinds of the program's music play on the engine's music bus, Mix_PlayMusic's (the engine's music player) and
// Mix_HookMusic's (a stream voice), so the rule is the bus's gain: 0 while silenced, 1 otherwise. The music keeps
// running underneath, and is heard again where it has got to when the user's music stops.
//
// The music bus's gain belongs to this rule: Mix_VolumeMusic belongs on the music player's own volume
// (`MusicPlayer.setVolume`), which the hook does not hear, as in SDL_mixer. The update thread applies the rule.

/// Whether the program's music is to be silent now: the user's music plays, and the program is not in the playback
/// category (which makes it the one playing).
func programMusicSilenced(_ session: AudioSession) -> Bool {
    session.category != .playback && session.secondaryAudioShouldBeSilencedHint
}

/// Applies the rule to the music bus.
func applyMusicRule(_ engine: AudioEngine, silenced: Bool) {
    try? engine.music.setGain(silenced ? 0 : 1)
}
