import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// Output that cannot lie (issue 32, class 6) and text that cannot act on the terminal (class 7), through the built
/// `ambience` as a child process.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct HonestOutputTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    /// `ambience ARGUMENTS` with stdout redirected by the shell: `>/dev/full`, or `>&-` (closed).
    func run(_ arguments: [String], stdout redirection: String) throws -> (status: Int32, stderr: String) {
        let output = try ChildProcess.run(
            ["/bin/sh", "-c", "exec \"$0\" \"$@\" \(redirection)", ToolRunner.executable] + arguments,
            environment: childEnvironment(), timeout: 60)
        #expect(!output.timedOut)
        return (output.status, String(decoding: output.stderr, as: UTF8.self))
    }

    func musicFolder() throws -> (folder: String, database: String) {
        let folder = fixtures.path("music")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        _ = try fixtures.sineOgg("music/one.ogg", seconds: 0.5, tags: ["TITLE=One", "ARTIST=Band"])
        _ = try fixtures.sineOgg("music/two.ogg", seconds: 0.5, tags: ["TITLE=Two", "ARTIST=Band"])
        return (folder, fixtures.path("index.sqlite"))
    }

    // MARK: Class 6: checked writes to stdout

    @Test(arguments: [">/dev/full", ">&-"])
    func everyPrintingCommandFailsWhenStdoutCannotBeWritten(redirection: String) throws {
        let (folder, database) = try musicFolder()
        let reason = redirection == ">&-" ? "Bad file descriptor" : "No space left on device"
        // The scan itself succeeds; its report cannot be written, and the command says so.
        let scan = try run(["library", "scan", folder, "--db", database], stdout: redirection)
        #expect(scan.status == 1, "\(scan.stderr)")
        #expect(scan.stderr.hasSuffix("ambience: stdout: \(reason)\n"), "\(scan.stderr)")
        let wav = try fixtures.sineWAV("tone.wav", seconds: 0.2)
        for arguments in [
            ["info", wav], ["info", wav, "--json"], ["library", "query", "--db", database, "--json"],
            ["library", "query", "--db", database], ["--version"], ["render", "--help"]
        ] {
            let result = try run(arguments, stdout: redirection)
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr == "ambience: stdout: \(reason)\n", "\(arguments)")
        }
        // With stdout closed, the index that took its number would have received the report: it is intact.
        let query = try ToolRunner.run(["library", "query", "--db", database, "--json"])
        #expect(query.status == 0, "\(query.stderr)")
        let items = try #require(try JSONSerialization.jsonObject(with: Data(query.stdout.utf8)) as? [[String: Any]])
        #expect(items.count == 4)  // the two Ogg files and the WAVs they were encoded from
    }

    @Test func playStopsWhenItsOutputCannotBeWritten() throws {
        // `play` prints as it goes; the first line that cannot be written ends it with an error, not 30 s later
        // with success.
        let wav = try fixtures.sineWAV("long.wav", seconds: 30)
        let output = try ChildProcess.run(
            ["/bin/sh", "-c", "exec \"$0\" \"$@\" >/dev/full", ToolRunner.executable, "play", wav, "--seconds", "30"],
            environment: childEnvironment(["SDL_AUDIODRIVER": "dummy"]), timeout: 20)
        #expect(!output.timedOut)
        #expect(output.status == 1)
        let stderr = String(decoding: output.stderr, as: UTF8.self)
        #expect(stderr.hasSuffix("ambience: stdout: No space left on device\n"), "\(stderr)")
    }

    @Test func renderWithMusicThatCannotBeReadFailsLikeABadSoundEffect() throws {
        let folder = fixtures.path("a folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let cases: [(String, String)] = [
            (fixtures.path("missing.ogg"), "cannot read (No such file or directory)"),
            (folder, "cannot read (Is a directory)"),
            ("/dev/urandom", "cannot read (Invalid argument)")
        ]
        for (music, reason) in cases {
            let out = fixtures.path("mix.wav")
            let result = try ToolRunner.run(["render", "--out", out, "--seconds", "2", "--music", music])
            #expect(result.status == 1, "\(music)")
            #expect(result.stderrLines == ["ambience: \(music): \(reason)"], "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out))
            let sfx = try ToolRunner.run(["render", "--out", out, "--seconds", "2", "--sfx", "\(music)@0"])
            #expect(sfx.status == result.status && sfx.stderr == result.stderr)
        }
    }

    // MARK: Class 7: text shown in a terminal

    /// Everything a terminal acts on: OSC (title), CSI (clear), BEL, a newline forging a line, C1 CSI, RLO.
    static let hostile = "T\u{1B}]0;owned\u{07}\u{1B}[2J\nambience: forged\u{9B}31m\u{202E}gnp.exe"

    func assertInert(_ text: String, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        // Newlines end the tool's own lines and tabs separate its columns; nothing else may reach the terminal.
        let unsafe = text.unicodeScalars.filter { TerminalText.isUnsafe($0) && $0 != "\n" && $0 != "\t" }
        #expect(unsafe.isEmpty, comment, sourceLocation: sourceLocation)
        #expect(
            !text.split(separator: "\n").contains { $0.hasPrefix("ambience: forged") }, comment,
            sourceLocation: sourceLocation)
    }

    @Test func infoShowsHostileTagsAndNamesEscapedAndJSONExact() throws {
        let ogg = try fixtures.sineOgg("song.ogg", seconds: 0.2, tags: ["TITLE=\(Self.hostile)", "ARTIST=Band"])
        let named = fixtures.path("a\u{1B}[2J\nb.ogg")
        try FileManager.default.copyItem(atPath: ogg, toPath: named)
        let text = try ToolRunner.run(["info", named])
        #expect(text.status == 0, "\(text.stderr)")
        assertInert(text.stdout)
        let lines = text.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first.map(String.init) == TerminalText.shown(named))
        #expect(lines.contains { $0 == "  title        " + TerminalText.shown(Self.hostile) })

        let json = try ToolRunner.run(["info", named, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["title"] as? String == Self.hostile)
    }

    @Test func anErrorAboutAHostileNameIsOneLine() throws {
        let name = fixtures.path("x\nambience: forged\u{1B}]0;t\u{07}.ogg")
        let result = try ToolRunner.run(["info", name])
        #expect(result.status == 1)
        #expect(result.stderrLines.count == 1, "\(result.stderr)")
        #expect(
            result.stderrLines.first.map(String.init)
                == "ambience: \(TerminalText.shown(name)): cannot read (No such file or directory)")
        assertInert(result.stderr)
    }

    @Test func libraryTextOutputShowsHostileNamesEscaped() throws {
        let folder = fixtures.path("music")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let ogg = try fixtures.sineOgg("src.ogg", seconds: 0.2, tags: ["ARTIST=Band"])
        try FileManager.default.copyItem(atPath: ogg, toPath: folder + "/\u{1B}]0;owned\u{07}\nambience: forged.ogg")
        let database = fixtures.path("index.sqlite")
        let scan = try ToolRunner.run(["library", "scan", folder, "--db", database])
        #expect(scan.status == 0, "\(scan.stderr)")
        assertInert(scan.stdout)
        let query = try ToolRunner.run(["library", "query", "--db", database])
        #expect(query.status == 0, "\(query.stderr)")
        assertInert(query.stdout, "\(query.stdout)")
        #expect(query.stdout.split(separator: "\n").count == 1)
        let groups = try ToolRunner.run(["library", "query", "--db", database, "--group", "title"])
        assertInert(groups.stdout, "\(groups.stdout)")
    }

    @Test func playShowsHostileTagsAndNamesEscaped() throws {
        let ogg = try fixtures.sineOgg("song.ogg", seconds: 0.3, tags: ["TITLE=\(Self.hostile)", "ARTIST=A\nB"])
        let result = try ToolRunner.run(
            ["play", ogg, "--seconds", "1"], environment: ["SDL_AUDIODRIVER": "dummy"], timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("now playing: \(TerminalText.shown(Self.hostile)) by A\\nB"), "\(result.stdout)")
        assertInert(result.stdout)
        // A file that is gone is refused before playing, in one inert line.
        let gone = fixtures.path("gone\u{1B}]0;owned\u{07}\nambience: forged.ogg")
        let refused = try ToolRunner.run(
            ["play", gone, "--seconds", "1"], environment: ["SDL_AUDIODRIVER": "dummy"], timeout: 30)
        #expect(refused.status == 1)
        #expect(refused.stderrLines.count == 1, "\(refused.stderr)")
        assertInert(refused.stderr)
    }

    @Test func theScanProgressOnATerminalShowsAHostileNameEscaped() throws {
        let folder = fixtures.path("music")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let ogg = try fixtures.sineOgg("src.ogg", seconds: 0.2)
        try FileManager.default.copyItem(atPath: ogg, toPath: folder + "/\u{1B}]0;owned\u{07}.ogg")
        // `script` gives the command a terminal, so that it draws its progress bar (its own ESC [K included).
        let command = "'\(ToolRunner.executable)' library scan '\(folder)' --db '\(fixtures.path("index.sqlite"))'"
        let output = try ChildProcess.run(["script", "-qec", command, "/dev/null"], timeout: 60)
        let text = String(decoding: output.stdout, as: UTF8.self)
        #expect(output.status == 0, "\(text)")
        #expect(text.contains("\\u{1B}]0;owned"), "\(text)")
        #expect(!text.contains("\u{1B}]") && !text.contains("\u{07}"), "\(text)")
    }

    @Test(arguments: [
        ("plain ünïcödé, עברית with its mark \u{200F}", "plain ünïcödé, עברית with its mark \u{200F}"),
        ("a\nb\rc\td", "a\\nb\\rc\\td"), ("\u{1B}[2J", "\\u{1B}[2J"), ("\u{7}\u{0}\u{7F}", "\\u{7}\\u{0}\\u{7F}"),
        ("\u{85}\u{9B}", "\\u{85}\\u{9B}"), ("\u{202E}x\u{2066}", "\\u{202E}x\\u{2066}"),
        ("\u{2028}\u{2029}", "\\u{2028}\\u{2029}")
    ])
    func theSanitizerEscapesWhatATerminalActsOnAndKeepsTheRest(text: String, shown: String) {
        #expect(TerminalText.shown(text) == shown)
    }
}
