// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Ambience",
    products: [
        .library(name: "Ambience", targets: ["Ambience"]),
        // The mixer alone (with Core and Platform): for a game that only mixes, which links OpenAL Soft and nothing
        // of the engine's other libraries (Tests/ConsumerPackages/MixerOnly).
        .library(name: "AmbienceMixer", targets: ["AmbienceMixer"]),
        .executable(name: "ambience", targets: ["AmbienceCLI"]),
        // The C API (include/ambience.h) as .build/<config>/libambience-c.so. Not "ambience": SwiftPM drops one of
        // two products with the same name, and the command already has it.
        .library(name: "ambience-c", type: .dynamic, targets: ["AmbienceC"]),
        .library(name: "AmbienceHost", targets: ["AmbienceHost"]),
        .executable(name: "gravity-wave", targets: ["GravityWave"]),
        // SDL_mixer 2.6's ABI on the engine (issue #33): .build/<config>/libSDL2_mixer.so, soname
        // libSDL2_mixer-2.0.so.0, put in place of the system's by `ambience run`, never installed over it.
        .library(name: "SDL2_mixer", type: .dynamic, targets: ["SDLMixerStandIn"]),
    ],
    targets: [
        .systemLibrary(name: "CSDL2", providers: [.apt(["libsdl2-dev"])]),
        .systemLibrary(name: "COpenAL", providers: [.apt(["libopenal-dev"])]),
        .systemLibrary(name: "CVorbisFile", providers: [.apt(["libvorbis-dev", "libogg-dev"])]),
        .systemLibrary(name: "CMPG123", pkgConfig: "libmpg123", providers: [.apt(["libmpg123-dev"])]),
        // No pkgConfig for libpulse: its .pc adds -D_REENTRANT, which SwiftPM warns about on every build.
        .systemLibrary(name: "CPulse", providers: [.apt(["libpulse-dev"])]),
        // libdbus-1's headers without its library (the engine opens it at run time): the .pc beside the module map
        // takes dbus-1's compiler flags and not its -ldbus-1. SwiftPM reads an absolute pkgConfig path as that file.
        .systemLibrary(name: "CDBus", pkgConfig: Context.packageDirectory + "/Sources/CDBus/dbus-1-headers.pc",
                       providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CFLAC", pkgConfig: "flac", providers: [.apt(["libflac-dev"])]),
        // pkgConfig for libopusfile: its header includes <opus_multistream.h> from /usr/include/opus.
        .systemLibrary(name: "COpusFile", pkgConfig: "opusfile", providers: [.apt(["libopusfile-dev"])]),
        .systemLibrary(name: "CSndFile", providers: [.apt(["libsndfile1-dev"])]),
        // FFmpeg's demuxer and decoders as one module: libavformat, libavcodec and libavutil are one project.
        .systemLibrary(name: "CFFmpeg", providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev"])]),
        // EBU R128 loudness (loudness matching's analysis at scan time, and the tests' measurements).
        .systemLibrary(name: "CEBUR128", providers: [.apt(["libebur128-dev"])]),
        .systemLibrary(name: "CSDLImage", providers: [.apt(["libsdl2-image-dev"])]),
        // Tracker modules (libopenmpt) and MIDI (libfluidsynth): headers only, both opened at run time.
        .systemLibrary(name: "COpenMPT", providers: [.apt(["libopenmpt-dev"])]),
        .systemLibrary(name: "CFluidSynth", providers: [.apt(["libfluidsynth-dev"])]),
        .systemLibrary(name: "CSDLTTF", providers: [.apt(["libsdl2-ttf-dev"])]),
        // gettext from glibc (libintl.h): Platform's message catalogs, for the demo game's translations.
        .systemLibrary(name: "CIntl", providers: [.apt(["libc6-dev"])]),
        // Only the side-by-side benchmark links SDL_mixer.
        .systemLibrary(name: "CSDLMixer", providers: [.apt(["libsdl2-mixer-dev"])]),
        // The one gateway to the OS (libc, threads, files, processes): no C of its own (CIntl is glibc's libintl.h,
        // nothing to link), so an arrow from it back up into the engine is a compile error.
        .target(name: "AmbiencePlatform", dependencies: ["CIntl"]),
        // The vocabulary the layers share (decoded audio, media items, the session, the sound server's model) and the
        // pure rules over it: no C at all, so the session and route tables build and test without any library.
        .target(name: "AmbienceCore", dependencies: ["AmbiencePlatform"]),
        // Files to audio: the format sniffing, the eight decoders (each the only file of its C library; libopenmpt
        // and libfluidsynth opened at run time), the tag readers and the loudness meter. A layer that only mixes
        // PCMBuffers does not need it.
        .target(
            name: "AmbienceDecoding",
            dependencies: ["AmbienceCore", "AmbiencePlatform", "CSndFile", "CVorbisFile", "CMPG123", "CFLAC", "COpusFile",
                           "CFFmpeg", "CEBUR128", "COpenMPT", "CFluidSynth"]),
        // The mixer: the OpenAL Soft wrapper (the only file calling it) and what mixes on it (sounds, voices, buses,
        // effects, HDR, streams, the listener), rendered through a loopback device. No decoder, server or database.
        .target(name: "AmbienceMixer", dependencies: ["AmbienceCore", "AmbiencePlatform", "COpenAL"]),
        // The music library: the index (SQLite), the folder walk and watch, queries, the picker and browser,
        // artwork (SDL_image, opened at run time; zlib's CRC32) and playlists. SQLite, zlib and SDL_image are its alone.
        .target(
            name: "AmbienceLibrary",
            dependencies: ["AmbienceDecoding", "AmbienceCore", "AmbiencePlatform", "CSQLite", "CSDLImage", "CZlib"]),
        // Where the mix goes: the device (SDL's, or the engine's own libpulse stream), the WAV writer, and the sound
        // server's side (PulseAudio's monitor and cork requests, the route monitor). libpulse and SDL audio are its alone.
        // The audio thread's priority is asked through a grantor the facade hands down (rtkit is a D-Bus service).
        .target(name: "AmbienceOutput", dependencies: ["AmbienceMixer", "AmbienceCore", "AmbiencePlatform", "CPulse", "CSDL2"]),
        // The desktop over D-Bus (libdbus opened at run time): MPRIS client and server, the other players, the player
        // launcher, the sleep and screen-lock monitors. Nothing of the engine, the mixer or the music player.
        .target(name: "AmbienceDesktop", dependencies: ["AmbienceCore", "AmbiencePlatform", "CDBus"]),
        // The application's music player: the queue and its order, the stream the mixer plays, the feeder that decodes
        // ahead. On the mixer and the decoders; no device, server, bus or database.
        .target(name: "AmbienceMusic", dependencies: ["AmbienceMixer", "AmbienceDecoding", "AmbienceCore", "AmbiencePlatform"]),
        .target(
            name: "Ambience",
            dependencies: ["AmbienceMusic", "AmbienceOutput", "AmbienceDesktop", "AmbienceMixer", "AmbienceLibrary", "AmbienceDecoding",
                           "AmbienceCore", "AmbiencePlatform",
                           // ambience_version.h's AMBIENCE_VERSION_* macros are the one source of `Ambience.version`.
                           "CAmbienceVersion",
            ]
        ),
        .target(name: "AmbienceBench", dependencies: ["Ambience", "AmbienceDecoding", "AmbiencePlatform", "COpenAL", "CVorbisFile", "CSDLMixer", "CSDL2"]),
        .target(name: "AmbienceTool", dependencies: ["Ambience", "AmbienceDecoding", "AmbiencePlatform", "AmbienceBench"]),
        .executableTarget(name: "AmbienceCLI", dependencies: ["AmbienceTool", "AmbiencePlatform"]),
        // include/ is also a module (include/module.modulemap), so the C API's Swift side uses the header's own types.
        .systemLibrary(name: "CAmbience", path: "include"),
        // include/ambience_version.h alone, for the engine's `Ambience.version` (the C API's header includes it).
        .systemLibrary(name: "CAmbienceVersion"),
        .target(name: "AmbienceC", dependencies: ["Ambience", "AmbienceDecoding", "AmbiencePlatform", "CAmbience"]),
        // SDL_mixer's public types and constants, declared from its documentation (not its header).
        .systemLibrary(name: "CSDLMixerABI"),
        // The stand-in's look planning, pure arithmetic: a target of its own so that the integration tests reach it.
        .target(name: "SDLMixerStandInSchedule", dependencies: ["AmbiencePlatform"]),
        // No test target may depend on this: the soname flag would reach the test binary. Tests load the built
        // library from C programs instead (Tests/SDLMixer).
        .target(
            name: "SDLMixerStandIn",
            dependencies: ["Ambience", "AmbiencePlatform", "CSDLMixerABI", "CSDL2", "SDLMixerStandInSchedule"],
            linkerSettings: [.unsafeFlags(["-Xlinker", "-soname=libSDL2_mixer-2.0.so.0"])]),
        .executableTarget(name: "MixerStress", dependencies: ["Ambience", "AmbiencePlatform", "AmbienceBench"], path: "Demos/MixerStress"),
        // The README's thirty seconds of Swift, word for word (ReadmeTests compares them and runs it).
        .executableTarget(name: "ReadmeExample", dependencies: ["Ambience"], path: "Demos/ReadmeExample"),
        // The SDL2 game loop: window, events -> session, fixed time step, engine.update() once per frame.
        .target(name: "AmbienceHost", dependencies: ["Ambience", "AmbiencePlatform", "CSDL2", "CSDLTTF", "CSDLImage"]),
        // The demo game: its logic in a library (so tests can drive it), main.swift beside it.
        .target(name: "GravityWaveCore", dependencies: ["Ambience", "AmbiencePlatform", "AmbienceHost"], path: "Demos/GravityWave/Core"),
        .executableTarget(name: "GravityWave", dependencies: ["GravityWaveCore", "AmbiencePlatform"], path: "Demos/GravityWave", exclude: ["Core"]),
        // The tests, split by what they need (Tests/README.md). The helpers are test targets (no tests of their own)
        // that the others `@testable import`, layered like the sources so that a unit target builds only its layer:
        // AmbienceTestSupport (child processes, fixtures made by sox, waiting) on Platform, AmbienceAudioTestSupport
        // (signals, decoding checks) on Core, AmbienceIntegrationSupport (players, buses, sound servers, the C
        // programs) on everything. Test targets, not plain ones: `swift build` (release too) builds every plain target,
        // and a release build is not compiled for `@testable import`.
        .testTarget(name: "AmbienceTestSupport", dependencies: ["AmbiencePlatform"], path: "Tests/AmbienceTestSupport"),
        .testTarget(
            name: "AmbienceAudioTestSupport", dependencies: ["AmbienceTestSupport", "AmbienceCore", "AmbiencePlatform"],
            path: "Tests/AmbienceAudioTestSupport"),
        // AmbienceC too: the fuzz drivers the suites share with Tests/Fuzz call the C API in-process.
        .testTarget(
            name: "AmbienceIntegrationSupport",
            dependencies: ["AmbienceDesktop", "AmbienceMusic", "AmbienceOutput", "AmbienceTestSupport", "AmbienceAudioTestSupport", "Ambience", "AmbienceCore", "AmbienceDecoding",
                           "AmbienceLibrary", "AmbienceMixer", "AmbiencePlatform", "AmbienceTool", "AmbienceHost",
                           "GravityWaveCore", "AmbienceC", "CAmbience"],
            path: "Tests/AmbienceIntegrationSupport"),
        // Unit tests: no services, no devices, each built on its own layer alone (Mixer's render through OpenAL
        // Soft's loopback device, which needs no sound card).
        .testTarget(name: "AmbiencePlatformTests", dependencies: ["AmbiencePlatform", "AmbienceTestSupport"]),
        .testTarget(name: "AmbienceCoreTests", dependencies: ["AmbienceCore", "AmbiencePlatform", "AmbienceTestSupport"]),
        .testTarget(
            name: "AmbienceDecodingTests",
            dependencies: ["AmbienceDecoding", "AmbienceCore", "AmbiencePlatform", "AmbienceTestSupport", "AmbienceAudioTestSupport"]),
        .testTarget(
            name: "AmbienceMixerTests",
            dependencies: ["AmbienceMixer", "AmbienceCore", "AmbiencePlatform", "AmbienceTestSupport", "AmbienceAudioTestSupport"]),
        .testTarget(
            name: "AmbienceLibraryTests",
            dependencies: ["AmbienceLibrary", "AmbienceDecoding", "AmbienceCore", "AmbiencePlatform", "AmbienceTestSupport",
                           "AmbienceAudioTestSupport"]),
        // The music player on a mixer of its own, rendered offline (Tests/AmbienceMusicTests/MusicRig.swift).
        .testTarget(
            name: "AmbienceMusicTests",
            dependencies: ["AmbienceMusic", "AmbienceMixer", "AmbienceDecoding", "AmbienceCore", "AmbiencePlatform",
                           "AmbienceTestSupport", "AmbienceAudioTestSupport"]),
        .testTarget(
            name: "AmbienceDesktopTests",
            dependencies: ["AmbienceDesktop", "AmbienceCore", "AmbiencePlatform", "AmbienceTestSupport"]),
        // The output's rules and what runs without a device (the null output, the WAV writer); the decoders read the
        // writer's files back.
        .testTarget(
            name: "AmbienceOutputTests",
            dependencies: ["AmbienceOutput", "AmbienceMixer", "AmbienceDecoding", "AmbienceCore",
                           "AmbiencePlatform", "AmbienceTestSupport", "AmbienceAudioTestSupport"]),
        // Integration: the engine with the real servers, buses, players and programs; the suites that share the
        // sound server one at a time (SoundServerSuites) are all here, the C API's own among them.
        .testTarget(
            name: "AmbienceIntegrationTests",
            dependencies: ["AmbienceDesktop", "AmbienceMusic", "AmbienceOutput", "Ambience", "AmbienceCore", "AmbienceDecoding", "AmbienceLibrary", "AmbienceMixer", "AmbiencePlatform",
                           "AmbienceTool", "AmbienceBench", "AmbienceHost", "GravityWaveCore", "AmbienceC", "CAmbience",
                           "AmbienceTestSupport", "AmbienceAudioTestSupport", "AmbienceIntegrationSupport",
                           "SDLMixerStandInSchedule"]),
        // The C API's suites outside the sound server's queue: its exit path, its log and its version.
        .testTarget(
            name: "AmbienceCAPITests",
            dependencies: ["AmbienceDesktop", "AmbienceMusic", "AmbienceOutput", "Ambience", "AmbiencePlatform", "AmbienceC", "CAmbience", "AmbienceTestSupport",
                           "AmbienceAudioTestSupport", "AmbienceIntegrationSupport"]),
        // The demo game driven by its tests.
        .testTarget(
            name: "GravityWaveCoreTests",
            dependencies: ["AmbienceDesktop", "AmbienceMusic", "AmbienceOutput", "GravityWaveCore", "Ambience", "AmbienceCore", "AmbienceDecoding", "AmbienceLibrary", "AmbiencePlatform",
                           "AmbienceHost", "AmbienceTestSupport", "AmbienceAudioTestSupport", "AmbienceIntegrationSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
