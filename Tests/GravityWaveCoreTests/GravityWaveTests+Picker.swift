import AmbienceHost
import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport
@testable import GravityWaveCore

/// The game's picker browses like the iPod's: tabs, drill-down and back, "add all", the filter and the A–Z index,
/// driven headless through the game's own input, and drawn in an Xvfb window in English and German.
extension GravityWaveTests {
    /// Ann's album "First" (two songs, track order not title order), Bob's "Second", Cat's "Third".
    func makePickerLibrary() throws {
        try fixtures.libraryOgg("Music/ann/2.ogg", ["TITLE=Alpha Song", "ARTIST=Ann", "ALBUM=First", "TRACKNUMBER=2"])
        try fixtures.libraryOgg("Music/ann/1.ogg", ["TITLE=Another Song", "ARTIST=Ann", "ALBUM=First", "TRACKNUMBER=1"])
        try fixtures.libraryOgg("Music/bob.ogg", ["TITLE=Beta Song", "ARTIST=Bob", "ALBUM=Second"])
        try fixtures.libraryOgg("Music/cat.ogg", ["TITLE=Gamma Tune", "ARTIST=Cat", "ALBUM=Third"])
    }

    func key(_ game: GravityWave, _ key: Key) {
        game.handle(.keyDown(key, isRepeat: false))
        game.handle(.keyUp(key))
    }

    func click(_ game: GravityWave, _ action: GravityWave.Action) throws {
        let control = try #require(game.pickerElements().first { $0.action == action }, "\(action) is not shown")
        game.handle(.mouseDown(control.rect.center, button: 1))
        game.handle(.mouseUp(control.rect.center, button: 1))
    }

    @Test func pickerBrowsesByArtistDrillsDownAddsAllFiltersAndJumpsHeadless() throws {
        try makePickerLibrary()
        let library = try MediaLibrary(folders: [fixtures.path("Music")], databasePath: fixtures.path("library.sqlite"))
        _ = try library.scan()
        let engine = try AudioEngine(.offline())
        defer { engine.shutdown() }
        let game = try makeGame(engine)
        game.openPicker(library: library)
        game.frameEnded(1, time: 0)
        let picker = try #require(game.picker)
        func shown() -> [String] { picker.browser.shownRows.map(GravityWave.rowLine) }
        #expect(picker.browser.tab == .songs)
        #expect(game.pickerElements().filter { $0.action == .pickerBack }.map(\.enabled) == [false])

        // F2: the Artists tab; Enter opens the artist under the cursor, then its album, in track order.
        key(game, .function(2))
        #expect(picker.browser.tab == .artists && shown() == ["Ann", "Bob", "Cat"])
        key(game, .down)
        key(game, .up)
        key(game, .enter)
        #expect(shown() == ["First — Ann"] && picker.browser.list.title == "Ann")
        key(game, .enter)
        #expect(shown() == ["Another Song — Ann", "Alpha Song — Ann"] && picker.browser.path.count == 3)
        #expect(game.pickerElements().filter { $0.action == .pickerBack }.map(\.enabled) == [true])

        // Add All, with the mouse, on the album: both songs, in track order.
        try click(game, .pickerAddAll)
        #expect(picker.selectedItems.map(\.title) == ["Another Song", "Alpha Song"])
        #expect(game.pickerElements().filter { $0.label.hasSuffix("— Ann") }.map(\.selected) == [true, true])

        // Back twice (the back button, then Backspace on an empty filter): the artists, the cursor where it was.
        try click(game, .pickerBack)
        #expect(shown() == ["First — Ann"])
        key(game, .backspace)
        #expect(shown() == ["Ann", "Bob", "Cat"] && game.pickerCursor == 0 && !picker.browser.canGoBack)

        // The filter on the artists' list; Backspace takes it back.
        game.handle(.text("CA"))
        #expect(shown() == ["Cat"])
        key(game, .backspace)
        key(game, .backspace)
        #expect(shown().count == 3)

        // The A–Z index: a letter with rows jumps there; one without is dimmed and does nothing.
        try click(game, .pickerJump("C"))
        #expect(game.pickerCursor == 2)
        let q = try #require(game.pickerElements().first { $0.action == .pickerJump("Q") })
        #expect(!q.enabled)
        game.handle(.mouseDown(q.rect.center, button: 1))
        #expect(game.pickerCursor == 2)

        // F3: Albums; → opens; add all there (F5) adds Bob's song. F4: Songs; G jumps to Gamma; Enter picks it.
        key(game, .function(3))
        #expect(shown() == ["First — Ann", "Second — Bob", "Third — Cat"] && game.pickerCursor == 0)
        key(game, .down)
        key(game, .right)
        #expect(shown() == ["Beta Song — Bob"])
        key(game, .function(5))
        key(game, .function(4))
        #expect(picker.browser.tab == .songs && !picker.browser.canGoBack)
        try click(game, .pickerJump("G"))
        #expect(game.pickerCursor == 3)
        key(game, .enter)
        #expect(picker.selectedItems.map(\.title) == ["Another Song", "Alpha Song", "Beta Song", "Gamma Tune"])

        // Done: the picks are the queue, and they play.
        key(game, .tab)
        #expect(game.screen == .playing)
        #expect(engine.musicPlayer.items.map(\.title) == ["Another Song", "Alpha Song", "Beta Song", "Gamma Tune"])
        #expect(engine.musicPlayer.playbackState == .playing)
    }

