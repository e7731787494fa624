import Ambience
import AmbienceHost
import Glibc

/// The fonts the screens use: DejaVu Sans at three sizes.
struct Fonts {
    let small: Font
    let body: Font
    let title: Font

    init() throws(HostError) {
        small = try Font(size: 13)
        body = try Font(size: 16)
        title = try Font(size: 22)
    }
}

/// A control on a screen: where it is, what it says, what it does.
struct Control {
    var action: GravityWave.Action
    var rect: Rect
    var label: String
    /// The menu row it belongs to.
    var row = 0
    var selected = false
}

private enum Palette {
    static let panel = Color(14, 18, 34, 236)
    static let bar = Color(6, 8, 16, 200)
    static let button = Color(44, 58, 96)
    static let buttonSelected = Color(92, 128, 220)
    static let frame = Color(140, 160, 220)
    static let text = Color.white
    static let dim = Color(170, 178, 200)
    static let note = Color(255, 214, 102)
    static let focus = Color(255, 255, 255, 40)
}

/// The stars behind everything: fixed, so the picture is the same every run.
private let stars: [(Point, UInt8)] = {
    var random = GameRandom(seed: 0x57A25)
    return (0..<110).map { _ in
        (Point(random.double(in: 0...World.width), random.double(in: 0...World.height)), UInt8(random.double(in: 60...200)))
    }
}()

extension GravityWave {
    static let pickerRows = 14

    // MARK: Layout (shared by drawing and hit-testing)

    func hudButtons() -> [Control] {
        let y = World.height - 44
        return [
            Control(action: .playPause, rect: Rect(12, y, 104, 34), label: player.playbackState == .playing ? "Pause" : "Play"),
            Control(action: .addOrShowMusic, rect: Rect(124, y, 140, 34), label: userCollection == nil ? "Add Music" : "Show Music"),
            Control(action: .playAppSound, rect: Rect(272, y, 160, 34), label: "Play App Sound"),
            Control(action: .openMenu, rect: Rect(440, y, 90, 34), label: "Menu"),
        ]
    }

    static let menuPanel = Rect(200, 70, 560, 460)

    func menuElements() -> [Control] {
        let x = Self.menuPanel.x + 170
        var controls: [Control] = []
        let categories: [(SessionCategory, String)] = [(.ambient, "Ambient"), (.soloAmbient, "Solo Ambient"), (.playback, "Playback")]
        for (i, (category, label)) in categories.enumerated() {
            controls.append(Control(action: .setCategory(category), rect: Rect(x + Double(i) * 124, 140, 118, 30), label: label,
                                    row: 0, selected: engine.session.category == category))
        }
        for (i, choice) in PlayerChoice.allCases.enumerated() {
            controls.append(Control(action: .setPlayer(choice), rect: Rect(x + Double(i) * 186, 190, 180, 30), label: choice.title,
                                    row: 1, selected: settings.player == choice))
        }
        for (i, bus) in GameSettings.busNames.enumerated() {
            controls.append(Control(action: .setVolume(bus: bus, gain: settings.volumes[bus] ?? 1), rect: Rect(x, 248 + Double(i) * 46, 300, 18),
                                    label: Self.busTitle(bus), row: 2 + i))
        }
        let last = 2 + GameSettings.busNames.count
        controls.append(Control(action: .closeMenu, rect: Rect(x, 450, 150, 36), label: "Resume", row: last))
        controls.append(Control(action: .quit, rect: Rect(x + 160, 450, 150, 36), label: "Quit", row: last))
        return controls
    }

    static func busTitle(_ bus: String) -> String {
        switch bus {
        case "master": "Master"
        case "music": "Music"
        case "sfx": "Effects"
        default: "Interface"
        }
    }

    func sliderValue(at point: Point, in rect: Rect) -> Float {
        Float(max(0, min(1, (point.x - rect.x) / rect.width)))
    }

    static let pickerPanel = Rect(130, 36, 700, 528)

    func pickerElements() -> [Control] {
        guard let picker else { return [] }
        let panel = Self.pickerPanel
        var controls: [Control] = []
        let visible = picker.shownItems.dropFirst(pickerScroll).prefix(Self.pickerRows)
        for (offset, item) in visible.enumerated() {
            controls.append(Control(action: .pickerToggle(item), rect: Rect(panel.x + 20, 126 + Double(offset) * 26, 600, 26),
                                    label: Self.itemLine(item), row: pickerScroll + offset, selected: picker.isSelected(item)))
        }
        controls.append(Control(action: .pickerCancel, rect: Rect(panel.maxX - 260, panel.maxY - 50, 116, 36), label: "Cancel"))
        controls.append(Control(action: .pickerDone, rect: Rect(panel.maxX - 136, panel.maxY - 50, 116, 36), label: "Done"))
        return controls
    }

