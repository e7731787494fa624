import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

/// The iPod picker's browsing over a real scanned library: the tabs, the drill-down and back, each list's filter,
/// the A–Z jumps and "add all", without SDL.
extension MediaLibraryTests {
    /// `makeCollection()` and a playlist naming Xtal, Hyperballad and Xtal again.
    func makeBrowsedLibrary() throws -> MediaLibrary {
        try makeCollection()
        let mix = "#EXTM3U\n../Various/Now Ambient/1.ogg\n../Björk/Post/1.ogg\n../Various/Now Ambient/1.ogg\n"
        try FileManager.default.createDirectory(
            atPath: fixtures.path("music/Lists"), withIntermediateDirectories: true)
        _ = try fixtures.write("music/Lists/Mix.m3u", bytes: Array(mix.utf8))
        let library = try openLibrary()
        try library.scan()
        return library
    }

    static func titles(_ browser: MediaBrowser) -> [String?] { browser.shownRows.map(\.title) }

    @Test func browserOpensEachTabAndDrillsDownAndBack() throws {
        var browser = MediaBrowser(library: try makeBrowsedLibrary())
        #expect(browser.tab == .songs && !browser.canGoBack)
        #expect(Self.titles(browser).count == 7 && browser.shownRows.allSatisfy { !$0.opens })
        let openedSong = browser.open(browser.shownRows[0])
        #expect(!openedSong)  // a song opens nothing

        // Artists → albums → songs, each grouped by MediaQuery; back restores each list.
        browser.show(.artists)
        #expect(Self.titles(browser) == ["Aphex Twin", "Björk", "Brian Eno", "Nena", "Sigur Rós"])
        #expect(browser.shownRows.map(\.items.count) == [1, 2, 1, 1, 2])
        let openedArtist = browser.open(browser.shownRows[4])
        #expect(openedArtist)
        #expect(browser.canGoBack && browser.list.title == "Sigur Rós")
        #expect(Self.titles(browser) == ["Ágætis byrjun"] && browser.shownRows[0].kind != .song)
        let openedAlbum = browser.open(browser.shownRows[0])
        #expect(openedAlbum)
        #expect(Self.titles(browser) == ["Svefn-g-englar", "Starálfur"])  // track order, not title order
        #expect(browser.path.count == 3 && browser.tab == .artists)
        var wentBack = browser.goBack()
        #expect(wentBack && Self.titles(browser) == ["Ágætis byrjun"])
        wentBack = browser.goBack()
        #expect(wentBack && Self.titles(browser).count == 5)
        wentBack = browser.goBack()
        #expect(!wentBack && !browser.canGoBack)

        // Albums → songs; the album that is no artist's own shows both artists' songs in track order.
        browser.show(.albums)
        #expect(Self.titles(browser) == ["Ágætis byrjun", "Now Ambient", "Post", "99 Luftballons"])
        #expect(browser.indexTitles == ["A", "N", "P", "#"])
        browser.open(browser.shownRows[1])
        #expect(Self.titles(browser) == ["Xtal", "An Ending"])
        #expect(browser.shownItems.map(\.artist) == ["Aphex Twin", "Brian Eno"])

        // Artist → a compilation → only that artist's songs, as the artist's row counted them.
        browser.show(.artists)
        browser.open(browser.shownRows[0])
        #expect(Self.titles(browser) == ["Now Ambient"] && browser.shownRows[0].items.map(\.title) == ["Xtal"])
        browser.open(browser.shownRows[0])
        #expect(Self.titles(browser) == ["Xtal"] && browser.shownItems.map(\.artist) == ["Aphex Twin"])

        // Playlists → songs, in the playlist's order, repeats and all.
        browser.show(.playlists)
        #expect(Self.titles(browser) == ["Mix"] && !browser.canGoBack)
        browser.open(browser.shownRows[0])
        #expect(Self.titles(browser) == ["Xtal", "Hyperballad", "Xtal"] && browser.list.title == "Mix")
        #expect(browser.shownItems.map(\.title) == ["Xtal", "Hyperballad"])  // "add all" adds a song once
    }

