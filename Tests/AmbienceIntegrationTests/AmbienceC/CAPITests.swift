import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

// The C API from C: include/ambience.h compiled by gcc and g++, Tests/CAPI/capi_test.c and Demos/CGameLoop built with
// `cc` against the debug libambience-c.so, run, and checked under valgrind. Under scripts/sanitizers.sh the library
// is instrumented: AMBIENCE_TEST_CC names the compiler that builds the C programs to match (the toolchain's clang
// with -fsanitize=address), and valgrind, which cannot run beside AddressSanitizer, is left to the plain run.
//
// The shared library comes from `swift build --build-tests` (it builds every product, the dynamic library included).
// The tests never run `swift build` themselves: inside `swift test` that would wait forever on SwiftPM's build lock.

extension SoundServerSuites {
    @Suite(
        .offTheCooperativePool,
        .timeLimit(.minutes(10)), .serialized, .enabled(if: CAPI.libraryBuilt, Comment(rawValue: CAPI.missingLibrary)))
    struct CAPITests {
        @Test func headerIsPlainC99AndCxxWithoutWarnings() throws {
            let folder = try CAPI.scratch()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let source = folder + "/header.c"
            try "#include \"ambience.h\"\nint main(void) { ambience_voice v = AMBIENCE_VOICE_NONE; return (int)v; }\n"
                .write(toFile: source, atomically: true, encoding: .utf8)
            for compiler in [["gcc", "-std=c99"], ["g++", "-x", "c++"], ["g++", "-std=c++98", "-x", "c++"]] {
                let result = try CAPI.run(compiler + CAPI.warnings + ["-Iinclude", "-fsyntax-only", source])
                #expect(
                    result.status == 0 && result.stderr.isEmpty, "\(compiler.joined(separator: " ")): \(result.stderr)")
            }
            // The test program and the demo are held to the same standard.
            for file in ["Tests/CAPI/capi_test.c", "Tests/CAPI/formats_test.c", "Demos/CGameLoop/main.c"] {
                let result = try CAPI.run(["gcc", "-std=c99"] + CAPI.warnings + ["-Iinclude", "-fsyntax-only", file])
                #expect(result.status == 0 && result.stderr.isEmpty, "\(file): \(result.stderr)")
            }
        }

        @Test func everyFunctionGroupWorksFromC() throws {
            let folder = try CAPI.scratch()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let program = try CAPI.buildTestProgram(into: folder)
            let result = try CAPI.run([program, CAPI.root])
            #expect(!result.killedBySignal, "capi_test crashed: \(result.stderr)")
            #expect(result.status == 0, "capi_test: \(result.stdout.suffix(300))\n\(result.stderr)")
            let tally = CAPI.tally(result.stdout)
            #expect(tally != nil && tally!.failed == 0 && tally!.passed > 700, "\(result.stdout.suffix(200))")
            // The engine left alive at the end is shut down by the exit handler: OpenAL sees its device closed.
            #expect(!result.stderr.contains("alc_cleanup"), "\(result.stderr)")
        }