    static let queuePanel = Rect(180, 60, 600, 480)

    func queueElements() -> [Control] {
        let panel = Self.queuePanel
        return [
            Control(action: .addOrShowMusic, rect: Rect(panel.maxX - 280, panel.maxY - 52, 130, 36), label: "Add Music"),
            Control(action: .queueDone, rect: Rect(panel.maxX - 140, panel.maxY - 52, 120, 36), label: "Done"),
        ]
    }

    static let alertPanel = Rect(280, 205, 400, 180)

    func alertElements() -> [Control] {
        let panel = Self.alertPanel
        return [
            Control(action: .alertStop, rect: Rect(panel.x + 24, panel.maxY - 60, 166, 40), label: "Stop"),
            Control(action: .alertResume, rect: Rect(panel.maxX - 190, panel.maxY - 60, 166, 40), label: "Resume"),
        ]
    }

    static func itemLine(_ item: MediaItem) -> String {
        let title = item.title ?? "Untitled"
        return item.artist.map { "\(title) — \($0)" } ?? title
    }

    // MARK: Drawing

    /// Draws the frame: the world between its last two steps (`alpha`), the HUD, and whatever screen is in front.
    public func draw(_ canvas: Canvas, alpha: Double) {
        if fonts == nil && !fontsFailed {
            do { fonts = try Fonts() } catch { fontsFailed = true; statusMessage = "\(error)" }
        }
        canvas.clear(Color(hue: hue, saturation: 0.55, value: 0.16))
        for (point, level) in stars { canvas.fillRect(Rect(point.x, point.y, 2, 2), Color(level, level, level)) }
        drawWorld(canvas, alpha: alpha)
        drawHUD(canvas)
        switch screen {
        case .playing: break
        case .menu: drawMenu(canvas)
        case .picker: drawPicker(canvas)
        case .queue: drawQueue(canvas)
        }
        if alert != nil { drawAlert(canvas) }
    }

    private func text(_ canvas: Canvas, _ string: String, _ point: Point, _ font: KeyPath<Fonts, Font> = \.body,
                      _ color: Color = Palette.text, anchor: TextAnchor = .topLeft) {
        guard let fonts else { return }
        canvas.drawText(string, at: point, font: fonts[keyPath: font], color: color, anchor: anchor)
    }

    /// `string`, cut short with an ellipsis to fit `width`.
    private func fitted(_ string: String, _ font: KeyPath<Fonts, Font>, width: Double) -> String {
        guard let fonts, fonts[keyPath: font].size(of: string).width > width else { return string }
        var cut = string
        while !cut.isEmpty && fonts[keyPath: font].size(of: cut + "…").width > width { cut.removeLast() }
        return cut + "…"
    }

    private func drawButton(_ canvas: Canvas, _ control: Control, focused: Bool = false) {
        canvas.fillRect(control.rect, control.selected ? Palette.buttonSelected : Palette.button)
        canvas.strokeRect(control.rect, focused ? Color.white : Palette.frame)
        text(canvas, control.label, control.rect.center, anchor: .center)
    }