    /// The script steps the picker's window test uses: typed text, a click, the function keys.
    @Test func scriptStepsTypeClickAndFunctionKeysParseAndRefuseBadInput() throws {
        #expect(try ScriptStep.parse("5:type=ca") == ScriptStep(frame: 5, action: .text("ca")))
        #expect(try ScriptStep.parse("6:click=790,233") == ScriptStep(frame: 6, action: .click(x: 790, y: 233)))
        #expect(try ScriptStep.parse("7:key=f5") == ScriptStep(frame: 7, action: .key(.function(5))))
        for bad in ["5:type=", "6:click=790", "6:click=a,b", "6:click=-1,2", "6:click=1,2,3", "7:key=f9"] {
            #expect(throws: GameError.self, "\(bad)") { try ScriptStep.parse(bad) }
        }
    }

    // MARK: In an Xvfb window, in both languages

    struct PickerWords {
        var artists: String, songs: String, addAll: String, back: String, showMusic: String
    }

    static let pickerWords: [String: PickerWords] = [
        "en": PickerWords(
            artists: "Artists", songs: "Songs", addAll: "Add All", back: "‹ Back", showMusic: "Show Music"),
        "de": PickerWords(
            artists: "Künstler", songs: "Titel", addAll: "Alle hinzufügen", back: "‹ Zurück", showMusic: "Musik zeigen")
    ]

    static let pickerScript: [(frame: Int, step: String)] = [
        (20, "key=m"), (90, "key=f2"), (100, "shot=p1-artists.png"), (105, "key=enter"), (110, "key=enter"),
        (115, "key=f5"), (125, "shot=p2-album-added.png"), (130, "key=left"), (135, "key=left"), (140, "type=ca"),
        (150, "shot=p3-filtered.png"), (155, "key=backspace"), (160, "key=backspace"), (165, "key=f4"),
        (170, "click=\(Int(GravityWave.pickerPanel.maxX - 40)),\(Int(GravityWave.pickerListTop + 6 * 12.8 + 6))"),
        (180, "shot=p4-jumped.png"), (185, "key=tab"), (200, "shot=p5-playing.png")
    ]

