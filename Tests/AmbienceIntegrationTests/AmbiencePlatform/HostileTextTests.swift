import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// Names and tags from outside, where the earlier round did not reach (issue 32, class 7): JSON that escapes every
/// scalar a terminal or a JavaScript parser would act on, and names exactly as the file system holds them; and the
/// remaining text paths (the library bench, the demo's report and errors) through `TerminalText`.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct HostileTextTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    /// File names as bytes: escape sequences, a forged line, C1 controls, separators, DEL, and one that is not UTF-8.
    static let names: [[UInt8]] = [
        Array("esc \u{1B}[2J\u{1B}]0;owned\u{07}.ogg".utf8), Array("nl\nambience: forged.ogg".utf8),
        Array("c1 \u{85}\u{9B}31m.ogg".utf8), Array("sep \u{2028}\u{2029} del \u{7F} rlo \u{202E}.ogg".utf8),
        Array("tab\tcr\r.ogg".utf8), Array("latin-1 caf".utf8) + [0xE9, 0x20, 0xFF] + Array(".ogg".utf8)
    ]
    static let title = "t\u{1B}]0;x\u{07}\u{85}\u{2028}\u{7F}\u{202E}end"
    /// The title as the index stores it: what a terminal acts on became a space.
    static let storedTitle = "t ]0;x     end"

    /// A library folder holding one tagged Ogg under each of `names`, scanned into `index.sqlite`.
    func hostileLibrary() throws -> (folder: [UInt8], database: String) {
        let folder = try fixtures.folder("music")
        let ogg = try fixtures.sineOgg("src.ogg", seconds: 0.2, tags: ["TITLE=\(Self.title)", "ARTIST=a\nb\u{2029}c"])
        let bytes = try fixtures.bytes(of: ogg)
        for name in Self.names {
            let file = try FileDescriptor(
                opening: Array(folder.utf8) + [UInt8(ascii: "/")] + name, flags: O_WRONLY | O_CREAT | O_EXCL)
            try bytes.withUnsafeBytes { try file.write($0) }
            try file.close()
        }
        let database = fixtures.path("index.sqlite")
        let scan = try ToolRunner.run(["library", "scan", folder, "--db", database])
        try #require(scan.status == 0, "\(scan.stderr)")
        return (Array(folder.utf8), database)
    }

    @Test func libraryQueryJSONEscapesEveryUnsafeScalarAndKeepsNamesExact() throws {
        let (folder, database) = try hostileLibrary()
        let run = try ChildProcess.run(
            [ToolRunner.executable, "library", "query", "--db", database, "--json"], timeout: 60)
        try #require(run.status == 0, "\(String(decoding: run.stderr, as: UTF8.self))")
        let raw = [UInt8](run.stdout)

        // Valid UTF-8, one line, and nothing in it that a terminal or a JavaScript parser acts on.
        let text = try #require(String(validating: raw, as: UTF8.self), "not UTF-8")
        #expect(text.hasSuffix("\n"))
        let unsafe = text.dropLast().unicodeScalars.filter(TerminalText.isUnsafe)
        #expect(unsafe.isEmpty, "raw \(unsafe.map { String($0.value, radix: 16) })")

        // Python's strict parser takes it.
        let saved = try fixtures.write("query.json", bytes: raw)
        let python = try ChildProcess.run(
            ["/bin/sh", "-c", "/usr/bin/python3 -c 'import json,sys; json.load(sys.stdin)' < \"$0\"", saved],
            timeout: 30)
        #expect(python.status == 0, "\(String(decoding: python.stderr, as: UTF8.self))")

        // Every tag comes back exactly; every path names its file, through `pathBytes` where it is not UTF-8.
        let items = try #require(try JSONSerialization.jsonObject(with: Data(raw)) as? [[String: Any]])
        let oggs = items.filter { ($0["path"] as? String)?.hasSuffix(".ogg") == true }
        #expect(oggs.count == Self.names.count)
        #expect(oggs.allSatisfy { $0["title"] as? String == Self.storedTitle })
        var found: [[UInt8]] = []
        for item in oggs {
            let path = try #require(item["path"] as? String)
            if let numbers = item["pathBytes"] as? [Int] {
                #expect(String(validating: numbers.map { UInt8($0) }, as: UTF8.self) == nil, "only when not UTF-8")
                #expect(path == String(decoding: numbers.map { UInt8($0) }, as: UTF8.self), "readable form")
                found.append(numbers.map { UInt8($0) })
            } else {
                found.append(Array(path.utf8))
            }
        }
        let expected = Self.names.map { folder + [UInt8(ascii: "/")] + $0 }
        #expect(Set(found) == Set(expected))
    }

    @Test func infoJSONEscapesEveryUnsafeScalarAndKeepsTagsExact() throws {
        let ogg = try fixtures.sineOgg("song.ogg", seconds: 0.2, tags: ["TITLE=\(Self.title)", "ARTIST=a\nb\u{2029}c"])
        let run = try ChildProcess.run([ToolRunner.executable, "info", ogg, "--json"], timeout: 60)
        try #require(run.status == 0, "\(String(decoding: run.stderr, as: UTF8.self))")
        let text = try #require(String(validating: [UInt8](run.stdout), as: UTF8.self))
        let unsafe = text.dropLast().unicodeScalars.filter(TerminalText.isUnsafe)
        #expect(unsafe.isEmpty, "raw \(unsafe.map { String($0.value, radix: 16) })")
        let object = try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any])
        #expect(object["title"] as? String == Self.title)
        #expect(object["artist"] as? String == "a\nb\u{2029}c")
    }

    @Test func theLibraryBenchShowsAHostileFolderEscaped() throws {
        let folder = fixtures.path("bench \u{1B}]0;owned\u{07}\nambience: forged")
        let run = try ToolRunner.run(["library", "bench", "--files", "3", "--dir", folder], timeout: 120)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains(TerminalText.shown(folder) + "/music"), "\(run.stdout)")
        expectInert(run.stdout)
    }

    @Test func theDemosReportAndErrorsShowHostilePathsEscaped() throws {
        let assets = BuildProducts.root + "/Assets"
        let record = fixtures.path("take \u{1B}]0;owned\u{07}\nambience: forged.wav")
        let run = try ChildProcess.run(
            [BuildProducts.gravityWave, "--headless", "--assets", assets, "--seconds", "1", "--record", record],
            environment: childEnvironment(["SDL_AUDIODRIVER": "dummy"]), timeout: 60)
        let stdout = String(decoding: run.stdout, as: UTF8.self)
        #expect(run.status == 0, "\(String(decoding: run.stderr, as: UTF8.self))")
        #expect(stdout.contains("  recorded   \(TerminalText.shown(record))"), "\(stdout)")
        expectInert(stdout)

        // A folder that cannot be made: the error names the path, in one inert line.
        let plain = try fixtures.write("plain", bytes: Array("x".utf8))
        let refused = try ChildProcess.run(
            [
                BuildProducts.gravityWave, "--headless", "--assets", assets, "--seconds", "1", "--record",
                plain + "/\u{1B}[2J\nambience: forged/take.wav"
            ], environment: childEnvironment(["SDL_AUDIODRIVER": "dummy"]), timeout: 60)
        let stderr = String(decoding: refused.stderr, as: UTF8.self)
        #expect(refused.status == 1, "\(stderr)")
        #expect(stderr.split(separator: "\n").count == 1, "\(stderr)")
        expectInert(stderr)
    }

    /// Nothing but the tool's own newlines and tabs acts on the terminal, and no line is forged.
    func expectInert(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let unsafe = text.unicodeScalars.filter { TerminalText.isUnsafe($0) && $0 != "\n" && $0 != "\t" }
        #expect(unsafe.isEmpty, "\(text)", sourceLocation: sourceLocation)
        #expect(
            !text.split(separator: "\n").contains { $0.hasPrefix("ambience: forged") }, sourceLocation: sourceLocation)
    }
}
