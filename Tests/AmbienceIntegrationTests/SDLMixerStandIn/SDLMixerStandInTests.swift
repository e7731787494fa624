import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// Building and running C programs against the SDL_mixer stand-in (`.build/<config>/libSDL2_mixer.so`): compiled
/// against Debian's own <SDL2/SDL_mixer.h>, linked by soname through a folder holding
/// `libSDL2_mixer-2.0.so.0 -> the built library`, run with that folder first on LD_LIBRARY_PATH (as `ambience run`
/// will). The test target does not link the stand-in: its soname flag would reach the test binary.
enum MixerStandIn {
    static let library = BuildProducts.folder + "/libSDL2_mixer.so"
    static var built: Bool { FileManager.default.fileExists(atPath: library) }
    static let missing = "libSDL2_mixer.so is not built: run `swift build --build-tests` first"

    /// A scratch folder with the soname link and `Tests/SDLMixer/<program>.c` (in C `standard`) built in it.
    static func prepare(_ program: String = "standin_test", standard: String = "c99") throws -> String {
        let folder = try CAPI.scratch()
        try FileManager.default.createSymbolicLink(
            atPath: folder + "/libSDL2_mixer-2.0.so.0", withDestinationPath: library)
        let build = try CAPI.run(
            CAPI.compiler + ["-std=\(standard)"] + CAPI.warnings + [
                "Tests/SDLMixer/\(program).c", "-I/usr/include/SDL2", "-D_REENTRANT", "-L\(folder)",
                "-l:libSDL2_mixer-2.0.so.0", "-lSDL2", "-lm", "-pthread", "-o", folder + "/" + program
            ])
        try #require(build.status == 0, "cc \(program).c: \(build.stderr)")
        return folder
    }

    /// Runs the test program from `folder` with the stand-in first on the library path (from the repository's root).
    static func run(
        _ folder: String, _ arguments: [String], environment: [String: String], program: String = "standin_test"
    ) throws -> CAPI.Run {
        try CAPI.run(
            [folder + "/" + program] + arguments,
            environment: ["LD_LIBRARY_PATH": folder].merging(environment) { $1 }, timeout: 240)
    }
}

@Suite(
    .offTheCooperativePool, .timeLimit(.minutes(5)), .serialized,
    .enabled(if: MixerStandIn.built, Comment(rawValue: MixerStandIn.missing)))
struct SDLMixerStandInTests {
    /// Tests/SDLMixer/standin_test.c: every implemented function, with NULL and freed chunks, channels -2 and
    /// 100000, volume 1e9, absurd angles, custom SDL_RWops that fail mid-read (with and without a size), freesrc
    /// honoured; plays that end by themselves, by loops, by time, by fades, by halts (a callback that plays again
    /// from inside Mix_HaltChannel); and /proc/self/maps shows the stand-in, not Debian's library, was loaded.
    @Test func everyImplementedFunctionFromC() throws {
        let folder = try MixerStandIn.prepare()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try MixerStandIn.run(folder, [BuildProducts.folder], environment: ["SDL_AUDIODRIVER": "dummy"])
        #expect(!result.killedBySignal, "standin_test crashed: \(result.stderr)")
        #expect(result.status == 0, "standin_test: \(result.stdout)\n\(result.stderr)")
        let tally = CAPI.tally(result.stdout)
        #expect(tally != nil && tally!.failed == 0 && tally!.passed >= 112, "\(result.stdout)")
    }

    /// Tests/SDLMixer/standin_threads_test.c for 3 s: a game thread playing chunks and music (and shrinking the
    /// channels), another changing volumes and placement, a third registering effects and turning the music hook and
    /// the post-mix on and off, finished callbacks playing again. Every call's result is one SDL_mixer allows, every
    /// finished callback sees its chunk (a dropped channel's too), every effect's done callback runs once.
    /// scripts/sanitizers.sh runs it under ThreadSanitizer as well.
    @Test func severalThreadsAtOnce() throws {
        try runChecks("standin_threads_test", ["3"], passing: 1_001)
    }

    /// Tests/SDLMixer/standin_races_test.c: Mix_HookMusic set and cleared by two threads at once leaves the music held
    /// exactly when a hook is set (40 rounds), and a clearing that came last is final once it returns;
    /// Mix_AllocateChannels shrinking while the update thread's callback for a dropped channel waits on a lock the
    /// shrinking thread holds returns at once, and every dropped channel's end is reported once, its callback seeing
    /// its chunk, its effect's done callback after its finished callback.
    @Test func hookAndShrinkRaces() throws {
        try runChecks("standin_races_test", passing: 13)
    }

