import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// The README's Swift and C examples, compiled and run, so they cannot go stale. The Swift one is the
/// `ReadmeExample` target's main.swift word for word (the build compiles it; here it is compared and run); the C
/// one is taken from the README, compiled against the library and run.
@Suite(.offTheCooperativePool, .serialized, .timeLimit(.minutes(5))) struct ReadmeTests {
    static let readme = (try? String(contentsOfFile: BuildProducts.root + "/README.md", encoding: .utf8)) ?? ""

    /// The body of the first fenced block of `language` after `heading` in `text` (the README by default).
    static func block(
        _ language: String, after heading: String, in text: String = readme,
        named name: String = "README"
    ) throws -> String {
        let start = try #require(text.range(of: heading), "\(name) has no '\(heading)'")
        let fence = try #require(text.range(of: "```\(language)\n", range: start.upperBound..<text.endIndex))
        let end = try #require(text.range(of: "\n```\n", range: fence.upperBound..<text.endIndex))
        return String(text[fence.upperBound..<end.lowerBound]) + "\n"
    }

    @Test func theSwiftExampleIsTheOneTheBuildCompiles() throws {
        let example = try Self.block("swift", after: "## Thirty seconds of Swift")
        let compiled = try String(
            contentsOfFile: BuildProducts.root + "/Demos/ReadmeExample/main.swift", encoding: .utf8)
        #expect(example == compiled, "README's example and Demos/ReadmeExample/main.swift differ")
    }

    /// The DocC article that extends the README's thirty seconds starts from the same program, word for word.
    @Test func theGettingStartedArticleShowsTheCompiledExample() throws {
        let path = BuildProducts.root + "/Sources/Ambience/Ambience.docc/GettingStarted.md"
        let article = try String(contentsOfFile: path, encoding: .utf8)
        let example = try Self.block(
            "swift", after: "### Thirty seconds of Swift", in: article,
            named: "GettingStarted.md")
        let compiled = try String(
            contentsOfFile: BuildProducts.root + "/Demos/ReadmeExample/main.swift",
            encoding: .utf8)
        #expect(example == compiled, "GettingStarted.md's example and Demos/ReadmeExample/main.swift differ")
    }

    /// Run as a user would, from the package root, on SDL's dummy driver: it announces the soundtrack it starts
    /// (its notifications begin after setQueue, and play() still announces the first item, as on iOS) and exits.
    @Test func theSwiftExampleRunsAndAnnouncesItsSoundtrack() throws {
        let program = BuildProducts.folder + "/ReadmeExample"
        try #require(FileManager.default.isExecutableFile(atPath: program), "\(program) is not built")
        let run = try CAPI.run([program], environment: Self.environment, timeout: 60)
        #expect(run.status == 0 && !run.killedBySignal, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").contains("Now playing Gravity Wave Theme"), "\(run.stdout)")
    }

    @Test func theCExampleCompilesWithoutWarningsAndRuns() throws {
        let folder = try CAPI.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.block("c", after: "## The C API").write(
            toFile: folder + "/example.c", atomically: true, encoding: .utf8)
        let build = try CAPI.compile(folder + "/example.c", into: folder + "/example")
        // -Werror makes any compiler warning a failure (the linker may still warn, as ld.gold does under ASan).
        try #require(build.status == 0, "\(build.stderr)")
        let run = try CAPI.run([folder + "/example"], environment: Self.environment, timeout: 60)
        #expect(run.status == 0 && !run.killedBySignal, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.split(separator: "\n").first == "Now playing Gravity Wave Theme", "\(run.stdout)")
    }

    /// From the package root (CAPI.run's folder), off the shared session bus, on SDL's dummy driver.
    static let environment = ["SDL_AUDIODRIVER": "dummy", "AMBIENCE_EXAMPLE_SECONDS": "1"]
}
