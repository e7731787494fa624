import Ambience
import AmbienceHost

// The game's input: keys and the mouse, per screen. What a control does is `perform(_:)`'s.
extension GravityWave {
    public func handle(_ event: HostEvent) {
        switch event {
        case .keyDown(let key, _): heldKeys.insert(key)
        case .keyUp(let key): heldKeys.remove(key)
        case .window(.focusLost): heldKeys.removeAll()
        default: break
        }
        if alert != nil { return handleAlertInput(event) }
        switch screen {
        case .playing: handlePlayingInput(event)
        case .menu: handleMenuInput(event)
        case .picker: handlePickerInput(event)
        case .queue: handleQueueInput(event)
        }
    }

    func keyboardControls() -> ShipControls {
        let left = heldKeys.contains(.left) || heldKeys.contains(.character("a"))
        let right = heldKeys.contains(.right) || heldKeys.contains(.character("d"))
        let up = heldKeys.contains(.up) || heldKeys.contains(.character("w"))
        let down = heldKeys.contains(.down) || heldKeys.contains(.character("s"))
        return ShipControls(
            turn: (right ? 1 : 0) - (left ? 1 : 0), thrust: up ? 1 : 0, brake: down, fire: heldKeys.contains(.space))
    }

    func handlePlayingInput(_ event: HostEvent) {
        switch event {
        case .keyDown(.escape, false): perform(.openMenu)
        case .keyDown(.character("p"), false): perform(.playPause)
        case .keyDown(.character("m"), false): perform(.addOrShowMusic)
        case .keyDown(.character("x"), false): perform(.playAppSound)
        case .keyDown(.character("n"), false): perform(.nextTrack)
        case .mouseDown(let point, 1):
            if let button = hudButtons().first(where: { $0.rect.contains(point) && $0.enabled }) {
                perform(button.action)
            }
        default: break
        }
    }

    func handleMenuInput(_ event: HostEvent) {
        let rows = Self.menuRows
        switch event {
        case .keyDown(.escape, false): perform(.closeMenu)
        case .keyDown(.up, _):
            menuFocus = (menuFocus + rows - 1) % rows
            click()
        case .keyDown(.down, _):
            menuFocus = (menuFocus + 1) % rows
            click()
        case .keyDown(.left, _): adjustMenuRow(by: -1)
        case .keyDown(.right, _): adjustMenuRow(by: 1)
        case .keyDown(.enter, false):
            if menuFocus == rows - 1 { perform(.closeMenu) } else { adjustMenuRow(by: 1) }
        case .keyDown(.character("q"), false): perform(.quit)
        case .mouseDown(let point, 1):
            for element in menuElements() where element.rect.contains(point) {
                menuFocus = element.row
                if case .setVolume(let bus, _) = element.action {
                    draggingSlider = bus
                    perform(.setVolume(bus: bus, gain: sliderValue(at: point, in: element.rect)))
                } else {
                    perform(element.action)
                }
                return
            }
        case .mouseMoved(let point):
            guard let bus = draggingSlider,
                let slider = menuElements().first(where: {
                    if case .setVolume(bus, _) = $0.action { return true } else { return false }
                })
            else { return }
            setVolume(bus, sliderValue(at: point, in: slider.rect))
        case .mouseUp: draggingSlider = nil
        default: break
        }
    }

    func adjustMenuRow(by step: Int) {
        switch menuFocus {
        case 0:
            let all = SessionCategory.allCases
            let index = all.firstIndex(of: engine.session.category) ?? 0
            perform(.setCategory(all[(index + all.count + step) % all.count]))
        case 1:
            perform(.setPlayer(settings.player == .application ? .system : .application))
        case 2:
            perform(.setRepeat(!settings.repeatMusic))
        case 3..<(3 + GameSettings.busNames.count):
            let bus = GameSettings.busNames[menuFocus - 3]
            perform(.setVolume(bus: bus, gain: max(0, min(1, (settings.volumes[bus] ?? 1) + Float(step) * 0.05))))
        default:
            perform(step > 0 ? .closeMenu : .quit)
        }
    }

    func handleQueueInput(_ event: HostEvent) {
        switch event {
        case .keyDown(.escape, false), .keyDown(.enter, false): perform(.queueDone)
        case .keyDown(.character("a"), false): perform(.addOrShowMusic)
        case .mouseDown(let point, 1):
            if let element = queueElements().first(where: { $0.rect.contains(point) }) { perform(element.action) }
        default: break
        }
    }

    func handleAlertInput(_ event: HostEvent) {
        switch event {
        case .keyDown(.enter, false): perform(.alertResume)
        case .keyDown(.escape, false): perform(.alertStop)
        case .mouseDown(let point, 1):
            if let element = alertElements().first(where: { $0.rect.contains(point) }) { perform(element.action) }
        default: break
        }
    }

}
