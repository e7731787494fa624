import AmbiencePlatform
import CDBus
import CPulse
import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceLibrary

// The optional libraries (libpulse, libdbus-1, SDL2_image, libopenmpt, libfluidsynth) are opened at run time. These tests check the loader on
// its own, that nothing we build links them, and that the engine runs without each one: in a private mount namespace
// an empty file hides the library, as on a system that lacks it.

/// The libraries the engine opens at run time, by soname.
private let optionalLibraries = [
    "libSDL2_image-2.0.so.0", "libpulse.so.0", "libdbus-1.so.3", "libopenmpt.so.0", "libfluidsynth.so.3"
]

@Suite(.offTheCooperativePool) struct SharedLibraryTests {
    private typealias Math = @convention(c) (Double) -> Double

    @Test func aLibraryOpensAndItsFunctionsAreCalledThroughTheirPointers() throws {
        let libm = try SharedLibrary("libm.so.6")
        let cosine = unsafeBitCast(try libm.address(of: "cos"), to: Math.self)
        #expect(cosine(0) == 1)
        #expect(cosine(.pi) == -1)
        // A table is filled in the order of its names.
        let table = try libm.functions((Math, Math).self, names: "sqrt\nfabs\n")
        #expect(table.0(81) == 9)
        #expect(table.1(-2.5) == 2.5)
    }

    @Test func aMissingLibraryIsRefusedWithTheLoadersReason() {
        #expect {
            _ = try SharedLibrary("libambience-missing.so.9")
        } throws: { error in
            let failure = error as? SharedLibraryError
            return failure?.library == "libambience-missing.so.9" && failure?.function == nil
                && failure?.reason.contains("cannot open shared object file") == true
                && failure?.description.hasPrefix("libambience-missing.so.9 could not be loaded (") == true
        }
    }

    @Test func anEmptyFileIsNotALibrary() throws {
        let fixtures = try Fixtures()
        let empty = try fixtures.write("libempty.so.0", bytes: [])
        #expect {
            _ = try SharedLibrary(empty)
        } throws: { error in
            (error as? SharedLibraryError)?.reason.contains("file too short") == true
        }
    }

    @Test func aMissingFunctionFailsTheWholeTableByName() throws {
        let libm = try SharedLibrary("libm.so.6")
        #expect {
            _ = try libm.functions((Math, Math).self, names: "sqrt\nambience_no_such_function\n")
        } throws: { error in
            let failure = error as? SharedLibraryError
            return failure?.function == "ambience_no_such_function"
                && failure?.description.contains("has no ambience_no_such_function") == true
        }
    }

    @Test func aTableWhoseSizeDisagreesWithItsNamesIsRefused() throws {
        let libm = try SharedLibrary("libm.so.6")
        #expect(throws: SharedLibraryError.self) { _ = try libm.functions((Math, Math).self, names: "sqrt\n") }
        #expect(throws: SharedLibraryError.self) { _ = try libm.functions((Math, Math).self, names: "") }
    }

    /// Every name in the three C headers' lists is a function of its library here (a misspelt name would make the
    /// library count as missing).
    @Test func theEnginesTablesLoadOnThisSystem() throws {
        #expect(ModuleDecoder.library.failure == nil)
        #expect(MIDIDecoder.library.failure == nil)
        #expect(PulseAudioMonitor.library.failure == nil)
        #expect(DBusConnection.library.failure == nil)
        #expect(MediaItemArtwork.library.failure == nil)
        let engine = try AudioEngine(EngineConfiguration(output: .offline))
        defer { engine.shutdown() }
        let capabilities = engine.capabilities
        #expect(
            capabilities.systemLibraries.map(\.name) == [
                "libpulse.so.0", "libdbus-1.so.3", "libSDL2_image-2.0.so.0", "libopenmpt.so.0", "libfluidsynth.so.3"
            ])
        #expect(capabilities.systemLibraries.filter { !$0.isAvailable }.map(\.name) == [])
        #expect(!capabilities.missing.contains { $0.contains(".so") })
    }
}

/// The wrappers' own fallback, with a library that really cannot be loaded (another soname for the same table):
/// connecting throws `libraryUnavailable` with the loader's reason, which the route monitor and the desktop link
/// take as they take a missing server or bus.
@Suite(.offTheCooperativePool) struct MissingLibraryTests {
    static let pulseNames = String(cString: ambience_pulse_function_names())
    static let dbusNames = String(cString: ambience_dbus_function_names())