    private func drawWorld(_ canvas: Canvas, alpha: Double) {
        let t = world.time
        for well in world.wells {
            for ring in 0..<5 {
                let phase = (t * 0.6 + Double(ring) / 5).truncatingRemainder(dividingBy: 1)
                let radius = well.coreRadius + (1 - phase) * 110
                canvas.strokeCircle(center: point(well.position), radius: radius, Color(120, 150, 255, UInt8(20 + phase * 90)))
            }
            canvas.fillCircle(center: point(well.position), radius: well.coreRadius + 6, Color(60, 70, 160, 120))
            canvas.fillCircle(center: point(well.position), radius: well.coreRadius, Color(10, 10, 30))
            canvas.strokeCircle(center: point(well.position), radius: well.coreRadius, Color(170, 190, 255))
        }
        for pickup in world.pickups {
            let pulse = 1 + 0.2 * sin(pickup.age * 6)
            canvas.fillCircle(center: point(pickup.position), radius: Pickup.radius * pulse, Color(80, 255, 210, 90))
            canvas.fillCircle(center: point(pickup.position), radius: Pickup.radius * 0.55, Color(200, 255, 240))
        }
        for mine in world.mines {
            let c = point(mine.position)
            for spike in 0..<8 {
                let a = Double(spike) / 8 * 2 * Double.pi + mine.spin
                let tip = mine.position + Vector.heading(a) * (mine.radius + 6)
                canvas.drawLine(from: c, to: point(tip), Color(255, 120, 80))
            }
            canvas.fillCircle(center: c, radius: mine.radius, Color(150, 50, 40))
            canvas.strokeCircle(center: c, radius: mine.radius, Color(255, 140, 100))
        }
        for bolt in world.bolts {
            let tail = bolt.position - bolt.velocity.normalized * 12
            canvas.drawLine(from: point(tail), to: point(bolt.position), Color(255, 250, 150))
        }
        for particle in world.particles {
            let c = Color(hue: particle.hue, saturation: 0.8, value: 1, alpha: UInt8(max(0, min(1, particle.life)) * 255))
            canvas.fillRect(Rect(particle.position.x - 1.5, particle.position.y - 1.5, 3, 3), c)
        }
        let ship = world.ship
        guard ship.isAlive else { return }
        if ship.shield > 0 && Int(t * 10) % 2 == 0 { return }
        // Between the last two steps (the world resets the previous position when the ship wraps or respawns).
        let position = world.previousShipPosition + (ship.position - world.previousShipPosition) * alpha
        let nose = position + Vector.heading(ship.angle) * 15
        let left = position + Vector.heading(ship.angle - 2.45) * 11
        let right = position + Vector.heading(ship.angle + 2.45) * 11
        let notch = position - Vector.heading(ship.angle) * 4
        if ship.thrustLevel > 0.05 {
            let flicker = 0.75 + 0.25 * sin(t * 53)
            let flame = notch - Vector.heading(ship.angle) * (ship.thrustLevel * 20 * flicker)
            canvas.drawLine(from: point(notch), to: point(flame), Color(255, 170, 60))
            canvas.drawLine(from: point(left), to: point(flame), Color(255, 110, 40, 160))
            canvas.drawLine(from: point(right), to: point(flame), Color(255, 110, 40, 160))
        }
        canvas.drawPolyline([nose, left, notch, right, nose].map(point), Color(230, 240, 255))
    }

    private func point(_ v: Vector) -> Point { Point(v.x, v.y) }

    private func drawHUD(_ canvas: Canvas) {
        canvas.fillRect(Rect(0, 0, World.width, 44), Palette.bar)
        if let picture = artworkPicture() { canvas.drawImage(picture, in: Rect(6, 4, 36, 36)) }
        text(canvas, fitted(nowPlayingText, \.body, width: World.width - 300), Point(50, 22), anchor: .centerLeft)
        text(canvas, "Score \(world.score)   Crashes \(world.deaths)", Point(World.width - 12, 22), anchor: .centerRight)
        if let note = hudNote {
            text(canvas, fitted(note, \.small, width: World.width - 24), Point(12, 52), \.small, Palette.note)
        }
        canvas.fillRect(Rect(0, World.height - 52, World.width, 52), Palette.bar)
        for control in hudButtons() { drawButton(canvas, control) }
        text(canvas, "Arrows/WASD fly · Space fire · keys P M X · Esc menu",
             Point(World.width - 12, World.height - 27), \.small, Palette.dim, anchor: .centerRight)
    }

    /// The now-playing item's artwork from the library (embedded, or a cover file beside it), or none.
    private func artworkPicture() -> Picture? {
        guard player.playbackState != .stopped, let item = player.nowPlayingItem else { return nil }
        if let cached = nowPlayingArtwork, cached.id == item.persistentID { return cached.picture }
        let image = item.artwork?.image(size: ArtworkSize(width: 72, height: 72))
        let picture = image.flatMap { Picture(width: $0.width, height: $0.height, pixels: $0.pixels) }
        nowPlayingArtwork = (item.persistentID, picture)
        return picture
    }

    private func drawPanel(_ canvas: Canvas, _ rect: Rect, title: String) {
        canvas.fillRect(Rect(0, 0, World.width, World.height), Color(0, 0, 0, 120))
        canvas.fillRect(rect, Palette.panel)
        canvas.strokeRect(rect, Palette.frame)
        text(canvas, title, Point(rect.center.x, rect.y + 14), \.title, anchor: .topCenter)
    }

