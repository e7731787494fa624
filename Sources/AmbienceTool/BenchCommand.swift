import Ambience
import AmbienceBench
import AmbiencePlatform

struct BenchCommand: Command {
    static let name = "bench"
    static let usage = """
        bench [--json] [--seconds S] [--runs R] [--voices N,N...] [--unit-pitch N,N...|none] [--systems NAME,NAME...]
                                            side by side with raw OpenAL Soft and SDL_mixer, on the same scene, in one run
          --seconds  seconds of audio per run (default 2)
          --runs     runs per cell, 1 to 9 (default 3); each cell is the median
          --voices   scene sizes, comma-separated (default 256,1024,4096,10000); Ambience mixes every voice for real
                     up to 4096, and 256 real voices in larger scenes
          --unit-pitch  scene sizes also run with every voice at pitch 1, the only pitch SDL_mixer plays, so that
                     the three systems do the same work (default 1024; none for none)
          --systems  systems to run, comma-separated: ambience, ambienceMusic, openal, sdlMixer, ambienceRealSet,
                     openalRealSet, ambienceHDR (default all); the music streaming cost is measured with ambienceMusic
                     ambienceHDR is the crowd under an HDR window lifted by a loud event every 2 s (stress --hdr):
                     beside ambience, the voices it culls and what it saves (ratio ambienceHDROverAmbience)
                     ambienceRealSet and openalRealSet run only where Ambience keeps some voices virtual: the voices
                     it keeps real after its first rank, alone through Ambience and through raw OpenAL Soft (the
                     same sounds, positions, pitches and restarts)
          --rank-margin  how much louder (dB, 0 to 40) a virtual voice must be than the weakest real one to take its
                     source at a rank (default 3): for choosing the default; JSON's "sourceMoves" counts the moves
          --json     one JSON object: {"scenes":[{"voices":N,"unitPitch":B,"systems":{"ambience":{"rtf":…},"openal":{…},
                     "sdlMixer":{…}},"ratios":{"ambienceOverOpenAL":…,"ambienceOverSDLMixer":…,
                     "ambienceOverOpenALRealSet":…,"ambienceOverAmbienceRealSet":…}},…],
                     "playCallNs":…,"musicStreamCpuPercent":…}
        The scene is `ambience stress`'s crowd at 256, 1024 and 4096 voices (all real in Ambience) and 10000 voices
        (256 real in Ambience; raw OpenAL mixes every source it can get; SDL_mixer gets 10000 channels), where the
        real-set rows compare Ambience with raw OpenAL on the very voices it keeps real, and with itself playing
        those voices alone (what its virtual voices cost). rtf is CPU
        seconds per second of audio. SDL_mixer has no per-voice pitch, so its voices always play at pitch 1: the
        "pitch 1" rows compare the same work, the others cost Ambience and OpenAL the resampling. The music cost is
        an engine streaming Assets/Music/gravity-wave-theme.ogg alone, minus one rendering silence.

        bench --formats [--json] [--seconds S] [--runs R]
                                            the streaming cost of one file of each format, beside SDL_mixer
          --seconds  length of each file (default 30), made with sox, lame, oggenc, flac, opusenc and ffmpeg into a
                     temporary folder (deleted afterwards)
          --runs     runs per format, 1 to 9 (default 3); each figure is the median
        Ambience opens and decodes each file in 4096-frame blocks, resampled to 48 kHz (and again without the
        resampler, to show where the time goes); SDL_mixer plays it with Mix_PlayMusic into its disk driver at
        48 kHz float stereo, minus its mixer running silence for as long. Figures are CPU seconds per second of
        audio; the ratio is Ambience over SDL_mixer. SDL_mixer 2.6 plays no MP4 (AAC, ALAC). Modules and MIDI are
        Debian's game music as shipped (pingus-data's IT, ballz-data's XM, openttd-openmsx's MIDI), when installed,
        at their own lengths; both sides play MIDI with the engine's default SoundFont.

        bench --hitches [--json] [--seconds S] [--item-minutes M] [--files FILE,FILE...]
                                            the game thread's calls while the music player skips through long files
          --seconds       how long the 60 Hz game loop runs on a device engine (default 30)
          --item-minutes  length of the Ogg Vorbis and MP3 files made once with sox, oggenc and lame into
                          $XDG_CACHE_HOME/ambience/bench (default 30)
          --files         skip through these files instead
        Every frame times update(), currentPlaybackTime and one sound effect's play(); every 0.5 s
        skipToNextItem(); every 20th skip a pause and the music player's play(). Prints p50, p99 and max per call.
        """ + latencyUsage + memoryUsage + openALOptionsUsage + standInUsage

