import AmbiencePlatform
import CDBus
import CPulse
import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceDesktop
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceOutput
@testable import AmbienceTestSupport

/// Each optional library hidden in turn (an empty file bind-mounted over it in a private mount namespace): the
/// command renders, plays on SDL's dummy driver and reports the library missing with the loader's reason, and the
/// engine inside the test binary shows that library's fallback.
///
/// On Debian 12, SDL2 2.26 itself links libpulse (Debian builds it without `--enable-pulseaudio-shared`), and
/// libpulse links libdbus-1, so there no program that links SDL2 starts without either: the loader refuses before
/// any of our code runs. The test finds such a library through ldd and readelf; the fallback's checks are then a known
/// issue (reported, not failed), and the loader's refusal is checked instead. Where SDL2 opens libpulse itself (its
/// default build, Fedora's and Arch's packages), they run as for SDL2_image.
@Suite(
    .offTheCooperativePool,
    .serialized,
    .enabled(if: Namespace.available, "needs `unshare -m` (root, or a user namespace): \(Namespace.unavailableReason)"),
    .enabled(
        if: !BuildProducts.sanitized,
        "the instrumented build adds the sanitizer's runtime to what loads; this is a test of the plain build's linking"
    ))
struct OptionalLibraryFallbackTests {
    /// The environment variable that tells the in-process half which library is hidden.
    static let hiddenVariable = "AMBIENCE_TEST_HIDDEN_LIBRARY"

    @Test(arguments: optionalLibraries)
    func theEngineRunsWithout(_ soname: String) throws {
        let real = try #require(try ELF.file(of: soname), "\(soname) is not in ldconfig's cache")
        // The libraries that link this one, so that the command cannot start without it (see the suite's comment).
        let blockers = try ELF.librariesNeeding(soname, loadedBy: ToolRunner.executable)
        let fixtures = try Fixtures()
        let empty = try fixtures.write("empty.so", bytes: [])
        let hidden = Namespace(hiding: real, behind: empty)

        try withKnownIssue(
            "\(blockers.joined(separator: ", ")) needs \(soname): the loader refuses to start a program that links it, before any of our code runs"
        ) {
            try checkFallback(without: soname, hidden: hidden, fixtures: fixtures)
        } when: {
            !blockers.isEmpty
        }

        if !blockers.isEmpty {
            // What a user of this system sees: the loader's one line, naming the library, and status 127.
            let result = try hidden.run([ToolRunner.executable, "session"])
            #expect(result.status == 127)
            #expect(result.stderr.contains("error while loading shared libraries"))
            #expect(result.stderr.contains("\(soname): file too short"), "\(result.stderr)")
        }
    }

    private func checkFallback(without soname: String, hidden: Namespace, fixtures: Fixtures) throws {
        // The capabilities report: this library missing, with the loader's reason; the others there.
        let session = try hidden.run([ToolRunner.executable, "session", "--json"])
        try #require(session.status == 0, "session: status \(session.status): \(session.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(session.stdout.utf8)) as? [String: Any])
        let capabilities = try #require(report["capabilities"] as? [String: Any])
        let libraries = try #require(capabilities["systemLibraries"] as? [[String: Any]])
        #expect(libraries.count == optionalLibraries.count)
        for library in libraries {
            let name = try #require(library["name"] as? String)
            #expect(library["available"] as? Bool == (name != soname), "\(name)")
            if name == soname {
                #expect((library["reason"] as? String)?.contains("file too short") == true, "\(library)")
            }
        }
        let missing = try #require(capabilities["missing"] as? [String])
        #expect(missing.contains { $0.contains("\(soname) could not be loaded") }, "\(missing)")
        if soname == "libdbus-1.so.3" { #expect(report["desktopBus"] as? Bool == false) }

        // An offline render through the whole engine.
        let music = try fixtures.sineWAV("music.wav", hz: 440, seconds: 1)
        let beep = try fixtures.sineWAV("beep.wav", hz: 880, seconds: 0.2)
        let out = fixtures.path("mix.wav")
        let render = try hidden.run([
            ToolRunner.executable, "render", "--out", out, "--seconds", "1", "--music", music, "--sfx", "\(beep)@0.5"
        ])
        #expect(render.status == 0, "render: \(render.stderr)")
        if render.status == 0 {
            let mix = Signal(try AudioFile.decode(out))
            #expect(mix.frames == 48_000)
            #expect(mix.rms(4_800..<19_200) > 0.1)
        }

        // Real-time playback on SDL's dummy driver, session rules and all.
        let play = try hidden.run([ToolRunner.executable, "play", music, "--seconds", "1"])
        #expect(play.status == 0, "play: \(play.stderr)")
        #expect(!play.stderr.contains("ambience:"), "\(play.stderr)")

        // The engine's own fallback, inside this test binary with the library hidden.
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let inside = try hidden.run(
            [
                binary, "--testing-library", "swift-testing", "--filter",
                "OptionalLibraryFallbackTests/fallbackInsideTheNamespace"
            ],
            environment: [Self.hiddenVariable: soname])
        #expect(inside.status == 0, "\(inside.stdout)\(inside.stderr)")
        // Swift Testing reports on stderr: exactly this one test ran, and passed.
        #expect(
            inside.stderrLines.contains { $0.contains("Test run with 1 test") && $0.contains("passed") },
            "\(inside.stderr)")
    }

