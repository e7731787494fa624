import Ambience
import AmbienceHost
import AmbiencePlatform

// The picker screen's behaviour: opening it, its actions (browse, select, add all, jump), its keys and mouse, and
// what its outcome does. Its drawing is GameScreen+Picker.swift's.
extension GravityWave {
    /// Opens the media picker on the user's library (scanning it in the background), or on `library` when given.
    public func openPicker(library given: MediaLibrary? = nil) {
        if let given {
            library = given
        } else if library == nil {
            do {
                let opened = try MediaLibrary(folders: options.libraryFolders, databasePath: options.libraryDatabase)
                library = opened
                scan = LibraryScan(opened)
            } catch {
                libraryProblem = error.description
                statusMessage = localized("Music library: {1}", error.description)
                return
            }
        }
        guard let library else { return }
        let picker = MediaPicker(library: library)
        picker.allowsPickingMultipleItems = true
        picker.prompt = localized("Add songs to play")
        let returnTo = screen == .queue ? Screen.queue : .playing
        picker.onFinish = { [weak self] result in self?.pickerFinished(result, returnTo: returnTo) }
        self.picker = picker
        pickerCursor = 0
        pickerScroll = 0
        pickerPositions = []
        screen = .picker
        ignoreTextThisFrame = true
    }

    func pickerFinished(_ result: MediaPickerResult, returnTo: Screen) {
        picker = nil
        switch result {
        case .didPick(let collection):
            updatePlayerQueue(with: collection)
            screen = .playing
        case .didCancel:
            screen = returnTo
        }
        restorePlaybackState()
    }

    // MARK: No desktop player running

    /// The System player was chosen and no desktop player is on the bus: one is started, off the game thread, and the
    /// songs wait for it. "Add Music" stays until they play.
    func startSystemPlayer(then collection: MediaItemCollection) {
        if let pending = pendingPlayerLaunch {
            let waiting = MediaItemCollection(items: pending.collection.items + collection.items)
            pendingPlayerLaunch = (pending.launcher, waiting)
            return
        }
        let launcher = PlayerLauncher(
            for: engine.systemMusicPlayer, busAddress: engine.configuration.sessionBusAddress,
            environment: options.playerLaunchEnvironment ?? ChildProgram.currentEnvironment)
        pendingPlayerLaunch = (launcher, collection)
        statusMessage = localized("Starting a music player…")
    }

    /// Each frame while a player is being started: once it is on the bus it gets the songs; when none could be
    /// started, the game says so and plays them itself.
    func pollPlayerLaunch() {
        guard let pending = pendingPlayerLaunch, let outcome = pending.launcher.outcome else { return }
        pendingPlayerLaunch = nil
        switch outcome {
        case .started(let busName, _, _):
            statusMessage = nil
            engine.systemMusicPlayer.preferredPlayer = busName
            updatePlayerQueue(with: pending.collection)
        case .failed(let error):
            fallBackToApplicationPlayer(adding: pending.collection, refused: false, reason: error.description)
        }
    }

    /// The user's picks, with `collection` added, go to the game's own player, which the menu then shows as chosen
    /// (so it says which one plays; the settings file keeps the user's choice), with a line saying why.
    func fallBackToApplicationPlayer(adding collection: MediaItemCollection?, refused: Bool, reason: String? = nil) {
        let why = reason ?? statusMessage ?? ""
        let songs = MediaItemCollection(items: (userCollection?.items ?? []) + (collection?.items ?? []))
        userCollection = nil
        switchPlayer(to: .application, remember: false)
        if !songs.items.isEmpty { updatePlayerQueue(with: songs) }
        statusMessage =
            refused
            ? localized("The music player refused the songs ({1}): playing in the game's player", why)
            : localized("No music player could be started ({1}): playing in the game's player", why)
    }

    /// The picker's part of `perform(_:)`.
    func performPickerAction(_ action: Action) {
        guard let picker else { return }
        switch action {
        case .pickerToggle(let item):
            picker.toggleSelection(item)
        case .pickerOpen(let row):
            let position = (pickerCursor, pickerScroll)
            if picker.open(row) {
                pickerPositions.append(position)
                (pickerCursor, pickerScroll) = (0, 0)
            }
        case .pickerBack:
            if picker.goBack() { (pickerCursor, pickerScroll) = pickerPositions.popLast() ?? (0, 0) }
        case .pickerTab(let tab):
            picker.show(tab)
            pickerPositions = []
            (pickerCursor, pickerScroll) = (0, 0)
        case .pickerAddAll:
            picker.selectAll()
        case .pickerJump(let letter):
            guard let row = picker.browser.firstRow(under: letter) else { return }
            pickerCursor = row
            pickerScroll = min(row, max(picker.browser.shownRows.count - Self.pickerRows, 0))
        case .pickerDone:
            picker.done()
        case .pickerCancel:
            picker.cancel()
        default:
            break
        }
    }

    func handlePickerInput(_ event: HostEvent) {
        guard let picker else { return }
        let rows = picker.browser.shownRows
        switch event {
        case .text(let text):
            guard !ignoreTextThisFrame else { return }
            picker.filterText += text
            (pickerCursor, pickerScroll) = (0, 0)
        case .keyDown(.backspace, _):
            // An empty filter has nothing to take back: the key goes back a list, as the iPod's back button.
            guard !picker.filterText.isEmpty else { return perform(.pickerBack) }
            picker.filterText.removeLast()
            (pickerCursor, pickerScroll) = (0, 0)
        case .keyDown(.up, _): movePickerCursor(by: -1)
        case .keyDown(.down, _): movePickerCursor(by: 1)
        case .keyDown(.pageUp, _): movePickerCursor(by: -Self.pickerRows)
        case .keyDown(.pageDown, _): movePickerCursor(by: Self.pickerRows)
        case .keyDown(.left, false): perform(.pickerBack)
        case .keyDown(.right, false):
            if rows.indices.contains(pickerCursor), rows[pickerCursor].opens {
                perform(.pickerOpen(rows[pickerCursor]))
            }
        case .keyDown(.enter, false):
            guard rows.indices.contains(pickerCursor) else { return }
            let row = rows[pickerCursor]
            perform(row.opens ? .pickerOpen(row) : .pickerToggle(row.items[0]))
        case .keyDown(.function(let number), false):
            if MediaBrowser.Tab.allCases.indices.contains(number - 1) {
                perform(.pickerTab(MediaBrowser.Tab.allCases[number - 1]))
            } else if number == 5 {
                perform(.pickerAddAll)
            }
        case .keyDown(.tab, false): perform(.pickerDone)
        case .keyDown(.escape, false): perform(.pickerCancel)
        case .mouseWheel(let dy):
            pickerScroll = max(0, min(max(rows.count - Self.pickerRows, 0), pickerScroll - dy * 3))
        case .mouseDown(let point, 1):
            for element in pickerElements() where element.rect.contains(point) && element.enabled {
                if element.row >= 0, rows.indices.contains(element.row) { pickerCursor = element.row }
                perform(element.action)
                return
            }
        default: break
        }
    }

    func movePickerCursor(by step: Int) {
        guard let picker, !picker.browser.shownRows.isEmpty else { return }
        pickerCursor = max(0, min(picker.browser.shownRows.count - 1, pickerCursor + step))
        if pickerCursor < pickerScroll { pickerScroll = pickerCursor }
        if pickerCursor >= pickerScroll + Self.pickerRows { pickerScroll = pickerCursor - Self.pickerRows + 1 }
    }
}
