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
    /// A disabled control is drawn dimmed and ignores clicks.
    var enabled = true
}

enum Palette {
    static let panel = Color(14, 18, 34, 236)
    static let bar = Color(6, 8, 16, 200)
    static let button = Color(44, 58, 96)
    static let buttonSelected = Color(92, 128, 220)
    static let frame = Color(140, 160, 220)
    static let text = Color.white
    static let dim = Color(170, 178, 200)
    static let note = Color(255, 214, 102)
    static let focus = Color(255, 255, 255, 40)
    static let disabledText = Color(120, 128, 150)
}

/// The stars behind everything: fixed, so the picture is the same every run.
private let stars: [(Point, UInt8)] = {
    var random = GameRandom(seed: 0x57A25)
    return (0..<110).map { _ in
        (
            Point(random.double(in: 0...World.width), random.double(in: 0...World.height)),
            UInt8(random.double(in: 60...200))
        )
    }
}()

extension GravityWave {
    // MARK: Layout (shared by drawing and hit-testing)

    func hudButtons() -> [Control] {
        let y = World.height - 44
        return [
            Control(action: .playPause, rect: Rect(12, y, 112, 34), label: playPauseTitle(player.playbackState)),
            Control(
                action: .addOrShowMusic, rect: Rect(132, y, 164, 34),
                label: userCollection == nil ? localized("Add Music") : localized("Show Music")),
            Control(
                action: .playAppSound, rect: Rect(304, y, 190, 34), label: localized("Play App Sound"),
                enabled: appSoundButton.isEnabled),
            Control(action: .openMenu, rect: Rect(502, y, 90, 34), label: localized("Menu"))
        ]
    }

    /// The pause menu's rows: session category, player, repeat, one per bus, then Resume and Quit.
    static var menuRows: Int { GameSettings.busNames.count + 4 }

    static let menuPanel = Rect(200, 70, 560, 460)

    func menuElements() -> [Control] {
        let x = Self.menuPanel.x + 170
        var controls: [Control] = []
        let categories: [(SessionCategory, String)] = [
            (.ambient, localized("Ambient")), (.soloAmbient, localized("Solo Ambient")),
            (.playback, localized("Playback"))
        ]
        for (i, (category, label)) in categories.enumerated() {
            controls.append(
                Control(
                    action: .setCategory(category), rect: Rect(x + Double(i) * 124, 135, 118, 30), label: label,
                    row: 0, selected: engine.session.category == category))
        }
        for (i, choice) in PlayerChoice.allCases.enumerated() {
            controls.append(
                Control(
                    action: .setPlayer(choice), rect: Rect(x + Double(i) * 186, 180, 180, 30), label: choice.title,
                    row: 1, selected: settings.player == choice))
        }
        for (i, on) in [false, true].enumerated() {
            controls.append(
                Control(
                    action: .setRepeat(on), rect: Rect(x + Double(i) * 124, 225, 118, 30),
                    label: on ? localized("On") : localized("Off"), row: 2, selected: settings.repeatMusic == on))
        }
        for (i, bus) in GameSettings.busNames.enumerated() {
            controls.append(
                Control(
                    action: .setVolume(bus: bus, gain: settings.volumes[bus] ?? 1),
                    rect: Rect(x, 276 + Double(i) * 40, 300, 18),
                    label: Self.busTitle(bus), row: 3 + i))
        }
        let last = Self.menuRows - 1
        controls.append(Control(action: .closeMenu, rect: Rect(x, 450, 150, 36), label: localized("Resume"), row: last))
        controls.append(Control(action: .quit, rect: Rect(x + 160, 450, 150, 36), label: localized("Quit"), row: last))
        return controls
    }

    static func busTitle(_ bus: String) -> String {
        switch bus {
        case "master": localized("Master")
        case "music": localized("Music")
        case "sfx": localized("Effects")
        default: localized("Interface")
        }
    }

    func sliderValue(at point: Point, in rect: Rect) -> Float {
        Float(max(0, min(1, (point.x - rect.x) / rect.width)))
    }

    static let queuePanel = Rect(180, 60, 600, 480)

    func queueElements() -> [Control] {
        let panel = Self.queuePanel
        return [
            Control(
                action: .addOrShowMusic, rect: Rect(panel.maxX - 340, panel.maxY - 52, 190, 36),
                label: localized("Add Music")),
            Control(
                action: .queueDone, rect: Rect(panel.maxX - 140, panel.maxY - 52, 120, 36), label: localized("Done"))
        ]
    }