    static func run(_ arguments: inout Arguments) throws {
        if arguments.flag("--hitches") { return try runHitches(&arguments) }
        if arguments.flag("--latency") { return try runLatency(&arguments) }
        if arguments.contains("--latency-client") { return try runLatencyClient(&arguments) }
        if arguments.flag("--formats") { return try runFormats(&arguments) }
        if arguments.flag("--memory") { return try runMemory(&arguments) }
        if arguments.contains("--memory-client") { return try runMemoryClient(&arguments) }
        if arguments.flag("--openal-options") { return try runOpenALOptions(&arguments) }
        if arguments.flag("--sdl-mixer-stand-in") { return try runStandIn(&arguments) }
        if arguments.contains("--mixer-scene-client") { return try runMixerSceneClient(&arguments) }
        let json = arguments.flag("--json")
        let seconds = try arguments.duration("--seconds") ?? 2
        let runs = try arguments.integer("--runs") ?? 3
        guard (1...9).contains(runs) else { throw UsageError("--runs must be from 1 to 9") }
        var options = BenchOptions(seconds: seconds, runs: runs)
        if let text = try arguments.option("--voices") {
            options.voiceCounts = try sceneSizes(text, option: "--voices")
        }
        if let text = try arguments.option("--unit-pitch") {
            options.unitPitchVoiceCounts = text == "none" ? [] : try sceneSizes(text, option: "--unit-pitch")
        }
        if let text = try arguments.option("--systems") {
            let systems = text.split(separator: ",").map { BenchSystem(rawValue: String($0)) }
            guard !systems.isEmpty, systems.allSatisfy({ $0 != nil }) else {
                throw UsageError(
                    "--systems takes ambience, ambienceMusic, openal, sdlMixer, ambienceRealSet, openalRealSet, ambienceHDR, "
                        + "comma-separated, not '\(text)'")
            }
            options.systems = systems.map { $0! }
        }
        if let margin = try arguments.option("--rank-margin") {
            guard let decibels = Float(margin), decibels.isFinite, (0...40).contains(decibels) else {
                throw UsageError("--rank-margin takes decibels from 0 to 40, not '\(margin)'")
            }
            options.rankMargin = decibels
        }
        let plot = try arguments.option("--plot")
        guard try arguments.finish().isEmpty else { throw UsageError("bench takes no positional arguments") }
        guard seconds > 0, seconds <= 600 else { throw UsageError("--seconds must be above 0 and at most 600") }

        let report = try Benchmark.run(options, progress: { _ in }, isCancelled: { Interrupt.requested })
        try Interrupt.check()
        if let plot { try writePlot(cost: report, to: plot) }
        if json {
            Output.print(describe(report).text)
        } else {
            printTable(report)
        }
    }