    @Test func withoutLibpulseThereIsNoMonitor() {
        let missing = OptionalLibrary<LibPulse>(
            name: "libpulse-missing.so.0", feature: "route detail", names: Self.pulseNames)
        #expect(missing.failure?.reason.contains("cannot open shared object file") == true)
        #expect {
            _ = try PulseAudioMonitor(appName: "ambience-test", library: missing)
        } throws: { error in
            guard case .libraryUnavailable(let detail) = error as? DesktopError else { return false }
            return detail.contains("libpulse-missing.so.0 could not be loaded (")
        }
    }

    @Test func withoutLibdbusThereIsNoConnection() {
        let missing = OptionalLibrary<LibDBus>(name: "libdbus-missing.so.3", feature: "desktop", names: Self.dbusNames)
        #expect {
            _ = try DBusConnection(
                address: ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] ?? "unix:path=/nonexistent",
                library: missing)
        } throws: { error in
            guard case .libraryUnavailable(let detail) = error as? DesktopError else { return false }
            return detail.contains("libdbus-missing.so.3 could not be loaded (")
        }
    }

    /// A library that opens but lacks a function the engine calls counts as unavailable, naming the function.
    @Test func aLibraryWithoutOneOfTheFunctionsIsUnavailable() {
        let pulse = OptionalLibrary<LibPulse>(name: "libm.so.6", feature: "route detail", names: Self.pulseNames)
        #expect(pulse.failure?.function == "pa_context_connect")
        #expect(pulse.failure?.description.hasPrefix("libm.so.6 has no pa_context_connect (") == true)
        let dbus = OptionalLibrary<LibDBus>(name: "libm.so.6", feature: "desktop", names: Self.dbusNames)
        #expect {
            _ = try DBusConnection(address: "unix:path=/nonexistent", library: dbus)
        } throws: { error in
            guard case .libraryUnavailable(let detail) = error as? DesktopError else { return false }
            return detail.contains("has no dbus_connection_add_filter")
        }
    }
}

/// Nothing the package builds names an optional library: no `NEEDED` entry, no undefined `pa_`, `dbus_`, `IMG_`,
/// `openmpt_` or `fluid_`
/// symbol (a direct call that slipped past the tables would leave one in the shared library, which the linker allows).
/// Nor SDL_mixer, which only the benchmark's comparisons open (the stand-in, which is an SDL_mixer, is not listed).
@Suite(.offTheCooperativePool) struct LinkedLibraryTests {
    let sdlMixer = "libSDL2_mixer-2.0.so.0"
    static let products = ["ambience", "libambience-c.so", "gravity-wave", "MixerStress"]

    @Test(arguments: products)
    func aProductDoesNotLinkTheOptionalLibraries(_ product: String) throws {
        let path = BuildProducts.folder + "/" + product
        try #require(FileManager.default.fileExists(atPath: path), "\(path) is not built")
        let needed = try ELF.needed(path)
        #expect(needed.contains("libSDL2-2.0.so.0"), "the check reads the right list: \(needed)")
        #expect(Set(needed).isDisjoint(with: optionalLibraries + [sdlMixer]), "\(product) links \(needed)")
        let undefined = try Fixtures.run("nm", ["-D", "--undefined-only", path]).split(separator: "\n")
            .compactMap { $0.split(separator: " ").last.map(String.init) }
        #expect(undefined.contains { $0.hasPrefix("SDL_") }, "the check reads the right list")
        let optional = ["pa_", "dbus_", "IMG_", "openmpt_", "fluid_", "new_fluid_", "delete_fluid_", "Mix_"]
        #expect(undefined.filter { name in optional.contains { name.hasPrefix($0) } } == [])
    }

    @Test func theTestBinaryDoesNotLinkThemEither() throws {
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        #expect(Set(try ELF.needed(binary)).isDisjoint(with: optionalLibraries + [sdlMixer]))
    }
}

/// Reading ELF dynamic sections through binutils' readelf.
enum ELF {
    /// The sonames a binary or library names as `NEEDED`.
    static func needed(_ path: String) throws -> [String] {
        try Fixtures.run("readelf", ["-d", "-W", path]).split(separator: "\n").compactMap { line in
            guard line.contains("(NEEDED)"), let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]")
            else { return nil }
            return String(line[line.index(after: open)..<close])
        }
    }

    /// The libraries `program` loads (ldd's list) that themselves need `soname`: the ones that make the loader refuse
    /// to start it without that library, whatever the program does.
    static func librariesNeeding(_ soname: String, loadedBy program: String) throws -> [String] {
        let loaded = try Fixtures.run("ldd", [program]).split(separator: "\n").compactMap { line -> String? in
            guard let arrow = line.range(of: "=> /") else { return nil }
            return line[line.index(before: arrow.upperBound)...].split(separator: " ").first.map(String.init)
        }
        var needing: [String] = []
        for path in loaded where URL(fileURLWithPath: path).lastPathComponent != soname {
            if try needed(path).contains(soname) { needing.append(URL(fileURLWithPath: path).lastPathComponent) }
        }
        return needing
    }

    /// The file the loader finds for `soname` (ldconfig's cache), with every symlink resolved.
    static func file(of soname: String) throws -> String? {
        let cache = try Fixtures.run("ldconfig", ["-p"])
        for line in cache.split(separator: "\n") where line.trimmingCharacters(in: .whitespaces).hasPrefix(soname + " ")
        {
            guard let arrow = line.range(of: "=> ") else { continue }
            let path = String(line[arrow.upperBound...])
            guard let resolved = realpath(path, nil) else { continue }
            defer { free(resolved) }
            return String(cString: resolved)
        }
        return nil
    }
}

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
            let file = soname == "libopenmpt.so.0" ? MusicFormatsTests.modules[0] : MusicFormatsTests.midiFiles[0]
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
