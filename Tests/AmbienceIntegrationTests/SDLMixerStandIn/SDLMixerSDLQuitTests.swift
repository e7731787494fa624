import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// A program that shuts SDL down under the stand-in, as games do at exit (Tests/SDLMixer/standin_sdl_quit_test.c):
/// SDL_Quit with the mixer still open, then Mix_CloseAudio or nothing; SDL_QuitSubSystem(SDL_INIT_AUDIO), which
/// leaves the mixer's device playing (it holds a reference of its own); exit() while channels play. Each used to
/// abort ("double free or corruption") or crash: the engine closed a device SDL had closed, or was closing, itself.
@Suite(
    .offTheCooperativePool, .timeLimit(.minutes(5)),
    .enabled(if: MixerStandIn.built, Comment(rawValue: MixerStandIn.missing)))
struct SDLMixerSDLQuitTests {
    static func build() throws -> String {
        let folder = try CAPI.scratch()
        try FileManager.default.createSymbolicLink(
            atPath: folder + "/libSDL2_mixer-2.0.so.0", withDestinationPath: MixerStandIn.library)
        let build = try CAPI.run(
            CAPI.compiler + ["-std=c99"] + CAPI.warnings + [
                "Tests/SDLMixer/standin_sdl_quit_test.c", "-I/usr/include/SDL2", "-D_REENTRANT", "-L\(folder)",
                "-l:libSDL2_mixer-2.0.so.0", "-lSDL2", "-lm", "-o", folder + "/standin_sdl_quit_test"
            ])
        try #require(build.status == 0, "cc standin_sdl_quit_test.c: \(build.stderr)")
        return folder
    }

    @Test(arguments: [
        ("quit-then-close", "playing after SDL_Quit: 2"), ("quit-subsystem", "playing after SDL_QuitSubSystem: 2"),
        ("exit-playing", "exit while playing"), ("quit-at-exit", "SDL_Quit, then the end of main")
    ])
    func theProgramShutsSDLDownUnderTheMixer(mode: String, says line: String) throws {
        let folder = try Self.build()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Each mode three times: the crash it guards against was a race, in most runs but not all.
        for _ in 0..<3 {
            let result = try CAPI.run(
                [folder + "/standin_sdl_quit_test", mode],
                environment: ["LD_LIBRARY_PATH": folder, "SDL_AUDIODRIVER": "dummy"], timeout: 60)
            #expect(!result.killedBySignal && result.status == 0, "\(mode): \(result.stdout)\n\(result.stderr)")
            #expect(result.stdout.contains(line), "\(mode): \(result.stdout)")
            #expect(!result.stderr.contains("double free"), "\(mode): \(result.stderr)")
        }
    }
}
