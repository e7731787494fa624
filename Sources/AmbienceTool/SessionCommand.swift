import Ambience

struct SessionCommand: Command {
    static let name = "session"
    static let usage = """
        session [--json]                    what the audio session sees: other audio, music players, devices, OpenAL
          --json    one JSON object with keys otherAudioPlaying, secondaryAudioShouldBeSilenced, players (name,
                    status, title, artist), outputDevices, capabilities (with systemLibraries: name,
                    feature, available, reason), outputDriver, outputBackend (sdl, libpulse or null),
                    audioThreadPriority ("realtime 4 via rtkit", "nice -15 via rtkit", "none: why", or null),
                    desktopBus
        """

    static func run(_ arguments: inout Arguments) throws {
        let json = arguments.flag("--json")
        guard try arguments.finish().isEmpty else { throw UsageError("session takes no positional arguments") }
        let engine = try AudioEngine(EngineConfiguration(output: .device(), appName: "ambience-session"))
        defer { engine.shutdown() }
        engine.update()
        let session = engine.session
        let players = engine.systemMusicPlayer.players
        let capabilities = engine.capabilities
        let devices = engine.outputDevices
        // Asked off the audio path after the first block: a moment after the start.
        let priority = engine.outputThreadPriority(waitingUpTo: 3)
        if json {
            Output.print(
                JSON.object([
                    ("otherAudioPlaying", .bool(session.isOtherAudioPlaying)),
                    ("secondaryAudioShouldBeSilenced", .bool(session.secondaryAudioShouldBeSilencedHint)),
                    (
                        "players",
                        .array(
                            players.map { p in
                                .object([
                                    ("name", .string(p.name)), ("status", .string(p.status.rawValue)),
                                    ("title", .optional(p.title)), ("artist", .optional(p.artist))
                                ])
                            })
                    ),
                    (
                        "outputDevices",
                        .array(
                            devices.map { d in
                                .object([
                                    ("name", .string(d.name)), ("driver", .string(d.driver)),
                                    ("sink", .optional(d.sink))
                                ])
                            })
                    ),
                    (
                        "capabilities",
                        .object([
                            ("renderer", .string(capabilities.renderer)), ("effects", .bool(capabilities.effects)),
                            ("hrtf", .bool(capabilities.hrtf)),
                            ("realVoices", .int(capabilities.realVoices)),
                            ("missing", .array(capabilities.missing.map(JSON.string))),
                            ("extensions", .array(capabilities.extensions.map(JSON.string))),
                            (
                                "systemLibraries",
                                .array(
                                    capabilities.systemLibraries.map { library in
                                        .object([
                                            ("name", .string(library.name)), ("feature", .string(library.feature)),
                                            ("available", .bool(library.isAvailable)),
                                            ("reason", .optional(library.unavailableReason))
                                        ])
                                    })
                            )
                        ])
                    ),
                    ("outputDriver", .string(engine.outputDriver)),
                    ("outputBackend", .optional(engine.outputBackend?.rawValue)),
                    ("audioThreadPriority", .optional(priority?.description)),
                    ("desktopBus", .bool(engine.systemMusicPlayer.isAvailable))
                ]).text)
        } else {
            Output.line(
                "output: \(engine.outputDriver) through \(engine.outputBackend?.rawValue ?? "nothing"), route "
                    + "\(session.currentRoute)")
            Output.line("audio thread: \(priority?.description ?? "none (no device)")")
            Output.line("other audio playing: \(session.isOtherAudioPlaying ? "yes" : "no")")
            Output.line(
                "secondary audio should be silenced: \(session.secondaryAudioShouldBeSilencedHint ? "yes" : "no")")
            Output.line(
                engine.systemMusicPlayer.isAvailable ? "music players:" : "music players: unavailable (no session bus)")
            for p in players {
                Output.line(
                    "  \(p.name) \(p.status.rawValue)" + (p.title.map { ": \($0)" } ?? "")
                        + (p.artist.map { " by \($0)" } ?? ""))
            }
            Output.line("output devices:")
            for d in devices { Output.line("  \(d)") }
            Output.line(
                "OpenAL: \(capabilities.renderer), \(capabilities.realVoices) real voices, effects \(capabilities.effects ? "yes" : "no"), HRTF \(capabilities.hrtf ? "yes" : "no")"
            )
            for missing in capabilities.missing { Output.line("  missing: \(missing)") }
        }
    }
}
