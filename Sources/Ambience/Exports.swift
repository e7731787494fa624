// `import Ambience` is all a game writes: the layers below the facade come with it. Platform's public types
// (`LogLevel`, `LogMessage`, `InvalidNumber`), Core's (the session, media items, `PCMBuffer`, `DecodingError`) and the
// mixer's (`Sound`, `Voice`, `Bus`, `PlayOptions`, the effects) are part of the engine's API.
@_exported import AmbienceCore
@_exported import AmbienceMixer
@_exported import AmbiencePlatform
