import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// Programs nobody here wrote, on each SDL_mixer (`MixerUnderTest`): pygame 2.1.2's own mixer tests, and two Debian
/// games that link SDL2_mixer, run headless on a sound server of their own while its sink is recorded. Each case reads
/// the program's memory maps for the SDL_mixer it really loaded. The stand-in's cases are known issues until the
/// build has the stand-in (they run, and fail as `ambience run` refuses).
///
/// Every case starts its own PulseAudio (and Xvfb), so the cases run in parallel; each game plays a few seconds.
@Suite(
    .offTheCooperativePool, .timeLimit(.minutes(10)),
    .enabled(if: PulseServer.isRunning, "needs the test services: run it through scripts/with-services.sh"))
struct RealProgramsTests {
    /// The same 60 tests that pass on Debian's SDL_mixer (../shared/sdl-mixer/README.md), all passing.
    @Test(arguments: MixerUnderTest.allCases)
    func pygamesOwnMixerTestsAllPass(on mixer: MixerUnderTest) throws {
        try mixer.run {
            let (run, ran, ok) = try RealPrograms.pygameMixerTests(on: mixer)
            print(
                "RealProgramsTests: pygame's mixer tests on \(mixer): ran \(ran ?? -1), \(ok ? "OK" : "not OK"), "
                    + String(format: "%.1f s", run.seconds))
            #expect(ran == 60, "unittest's report:\n\(run.output.suffix(3000))")
            #expect(ok && run.status == 0, "status \(run.status):\n\(run.output.suffix(3000))")
            #expect(
                RealPrograms.expectedLibraries(run, on: mixer)(run.mixerLibraries),
                "python mapped \(run.mixerLibraries.sorted())")
        }
    }

    /// A game plays its demo or title screen for a few seconds, and is heard: the sink's recording is far from
    /// silence. For the stand-in, its level is also close to the same game's on Debian's SDL_mixer.
    @Test(arguments: RealProgram.games, MixerUnderTest.allCases)
    func aGameIsHeard(_ game: RealProgram, on mixer: MixerUnderTest) throws {
        try mixer.run {
            let run = try RealPrograms.run(
                game.arguments, on: mixer, seconds: game.seconds, display: game.needsDisplay, untilHeard: true)
            print(
                "RealProgramsTests: \(game.name) on \(mixer): status \(run.status), "
                    + String(format: "%.1f s", run.seconds) + ", \(run.recording.summary)")
            try #require(
                run.endedAsPlanned, "\(game.name) did not play until its time was up:\n\(run.output.suffix(3000))")
            #expect(
                RealPrograms.expectedLibraries(run, on: mixer)(run.mixerLibraries),
                "\(game.name) mapped \(run.mixerLibraries.sorted())")
            #expect(run.recording.seconds >= 1, "\(run.recording.summary)")
            #expect(run.recording.rmsDecibels > -45, "\(run.recording.summary)")
            #expect(run.recording.silentShare < 0.8, "\(run.recording.summary)")
            guard mixer == .standIn else { return }
            let reference = try RealPrograms.run(
                game.arguments, on: .debian, seconds: game.seconds, display: game.needsDisplay, untilHeard: true)
            print("RealProgramsTests: \(game.name) on debian for comparison: \(reference.recording.summary)")
            #expect(
                abs(run.recording.rmsDecibels - reference.recording.rmsDecibels) <= 10,
                "the stand-in: \(run.recording.summary); Debian's SDL_mixer: \(reference.recording.summary)")
        }
    }
}