        /// Tests/CAPI/threads_test.c: one engine driven from five threads at once (rendering and updating, voices with
        /// NaN and stale arguments, buses and the listener, engines and sounds made and destroyed). scripts/sanitizers.sh
        /// runs the same program under ThreadSanitizer.
        @Test func theAPIHoldsUpUnderFiveThreadsAtOnce() throws {
            let folder = try CAPI.scratch()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let program = folder + "/threads_test"
            let build = try CAPI.compile(
                "Tests/CAPI/threads_test.c", standard: "c11", into: program, linking: ["-lm", "-pthread"])
            try #require(build.status == 0, "cc threads_test.c: \(build.stderr)")
            let result = try CAPI.run([program, "1000"], timeout: 300)
            #expect(
                !result.killedBySignal && result.status == 0,
                "threads_test: \(result.stdout.suffix(300))\n\(result.stderr.suffix(2000))")
            let tally = CAPI.tally(result.stdout)
            #expect(tally != nil && tally!.failed == 0 && tally!.passed > 10_000, "\(result.stdout.suffix(200))")
        }

        @Test(
            .enabled(if: CAPI.onPath("valgrind"), "valgrind is not installed (apt-get install valgrind)"),
            .enabled(if: !CAPI.instrumented, "valgrind cannot run an AddressSanitizer build; the plain run checks it"))
        func noLeaksUnderValgrind() throws {
            let folder = try CAPI.scratch()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let program = try CAPI.buildTestProgram(into: folder)
            // Only "definitely lost" counts: the Swift runtime's metadata caches are one-time and "possibly lost".
            // Tests/CAPI/valgrind.supp lists (and explains) the one known exception.
            let result = try CAPI.run(
                [
                    "valgrind", "--leak-check=full", "--errors-for-leak-kinds=definite", "--error-exitcode=3",
                    "--num-callers=40", "--suppressions=Tests/CAPI/valgrind.supp", program, CAPI.root
                ],
                timeout: 900)
            #expect(result.status == 0, "valgrind exit \(result.status):\n\(result.stderr.suffix(6000))")
            #expect(result.stderr.contains("ERROR SUMMARY: 0 errors"), "\(result.stderr.suffix(6000))")
            #expect(CAPI.tally(result.stdout)?.failed == 0, "\(result.stdout.suffix(300))")
        }

        /// Builds capi_test and runs one of its live modes; expects it to pass and to print every line of `lines`.
        func runLiveMode(_ mode: String, expecting lines: String...) throws {
            let folder = try CAPI.scratch()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let program = try CAPI.buildTestProgram(into: folder)
            let result = try CAPI.run([program, CAPI.root, mode], timeout: 120)
            #expect(result.status == 0, "capi_test \(mode): \(result.stdout)\n\(result.stderr)")
            for line in lines { #expect(result.stdout.contains(line), "\(result.stdout)") }
        }

        @Test(
            .enabled(
                if: ProcessInfo.processInfo.environment["AMBIENCE_TEST_SERVICES"] == "1" && CAPI.onPath("pactl"),
                "needs the private PulseAudio server: bash scripts/with-services.sh swift test"))
        func routeChangeReachesTheCCallbackAndResumesOrStops() throws {
            // First, engines opened by the name of a sink loaded just before, with SDL already started; then two
            // rounds, the second answering Stop (ambience_session_stop_after_route_change): the voice is kept at its
            // start.
            try runLiveMode(
                "route", expecting: "named device: 8 of 8 opened just after they appeared", "route change: reason",
                "route change: stopped, voice rewound")
        }

        /// The session bus killed under a device engine and started again: the C callback hears both.
        @Test(.enabled(if: CAPI.onPath("dbus-daemon"), "dbus-daemon is not installed"))
        func sessionBusLossAndReturnReachTheCCallback() throws {
            try runLiveMode("bus", expecting: "session bus: lost 1, back 1")
        }

        @Test func cGameLoopBuildsWithTheReadmeLineAndRecordsAudio() throws {
            let folder = try CAPI.scratch()
            defer { try? FileManager.default.removeItem(atPath: folder) }
            // The README's line, for the debug build, with the program written to the scratch folder.
            let line = CAPI.readmeLine.replacingOccurrences(of: "$PWD/.build/release", with: CAPI.libraryFolder)
                .replacingOccurrences(of: ".build/release", with: CAPI.libraryFolder)
                .replacingOccurrences(of: "cc ", with: CAPI.compiler.joined(separator: " ") + " ", options: .anchored)
                .replacingOccurrences(of: "-o cgameloop", with: "-o \(folder)/cgameloop")
            let build = try CAPI.run(["sh", "-c", line])
            try #require(build.status == 0, "\(line): \(build.stderr)")

            let wav = folder + "/out.wav"
            let result = try CAPI.run([folder + "/cgameloop", "--seconds", "2", "--record", wav], timeout: 120)
            #expect(result.status == 0 && !result.killedBySignal, "cgameloop: \(result.stdout)\n\(result.stderr)")
            #expect(result.stdout.contains("now playing: Gravity Wave Theme"), "\(result.stdout)")
            // Written whole, then renamed: no temporary file is left behind.
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["cgameloop", "out.wav"])

            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: wav)))
            try #require(
                bytes.count > 44 && Array(bytes[0..<4]) == Array("RIFF".utf8)
                    && Array(bytes[8..<12]) == Array("WAVE".utf8))
            func u16(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 }
            func u32(_ i: Int) -> Int { u16(i) | u16(i + 2) << 16 }
            #expect(u16(20) == 1 && u16(22) == 2 && u32(24) == 48_000 && u16(34) == 16)  // PCM, stereo, 48 kHz, 16-bit
            #expect(
                Array(bytes[36..<40]) == Array("data".utf8) && u32(40) == 2 * 48_000 * 4 && bytes.count == 44 + u32(40))
            var sum = 0.0
            var peak = 0
            for i in stride(from: 44, to: bytes.count - 1, by: 2) {
                let sample = Int(Int16(bitPattern: UInt16(u16(i))))
                sum += Double(sample * sample)
                peak = max(peak, abs(sample))
            }
            let rms = (sum / Double((bytes.count - 44) / 2)).squareRoot() / 32768
            #expect(rms > 0.02, "the recording is silent (RMS \(rms))")
            #expect(peak < 32767, "the recording clips")
        }
    }
}
