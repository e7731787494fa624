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

// The optional libraries (libpulse, libdbus-1, SDL2_image, libopenmpt, libfluidsynth) are opened at run time. These tests check the loader on
// its own, that nothing we build links them, and that the engine runs without each one: in a private mount namespace
// an empty file hides the library, as on a system that lacks it.

/// The libraries the engine opens at run time, by soname.
let optionalLibraries = [
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
