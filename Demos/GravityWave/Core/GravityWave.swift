import Ambience
import AmbienceHost
import Dispatch
import Glibc
import Synchronization

/// The game: the world, its sounds, the music, the HUD and its screens, and the session rules a well-behaved game
/// follows. Driven by a `GameHost` (or by a test) through `handle`, `update`, `handleAudioEvents` and `draw`.
public final class GravityWave {
    /// How the game starts.
    public struct Options: Sendable {
        /// The folder holding `SFX/` and `Music/`.
        public var assets: String
        public var seed: UInt64 = 1
        public var settingsPath: String
        /// Quiet looping voices kept going, to measure the engine under load.
        public var ambientVoices = 0
        /// Bus gains that override the saved settings for this run only (`--volume music=0`).
        public var volumeOverrides: [String: Float] = [:]
        /// The picker's library: its folders (default: the XDG music folder) and index (default: the XDG cache).
        public var libraryFolders: [String]? = nil
        public var libraryDatabase: String? = nil
        /// Ambient, as UtopiaGL: the user's music plays on, and the game's effects mix with it.
        public var category = SessionCategory.ambient

        public init(assets: String, settingsPath: String) {
            self.assets = assets
            self.settingsPath = settingsPath
        }
    }

    /// The screen in front.
    public enum Screen: Sendable, Equatable { case playing, menu, picker, queue }
    /// A modal alert over every screen.
    public enum Alert: Sendable, Equatable {
        /// "Playback Paused: audio output was changed", with Resume and Stop.
        case routeChange
    }

    public let engine: AudioEngine
    public let options: Options
    public private(set) var world: World
    let audio: GameAudio
    public private(set) var screen = Screen.playing
    public private(set) var alert: Alert?
    /// When set, the pilot flies instead of the keys.
    public var pilot: Pilot?
    public private(set) var settings: GameSettings
    private var savedSettings: GameSettings
    /// The bundled soundtrack: every audio file in `Assets/Music`, in name order.
    public let soundtrack: MediaItemCollection
    /// The music the user picked, once they have (then "Add Music" becomes "Show Music").
    public private(set) var userCollection: MediaItemCollection?
    public private(set) var picker: MediaPicker?
    private var library: MediaLibrary?
    private var scan: LibraryScan?
    /// Why the library could not be opened or scanned, shown in the picker.
    public private(set) var libraryProblem: String?
    /// The user's own music was playing at start-up (or started later): the game's soundtrack stays off.
    public private(set) var soundtrackOffForUserMusic = false
    private var soundtrackPausedByHint = false
    /// Every session notification the game received, in order.
    public private(set) var sessionEvents: [SessionNotification] = []
    /// A line for the HUD about the last thing that did not work out.
    public internal(set) var statusMessage: String?
    /// Set by the menu's Quit; the host loop stops when it sees it.
    public private(set) var wantsToQuit = false

    // Screen state.
    var menuFocus = 0
    var pickerCursor = 0
    var pickerScroll = 0
    var draggingSlider: String?
    var heldKeys: Set<Key> = []
    private var ignoreTextThisFrame = false
    var hue = 0.62
    var nowPlayingArtwork: (id: UInt64, picture: Picture?)?
    var fonts: Fonts?
    var fontsFailed = false
    private var updates = 0

    /// The player the game's music goes through: the application player, or the system one when chosen and present.
    public var player: any GameMusicPlayer {
        if settings.player == .system, let system = engine.gameSystemMusicPlayer { return system }
        return engine.musicPlayer
    }

    /// Whether the world moves: no menu, picker, list or alert in front.
    public var isSimulating: Bool { screen == .playing && alert == nil }