    /// Tests/SDLMixer/standin_races_test.c --reopen: an effect registered by a finished callback of Mix_CloseAudio
    /// that then opens the device again gets its done callback once, with the closed device, and the music hook plays
    /// on the device opened there. On the private sound server: SDL's dummy and disk drivers open one device at a
    /// time, and the closing one is still open then.
    @Test(
        .enabled(
            if: ProcessInfo.processInfo.environment["AMBIENCE_TEST_SERVICES"] == "1",
            "needs the private PulseAudio of scripts/with-services.sh"))
    func anEffectRegisteredWhileClosingIsDoneOnce() throws {
        try runChecks("standin_races_test", ["--reopen"], driver: "pulseaudio", passing: 6)
    }

    /// Tests/SDLMixer/standin_idle_test.c: with nothing playing the update thread waits 100 ms between ticks (under
    /// 40 waits in a second, where it made 100), and a chunk played then still has its end reported, within a tick
    /// (the play wakes the thread: a median under 50 ms, where a missing wake makes it about 80). While one long
    /// chunk plays, or one loops forever, it does not tick either (under 40 waits in a second), and a chunk's end is
    /// still seen a median under 45 ms after its length, where the 100 ms wait alone would make it about 60. With no
    /// callback set, Mix_Playing reads 0 as a chunk's last frame is out, and ends wake nothing (under 30 waits in a
    /// second while 8 channels of short chunks of different lengths are played again as they end: 54 before).
    @Test func theUpdateThreadIdlesWhileNothingPlays() throws {
        try runChecks("standin_idle_test", passing: 12)
    }

    /// Tests/SDLMixer/standin_idle_test.c --held: a call (a `phone` stream on a server of the test's own with
    /// module-role-cork) makes the session hold every voice. A chunk held past its length still plays and is not
    /// reported ended; the update thread rests meanwhile (under 40 waits in a second, where it looked every 10 ms for
    /// the end), and once the call is over the chunk plays what it had left and is reported ended.
    @Test(.enabled(if: SoundServer.requested == .pulseaudio, "module-role-cork is PulseAudio's"))
    func theUpdateThreadRestsWhileTheSessionHoldsEveryVoice() throws {
        let fixtures = try Fixtures()
        let server = try ThrowawayService.soundServer(in: fixtures)
        defer { server.kill() }
        try Fixtures.run(
            "pactl", ["load-module", "module-role-cork", "trigger_roles=phone", "cork_roles=game"],
            environment: server.environment)
        try runChecks("standin_idle_test", ["--held"], environment: server.environment, passing: 6)
    }

    /// Builds `Tests/SDLMixer/<program>.c` (C11), runs it on SDL's `driver` (with `environment`) and expects at least
    /// `passing` checks passed and none failed.
    private func runChecks(
        _ program: String, _ arguments: [String] = [], driver: String = "dummy", environment: [String: String] = [:],
        passing: Int
    ) throws {
        let folder = try MixerStandIn.prepare(program, standard: "c11")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try MixerStandIn.run(
            folder, arguments, environment: environment.merging(["SDL_AUDIODRIVER": driver]) { $1 }, program: program)
        #expect(!result.killedBySignal, "\(program) crashed: \(result.stderr)")
        #expect(result.status == 0, "\(program): \(result.stdout)\n\(result.stderr)")
        let tally = CAPI.tally(result.stdout)
        #expect(tally != nil && tally!.failed == 0 && tally!.passed >= passing, "\(result.stdout)")
    }

    /// A 440 Hz chunk played on a channel reaches the device: SDL's disk driver records what the engine gave it
    /// (32-bit float stereo at the opened 44.1 kHz), and the recording holds one second of a 440 Hz tone at the
    /// chunk's level.
    @Test func aPlayedChunkIsHeard() throws {
        let folder = try MixerStandIn.prepare()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recording = folder + "/device.raw"
        let result = try MixerStandIn.run(
            folder, ["--heard"], environment: ["SDL_AUDIODRIVER": "disk", "SDL_DISKAUDIOFILE": recording])
        #expect(result.status == 0, "standin_test --heard: \(result.stdout)\n\(result.stderr)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: recording))
        let samples = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let signal = Signal(samples, channels: 2, sampleRate: 44_100)
        let first = try #require(signal.firstFrame(above: 0.05), "nothing was heard")
        let second = first..<min(first + 44_100, signal.frames)
        try #require(second.count > 22_050, "under half a second was recorded after the start")
        let window = first..<(first + 22_050)
        #expect(abs(signal.dominantFrequency(in: window) - 440) < 2)
        #expect(abs(signal.dominantFrequency(in: window, channel: 1) - 440) < 2)
        // The chunk is a half-scale sine; centred, each side carries it at about half scale.
        let level = signal.amplitude(of: 440, in: window)
        #expect(level > 0.25 && level < 0.75, "440 Hz at \(level)")
    }