    static func runFormats(_ arguments: inout Arguments) throws {
        let json = arguments.flag("--json")
        let seconds = try arguments.duration("--seconds") ?? 30
        let runs = try arguments.integer("--runs") ?? 3
        guard (1...9).contains(runs) else { throw UsageError("--runs must be from 1 to 9") }
        guard seconds >= 1, seconds <= 600 else { throw UsageError("--seconds must be from 1 to 600") }
        guard try arguments.finish().isEmpty else { throw UsageError("bench --formats takes no positional arguments") }
        let report = try FormatCosts.run(seconds: seconds, runs: runs, isCancelled: { Interrupt.requested })
        try Interrupt.check()
        func number(_ value: Double?) -> JSON { value.map { .double($0) } ?? .null }
        if json {
            Output.print(
                JSON.object([
                    ("seconds", .double(report.seconds)), ("runs", .int(report.runs)),
                    (
                        "formats",
                        .array(
                            report.rows.map { row in
                                JSON.object([
                                    ("format", .string(row.format)), ("audioSeconds", .double(row.audioSeconds)),
                                    ("ambience", .double(row.ambience)),
                                    ("ambienceDecodeOnly", .double(row.ambienceDecodeOnly)),
                                    ("sdlMixer", number(row.sdlMixer)), ("sdlMixerGross", number(row.sdlMixerGross)),
                                    ("ambienceOverSDLMixer", number(row.ratio))
                                ])
                            })
                    )
                ]).text)
            return
        }
        func cell(_ value: Double?) -> String { value.map { String(format: "%.5f", $0) } ?? "—" }
        Output.print(
            "CPU seconds per second of audio, decoded and resampled to 48 kHz; medians of \(report.runs) runs of \(Int(report.seconds)) s files"
                + " (modules and MIDI: Debian's game music, at its own length)"
        )
        Output.print("format        ambience  (decode only)  sdl_mixer  (gross)   ambience/sdl_mixer")
        for row in report.rows {
            let name = row.format.padding(toLength: 12, withPad: " ", startingAt: 0)
            Output.print(
                "\(name)  \(cell(row.ambience))   \(cell(row.ambienceDecodeOnly))        \(cell(row.sdlMixer))    \(cell(row.sdlMixerGross))   \(row.ratio.map { String(format: "%.2f", $0) } ?? "— (SDL_mixer cannot play it)")"
            )
        }
    }