    static let alertPanel = Rect(280, 205, 400, 180)

    func alertElements() -> [Control] {
        let panel = Self.alertPanel
        return [
            Control(action: .alertStop, rect: Rect(panel.x + 24, panel.maxY - 60, 166, 40), label: localized("Stop")),
            Control(
                action: .alertResume, rect: Rect(panel.maxX - 190, panel.maxY - 60, 166, 40), label: localized("Resume")
            )
        ]
    }

    /// "Show Music"'s list: the queue's items (the user's picks, else what the player holds), the one playing marked.
    func queueRows() -> [(line: String, isNowPlaying: Bool)] {
        let items = userCollection?.items ?? (player === engine.musicPlayer ? engine.musicPlayer.items : [])
        let playing = player.playbackState == .stopped ? nil : player.nowPlayingItem
        return items.map { (Self.itemLine($0), $0 == playing) }
    }

    static func itemLine(_ item: MediaItem) -> String {
        let title = item.title ?? localized("Untitled")
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

    func text(
        _ canvas: Canvas, _ string: String, _ point: Point, _ font: KeyPath<Fonts, Font> = \.body,
        _ color: Color = Palette.text, anchor: TextAnchor = .topLeft
    ) {
        guard let fonts else { return }
        canvas.drawText(string, at: point, font: fonts[keyPath: font], color: color, anchor: anchor)
    }

    /// `string`, cut short with an ellipsis to fit `width`.
    func fitted(_ string: String, _ font: KeyPath<Fonts, Font>, width: Double) -> String {
        guard let fonts, fonts[keyPath: font].size(of: string).width > width else { return string }
        var cut = string
        while !cut.isEmpty && fonts[keyPath: font].size(of: cut + "…").width > width { cut.removeLast() }
        return cut + "…"
    }

    func drawButton(_ canvas: Canvas, _ control: Control, focused: Bool = false) {
        canvas.fillRect(control.rect, control.selected ? Palette.buttonSelected : Palette.button)
        canvas.strokeRect(control.rect, focused ? Color.white : Palette.frame)
        text(
            canvas, control.label, control.rect.center, \.body, control.enabled ? Palette.text : Palette.disabledText,
            anchor: .center)
    }

    private func drawWorld(_ canvas: Canvas, alpha: Double) {
        let t = world.time
        for well in world.wells {
            for ring in 0..<5 {
                let phase = (t * 0.6 + Double(ring) / 5).truncatingRemainder(dividingBy: 1)
                let radius = well.coreRadius + (1 - phase) * 110
                canvas.strokeCircle(
                    center: point(well.position), radius: radius, Color(120, 150, 255, UInt8(20 + phase * 90)))
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
            let c = Color(
                hue: particle.hue, saturation: 0.8, value: 1, alpha: UInt8(max(0, min(1, particle.life)) * 255))
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
        canvas.drawImage(artworkPicture() ?? Self.noArtwork, in: Self.artworkRect)
        text(canvas, fitted(nowPlayingText, \.body, width: World.width - 300), Point(50, 22), anchor: .centerLeft)
        text(
            canvas, localized("Score {1}   Crashes {2}", "\(world.score)", "\(world.deaths)"),
            Point(World.width - 12, 22), anchor: .centerRight)
        if let note = hudNote {
            text(canvas, fitted(note, \.small, width: World.width - 24), Point(12, 52), \.small, Palette.note)
        }
        canvas.fillRect(Rect(0, World.height - 52, World.width, 52), Palette.bar)
        for control in hudButtons() { drawButton(canvas, control) }
        text(
            canvas,
            fitted(
                localized("Arrows/WASD fly · Space fire · keys P M X · Esc menu"), \.small, width: World.width - 612),
            Point(World.width - 12, World.height - 27), \.small, Palette.dim, anchor: .centerRight)
    }

    /// Where the now-playing item's artwork (or the no-artwork picture) sits in the HUD.
    static let artworkRect = Rect(6, 4, 36, 36)

    /// AddMusic's `noArtworkImage`: a grey tile with a pale note, for an item without a cover (or no item).
    static let noArtwork: Picture = {
        let side = 36
        var pixels = [UInt8](repeating: 0, count: side * side * 4)
        func set(_ x: Int, _ y: Int, _ level: UInt8) {
            let i = (y * side + x) * 4
            pixels[i] = level; pixels[i + 1] = level; pixels[i + 2] = UInt8(min(255, Int(level) + 24));
            pixels[i + 3] = 255
        }
        for y in 0..<side { for x in 0..<side { set(x, y, UInt8(58 + (x + y) / 3)) } }
        // A quaver: two note heads joined by a beam.
        for (cx, cy) in [(12, 26), (25, 23)] {
            for y in 0..<side {
                for x in 0..<side where (x - cx) * (x - cx) * 2 + (y - cy) * (y - cy) * 3 <= 26 { set(x, y, 210) }
            }
        }
        for y in 8...26 { set(15, y, 210); set(16, y, 210) }
        for y in 6...23 { set(28, y, 210); set(29, y, 210) }
        for x in 15...29 { for dy in 0..<3 { set(x, 8 - (x - 15) * 2 / 14 + dy, 210) } }
        return Picture(width: side, height: side, pixels: pixels)!
    }()

    /// The now-playing item's artwork (embedded, a cover file beside it, or the one the system player names), once
    /// read off the game thread; none until then.
    private func artworkPicture() -> Picture? {
        guard player.playbackState != .stopped, let item = player.nowPlayingItem else { return nil }
        if nowPlayingArtwork?.itemID != item.persistentID { nowPlayingArtwork = ArtworkLoader(item, side: 72) }
        return nowPlayingArtwork?.picture ?? nil
    }

    func drawPanel(_ canvas: Canvas, _ rect: Rect, title: String) {
        canvas.fillRect(Rect(0, 0, World.width, World.height), Color(0, 0, 0, 120))
        canvas.fillRect(rect, Palette.panel)
        canvas.strokeRect(rect, Palette.frame)
        text(canvas, title, Point(rect.center.x, rect.y + 14), \.title, anchor: .topCenter)
    }

    private func drawMenu(_ canvas: Canvas) {
        let panel = Self.menuPanel
        drawPanel(canvas, panel, title: localized("Paused"))
        let labels =
            [localized("Audio session"), localized("Music player"), localized("Repeat music")]
            + GameSettings.busNames.map(Self.busTitle) + [""]
        let rowY: [Double] = [150, 195, 240] + GameSettings.busNames.indices.map { 285 + Double($0) * 40 } + [468]
        canvas.fillRect(Rect(panel.x + 8, rowY[menuFocus] - 20, panel.width - 16, 40), Palette.focus)
        for (row, label) in labels.enumerated() where !label.isEmpty {
            text(canvas, label, Point(panel.x + 24, rowY[row]), anchor: .centerLeft)
        }
        for control in menuElements() {
            if case .setVolume(let bus, let gain) = control.action {
                canvas.fillRect(control.rect, Palette.button)
                canvas.fillRect(
                    Rect(control.rect.x, control.rect.y, control.rect.width * Double(gain), control.rect.height),
                    Palette.buttonSelected)
                canvas.strokeRect(control.rect, Palette.frame)
                text(
                    canvas, "\(Int((gain * 100).rounded()))%", Point(control.rect.maxX + 10, control.rect.center.y),
                    \.small, anchor: .centerLeft)
                _ = bus
            } else {
                drawButton(canvas, control, focused: control.row == menuFocus && control.selected)
            }
        }
        text(
            canvas, localized("↑↓ choose · ←→ change · Esc resume"), Point(panel.center.x, panel.maxY - 22), \.small,
            Palette.dim, anchor: .center)
    }

    private func drawQueue(_ canvas: Canvas) {
        let panel = Self.queuePanel
        drawPanel(canvas, panel, title: localized("Music"))
        let rows = queueRows()
        for (i, row) in rows.prefix(14).enumerated() {
            let y = 110 + Double(i) * 26
            if row.isNowPlaying { canvas.fillRect(Rect(panel.x + 12, y - 2, panel.width - 24, 26), Palette.focus) }
            text(
                canvas, (row.isNowPlaying ? "▶ " : "   ") + row.line, Point(panel.x + 24, y + 11), \.body,
                anchor: .centerLeft)
        }
        if rows.count > 14 {
            text(
                canvas, localized("and {1} more", "\(rows.count - 14)"), Point(panel.x + 24, 110 + 14 * 26 + 4),
                \.small, Palette.dim)
        }
        for control in queueElements() { drawButton(canvas, control) }
    }

    private func drawAlert(_ canvas: Canvas) {
        let panel = Self.alertPanel
        drawPanel(canvas, panel, title: localized("Playback Paused"))
        text(canvas, localized("Audio output was changed"), Point(panel.center.x, panel.y + 66), anchor: .topCenter)
        for control in alertElements() { drawButton(canvas, control) }
    }
}