    /// A program may write into a loaded chunk's `abuf` (pygame's sndarray does), and SDL_mixer, which mixes from it,
    /// plays the new bytes: a 440 Hz chunk played to its end, then rewritten in place to 880 Hz and played again
    /// (Tests/SDLMixer/standin_rewrite_test.c), is heard at 440 Hz and then at 880 Hz. A 0.25 s chunk is compared with
    /// its sound under the stand-in's lock and played in one hold of it; a 1 s chunk is compared outside it
    /// (`inLockCompareBytes`, 64 KB).
    @Test(arguments: [0.25, 1.0])
    func aChunkRewrittenInPlaceIsHeardAsRewritten(seconds: Double) throws {
        let folder = try MixerStandIn.prepare("standin_rewrite_test")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recording = folder + "/device.raw"
        let result = try MixerStandIn.run(
            folder, ["\(seconds)"], environment: ["SDL_AUDIODRIVER": "disk", "SDL_DISKAUDIOFILE": recording],
            program: "standin_rewrite_test")
        #expect(result.status == 0, "standin_rewrite_test \(seconds): \(result.stdout)\n\(result.stderr)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: recording))
        let samples = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let signal = Signal(samples, channels: 2, sampleRate: 44_100)
        let length = Int(seconds * 44_100)
        // Each play's first frame: the second comes after the first's length and the program's 300 ms of silence.
        func onset(from start: Int) -> Int? {
            (start..<signal.frames).first { abs(samples[2 * $0]) > 0.05 }
        }
        let first = try #require(onset(from: 0), "nothing was heard")
        let second = try #require(onset(from: first + length + 4_410), "the second play was not heard")
        // Each play's first 0.2 s (less than the shorter chunk).
        let window = 8_820
        try #require(signal.frames - second > window, "under 0.2 s was recorded after the second start")
        #expect(abs(signal.dominantFrequency(in: first..<(first + window)) - 440) < 2)
        #expect(abs(signal.dominantFrequency(in: second..<(second + window)) - 880) < 2)
        #expect(signal.amplitude(of: 440, in: second..<(second + window)) < 0.01, "the old bytes were played again")
    }

    /// Mix_SetPanning(0, 255, 0) on the default stereo device scales the sides as SDL_mixer does (the channel's stream,
    /// the chunk being stereo): the left side carries the tone at its level, the right none of it. With
    /// Mix_SetReverseStereo(0, 1) set after it, the panned sides are swapped (SDL_mixer runs the swap after the
    /// panning registered before it): the tone is on the right.
    @Test(arguments: [(mode: "--heard-left", toneSide: 0), (mode: "--heard-left-reversed", toneSide: 1)])
    func panningScalesEachSide(mode: String, toneSide: Int) throws {
        let folder = try MixerStandIn.prepare()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recording = folder + "/device.raw"
        let result = try MixerStandIn.run(
            folder, [mode], environment: ["SDL_AUDIODRIVER": "disk", "SDL_DISKAUDIOFILE": recording])
        #expect(result.status == 0, "standin_test \(mode): \(result.stdout)\n\(result.stderr)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: recording))
        let samples = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let signal = Signal(samples, channels: 2, sampleRate: 44_100)
        let first = try #require(signal.firstFrame(above: 0.05), "nothing was heard")
        try #require(signal.frames - first > 22_050, "under half a second was recorded after the start")
        let window = first..<(first + 22_050)
        let tone = signal.amplitude(of: 440, in: window, channel: toneSide)
        let other = signal.amplitude(of: 440, in: window, channel: 1 - toneSide)
        #expect(tone > 0.4 && tone < 0.6, "side \(toneSide) at \(tone)")
        #expect(other < 0.01, "side \(1 - toneSide) at \(other)")
    }
}
