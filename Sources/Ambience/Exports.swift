// `import Ambience` is all a game writes: the layers below the facade come with it. Platform's public types
// (`LogLevel`, `LogMessage`, `InvalidNumber`) are part of the engine's API.
@_exported import AmbiencePlatform
