import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// exit() while other threads are inside the library (Tests/CAPI/exit_test.c): the engine's exit path
/// (`ProcessExit`) stops rendering and streaming before OpenAL Soft's destructor runs, whichever thread exits.
/// Before it, OpenAL Soft aborted (its `LockLists` assertion) in about one run in ten of the first two modes, so
/// each mode runs 40 times: every run must end by its exit(0), within its time.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(10))) struct ExitTests {
    @Test(
        .enabled(if: CAPI.libraryBuilt && CAPI.onPath("cc"), "needs cc and libambience-c.so"),
        arguments: ["main", "thread", "device"])
    func exitWhileOtherThreadsRender(mode: String) throws {
        let folder = try CAPI.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let program = folder + "/exit_test"
        let build = try CAPI.compile("Tests/CAPI/exit_test.c", into: program, linking: ["-pthread"])
        try #require(build.status == 0, "cc exit_test.c: \(build.stderr)")
        var failures: [String] = []
        for run in 1...40 {
            let result = try CAPI.run(
                [program, CAPI.root, mode], environment: ["SDL_AUDIODRIVER": "dummy"], timeout: 60)
            if result.killedBySignal || result.status != 0 {
                failures.append("run \(run): status \(result.status), \(result.stderr.suffix(600))")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of 40 runs failed; the first: \(failures.first ?? "")")
    }
}