    @Test(arguments: [english, german])
    func thePickerIsDrawnBrowsingInTheUsersLanguageInAnXvfbWindow(language: Language) throws {
        guard FileManager.default.isExecutableFile(atPath: BuildProducts.gravityWave) else {
            Issue.record("\(BuildProducts.gravityWave) is missing: build the package (swift build) before the tests")
            return
        }
        try makePickerLibrary()
        let folder = "\(Self.artifacts)/\(language.code)/picker"
        try? FileManager.default.removeItem(atPath: folder)
        let summary = try runInXvfb(
            language, assets: BuildProducts.assets, seconds: 3.5, steps: Self.pickerScript, into: folder)
        let words = try #require(Self.pickerWords[language.code])
        let theirs = try #require(Self.pickerWords[language.code == "de" ? "en" : "de"])
        func shot(_ name: String) throws -> Picture { try Self.decodePNG("\(folder)/\(name).png") }
        let panel = GravityWave.pickerPanel
        let tabs = MediaBrowser.Tab.allCases.indices.map { Rect(panel.x + 20 + Double($0) * 162, 80, 156, 30) }
        let backButton = Rect(panel.x + 20, 118, 110, 30), addAll = Rect(panel.x + 480, 118, 180, 30)
        func row(_ index: Int) -> Rect {
            Rect(panel.x + 20, GravityWave.pickerListTop + Double(index) * GravityWave.pickerRowHeight, 600, 26)
        }
        /// Whether `label` (and not the other language's `other`) is drawn centred in `rect`, as a button's label.
        func expectLabel(_ picture: Picture, _ label: String, not other: String, in rect: Rect, _ shot: String) throws {
            let region = rect.insetBy(3, 3)
            let background = picture.color(x: Int(region.x) + 1, y: Int(region.y) + 1)
            let drawn = Self.textPixels(picture, in: region)
            let mine = try Self.textPixels(
                of: label, size: 16, at: rect.center, anchor: .center, on: background, in: region)
            let others = try Self.textPixels(
                of: other, size: 16, at: rect.center, anchor: .center, on: background, in: region)
            #expect(Self.overlap(drawn, mine) > 0.8, "\(shot): '\(label)' is not drawn (\(Self.overlap(drawn, mine)))")
            #expect(Self.overlap(drawn, others) < 0.6, "\(shot): '\(other)' is drawn")
        }
        func rowHasText(_ picture: Picture, _ index: Int) -> Bool {
            Self.textPixels(picture, in: row(index).insetBy(28, 4)).count > 20
        }

        // 1. The Artists tab: it is the selected one, labelled in the user's language; four artists listed (the
        // window's library also holds runInXvfb's song by Pat).
        let artists = try shot("p1-artists")
        #expect(artists.color(x: Int(tabs[1].x) + 3, y: Int(tabs[1].y) + 3) == Color(92, 128, 220))
        #expect(artists.color(x: Int(tabs[3].x) + 3, y: Int(tabs[3].y) + 3) == Color(44, 58, 96))
        try expectLabel(artists, words.artists, not: theirs.artists, in: tabs[1], "p1")
        try expectLabel(artists, words.songs, not: theirs.songs, in: tabs[3], "p1")
        try expectLabel(artists, words.addAll, not: theirs.addAll, in: addAll, "p1")
        #expect((0..<4).allSatisfy { rowHasText(artists, $0) } && !rowHasText(artists, 4), "\(summary)")
        // On a tab's own list Back is dimmed: no bright text on it.
        #expect(Self.textPixels(artists, in: backButton.insetBy(3, 3)).isEmpty)

        // 2. Ann's album, opened from her row, after Add All: both songs ticked, Back lit and labelled.
        let added = try shot("p2-album-added")
        for index in 0..<2 {
            let box = row(index)
            #expect(added.color(x: Int(box.x) + 13, y: Int(box.y) + 13) == Color(255, 214, 102), "row \(index)")
        }
        #expect(rowHasText(added, 1) && !rowHasText(added, 2))
        try expectLabel(added, words.back, not: theirs.back, in: backButton, "p2")

        // 3. Back on the artists, filtered by "ca": Cat alone; the filter box shows what was typed.
        let filtered = try shot("p3-filtered")
        #expect(rowHasText(filtered, 0) && !rowHasText(filtered, 1))
        #expect(Self.textPixels(filtered, in: GravityWave.pickerFilterBox.insetBy(3, 3)).count > 20)

        // 4. Songs, after a click on the index's G: the cursor is on Gamma Tune (the fourth row); Q is dimmed.
        let jumped = try shot("p4-jumped")
        func brightness(_ c: Color) -> Int { Int(c.red) + Int(c.green) + Int(c.blue) }
        let edge = Int(row(0).maxX) - 4
        let focused = (0..<5).map { brightness(jumped.color(x: edge, y: Int(row($0).center.y))) }
        #expect(focused.firstIndex(of: focused.max() ?? 0) == 3 && focused[3] > focused[0] + 20, "\(focused)")
        let letter = { (index: Int) in
            Rect(panel.maxX - 52, GravityWave.pickerListTop + Double(index) * 12.8, 24, 12.8)
        }
        #expect(!Self.textPixels(jumped, in: letter(6)).isEmpty)  // G
        #expect(Self.textPixels(jumped, in: letter(16)).isEmpty)  // Q

        // 5. Done: the HUD's button says Show Music.
        let playing = try shot("p5-playing")
        try expectLabel(playing, words.showMusic, not: theirs.showMusic, in: Rect(132, 556, 164, 34), "p5")
    }
}
