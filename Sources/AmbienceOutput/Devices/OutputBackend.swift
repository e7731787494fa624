/// Which code carries a device output's mix to the sound server.
public enum OutputBackend: String, Sendable, Equatable, CaseIterable {
    /// The engine's own libpulse stream when a PulseAudio server (or PipeWire's pulse server) answers and
    /// libpulse loads, else SDL; SDL alone when `SDL_AUDIODRIVER` is set (the user named one of SDL's drivers).
    /// `AMBIENCE_OUTPUT` decides first: `sdl` is SDL alone, `libpulse` is libpulse (then SDL) whatever
    /// `SDL_AUDIODRIVER` says.
    case automatic
    /// SDL's audio device, on its first driver that opens (`SDL_AUDIODRIVER`, else pulseaudio, pipewire, alsa,
    /// then dummy).
    case sdl
    /// The engine's own playback stream on libpulse's threaded main loop. Fails (the engine does not start) when
    /// there is no server or no libpulse; after a route change with no server it renders to nothing.
    case libpulse
}