    public init(engine: AudioEngine, options: Options) throws(GameError) {
        self.engine = engine
        self.options = options
        world = World(seed: options.seed)
        do {
            audio = try GameAudio(engine: engine, assets: options.assets)
        } catch {
            throw .assets(error.description)
        }
        settings = GameSettings.load(from: options.settingsPath)
        savedSettings = settings
        soundtrack = MediaItemCollection(items: Self.musicFiles(in: "\(options.assets)/Music").map(MediaItem.init(path:)))
        applyVolumes()

        engine.session.setCategory(options.category)
        engine.session.setActive(true)
        engine.musicPlayer.beginGeneratingPlaybackNotifications()
        engine.musicPlayer.repeatMode = .all
        if settings.player == .system && engine.gameSystemMusicPlayer == nil {
            statusMessage = "System player not available in this build: using the game's player"
        }
        // The UtopiaGL rule: music the user was already playing goes on, and the game's soundtrack stays off. In solo
        // ambient the game claims the output (the session paused the other players) and its soundtrack plays.
        let userMusicPlaying = engine.session.otherMusicWasPlayingAtLaunch || engine.session.secondaryAudioShouldBeSilencedHint
        engine.musicPlayer.setQueue(with: soundtrack)
        if player !== engine.musicPlayer { player.beginGeneratingPlaybackNotifications() }
        if userMusicPlaying && options.category != .soloAmbient {
            soundtrackOffForUserMusic = true
        } else if player === engine.musicPlayer && !soundtrack.items.isEmpty {
            player.play()
        }
    }

    /// The Now Playing line: "Now Playing: title by artist".
    public var nowPlayingText: String {
        guard let item = player.nowPlayingItem, player.playbackState != .stopped else {
            return soundtrackOffForUserMusic ? "Now Playing: your music" : "Now Playing: nothing"
        }
        let title = item.title ?? "Untitled"
        return item.artist.map { "Now Playing: \(title) by \($0)" } ?? "Now Playing: \(title)"
    }

    /// The note under the Now Playing line, if any.
    public var hudNote: String? {
        if soundtrackOffForUserMusic { return "Your music is playing — game soundtrack off" }
        return statusMessage
    }

    /// A library scan started by the picker is still running.
    var scanInProgress: Bool { scan != nil }

    var musicIsPlaying: Bool { player.playbackState == .playing || soundtrackOffForUserMusic }

    // MARK: Frame hooks

    /// Advances the game by one fixed step.
    public func update(dt: Double) {
        updates += 1
        if isSimulating {
            let controls = pilot?.controls(for: world) ?? keyboardControls()
            for cue in world.step(dt: dt, controls: controls) { audio.play(cue) }
        }
        audio.updateThrust(level: world.ship.thrustLevel, at: world.ship.position, audible: isSimulating && world.ship.isAlive)
        if options.ambientVoices > 0 && updates % 30 == 1 { audio.keepAmbientVoices(options.ambientVoices) }
        if let scan, scan.isFinished {
            self.scan = nil
            picker?.reload()
            libraryProblem = scan.problem
        }
        // The background drifts through the hues while music plays (a game busy doing something while music plays).
        if musicIsPlaying { hue = (hue + dt * 0.012).truncatingRemainder(dividingBy: 1) }
    }

    /// Tells the game a frame ended: `frame` frames and `time` seconds of game time are done.
    public func frameEnded(_ frame: Int, time: Double) {
        audio.frame = frame
        audio.time = time
        ignoreTextThisFrame = false
    }

    /// Events from `engine.update()`.
    public func handleAudioEvents(_ events: [AudioEvent]) {
        for event in events {
            switch event {
            case .music(.nowPlayingItemDidChange), .systemMusic(.nowPlayingItemDidChange):
                nowPlayingArtwork = nil
            case .session(let note):
                sessionEvents.append(note)
                handleSession(note)
            default:
                break
            }
        }
    }

    private func handleSession(_ note: SessionNotification) {
        switch note {
        case .routeChange(let change) where change.reason == .oldDeviceUnavailable:
            // The session has already paused the game's audio; ask whether to resume it (AddMusic's alert).
            alert = .routeChange
        case .silenceSecondaryAudioHint(true):
            guard engine.session.category != .soloAmbient, userCollection == nil else { return }
            soundtrackOffForUserMusic = true
            if player.playbackState == .playing {
                player.pause()
                soundtrackPausedByHint = true
            }
        case .silenceSecondaryAudioHint(false):
            guard soundtrackOffForUserMusic else { return }
            soundtrackOffForUserMusic = false
            if soundtrackPausedByHint {
                soundtrackPausedByHint = false
                player.play()
            }
        default:
            break
        }
    }

