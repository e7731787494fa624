// `import Ambience` is all a game writes: the layers below the facade come with it. Platform's public types
// (`LogLevel`, `LogMessage`, `InvalidNumber`) and Core's (the session, media items, `PCMBuffer`, `DecodingError`)
// are part of the engine's API.
@_exported import AmbienceCore
@_exported import AmbiencePlatform
