import AmbienceHost
import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport
@testable import GravityWaveCore

/// The game in English and German: the gettext catalog is complete and compiled from its source, the language
/// follows LANG/LC_MESSAGES, and the built game, driven through every screen in an Xvfb window, draws each one in
/// the user's language. The screenshots stay in `.build/test-artifacts/gravity-wave/<language>/`.
extension GravityWaveTests {
    static let locale = BuildProducts.root + "/Assets/locale"
    static let artifacts = BuildProducts.root + "/.build/test-artifacts/gravity-wave"

    @Test func theLanguageFollowsLCAllThenLCMessagesThenLANG() {
        #expect(Localization.messagesLocale(environment: ["LANG": "de_DE.UTF-8"]) == "de_DE")
        #expect(
            Localization.messagesLocale(environment: ["LANG": "en_GB.UTF-8", "LC_MESSAGES": "de_AT.UTF-8@euro"])
                == "de_AT")
        #expect(
            Localization.messagesLocale(environment: ["LC_ALL": "fr_FR", "LC_MESSAGES": "de_DE", "LANG": "de_DE"])
                == "fr_FR")
        #expect(Localization.messagesLocale(environment: ["LC_ALL": "", "LANG": "de_DE.UTF-8"]) == "de_DE")
        #expect(Localization.messagesLocale(environment: ["LC_ALL": "C.UTF-8", "LANG": "de_DE.UTF-8"]) == nil)
        #expect(Localization.messagesLocale(environment: ["LANG": "POSIX"]) == nil)
        #expect(Localization.messagesLocale(environment: [:]) == nil)
    }

    /// Every string the game passes to `localized` (extracted by xgettext, as a translator would) has a German
    /// translation with the same `{n}` placeholders, and the committed .mo is exactly what msgfmt makes of the .po.
    @Test func theGermanCatalogIsCompleteAndIsTheCompiledPO() throws {
        let core = BuildProducts.root + "/Demos/GravityWave/Core"
        let sources = try FileManager.default.contentsOfDirectory(atPath: core).filter { $0.hasSuffix(".swift") }
            .sorted()
            .map { "\(core)/\($0)" }.filter {
                (try? String(contentsOfFile: $0, encoding: .utf8))?.contains("localized(\"") == true
            }
        let template = fixtures.path("gravity-wave.pot")
        _ = try Fixtures.run(
            "xgettext",
            ["-L", "C", "--keyword=localized", "--from-code=UTF-8", "--no-location", "-o", template] + sources)
        let extracted = Self.messages(in: try String(contentsOfFile: template, encoding: .utf8)).map(\.id)
        #expect(
            extracted.count > 40 && extracted.contains("Play App Sound")
                && extracted.contains("Now Playing: {1} by {2}"))
        // msgcmp: every message of the template is translated in de.po.
        _ = try Fixtures.run("msgcmp", ["\(Self.locale)/de.po", template])

        let german = Dictionary(
            uniqueKeysWithValues: Self.messages(in: try String(contentsOfFile: "\(Self.locale)/de.po", encoding: .utf8))
                .map { ($0.id, $0.text) })
        for id in extracted {
            let text = try #require(german[id], "\(id) is not in de.po")
            #expect(!text.isEmpty)
            #expect(Self.placeholders(id) == Self.placeholders(text), "\(id) → \(text)")
        }
        let compiled = fixtures.path("gravity-wave.mo")
        _ = try Fixtures.run("msgfmt", ["--check", "-o", compiled, "\(Self.locale)/de.po"])
        #expect(
            try fixtures.bytes(of: compiled) == fixtures.bytes(of: "\(Self.locale)/de/LC_MESSAGES/gravity-wave.mo"),
            "Assets/locale/de/LC_MESSAGES/gravity-wave.mo is stale: run msgfmt on Assets/locale/de.po")
    }

    /// msgid/msgstr pairs of a .po or .pot (one-line strings, as ours are), the header left out.
    static func messages(in catalog: String) -> [(id: String, text: String)] {
        func unquote(_ line: Substring, after prefix: String) -> String {
            String(line.dropFirst(prefix.count).dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
                .replacingOccurrences(of: "\\\\", with: "\\")
        }
        var result: [(String, String)] = []
        var id: String?
        for line in catalog.split(separator: "\n") {
            if line.hasPrefix("msgid ") { id = unquote(line, after: "msgid ") }
            if line.hasPrefix("msgstr "), let current = id, !current.isEmpty {
                result.append((current, unquote(line, after: "msgstr ")))
            }
        }
        return result
    }

    static func placeholders(_ text: String) -> [String] {
        (1...9).map { "{\($0)}" }.filter { text.contains($0) }
    }

    // MARK: Every screen in both languages

    struct Language {
        var code: String
        var environment: [String: String]
        /// Texts the screenshots must show, by shot, with where they are drawn.
        var addMusic, showMusic, playbackPaused, paused, musicEnded: String
    }

    static let english = Language(
        code: "en", environment: ["LANG": "en_US.UTF-8"], addMusic: "Add Music", showMusic: "Show Music",
        playbackPaused: "Playback Paused", paused: "Paused",
        musicEnded: "Music ended. Press P to play it again, or M to pick more")
    static let german = Language(
        code: "de", environment: ["LANG": "de_DE.UTF-8"], addMusic: "Musik hinzufügen", showMusic: "Musik zeigen",
        playbackPaused: "Wiedergabe angehalten", paused: "Pausiert",
        musicEnded: "Die Musik ist zu Ende. P spielt sie noch einmal, M wählt neue")

    /// The script that takes the built game through its screens, and the screenshot each step leaves.
    static let screens: [(frame: Int, step: String)] = [
        (30, "shot=01-playing.png"), (35, "key=x"), (40, "shot=02-app-sound-playing.png"),
        (60, "key=escape"), (70, "shot=03-menu.png"), (75, "key=escape"),
        (80, "key=x"), (85, "route-change"), (95, "shot=04-route-change-alert.png"), (100, "key=escape"),
        (105, "shot=05-after-stop.png"), (110, "key=p"), (115, "key=n"), (120, "seek=33.3"),
        (190, "shot=06-music-ended.png"), (195, "key=m"), (250, "shot=07-picker.png"), (255, "key=enter"),
        (260, "key=tab"),
        (275, "shot=08-playing-picked-song.png"), (280, "key=m"), (290, "shot=09-show-music.png"), (295, "key=escape"),
        (300, "interrupt=begin"), (310, "shot=10-interrupted.png"), (320, "interrupt=end")
    ]

    /// Runs `gravity-wave` in an Xvfb window under `language`, with `steps`; returns its summary text.
    func runInXvfb(
        _ language: Language, assets: String, seconds: Double, steps: [(frame: Int, step: String)], into folder: String
    ) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try fixtures.libraryOgg("Music/picked.ogg", ["TITLE=Picked Song", "ARTIST=Pat"])
        var environment = childEnvironment(
            [
                "HOME": fixtures.path("home-\(language.code)"), "XDG_MUSIC_DIR": fixtures.path("Music"),
                "XDG_CACHE_HOME": fixtures.path("cache-\(language.code)"),
                "XDG_CONFIG_HOME": fixtures.path("config-\(language.code)"),
                "DBUS_SESSION_BUS_ADDRESS": ""
            ].merging(language.environment) { $1 })
        environment["LC_ALL"] = nil
        environment["LC_MESSAGES"] = nil
        environment["LANGUAGE"] = nil
        environment["SDL_AUDIODRIVER"] = environment["SDL_AUDIODRIVER"] ?? "dummy"
        environment["SDL_VIDEODRIVER"] = nil
        if let options = environment["ASAN_OPTIONS"] { environment["ASAN_OPTIONS"] = options + " detect_leaks=0" }
        let arguments = steps.flatMap {
            ["--at", "\($0.frame):" + ($0.step.hasPrefix("shot=") ? "shot=\(folder)/\($0.step.dropFirst(5))" : $0.step)]
        }
        let run = try ChildProcess.run(
            [
                "xvfb-run", "-a", "-s", "-screen 0 1024x768x24", BuildProducts.gravityWave, "--seconds", "\(seconds)",
                "--assets", assets
            ] + arguments, environment: environment, timeout: 120)
        let text = String(decoding: run.stdout, as: UTF8.self)
        #expect(
            run.status == 0 && !run.timedOut, "\(text)\n\(String(decoding: run.stderr.suffix(3000), as: UTF8.self))")
        return text
    }

    @Test(arguments: [english, german])
    func everyScreenIsDrawnInTheUsersLanguageInAnXvfbWindow(language: Language) throws {
        guard FileManager.default.isExecutableFile(atPath: BuildProducts.gravityWave) else {
            Issue.record("\(BuildProducts.gravityWave) is missing: build the package (swift build) before the tests")
            return
        }
        let folder = "\(Self.artifacts)/\(language.code)"
        try? FileManager.default.removeItem(atPath: folder)
        let summary = try runInXvfb(
            language, assets: BuildProducts.assets, seconds: 5.6, steps: Self.screens, into: folder)
        for (_, step) in Self.screens where step.hasPrefix("shot=") {
            #expect(
                FileManager.default.fileExists(atPath: "\(folder)/\(step.dropFirst(5))"),
                "\(step) was not taken: \(summary)")
        }
        #expect(summary.contains("[\(language.showMusic)]"), "\(summary)")

        // At launch, with no soundtrack to start: the instructions.
        let quiet = fixtures.path("quiet-assets")
        try FileManager.default.createDirectory(atPath: quiet + "/Music", withIntermediateDirectories: true)
        for part in ["SFX", "locale"] where !FileManager.default.fileExists(atPath: "\(quiet)/\(part)") {
            try FileManager.default.createSymbolicLink(
                atPath: "\(quiet)/\(part)", withDestinationPath: "\(BuildProducts.assets)/\(part)")
        }
        let launch = try runInXvfb(
            language, assets: quiet, seconds: 0.6, steps: [(20, "shot=00-launch-instructions.png")], into: folder)
        let instructions =
            language.code == "de"
            ? "P spielt die Musik des Spiels, M fügt deine eigene hinzu"
            : "Press P to play the game's music, or M to add your own"
        #expect(launch.contains("music      \(instructions) (stopped)"), "\(launch)")

        // The text is in the pictures: each label where the game draws it, matched against the same words drawn in
        // the same font, and not against the other language's words.
        let other = language.code == "de" ? Self.english : Self.german
        let hudButton = Rect(132, 556, 164, 34), alert = GravityWave.alertPanel, menu = GravityWave.menuPanel
        let checks:
            [(shot: String, mine: String, theirs: String, at: Point, size: Int, anchor: TextAnchor, region: Rect)] = [
                (
                    "00-launch-instructions", instructions,
                    other.code == "de"
                        ? "P spielt die Musik des Spiels, M fügt deine eigene hinzu"
                        : "Press P to play the game's music, or M to add your own", Point(50, 22), 16, .centerLeft,
                    Rect(44, 4, 640, 36)
                ),
                ("01-playing", language.addMusic, other.addMusic, hudButton.center, 16, .center, hudButton),
                (
                    "03-menu", language.paused, other.paused, Point(menu.center.x, menu.y + 14), 22, .topCenter,
                    Rect(menu.x, menu.y, menu.width, 44)
                ),
                (
                    "04-route-change-alert", language.playbackPaused, other.playbackPaused,
                    Point(alert.center.x, alert.y + 14), 22, .topCenter,
                    Rect(alert.x, alert.y, alert.width, 44)
                ),
                (
                    "06-music-ended", language.musicEnded, other.musicEnded, Point(50, 22), 16, .centerLeft,
                    Rect(44, 4, 640, 36)
                ),
                (
                    "09-show-music", language.addMusic, other.addMusic,
                    Rect(GravityWave.queuePanel.maxX - 340, GravityWave.queuePanel.maxY - 52, 190, 36).center,
                    16, .center, Rect(GravityWave.queuePanel.maxX - 340, GravityWave.queuePanel.maxY - 52, 190, 36)
                )
            ]
        for check in checks {
            let shot = try Self.decodePNG("\(folder)/\(check.shot).png")
            // Inside the frames the buttons and panels have; the words drawn on the background the shot has there.
            let region = check.region.insetBy(3, 3)
            let background = shot.color(x: Int(region.x) + 1, y: Int(region.y) + 1)
            let drawn = Self.textPixels(shot, in: region)
            let mine = try Self.textPixels(
                of: check.mine, size: check.size, at: check.at, anchor: check.anchor, on: background, in: region)
            let theirs = try Self.textPixels(
                of: check.theirs, size: check.size, at: check.at, anchor: check.anchor, on: background, in: region)
            #expect(
                Self.overlap(drawn, mine) > 0.8,
                "\(check.shot): '\(check.mine)' is not drawn (\(Self.overlap(drawn, mine)))")
            #expect(
                Self.overlap(drawn, theirs) < 0.6,
                "\(check.shot): '\(check.theirs)' is drawn (\(Self.overlap(drawn, theirs)))")
        }
    }

    /// The bright pixels (text) of `picture` inside `region`.
    static func textPixels(_ picture: Picture, in region: Rect) -> Set<Int> {
        var found = Set<Int>()
        for y in Int(region.y)..<Int(region.maxY) {
            for x in Int(region.x)..<Int(region.maxX) {
                let c = picture.color(x: x, y: y)
                if Int(c.red) + Int(c.green) + Int(c.blue) > 450 && c.red > 120 { found.insert(y * 960 + x) }
            }
        }
        return found
    }

    /// The pixels `text` covers when drawn in DejaVu Sans at `size` as the game draws it.
    static func textPixels(
        of text: String, size: Int, at point: Point, anchor: TextAnchor, on background: Color,
        in region: Rect
    ) throws -> Set<Int> {
        let canvas = try Canvas(offscreenWidth: 960, height: 600)
        canvas.clear(background.withAlpha(255))
        canvas.drawText(text, at: point, font: try Font(size: size), color: .white, anchor: anchor)
        return textPixels(try #require(canvas.readPixels()), in: region)
    }

    /// Intersection over union, allowing the picture to sit a pixel off in either direction.
    static func overlap(_ a: Set<Int>, _ b: Set<Int>) -> Double {
        guard !a.isEmpty || !b.isEmpty else { return 1 }
        var best = 0.0
        for dy in -1...1 {
            for dx in -1...1 {
                let shifted = Set(b.map { $0 + dy * 960 + dx })
                best = max(best, Double(a.intersection(shifted).count) / Double(a.union(shifted).count))
            }
        }
        return best
    }
}
