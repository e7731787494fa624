import Ambience
import AmbienceC
import CAmbience
import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// One version everywhere: ambience_version.h's macros (the source; ambience.h includes it), `Ambience.version`,
/// the C library's `ambience_version()` and `ambience_get_version()`, `ambience --version` and CHANGELOG.md's newest
/// entry. The installed `ambience.pc` and the soname are checked against the same macros by scripts/install-test.sh.
@Suite(.offTheCooperativePool) struct VersionTests {
    static func read(_ path: String) throws -> String {
        try String(contentsOfFile: BuildProducts.root + "/" + path, encoding: .utf8)
    }

    /// The version the header's three macros spell, read as text (not through the compiler that built the rest).
    static func headerVersion() throws -> AmbienceVersion {
        let header = try read("include/ambience_version.h")
        func number(_ part: String) throws -> Int {
            let pattern = try Regex("(?m)^#define AMBIENCE_VERSION_\(part) ([0-9]+)$")
            let match = try #require(
                header.firstMatch(of: pattern), "no AMBIENCE_VERSION_\(part) in ambience_version.h")
            let digits = try #require(match.output[1].substring)
            return try #require(Int(digits))
        }
        return AmbienceVersion(major: try number("MAJOR"), minor: try number("MINOR"), patch: try number("PATCH"))
    }

    @Test func everyPlaceSaysTheHeadersVersion() throws {
        let expected = try Self.headerVersion()
        #expect(Ambience.version == expected)
        // The C API's header takes its version from there: included, never a copy of the numbers.
        let apiHeader = try Self.read("include/ambience.h")
        #expect(apiHeader.contains("#include \"ambience_version.h\""))
        #expect(!apiHeader.contains("#define AMBIENCE_VERSION_MAJOR"))
        #expect(String(cString: AmbienceC.ambience_version()) == expected.description)
        var major: UInt32 = 99, minor: UInt32 = 99, patch: UInt32 = 99
        let versionStatus = AmbienceC.ambience_get_version(&major, &minor, &patch)
        #expect(versionStatus == AMBIENCE_OK)
        let reported: [UInt32] = [major, minor, patch]
        let wanted: [UInt32] = [expected.major, expected.minor, expected.patch].map { UInt32(clamping: $0) }
        #expect(reported == wanted)

        let command = try ToolRunner.run(["--version"])
        #expect(command.status == 0 && command.stderr.isEmpty)
        #expect(command.stdout == "ambience \(expected)\n")

        // The newest release comes first ("## 0.1.0 — 2026-12-03"), after at most an "## Unreleased" section of
        // changes that are on main but in no release yet.
        let changelog = try Self.read("CHANGELOG.md")
        let entries = changelog.split(separator: "\n").filter { $0.hasPrefix("## ") }
        let releases = entries.first == "## Unreleased" ? entries.dropFirst() : entries[...]
        let top = try #require(releases.first, "CHANGELOG.md has no ## entry")
        #expect(!releases.contains("## Unreleased"), "an Unreleased section below a release")
        #expect(
            top.dropFirst(3).split(separator: " ").first.map(String.init) == expected.description,
            "CHANGELOG.md's newest release is '\(top)', the header says \(expected)")
    }

    @Test func versionsOrderByTheirNumbers() {
        let versions = [
            AmbienceVersion(major: 1, minor: 0, patch: 0), AmbienceVersion(major: 0, minor: 10, patch: 0),
            AmbienceVersion(major: 0, minor: 9, patch: 12), AmbienceVersion(major: 0, minor: 9, patch: 2)
        ]
        #expect(versions.sorted().map(\.description) == ["0.9.2", "0.9.12", "0.10.0", "1.0.0"])
    }

    /// The C ABI (scripts/check-exports.sh, `nm -D` against the header) of the library this build made; and the
    /// check itself fails when the two disagree, both ways.
    @Test(.enabled(if: CAPI.libraryBuilt, Comment(rawValue: CAPI.missingLibrary)))
    func theLibraryExportsExactlyTheHeadersFunctions() throws {
        let library = CAPI.libraryFolder + "/libambience-c.so"
        let check = try CAPI.run(["bash", "scripts/check-exports.sh", library])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("declared and exported alike"))

        let folder = try CAPI.scratch()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let header = try Self.read("include/ambience.h")
        // A function the library exports that the header no longer declares.
        let withoutOne = folder + "/without.h"
        try header.replacingOccurrences(of: "const char *ambience_version(void);", with: "")
            .write(toFile: withoutOne, atomically: true, encoding: .utf8)
        let missing = try CAPI.run(["bash", "scripts/check-exports.sh", library, withoutOne])
        #expect(
            missing.status == 1 && missing.stderr.contains("not declared")
                && missing.stderr.contains("ambience_version"))
        // A declaration the library does not export.
        let withExtra = folder + "/extra.h"
        try (header + "\nambience_status ambience_not_implemented(void);\n").write(
            toFile: withExtra, atomically: true, encoding: .utf8)
        let extra = try CAPI.run(["bash", "scripts/check-exports.sh", library, withExtra])
        #expect(
            extra.status == 1 && extra.stderr.contains("not exported")
                && extra.stderr.contains("ambience_not_implemented"))
    }
}