    static func runHitches(_ arguments: inout Arguments) throws {
        let json = arguments.flag("--json")
        var options = HitchOptions()
        if let seconds = try arguments.duration("--seconds") {
            guard seconds > 0, seconds <= 3_600 else { throw UsageError("--seconds must be above 0 and at most 3600") }
            options.seconds = seconds
        }
        if let minutes = try arguments.number("--item-minutes") {
            guard minutes >= 0.05, minutes <= 120 else { throw UsageError("--item-minutes must be from 0.05 to 120") }
            options.itemMinutes = minutes
        }
        if let files = try arguments.option("--files") { options.files = files.split(separator: ",").map(String.init) }
        guard try arguments.finish().isEmpty else { throw UsageError("bench --hitches takes no positional arguments") }
        let report = try Hitches.run(options, isCancelled: { Interrupt.requested })
        try Interrupt.check()
        if json {
            Output.print(
                JSON.object([
                    (
                        "calls",
                        .array(
                            report.calls.map { call in
                                .object([
                                    ("name", .string(call.name)), ("count", .int(call.count)),
                                    ("p50Microseconds", .double(call.p50)),
                                    ("p99Microseconds", .double(call.p99)), ("maxMicroseconds", .double(call.max)),
                                    ("over1ms", .int(call.over1ms)), ("over1msPreempted", .int(call.over1msPreempted)),
                                    ("over1msWaited", .int(call.over1msWaited)),
                                    ("maxCallCPUMicroseconds", .double(call.maxCallCPU))
                                ])
                            })
                    ),
                    ("frames", .int(report.frames)), ("lateFrames", .int(report.lateFrames)),
                    ("skips", .int(report.skips)),
                    ("itemsStarted", .int(report.itemsStarted)), ("playbackErrors", .int(report.playbackErrors)),
                    ("underruns", .int(report.underruns)), ("outputDriver", .string(report.outputDriver)),
                    ("files", .array(report.files.map(JSON.string)))
                ]).text)
            return
        }
        func pad(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(width - text.count, 1))
        }
        Output.print(
            "\(report.frames) frames at 60 Hz on the \(report.outputDriver) driver, \(report.skips) skips through "
                + report.files.map { String($0.split(separator: "/").last ?? "") }.joined(separator: ", "))
        Output.print(
            pad("call (microseconds)", 28) + pad("count", 8) + pad("p50", 10) + pad("p99", 10) + pad("max", 10)
                + pad("CPU of max", 12) + "over 1 ms (preempted, waited)")
        for call in report.calls {
            Output.print(
                pad(call.name, 28) + pad("\(call.count)", 8) + pad(fixed(call.p50, 1), 10) + pad(fixed(call.p99, 1), 10)
                    + pad(fixed(call.max, 1), 10) + pad(fixed(call.maxCallCPU, 1), 12)
                    + "\(call.over1ms) (\(call.over1msPreempted), \(call.over1msWaited))")
        }
        Output.print(
            "items started \(report.itemsStarted), playback errors \(report.playbackErrors), underruns \(report.underruns), "
                + "late frames \(report.lateFrames)")
    }

    /// "256,1024": scene sizes from 1 to 100,000.
    static func sceneSizes(_ text: String, option: String) throws -> [Int] {
        let counts = text.split(separator: ",").map { Int($0) }
        guard !counts.isEmpty, counts.allSatisfy({ (1...100_000).contains($0 ?? 0) }) else {
            throw UsageError("\(option) needs whole numbers from 1 to 100000, comma-separated, not '\(text)'")
        }
        return counts.map { $0! }
    }

    static func describe(_ report: BenchReport) -> JSON {
        .object([
            (
                "scenes",
                .array(
                    report.scenes.map { scene in
                        .object([
                            ("voices", .int(scene.voices)),
                            ("unitPitch", .bool(scene.unitPitch)),
                            ("systems", .object(scene.systems.map { ($0.system.jsonKey, describe($0.measurement)) })),
                            (
                                "ratios",
                                .object(ratios(scene))
                            ),
                            ("ambienceRealVoices", .int(scene.ambienceRealVoices)),
                            ("realSetVoices", .int(scene.realSet.count))
                        ])
                    })
            ),
            ("playCallNs", .double(report.playCallNs)),
            ("musicStreamCpuPercent", number(report.musicStreamCpuPercent)),
            ("music", .optional(report.music)),
            ("seconds", .double(report.seconds)),
            ("runs", .int(report.runs))
        ])
    }

    /// The scene's ratios; the real-set ones only where the scene has a real set.
    static func ratios(_ scene: BenchScene) -> [(String, JSON)] {
        var pairs: [(String, JSON)] = [
            ("ambienceOverOpenAL", number(scene.ratio(ambienceOver: .openal))),
            ("ambienceOverSDLMixer", number(scene.ratio(ambienceOver: .sdlMixer)))
        ]
        if !scene.realSet.isEmpty {
            pairs.append(("ambienceOverOpenALRealSet", number(scene.ratio(ambienceOver: .openalRealSet))))
            pairs.append(("ambienceOverAmbienceRealSet", number(scene.ratio(ambienceOver: .ambienceRealSet))))
        }
        if scene.measurement(.ambienceHDR) != nil {
            pairs.append(("ambienceHDROverAmbience", number(scene.ratio(.ambienceHDR, over: .ambience))))
        }
        return pairs
    }

    static func describe(_ m: SystemMeasurement) -> JSON {
        if let error = m.error { return .object([("rtf", .null), ("error", .string(error))]) }
        var pairs: [(String, JSON)] = [
            ("rtf", .double(m.rtf)), ("cpuSeconds", .double(m.cpuSeconds)), ("seconds", .double(m.seconds)),
            ("voicesMixed", .int(m.voicesMixed)), ("frames", .int(m.frames)), ("restarts", .int(m.restarts)),
            ("sourceMoves", .int(m.sourceMoves)),
            ("runs", .array(m.runs.map(JSON.double)))
        ]
        if let rms = m.outputRMS { pairs.append(("outputRMS", .double(rms))) }
        if let us = m.renderMicroseconds { pairs.append(("renderMicroseconds", .double(us))) }
        if let ns = m.playCallNs { pairs.append(("playCallNs", .double(ns))) }
        if let mean = m.culledMean, let most = m.culledMax {
            pairs.append(("culledMean", .double(mean)))
            pairs.append(("culledMax", .int(most)))
        }
        return .object(pairs)
    }

    static func number(_ value: Double?) -> JSON { value.map(JSON.double) ?? .null }

    static func printTable(_ report: BenchReport) {
        let systems = BenchSystem.allCases.filter { s in
            !s.playsRealSet && report.scenes.contains { $0.measurement(s) != nil }
        }
        func pad(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(width - text.count, 1))
        }
        func cell(_ m: SystemMeasurement?) -> String {
            guard let m else { return "-" }
            return m.error == nil ? fixed(m.rtf, 4) : "failed"
        }
        Output.print(
            "rtf: CPU seconds per second of audio (median of \(report.runs) runs of \(fixed(report.seconds, 1)) s; lower is better)\n"
        )
        Output.print(
            pad("scene", 24) + systems.map { pad($0.title, 18) }.joined() + pad("Amb/OpenAL", 12) + "Amb/SDL_mixer")
        for scene in report.scenes {
            Output.print(
                pad(scene.title, 24) + systems.map { pad(cell(scene.measurement($0)), 18) }.joined()
                    + pad(scene.ratio(ambienceOver: .openal).map { fixed($0, 2) } ?? "-", 12)
                    + (scene.ratio(ambienceOver: .sdlMixer).map { fixed($0, 2) } ?? "-"))
        }
        Output.print("")
        for scene in report.scenes where scene.systems.contains(where: \.system.playsRealSet) {
            let alone = scene.measurement(.ambienceRealSet), raw = scene.measurement(.openalRealSet)
            Output.print(
                "\(scene.title), the \(scene.realSet.count) voices Ambience keeps real: alone through Ambience "
                    + "\(cell(alone)), through raw OpenAL Soft \(cell(raw))")
            Output.print(
                "  Ambience's whole crowd over raw OpenAL Soft on its real set "
                    + "\(scene.ratio(ambienceOver: .openalRealSet).map { fixed($0, 2) } ?? "-"), "
                    + "over Ambience on its real set alone (the virtual voices' cost) "
                    + "\(scene.ratio(ambienceOver: .ambienceRealSet).map { fixed($0, 2) } ?? "-")")
        }
        for scene in report.scenes {
            guard let hdr = scene.measurement(.ambienceHDR), hdr.error == nil, let mean = hdr.culledMean else {
                continue
            }
            Output.print(
                "\(scene.title) under an HDR window (a loud event every 2 s): culled mean \(fixed(mean, 1)), max "
                    + "\(hdr.culledMax ?? 0); its rtf over the same crowd without one "
                    + "\(scene.ratio(.ambienceHDR, over: .ambience).map { fixed($0, 2) } ?? "-") (paired runs)")
        }
        for scene in report.scenes {
            if let sources = scene.measurement(.openal)?.voicesMixed, sources > 0, sources < scene.voices {
                Output.print("raw OpenAL Soft gave \(sources) of \(scene.voices) sources")
            }
            for (system, m) in scene.systems {
                if let error = m.error { Output.line("\(scene.title), \(system.title): \(error)") }
            }
        }
        let perScene = report.scenes.compactMap { scene in
            scene.measurement(.ambience)?.playCallNs.map { "\(scene.title) \(Int($0.rounded())) ns" }
        }
        Output.print(
            "play(): median \(Int(report.playCallNs.rounded())) ns (per scene: \(perScene.joined(separator: ", ")))")
        let rawPlays = report.scenes.compactMap { scene in
            scene.measurement(.openal)?.playCallNs.map { "\(scene.title) \(Int($0.rounded())) ns" }
        }
        let realSetPlays = report.scenes.compactMap { scene in
            scene.measurement(.ambienceRealSet)?.playCallNs.map { "\(scene.title)'s real set \(Int($0.rounded())) ns" }
        }
        if !realSetPlays.isEmpty { Output.print("play() on a real set alone: \(realSetPlays.joined(separator: ", "))") }
        if !rawPlays.isEmpty {
            Output.print("raw OpenAL alSourcePlay of a finished one-shot: \(rawPlays.joined(separator: ", "))")
        }
        if let music = report.musicStreamCpuPercent {
            Output.print("music streaming (44.1 kHz stereo Ogg Vorbis): \(fixed(music, 2))% of a core")
        } else {
            Output.print(
                "music streaming: not measured (it needs the ambienceMusic system and Assets/Music/gravity-wave-theme.ogg)"
            )
        }
    }
}

extension BenchSystem {
    /// The key in `ambience bench --json`.
    var jsonKey: String { rawValue }
}