    /// Saves changed settings. The session's exit rules (players it paused resumed, music that was playing at
    /// launch left playing) are the engine's, in `engine.shutdown()`, which the host calls next.
    public func shutdown() {
        saveSettingsIfChanged()
    }

    // MARK: Input

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

    private func keyboardControls() -> ShipControls {
        let left = heldKeys.contains(.left) || heldKeys.contains(.character("a"))
        let right = heldKeys.contains(.right) || heldKeys.contains(.character("d"))
        let up = heldKeys.contains(.up) || heldKeys.contains(.character("w"))
        let down = heldKeys.contains(.down) || heldKeys.contains(.character("s"))
        return ShipControls(turn: (right ? 1 : 0) - (left ? 1 : 0), thrust: up ? 1 : 0, brake: down, fire: heldKeys.contains(.space))
    }

    private func handlePlayingInput(_ event: HostEvent) {
        switch event {
        case .keyDown(.escape, false): perform(.openMenu)
        case .keyDown(.character("p"), false): perform(.playPause)
        case .keyDown(.character("m"), false): perform(.addOrShowMusic)
        case .keyDown(.character("x"), false): perform(.playAppSound)
        case .keyDown(.character("n"), false): perform(.nextTrack)
        case .mouseDown(let point, 1):
            if let button = hudButtons().first(where: { $0.rect.contains(point) }) { perform(button.action) }
        default: break
        }
    }

