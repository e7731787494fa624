import Ambience
import AmbienceHost

// The picker screen's layout (shared by drawing and hit-testing) and its drawing: the iPod's tabs, back, the filter
// box, "add all", the list, and the A–Z index beside it.
extension GravityWave {
    static let pickerPanel = Rect(130, 36, 700, 528)
    /// List rows shown at once.
    static let pickerRows = 13
    static let pickerListTop = 156.0
    static let pickerRowHeight = 26.0
    /// Where the filter's text is typed.
    static let pickerFilterBox = Rect(pickerPanel.x + 140, 118, 330, 30)
    /// The index's letters, always all of them (as the iPod's), those with no row shown dimmed.
    static let pickerIndexLetters = (65...90).map { String(UnicodeScalar(UInt8($0))) } + ["#"]
    static let pickerIndexSpacing = 12.8

    static func tabTitle(_ tab: MediaBrowser.Tab) -> String {
        switch tab {
        case .playlists: localized("Playlists")
        case .artists: localized("Artists")
        case .albums: localized("Albums")
        case .songs: localized("Songs")
        }
    }

    /// A row's text: a song as "title — artist", a group by its name, "Unknown" when the tags have none.
    static func rowLine(_ row: MediaBrowser.Row) -> String {
        switch row.kind {
        case .song: return itemLine(row.items[0])
        case .artist: return row.title ?? localized("Unknown Artist")
        case .playlist: return row.title ?? localized("Untitled")
        case .album, .artistsAlbum:
            let album = row.title ?? localized("Unknown Album")
            let first = row.items.first
            return (first?.albumArtist ?? first?.artist).map { "\(album) — \($0)" } ?? album
        }
    }

    static func songCount(_ count: Int) -> String {
        count == 1 ? localized("1 song") : localized("{1} songs", "\(count)")
    }

    func pickerElements() -> [Control] {
        guard let picker else { return [] }
        let panel = Self.pickerPanel
        let browser = picker.browser
        var controls: [Control] = []
        for (i, tab) in MediaBrowser.Tab.allCases.enumerated() {
            controls.append(
                Control(
                    action: .pickerTab(tab), rect: Rect(panel.x + 20 + Double(i) * 162, 80, 156, 30),
                    label: Self.tabTitle(tab), row: -1, selected: browser.tab == tab))
        }
        controls.append(
            Control(
                action: .pickerBack, rect: Rect(panel.x + 20, 118, 110, 30), label: localized("‹ Back"), row: -1,
                enabled: browser.canGoBack))
        controls.append(
            Control(
                action: .pickerAddAll, rect: Rect(panel.x + 480, 118, 180, 30), label: localized("Add All"), row: -1,
                enabled: !browser.shownRows.isEmpty))
        let visible = browser.shownRows.enumerated().dropFirst(pickerScroll).prefix(Self.pickerRows)
        // Drawn each frame: a row's tick is every song under it selected, looked up in a set, not the list.
        let selected = Set(picker.selectedItems.map(\.persistentID))
        for (offset, (index, row)) in visible.enumerated() {
            let allSelected = !row.items.isEmpty && row.items.allSatisfy { selected.contains($0.persistentID) }
            controls.append(
                Control(
                    action: row.opens ? .pickerOpen(row) : .pickerToggle(row.items[0]),
                    rect: Rect(panel.x + 20, Self.pickerListTop + Double(offset) * Self.pickerRowHeight, 600, 26),
                    label: Self.rowLine(row), row: index, selected: allSelected))
        }
        let present = Set(browser.indexTitles)
        for (i, letter) in Self.pickerIndexLetters.enumerated() {
            controls.append(
                Control(
                    action: .pickerJump(letter),
                    rect: Rect(panel.maxX - 52, Self.pickerListTop + Double(i) * Self.pickerIndexSpacing, 24, 12.8),
                    label: letter, row: -1, enabled: present.contains(letter)))
        }
        controls.append(
            Control(
                action: .pickerCancel, rect: Rect(panel.maxX - 260, panel.maxY - 50, 116, 36),
                label: localized("Cancel"), row: -1))
        controls.append(
            Control(
                action: .pickerDone, rect: Rect(panel.maxX - 136, panel.maxY - 50, 116, 36), label: localized("Done"),
                row: -1))
        return controls
    }

    func drawPicker(_ canvas: Canvas) {
        guard let picker else { return }
        let panel = Self.pickerPanel
        let browser = picker.browser
        // Drilled down, the title names the list (the artist, album or playlist); on a tab, the picker's prompt.
        let title =
            browser.canGoBack
            ? browser.list.title ?? localized("Unknown") : picker.prompt ?? localized("Choose music")
        drawPanel(canvas, panel, title: fitted(title, \.title, width: panel.width - 40))
        let filterBox = Self.pickerFilterBox
        canvas.fillRect(filterBox, Color(0, 0, 0, 160))
        canvas.strokeRect(filterBox, Palette.frame)
        let caret = Int(world.time * 2 + Double(pickerCursor)) % 2 == 0 ? "_" : " "
        text(
            canvas,
            fitted(
                picker.filterText.isEmpty ? localized("Type to filter") : picker.filterText + caret, \.body,
                width: filterBox.width - 16),
            Point(filterBox.x + 8, filterBox.center.y), \.body,
            picker.filterText.isEmpty ? Palette.dim : Palette.text, anchor: .centerLeft)
        for control in pickerElements() {
            switch control.action {
            case .pickerToggle, .pickerOpen:
                drawPickerRow(canvas, control, browser: browser)
            case .pickerJump:
                text(
                    canvas, control.label, control.rect.center, \.small,
                    control.enabled ? Palette.text : Palette.disabledText, anchor: .center)
            default:
                drawButton(canvas, control)
            }
        }
        text(
            canvas, fitted(pickerStatus(picker), \.small, width: panel.width - 300),
            Point(panel.x + 20, panel.maxY - 32), \.small, Palette.dim, anchor: .centerLeft)
    }

    private func drawPickerRow(_ canvas: Canvas, _ control: Control, browser: MediaBrowser) {
        if control.row == pickerCursor { canvas.fillRect(control.rect, Palette.focus) }
        let box = Rect(control.rect.x + 6, control.rect.y + 6, 14, 14)
        canvas.strokeRect(box, Palette.frame)
        if control.selected { canvas.fillRect(box.insetBy(3, 3), Palette.note) }
        var width = control.rect.width - 36
        if case .pickerOpen(let row) = control.action {
            // A group: how many songs it holds, and the mark that it opens.
            let count = Self.songCount(row.items.count)
            text(
                canvas, count + "  ›", Point(control.rect.maxX - 6, control.rect.center.y), \.small, Palette.dim,
                anchor: .centerRight)
            width -= 110
        }
        text(
            canvas, fitted(control.label, \.body, width: width), Point(control.rect.x + 30, control.rect.center.y),
            anchor: .centerLeft)
    }

    private func pickerStatus(_ picker: MediaPicker) -> String {
        if scanInProgress { return localized("Scanning your music folder…") }
        if picker.browser.shownRows.isEmpty {
            if !picker.filterText.isEmpty { return localized("Nothing matches") }
            if let libraryProblem { return localized("Music library: {1}", libraryProblem) }
            return picker.browser.tab == .playlists && !picker.browser.canGoBack
                ? localized("No playlists in the library") : localized("No music in the library")
        }
        return localized(
            "{1} selected · F1–F4 tabs · F5 add all · ← back · Tab done",
            "\(picker.selectedItems.count)")
    }
}