    /// Runs only as the child of `theEngineRunsWithout`, with the library it names hidden.
    @Test(
        .enabled(
            if: ProcessInfo.processInfo.environment[hiddenVariable] != nil,
            "runs inside theEngineRunsWithout's namespace"))
    func fallbackInsideTheNamespace() throws {
        let soname = try #require(ProcessInfo.processInfo.environment[Self.hiddenVariable])
        // Desktop integration asked for, so that without libdbus-1 it is the library that is missing, not the wish.
        let engine = try AudioEngine(EngineConfiguration(output: .offline, desktopIntegration: true))
        defer { engine.shutdown() }
        engine.update()
        let library = try #require(engine.capabilities.systemLibraries.first { $0.name == soname })
        #expect(library.unavailableReason?.contains("file too short") == true)
        switch soname {
        case "libSDL2_image-2.0.so.0":
            // No artwork: the bundled cover is skipped, naming the library.
            let cover = [UInt8](
                try Data(contentsOf: URL(fileURLWithPath: BuildProducts.root + "/Assets/Music/cover.png")))
            #expect {
                _ = try MediaItemArtwork(data: cover, source: .file("cover.png"), name: "cover.png")
            } throws: { error in
                guard case .undecodable(_, let reason) = error as? ArtworkError else { return false }
                return reason.contains("libSDL2_image-2.0.so.0 could not be loaded")
            }
        case "libpulse.so.0":
            // No PulseAudio route detail: the monitor cannot be made; the engine's route monitor does without it.
            #expect(throws: DesktopError.self) { _ = try PulseAudioMonitor(appName: "ambience-test") }
        case "libdbus-1.so.3":
            // No desktop integration, as with no bus.
            #expect(throws: DesktopError.self) { _ = try DBusConnection(address: "unix:path=/nonexistent") }
            #expect(!engine.systemMusicPlayer.isAvailable)
        case "libopenmpt.so.0", "libfluidsynth.so.3":
            // No modules (or no MIDI): a file of that kind is named, with the library and its Debian package.
            let file = soname == "libopenmpt.so.0" ? MusicFormatFiles.modules[0] : MusicFormatFiles.midiFiles[0]
            let error = decodingError { try AudioFile.open(file) }
            guard case .unavailable(_, let reason) = error else {
                Issue.record("\(file): \(String(describing: error))")
                return
            }
            #expect(reason.contains("\(soname) could not be loaded") && reason.contains("install Debian's"))
        default:
            Issue.record("\(soname) is not one of the optional libraries")
        }
    }
}

/// A private mount namespace in which one file is hidden behind another (`mount --bind`), for the commands run in it.
struct Namespace {
    let hiding: String
    let behind: String

    /// Why `unshare -m` cannot be used here, or nil when it can.
    static let unavailableReason: String = {
        guard let result = try? ChildProcess.run(["unshare", "-m", "--propagation", "private", "true"], timeout: 10)
        else {
            return "unshare could not be started"
        }
        return result.status == 0 ? "" : String(decoding: result.stderr, as: UTF8.self)
    }()
    static var available: Bool { unavailableReason.isEmpty }

    /// Runs `arguments` in a new mount namespace with `hiding` covered; status 90 when the bind mount failed. SDL uses
    /// its dummy audio driver.
    func run(_ arguments: [String], environment: [String: String] = [:]) throws -> ToolRunner.Result {
        let script = #"mount --bind "$1" "$2" || exit 90; shift 2; exec "$@""#
        let output = try ChildProcess.run(
            ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", behind, hiding] + arguments,
            environment: childEnvironment(environment.merging(["SDL_AUDIODRIVER": "dummy"]) { $1 }),
            timeout: 120)
        let result = ToolRunner.Result(
            status: output.status, stdout: String(decoding: output.stdout, as: UTF8.self),
            stderr: String(decoding: output.stderr, as: UTF8.self), killedBySignal: output.killedBySignal,
            timedOut: output.timedOut)
        if result.status == 90 { Issue.record("mount --bind \(behind) \(hiding) failed: \(result.stderr)") }
        return result
    }
}