    private func drawMenu(_ canvas: Canvas) {
        let panel = Self.menuPanel
        drawPanel(canvas, panel, title: "Paused")
        let labels = ["Audio session", "Music player"] + GameSettings.busNames.map(Self.busTitle) + [""]
        let rowY: [Double] = [155, 205] + GameSettings.busNames.indices.map { 257 + Double($0) * 46 } + [468]
        canvas.fillRect(Rect(panel.x + 8, rowY[menuFocus] - 20, panel.width - 16, 40), Palette.focus)
        for (row, label) in labels.enumerated() where !label.isEmpty {
            text(canvas, label, Point(panel.x + 24, rowY[row]), anchor: .centerLeft)
        }
        for control in menuElements() {
            if case .setVolume(let bus, let gain) = control.action {
                canvas.fillRect(control.rect, Palette.button)
                canvas.fillRect(Rect(control.rect.x, control.rect.y, control.rect.width * Double(gain), control.rect.height), Palette.buttonSelected)
                canvas.strokeRect(control.rect, Palette.frame)
                text(canvas, "\(Int((gain * 100).rounded()))%", Point(control.rect.maxX + 10, control.rect.center.y), \.small, anchor: .centerLeft)
                _ = bus
            } else {
                drawButton(canvas, control, focused: control.row == menuFocus && control.selected)
            }
        }
        text(canvas, "↑↓ choose · ←→ change · Esc resume", Point(panel.center.x, panel.maxY - 22), \.small, Palette.dim, anchor: .center)
    }

    private func drawPicker(_ canvas: Canvas) {
        guard let picker else { return }
        let panel = Self.pickerPanel
        drawPanel(canvas, panel, title: picker.prompt ?? "Choose music")
        let filterBox = Rect(panel.x + 20, 84, 600, 32)
        canvas.fillRect(filterBox, Color(0, 0, 0, 160))
        canvas.strokeRect(filterBox, Palette.frame)
        let caret = Int(world.time * 2 + Double(pickerCursor)) % 2 == 0 ? "_" : " "
        text(canvas, picker.filterText.isEmpty ? "Type to filter" : picker.filterText + caret, Point(filterBox.x + 10, filterBox.center.y),
             \.body, picker.filterText.isEmpty ? Palette.dim : Palette.text, anchor: .centerLeft)
        for control in pickerElements() {
            if case .pickerToggle = control.action {
                if control.row == pickerCursor { canvas.fillRect(control.rect, Palette.focus) }
                let box = Rect(control.rect.x + 6, control.rect.y + 6, 14, 14)
                canvas.strokeRect(box, Palette.frame)
                if control.selected { canvas.fillRect(box.insetBy(3, 3), Palette.note) }
                text(canvas, control.label, Point(control.rect.x + 30, control.rect.center.y), anchor: .centerLeft)
            } else {
                drawButton(canvas, control)
            }
        }
        // The A–Z index of what is shown.
        for (i, section) in picker.sections.prefix(27).enumerated() {
            text(canvas, section.title, Point(panel.maxX - 40, 126 + Double(i) * 13.5), \.small, Palette.dim, anchor: .topCenter)
        }
        let status: String
        if scanInProgress {
            status = "Scanning your music folder…"
        } else if picker.shownItems.isEmpty {
            status = !picker.filterText.isEmpty ? "Nothing matches" : libraryProblem.map { "Music library: \($0)" } ?? "No music in the library"
        } else {
            status = "\(picker.selectedItems.count) selected of \(picker.shownItems.count) · Enter select · Tab done · Esc cancel"
        }
        text(canvas, fitted(status, \.small, width: panel.width - 300), Point(panel.x + 20, panel.maxY - 32), \.small, Palette.dim, anchor: .centerLeft)
    }

    private func drawQueue(_ canvas: Canvas) {
        let panel = Self.queuePanel
        drawPanel(canvas, panel, title: "Music")
        let items = userCollection?.items ?? []
        let playing = player.nowPlayingItem
        for (i, item) in items.prefix(14).enumerated() {
            let y = 110 + Double(i) * 26
            let isNow = item == playing
            if isNow { canvas.fillRect(Rect(panel.x + 12, y - 2, panel.width - 24, 26), Palette.focus) }
            text(canvas, (isNow ? "▶ " : "   ") + Self.itemLine(item), Point(panel.x + 24, y + 11), \.body, anchor: .centerLeft)
        }
        if items.count > 14 { text(canvas, "and \(items.count - 14) more", Point(panel.x + 24, 110 + 14 * 26 + 4), \.small, Palette.dim) }
        for control in queueElements() { drawButton(canvas, control) }
    }

    private func drawAlert(_ canvas: Canvas) {
        let panel = Self.alertPanel
        drawPanel(canvas, panel, title: "Playback Paused")
        text(canvas, "Audio output was changed", Point(panel.center.x, panel.y + 66), anchor: .topCenter)
        for control in alertElements() { drawButton(canvas, control) }
    }
}
