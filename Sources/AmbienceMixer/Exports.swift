// A game that only mixes writes `import AmbienceMixer`: the vocabulary it plays with comes with it (Core's `PCMBuffer`
// and `DecodingError`, Platform's `InvalidNumber` and `LogLevel`), as it does with `import Ambience`.
@_exported import AmbienceCore
@_exported import AmbiencePlatform
