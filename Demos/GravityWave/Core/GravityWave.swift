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
        /// What the music player launcher searches (PATH, the XDG folders) and gives the player it starts when the
        /// System player is chosen and none runs; the process's own environment by default.
        public var playerLaunchEnvironment: [String: String]? = nil
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
    public internal(set) var screen = Screen.playing
    public private(set) var alert: Alert?
    /// When set, the pilot flies instead of the keys.
    public var pilot: Pilot?
    public private(set) var settings: GameSettings
    private var savedSettings: GameSettings
    /// The bundled soundtrack: every audio file in `Assets/Music`, in name order.
    public let soundtrack: MediaItemCollection
    /// The music the user picked, once they have (then "Add Music" becomes "Show Music").
    public internal(set) var userCollection: MediaItemCollection?
    public internal(set) var picker: MediaPicker?
    var library: MediaLibrary?
    var scan: LibraryScan?
    /// Why the library could not be opened or scanned, shown in the picker.
    public internal(set) var libraryProblem: String?
    /// The user's own music was playing at start-up (or started later): the game's soundtrack stays off.
    public private(set) var soundtrackOffForUserMusic = false
    private var soundtrackPausedByHint = false
    /// The game's music played as the game last saw it (after its events, an action, the start): what a route change
    /// paused, since the session's pause comes before its notice.
    private var musicPlayedLastStep = false
    /// "Play App Sound": off while its sound plays.
    public private(set) var appSoundButton = AppSoundButton()
    /// The game's player has played this run: once it stops, the Now Playing line says the music ended.
    public private(set) var hasPlayedMusic = false
    /// AddMusic's `playedMusicOnce`: the user's picks have been played, so leaving the list does not start them again.
    private var playedUserMusicOnce = false
    /// Between an interruption's beginning and its end.
    public private(set) var isInterrupted = false
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
    /// A desktop player being started for the System player, and the songs waiting for it.
    var pendingPlayerLaunch: (launcher: PlayerLauncher, collection: MediaItemCollection)?
    /// The system player was handed the user's picks and has not played them yet: a refusal moves them to the game's.
    var systemQueueUnconfirmed = false
    /// The player choice the settings file keeps while a fallback shows another (the user chose System; it failed).
    private var playerChoiceToSave: PlayerChoice?
    /// The cursor and scroll of each list the picker opened from, restored on the way back.
    var pickerPositions: [(cursor: Int, scroll: Int)] = []
    var draggingSlider: String?
    var heldKeys: Set<Key> = []
    var ignoreTextThisFrame = false
    var hue = 0.62
    var nowPlayingArtwork: ArtworkLoader?
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
        soundtrack = MediaItemCollection(
            items: GameAudio.musicFiles(in: "\(options.assets)/Music").map(MediaItem.init(path:)))
        applyVolumes()

        engine.session.setCategory(options.category)
        engine.session.setActive(true)
        engine.musicPlayer.beginGeneratingPlaybackNotifications()
        // As the seed sets its application player: no shuffle, no repeat, so the music ends (the pause menu may
        // turn repeat on).
        engine.musicPlayer.shuffleMode = .off
        engine.musicPlayer.repeatMode = settings.repeatMusic ? .all : .none
        if settings.player == .system && engine.gameSystemMusicPlayer == nil {
            statusMessage = localized("System player not available: using the game's player")
        }
        // Before the first update: the system player is the game's music, so music it plays now is not the user's.
        engine.systemMusicPlayer.isGameMusic = settings.player == .system
        // The UtopiaGL rule: music the user was already playing goes on, and the game's soundtrack stays off. In solo
        // ambient the game claims the output (the session paused the other players) and its soundtrack plays.
        let userMusicPlaying =
            engine.session.otherMusicWasPlayingAtLaunch || engine.session.secondaryAudioShouldBeSilencedHint
        engine.musicPlayer.setQueue(with: soundtrack)
        if player !== engine.musicPlayer { player.beginGeneratingPlaybackNotifications() }
        if userMusicPlaying && options.category != .soloAmbient && player === engine.musicPlayer {
            soundtrackOffForUserMusic = true
        } else if player === engine.musicPlayer && !soundtrack.items.isEmpty {
            player.play()
        }
        musicPlayedLastStep = player.playbackState == .playing
    }

    /// What the Now Playing line shows: instructions, the item, or that the music ended.
    public var nowPlayingLine: NowPlayingLine {
        NowPlayingLine(item: player.nowPlayingItem, state: player.playbackState, hasPlayedMusic: hasPlayedMusic)
    }

    /// The Now Playing line's text: "Now Playing: title by artist", or instructions, in the user's language.
    public var nowPlayingText: String { nowPlayingLine.text }

    /// The note under the Now Playing line, if any.
    public var hudNote: String? {
        if isInterrupted { return localized("Audio interrupted") }
        if soundtrackOffForUserMusic { return localized("Your music is playing: the game's music is off") }
        return statusMessage
    }

    /// A library scan started by the picker is still running.
    var scanInProgress: Bool { scan != nil }

    var musicIsPlaying: Bool { player.playbackState == .playing || soundtrackOffForUserMusic }

    // MARK: Frame hooks

    /// Advances the game by one fixed step.
    public func update(dt: Double) {
        updates += 1
        if player.playbackState == .playing { hasPlayedMusic = true }
        if isSimulating {
            let controls = pilot?.controls(for: world) ?? keyboardControls()
            for cue in world.step(dt: dt, controls: controls) { audio.play(cue) }
        }
        audio.updateThrust(
            level: world.ship.thrustLevel, at: world.ship.position, audible: isSimulating && world.ship.isAlive)
        if options.ambientVoices > 0 && updates % 30 == 1 { audio.keepAmbientVoices(options.ambientVoices) }
        pollPlayerLaunch()
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
        defer { musicPlayedLastStep = player.playbackState == .playing }
        for event in events {
            appSoundButton.handle(event)
            switch event {
            case .music(.nowPlayingItemDidChange), .systemMusic(.nowPlayingItemDidChange):
                nowPlayingArtwork = nil
            case .music(.playbackStateDidChange(let state)), .systemMusic(.playbackStateDidChange(let state)):
                if state == .playing { hasPlayedMusic = true }
                if state == .playing, case .systemMusic = event { systemQueueUnconfirmed = false }
                // The queue ended: as the seed does, stop, so that Play starts the queue from its first item.
                if state == .stopped, player === engine.musicPlayer, engine.musicPlayer.nowPlayingItem == nil {
                    engine.musicPlayer.stop()
                }
            case .session(let note):
                sessionEvents.append(note)
                handleSession(note)
            case .systemMusic(.commandFailed(_, let command, let reason))
            where systemQueueUnconfirmed && ["OpenUri", "AddTrack"].contains(command) && player !== engine.musicPlayer:
                // The player would not take the picks: "Show Music" must not stay for a queue that never plays.
                systemQueueUnconfirmed = false
                fallBackToApplicationPlayer(adding: nil, refused: true, reason: reason.description)
            default:
                break
            }
        }
    }

    private func handleSession(_ note: SessionNotification) {
        switch note {
        case .routeChange(let change) where change.reason == .oldDeviceUnavailable:
            // The session has already paused the game's audio. AddMusic asks whether to resume only when app sound
            // (its sound, or the game's music) was playing; with nothing of it paused the pause is lifted at once.
            if !appSoundButton.isEnabled || musicPlayedLastStep {
                alert = .routeChange
            } else {
                engine.session.resumeAfterRouteChange()
            }
        case .interruption(.began):
            isInterrupted = true
        case .interruption(.ended):
            // The engine resumed what the interruption stopped, and only that (the app sound, music that played).
            isInterrupted = false
        case .silenceSecondaryAudioHint(true):
            // Only the game's own soundtrack makes way: on the system player the user's music is the game's music.
            guard engine.session.category != .soloAmbient, userCollection == nil, player === engine.musicPlayer
            else { return }
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
        pendingPlayerLaunch?.launcher.cancel()
        saveSettingsIfChanged()
    }

    // MARK: Actions

    /// Everything a button, key or menu row can do.
    public enum Action: Equatable {
        case playPause, nextTrack, addOrShowMusic, playAppSound
        case openMenu, closeMenu, quit
        case setCategory(SessionCategory)
        case setPlayer(PlayerChoice)
        case setRepeat(Bool)
        case setVolume(bus: String, gain: Float)
        case pickerToggle(MediaItem), pickerOpen(MediaBrowser.Row), pickerBack, pickerTab(MediaBrowser.Tab)
        case pickerAddAll, pickerJump(String), pickerDone, pickerCancel
        case queueDone
        case alertResume, alertStop
    }

    /// Does what a control asks, with a click on the `ui` bus.
    public func perform(_ action: Action) {
        defer { musicPlayedLastStep = player.playbackState == .playing }
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
            playAppSound()
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
        case .setRepeat(let on):
            settings.repeatMusic = on
            engine.musicPlayer.repeatMode = on ? .all : .none
            saveSettingsIfChanged()
        case .setVolume(let bus, let gain):
            setVolume(bus, gain)
        case .pickerToggle, .pickerOpen, .pickerBack, .pickerTab, .pickerAddAll, .pickerJump, .pickerDone,
            .pickerCancel:
            performPickerAction(action)
        case .queueDone:
            screen = .playing
            restorePlaybackState()
        case .alertResume:
            alert = nil
            engine.session.resumeAfterRouteChange()
        case .alertStop:
            alert = nil
            // What the route change paused is stopped (effects rewound, the music stopped), as the user asked.
            engine.session.stopAfterRouteChange()
            player.stop()
            appSoundButton.stoppedAfterRouteChange()
        }
    }

    /// AddMusic's `playAppSound`: the sound plays and its button turns off until the sound finishes. After a route
    /// change's Stop the same voice, held at its start, plays again.
    private func playAppSound() {
        guard appSoundButton.isEnabled else { return }
        let held = appSoundButton.voice
        if held.isAlive && held.resume() == .ok {
            appSoundButton.started(held)
        } else {
            appSoundButton.started(audio.play(SoundCue(kind: .appSound, position: nil, gain: 1, pitch: 0.8)))
        }
    }

    /// AddMusic's `restorePlaybackState`, on leaving the picker or the list: the player is left as it was (playing,
    /// paused, or stopped with "music ended"), except that music the user picked and never heard starts.
    func restorePlaybackState() {
        guard player.playbackState == .stopped, userCollection != nil, !playedUserMusicOnce else { return }
        playedUserMusicOnce = true
        player.play()
    }

    func click() { audio.play(SoundCue(kind: .uiClick, position: nil, gain: 0.8)) }

    func setVolume(_ bus: String, _ gain: Float) {
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
        var kept = settings
        if let playerChoiceToSave { kept.player = playerChoiceToSave }
        guard kept != savedSettings else { return }
        do {
            try kept.save(to: options.settingsPath)
            savedSettings = kept
        } catch {
            statusMessage = error.description
        }
    }

    /// Changes the player the music goes through. `remember` false (a fallback) keeps the user's saved choice.
    func switchPlayer(to choice: PlayerChoice, remember: Bool = true) {
        let old = player
        playerChoiceToSave = remember ? nil : (playerChoiceToSave ?? settings.player)
        settings.player = choice
        saveSettingsIfChanged()
        if choice == .application, let pending = pendingPlayerLaunch {
            // A player still starting is not the game's any more: its songs go to the game's player.
            pending.launcher.cancel()
            pendingPlayerLaunch = nil
            userCollection = MediaItemCollection(items: (userCollection?.items ?? []) + pending.collection.items)
        }
        systemQueueUnconfirmed = false
        statusMessage =
            choice == .system && engine.gameSystemMusicPlayer == nil
            ? localized("System player not available: using the game's player") : nil
        let new = player
        guard old !== new else { return }
        let wasPlaying = old.playbackState == .playing
        old.pause()
        // After the pause: a command to the system player takes it on as the game's music.
        engine.systemMusicPlayer.isGameMusic = new !== engine.musicPlayer
        soundtrackOffForUserMusic = false
        soundtrackPausedByHint = false
        if new === engine.musicPlayer {
            // The game's player holds the user's picks, else the soundtrack.
            let wanted = userCollection ?? soundtrack
            if engine.musicPlayer.items != wanted.items { setQueue(wanted) }
        } else {
            // Like the iPod player in AddMusic: the system player goes on with its own music unless the user picked some.
            new.beginGeneratingPlaybackNotifications()
            if let picks = userCollection {
                if needsPlayerLaunch {
                    userCollection = nil
                    startSystemPlayer(then: picks)
                } else if setQueue(picks) {
                    systemQueueUnconfirmed = true
                } else {
                    return fallBackToApplicationPlayer(adding: nil, refused: true)
                }
            }
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
            statusMessage = localized("Music player: {1}", "\(error)")
            return false
        }
    }

    /// Whether the system player needs a desktop player started first: one is on its way, or none on the bus can be
    /// driven (a browser tab that only shows what plays is no music player).
    private var needsPlayerLaunch: Bool {
        pendingPlayerLaunch != nil || !engine.systemMusicPlayer.players.contains { $0.canControl && $0.canPlay }
    }

    /// AddMusic's rule: the first collection becomes the queue and plays; later ones are added to its end, and what
    /// is playing goes on.
    func updatePlayerQueue(with collection: MediaItemCollection) {
        // No desktop player to hand the songs to: one is started first (GravityWave+Picker.swift).
        if player !== engine.musicPlayer && needsPlayerLaunch { return startSystemPlayer(then: collection) }
        guard let existing = userCollection else {
            // "Show Music" only for a queue that plays: one the system player refuses goes to the game's player.
            guard setQueue(collection) else { return fallBackToApplicationPlayer(adding: collection, refused: true) }
            systemQueueUnconfirmed = player !== engine.musicPlayer
            userCollection = collection
            soundtrackOffForUserMusic = false
            soundtrackPausedByHint = false
            playedUserMusicOnce = true
            player.play()
            return
        }
        userCollection = MediaItemCollection(items: existing.items + collection.items)
        do {
            try player.append(collection)  // the song playing goes on where it is
        } catch {
            statusMessage = localized("Music player: {1}", "\(error)")
        }
    }
}