    private func handleMenuInput(_ event: HostEvent) {
        let rows = GameSettings.busNames.count + 3
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
            guard let bus = draggingSlider, let slider = menuElements().first(where: {
                if case .setVolume(bus, _) = $0.action { return true } else { return false }
            }) else { return }
            setVolume(bus, sliderValue(at: point, in: slider.rect))
        case .mouseUp: draggingSlider = nil
        default: break
        }
    }

    private func adjustMenuRow(by step: Int) {
        switch menuFocus {
        case 0:
            let all = SessionCategory.allCases
            let index = all.firstIndex(of: engine.session.category) ?? 0
            perform(.setCategory(all[(index + all.count + step) % all.count]))
        case 1:
            perform(.setPlayer(settings.player == .application ? .system : .application))
        case 2..<(2 + GameSettings.busNames.count):
            let bus = GameSettings.busNames[menuFocus - 2]
            perform(.setVolume(bus: bus, gain: max(0, min(1, (settings.volumes[bus] ?? 1) + Float(step) * 0.05))))
        default:
            perform(step > 0 ? .closeMenu : .quit)
        }
    }

    private func handlePickerInput(_ event: HostEvent) {
        guard let picker else { return }
        switch event {
        case .text(let text):
            guard !ignoreTextThisFrame else { return }
            picker.filterText += text
            pickerCursor = 0
            pickerScroll = 0
        case .keyDown(.backspace, _):
            if !picker.filterText.isEmpty { picker.filterText.removeLast() }
            pickerCursor = 0
            pickerScroll = 0
        case .keyDown(.up, _): movePickerCursor(by: -1)
        case .keyDown(.down, _): movePickerCursor(by: 1)
        case .keyDown(.pageUp, _): movePickerCursor(by: -Self.pickerRows)
        case .keyDown(.pageDown, _): movePickerCursor(by: Self.pickerRows)
        case .keyDown(.enter, false):
            if picker.shownItems.indices.contains(pickerCursor) { perform(.pickerToggle(picker.shownItems[pickerCursor])) }
        case .keyDown(.tab, false): perform(.pickerDone)
        case .keyDown(.escape, false): perform(.pickerCancel)
        case .mouseWheel(let dy):
            pickerScroll = max(0, min(max(picker.shownItems.count - Self.pickerRows, 0), pickerScroll - dy * 3))
        case .mouseDown(let point, 1):
            for element in pickerElements() where element.rect.contains(point) {
                if case .pickerToggle(let item) = element.action, let index = picker.shownItems.firstIndex(of: item) { pickerCursor = index }
                perform(element.action)
                return
            }
        default: break
        }
    }

    private func movePickerCursor(by step: Int) {
        guard let picker, !picker.shownItems.isEmpty else { return }
        pickerCursor = max(0, min(picker.shownItems.count - 1, pickerCursor + step))
        if pickerCursor < pickerScroll { pickerScroll = pickerCursor }
        if pickerCursor >= pickerScroll + Self.pickerRows { pickerScroll = pickerCursor - Self.pickerRows + 1 }
    }

    private func handleQueueInput(_ event: HostEvent) {
        switch event {
        case .keyDown(.escape, false), .keyDown(.enter, false): perform(.queueDone)
        case .keyDown(.character("a"), false): perform(.addOrShowMusic)
        case .mouseDown(let point, 1):
            if let element = queueElements().first(where: { $0.rect.contains(point) }) { perform(element.action) }
        default: break
        }
    }

    private func handleAlertInput(_ event: HostEvent) {
        switch event {
        case .keyDown(.enter, false): perform(.alertResume)
        case .keyDown(.escape, false): perform(.alertStop)
        case .mouseDown(let point, 1):
            if let element = alertElements().first(where: { $0.rect.contains(point) }) { perform(element.action) }
        default: break
        }
    }

    // MARK: Actions

    /// Everything a button, key or menu row can do.
    public enum Action: Equatable {
        case playPause, nextTrack, addOrShowMusic, playAppSound
        case openMenu, closeMenu, quit
        case setCategory(SessionCategory)
        case setPlayer(PlayerChoice)
        case setVolume(bus: String, gain: Float)
        case pickerToggle(MediaItem), pickerDone, pickerCancel
        case queueDone
        case alertResume, alertStop
    }

    /// Does what a control asks, with a click on the `ui` bus.
    public func perform(_ action: Action) {
        click()
        switch action {
        case .playPause:
            if player.playbackState == .playing {
                player.pause()
            } else {
                // The user asked for the game's music: it plays even beside their own.
                soundtrackOffForUserMusic = false
                soundtrackPausedByHint = false
                player.play()
            }
        case .nextTrack:
            player.skipToNextItem()
        case .addOrShowMusic:
            if screen == .queue || userCollection == nil { openPicker() } else { screen = .queue }
        case .playAppSound:
            audio.play(SoundCue(kind: .appSound, position: nil, gain: 1, pitch: 0.8))
        case .openMenu:
            screen = .menu
            menuFocus = 0
        case .closeMenu:
            screen = .playing
            draggingSlider = nil
            saveSettingsIfChanged()
        case .quit:
            wantsToQuit = true
        case .setCategory(let category):
            engine.session.setCategory(category)
            if category == .soloAmbient && soundtrackOffForUserMusic {
                // Solo ambient: the session paused the other players, and the game's soundtrack takes over.
                soundtrackOffForUserMusic = false
                soundtrackPausedByHint = false
                player.play()
            }
        case .setPlayer(let choice):
            switchPlayer(to: choice)
        case .setVolume(let bus, let gain):
            setVolume(bus, gain)
        case .pickerToggle(let item):
            picker?.toggleSelection(item)
        case .pickerDone:
            picker?.done()
        case .pickerCancel:
            picker?.cancel()
        case .queueDone:
            screen = .playing
        case .alertResume:
            alert = nil
            engine.session.resumeAfterRouteChange()
        case .alertStop:
            alert = nil
            // What the route change paused is stopped (effects rewound, the music stopped), as the user asked.
            engine.session.stopAfterRouteChange()
            player.stop()
        }
    }

    private func click() { audio.play(SoundCue(kind: .uiClick, position: nil, gain: 0.8)) }

    private func setVolume(_ bus: String, _ gain: Float) {
        settings.volumes[bus] = max(0, min(1, gain))
        applyVolumes()
    }

    private func applyVolumes() {
        for name in GameSettings.busNames {
            let gain = options.volumeOverrides[name] ?? settings.volumes[name] ?? 1
            switch name {
            case "master": engine.master.gain = gain
            case "music": engine.music.gain = gain
            case "sfx": engine.sfx.gain = gain
            default: engine.ui.gain = gain
            }
        }
    }

    private func saveSettingsIfChanged() {
        guard settings != savedSettings else { return }
        do {
            try settings.save(to: options.settingsPath)
            savedSettings = settings
        } catch {
            statusMessage = error.description
        }
    }

    private func switchPlayer(to choice: PlayerChoice) {
        let old = player
        settings.player = choice
        saveSettingsIfChanged()
        statusMessage = choice == .system && engine.gameSystemMusicPlayer == nil
            ? "System player not available in this build: using the game's player" : nil
        let new = player
        guard old !== new else { return }
        let wasPlaying = old.playbackState == .playing
        old.pause()
        if new === engine.musicPlayer {
            // The game's player holds the user's picks, else the soundtrack.
            let wanted = userCollection ?? soundtrack
            if engine.musicPlayer.items != wanted.items { setQueue(wanted) }
        } else {
            // Like the iPod player in AddMusic: the system player goes on with its own music unless the user picked some.
            new.beginGeneratingPlaybackNotifications()
            if let userCollection { setQueue(userCollection) }
        }
        if wasPlaying { new.play() }
    }

    /// Sets the current player's queue; says why on the HUD when the player refuses it.
    @discardableResult
    private func setQueue(_ collection: MediaItemCollection) -> Bool {
        do {
            try player.setQueue(with: collection)
            return true
        } catch {
            statusMessage = "Music player: \(error)"
            return false
        }
    }

    // MARK: The picker

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
                statusMessage = "Music library: \(error.description)"
                return
            }
        }
        guard let library else { return }
        let picker = MediaPicker(library: library)
        picker.allowsPickingMultipleItems = true
        picker.prompt = "Add songs to play"
        let returnTo = screen == .queue ? Screen.queue : .playing
        picker.onFinish = { [weak self] result in self?.pickerFinished(result, returnTo: returnTo) }
        self.picker = picker
        pickerCursor = 0
        pickerScroll = 0
        screen = .picker
        ignoreTextThisFrame = true
    }

    private func pickerFinished(_ result: MediaPickerResult, returnTo: Screen) {
        picker = nil
        switch result {
        case .didPick(let collection):
            updatePlayerQueue(with: collection)
            screen = .playing
        case .didCancel:
            screen = returnTo
        }
    }

    /// AddMusic's rule: the first collection becomes the queue and plays; later ones are added to its end, and what
    /// is playing goes on.
    private func updatePlayerQueue(with collection: MediaItemCollection) {
        guard let existing = userCollection else {
            userCollection = collection
            guard setQueue(collection) else { return }
            soundtrackOffForUserMusic = false
            soundtrackPausedByHint = false
            player.play()
            return
        }
        let combined = MediaItemCollection(items: existing.items + collection.items)
        userCollection = combined
        if let application = player as? MusicPlayer {
            application.append(collection)
        } else {
            let wasPlaying = player.playbackState == .playing
            if setQueue(combined) && wasPlaying { player.play() }
        }
    }

    // MARK: Files

    static func musicFiles(in folder: String) -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            let lower = name.lowercased()
            if !name.hasPrefix("."), lower.hasSuffix(".ogg") || lower.hasSuffix(".mp3") || lower.hasSuffix(".wav") { names.append(name) }
        }
        return names.sorted().map { "\(folder)/\($0)" }
    }
}

/// Why the game could not start.
public enum GameError: Error, CustomStringConvertible {
    case assets(String)
    case engine(String)
    case host(String)
    case usage(String)
    case output(String)

    public var description: String {
        switch self {
        case .assets(let m): "assets: \(m)"
        case .engine(let m), .host(let m), .output(let m), .usage(let m): m
        }
    }
}

/// A library scan on a background thread; the game polls `isFinished` each update.
final class LibraryScan: Sendable {
    private let finished = Atomic<Bool>(false)
    private let outcome = Mutex<String?>(nil)

    init(_ library: MediaLibrary) {
        DispatchQueue.global(qos: .utility).async { [self] in
            do {
                _ = try library.scan()
            } catch {
                outcome.withLock { $0 = "\(error)" }
            }
            finished.store(true, ordering: .releasing)
        }
    }

    var isFinished: Bool { finished.load(ordering: .acquiring) }
    var problem: String? { outcome.withLock { $0 } }
}