    @Test func browserFiltersEachListOnItsOwnAndJumpsToALetter() throws {
        var browser = MediaBrowser(library: try makeBrowsedLibrary(), tab: .artists)
        browser.filterText = "SIGUR"
        #expect(Self.titles(browser) == ["Sigur Rós"])
        browser.open(browser.shownRows[0])
        #expect(browser.filterText.isEmpty && Self.titles(browser) == ["Ágætis byrjun"])
        browser.filterText = "AGÆT"  // case and diacritics folded away
        #expect(Self.titles(browser) == ["Ágætis byrjun"])
        browser.filterText = "post"
        #expect(Self.titles(browser).isEmpty && browser.shownItems.isEmpty && browser.indexTitles.isEmpty)
        browser.goBack()
        #expect(browser.filterText == "SIGUR" && Self.titles(browser) == ["Sigur Rós"])  // the artists' own filter
        browser.filterText = ""

        // Songs match on title, artist or album; every word must match.
        browser.show(.songs)
        browser.filterText = "björk post"
        #expect(Self.titles(browser) == ["Army of Me", "Hyperballad"])
        browser.filterText = "björk xtal"
        #expect(Self.titles(browser).isEmpty)
        browser.filterText = ""

        // A–Z: the first row under a letter, in the rows shown; none for a letter with no row.
        #expect(
            Self.titles(browser) == [
                "An Ending", "Army of Me", "Hyperballad", "Starálfur", "Svefn-g-englar", "Xtal", "99 Luftballons"
            ])
        #expect(browser.indexTitles == ["A", "H", "S", "X", "#"])
        #expect(browser.firstRow(under: "S") == 3)
        #expect(browser.firstRow(under: "s") == 3)
        #expect(browser.firstRow(under: "#") == 6)
        #expect(browser.firstRow(under: "Q") == nil)
        browser.filterText = "ambient"  // a row's position is in the rows shown
        #expect(Self.titles(browser) == ["An Ending", "Xtal"] && browser.firstRow(under: "X") == 1)
        browser.filterText = "ballad"
        #expect(browser.firstRow(under: "H") == 0 && browser.firstRow(under: "A") == nil)
    }

    @Test func addAllSelectsEverySongUnderTheListInFront() throws {
        let picker = MediaPicker(library: try makeBrowsedLibrary())
        picker.allowsPickingMultipleItems = true
        picker.show(.artists)
        #expect(picker.selectAll() == 7 && picker.selectedItems.count == 7)
        #expect(picker.selectAll() == 0)  // nothing new
        picker.clearSelection()

        // On an album, after one of its songs was picked: the rest, in track order, after it.
        picker.open(picker.browser.shownRows[1])  // Björk
        picker.open(picker.browser.shownRows[0])  // Post
        #expect(picker.browser.shownRows.map(\.title) == ["Army of Me", "Hyperballad"])
        picker.toggleSelection(picker.browser.shownRows[1].items[0])
        #expect(picker.selectAll() == 1)
        #expect(picker.selectedItems.map(\.title) == ["Hyperballad", "Army of Me"])
        picker.goBack()
        picker.goBack()

        // Filtered: only what is shown.
        picker.clearSelection()
        picker.show(.albums)
        picker.filterText = "now"
        #expect(picker.selectAll() == 2)
        #expect(picker.selectedItems.map(\.title) == ["Xtal", "An Ending"])

        // A playlist: each song once, in its order.
        picker.clearSelection()
        picker.show(.playlists)
        picker.open(picker.browser.shownRows[0])
        #expect(picker.selectAll() == 2 && picker.selectedItems.map(\.title) == ["Xtal", "Hyperballad"])

        // Single picking: the last of them.
        picker.allowsPickingMultipleItems = false
        picker.clearSelection()
        #expect(picker.selectAll() == 2 && picker.selectedItems.map(\.title) == ["Hyperballad"])
        picker.done()
        #expect(picker.selectAll() == 0)  // finished
    }

    @Test func browserReloadKeepsTheListsOpenAndClosesOnesWhoseGroupWent() throws {
        let library = try makeBrowsedLibrary()
        var browser = MediaBrowser(library: library, tab: .artists)
        browser.filterText = "n"
        browser.open(try #require(browser.shownRows.first { $0.title == "Nena" }))
        browser.open(browser.shownRows[0])
        #expect(Self.titles(browser) == ["99 Luftballons"] && browser.path.count == 3)
        try FileManager.default.removeItem(atPath: fixtures.path("music/Nena/99.ogg"))
        try library.scan()
        browser.reload()
        #expect(browser.path.count == 1 && browser.filterText == "n")
        #expect(!Self.titles(browser).contains("Nena") && Self.titles(browser).contains("Brian Eno"))
    }
}
