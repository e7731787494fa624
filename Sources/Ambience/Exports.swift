// `import Ambience` is all a game writes: the layers below the facade come with it. Platform's public types
// (`LogLevel`, `LogMessage`, `InvalidNumber`), Core's (the session, media items, `PCMBuffer`, `DecodingError`), the
// mixer's (`Mixer`, `Sound`, `Voice`, `Bus`, `PlayOptions`, the effects) and the library's (`MediaLibrary`, its queries,
// the picker and browser, artwork) are part of the engine's API.
@_exported import AmbienceCore
@_exported import AmbienceDesktop
@_exported import AmbienceLibrary
@_exported import AmbienceMixer
@_exported import AmbienceMusic
@_exported import AmbienceOutput
@_exported import AmbiencePlatform
