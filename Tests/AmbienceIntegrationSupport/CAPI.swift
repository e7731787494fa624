import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceTestSupport

/// Building and running C programs against the library: shared by the C API and README suites.
enum CAPI {
    static let root = BuildProducts.root
    /// The folder holding libambience-c.so: the build this test binary belongs to.
    static let libraryFolder = BuildProducts.folder

    /// The C compiler and its flags for programs linked against the library: AMBIENCE_TEST_CC, else `cc`.
    static let compiler: [String] = {
        let words = (ProcessInfo.processInfo.environment["AMBIENCE_TEST_CC"] ?? "").split(separator: " ").map(
            String.init)
        return words.isEmpty ? ["cc"] : words
    }()
    /// True when the library is built with a sanitizer (scripts/sanitizers.sh sets AMBIENCE_TEST_CC).
    static let instrumented = compiler != ["cc"]

    static var libraryBuilt: Bool { FileManager.default.fileExists(atPath: libraryFolder + "/libambience-c.so") }
    static let missingLibrary = "libambience-c.so is not built: run `swift build --build-tests` first"

    static func onPath(_ tool: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)")
        }
    }

    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
        var killedBySignal: Bool
    }

    /// Runs a command to completion (ended after `timeout` seconds: SIGTERM, then SIGKILL), with its output.
    static func run(
        _ arguments: [String], in folder: String = root, environment: [String: String] = [:],
        timeout: Double = 300
    ) throws -> Run {
        // Off the shared session bus: a C engine activating its (solo ambient) session would pause the mpv that the
        // MPRIS suite runs at the same time.
        let output = try ChildProcess.run(
            arguments, environment: childEnvironment(["DBUS_SESSION_BUS_ADDRESS": ""].merging(environment) { $1 }),
            directory: folder, timeout: timeout)
        return Run(
            status: output.status, stdout: String(decoding: output.stdout, as: UTF8.self),
            stderr: String(decoding: output.stderr, as: UTF8.self), killedBySignal: output.killedBySignal)
    }

    /// A private scratch folder, removed by the caller.
    static func scratch() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ambience-capi-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    static let warnings = ["-Wall", "-Wextra", "-pedantic", "-Werror"]

    /// Compiles the C file `source` (in C `standard`, every warning an error) against the header and the debug
    /// shared library into `program`; `linking` adds what else it needs (`-lm`, `-pthread`).
    static func compile(
        _ source: String, standard: String = "c99", into program: String, linking libraries: [String] = []
    ) throws -> Run {
        try run(
            compiler + ["-std=\(standard)"] + warnings
                + [source, "-Iinclude", "-L\(libraryFolder)", "-lambience-c", "-Wl,-rpath,\(libraryFolder)"]
                + libraries + ["-o", program])
    }

    /// Builds Tests/CAPI/capi_test.c against the header and the debug shared library.
    static func buildTestProgram(into folder: String) throws -> String {
        let program = folder + "/capi_test"
        let build = try compile("Tests/CAPI/capi_test.c", into: program, linking: ["-lm", "-pthread"])
        #expect(build.status == 0, "cc capi_test.c: \(build.stderr)")
        return program
    }

    /// The "N passed, M failed" line.
    static func tally(_ output: String) -> (passed: Int, failed: Int)? {
        guard let line = output.split(separator: "\n").last(where: { $0.hasSuffix(" failed") }) else { return nil }
        let words = line.split(separator: " ")
        guard words.count == 4, let passed = Int(words[0]), let failed = Int(words[2]) else { return nil }
        return (passed, failed)
    }

    /// The README's line for building the C demo (README.md, "The C API"), with `release` for `debug`.
    static let readmeLine =
        "cc -std=c99 Demos/CGameLoop/main.c -Iinclude -L.build/release -lambience-c -Wl,-rpath,$PWD/.build/release -o cgameloop"
}
