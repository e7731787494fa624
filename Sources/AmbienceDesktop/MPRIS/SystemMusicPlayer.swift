import AmbienceCore
import AmbiencePlatform
import Foundation
import Glibc
import Synchronization

/// The system music player: the desktop's own player (any MPRIS player: mpv, VLC, Rhythmbox, Spotify), driven with
/// the same API as the application player where MPRIS allows. Notifications arrive in `AudioEngine.update()` as
/// `.systemMusic(...)` events.
///
/// It drives `preferredPlayer` when set, else the player it last sent music or a command to (while `isGameMusic`),
/// else the player that is playing, else the one most recently active.
public final class SystemMusicPlayer: @unchecked Sendable {
    private let lock = Lock<Void>(())
    // Guarded by `lock`.
    /// The bus connection's client and the game's own player name; both change when the session bus comes back.
    private var client: MPRISClient?
    private var ownBusName: String?
    private var notificationDepth = 0
    /// Notifications for `update()`; past the cap the oldest give way (state changes: the newest is how it is now).
    private var events = EventQueue<MusicEvent>(capacity: SystemMusicPlayer.notificationCapacity, overflow: .dropOldest)
    private var lastActive: String?
    private var lastSeen: [String: MPRISPlayerInfo] = [:]
    private var _preferredPlayer: String?
    /// Players the game started through this object, for the exit rule.
    private var startedByGame: Set<String> = []
    /// The URIs last handed to each player as its queue, so an append can keep what is left of it.
    private var handedQueue: [String: [String]] = [:]
    /// Tells the session that the game started a player, and whether with music of its own (set by the engine).
    private var onStart: (@Sendable (String, Bool) -> Void)?
    private var _isGameMusic = false
    /// The bus name of the player the game last sent a queue or command to: its music, while `isGameMusic`.
    private var drivenPlayer: String?

    /// Without a connection until the engine hands it one (`use(client:ownBusName:)`).
    package init() {}

    /// Drives the players through this connection (nil while the session bus is gone). The players seen on an
    /// earlier one are forgotten; those the game started are still paused at exit if they come back under their names.
    package func use(client: MPRISClient?, ownBusName: String?) {
        lock.withLock { _ in
            self.client = client
            self.ownBusName = ownBusName
            if !lastSeen.isEmpty { post(.nowPlayingItemDidChange(nil)) }
            lastSeen.removeAll()
            lastActive = nil
        }
    }

    /// Calls `report` (outside any lock) with each player the game starts, and whether it handed the player music
    /// of its own, for the session's exit rule.
    package func reportStarts(to report: @escaping @Sendable (String, Bool) -> Void) {
        lock.withLock { _ in onStart = report }
    }

    private func recordStart(_ name: String, withGameMusic: Bool) {
        let report = lock.withLock { _ in
            startedByGame.insert(name)
            return onStart
        }
        report?(name, withGameMusic)
    }

    /// Whether the desktop player is the game's music: the game plays its soundtrack through it (the iPod player of
    /// the seeds), rather than beside it. Then the player this object drives (`currentPlayer`) is the game's own
    /// music for the session: it never counts toward `secondaryAudioShouldBeSilencedHint`, so a game that quiets
    /// its soundtrack on the hint cannot pause the very music it plays; and a route change that pauses the game's
    /// audio pauses it too (`AudioSession.resumeAfterRouteChange()` resumes it, `stopAfterRouteChange()` stops it).
    ///
    /// Any command or queue sent through this object, and naming `preferredPlayer`, sets it. A game that offers
    /// the system player as its music sets it when that choice is made, before the first `update()`, so that music
    /// already playing then is never taken for the user's; it sets it false when it goes back to its own player.
    public var isGameMusic: Bool {
        get { lock.withLock { _ in _isGameMusic } }
        set { lock.withLock { _ in _isGameMusic = newValue } }
    }

    /// The player the game drives as its music, when `isGameMusic`: the one it last sent a queue or command to,
    /// never merely another that the user started meanwhile (nil while that one is off the bus); before any, the one
    /// `currentPlayer` names.
    package var gameDrivenPlayer: MPRISPlayerInfo? {
        let (isGameMusic, driven) = lock.withLock { _ in (_isGameMusic, drivenPlayer) }
        guard isGameMusic else { return nil }
        guard let driven else { return currentPlayer }
        return players.first { $0.name == driven }
    }

    private var connection: (client: MPRISClient?, ownBusName: String?) {
        lock.withLock { _ -> (client: MPRISClient?, ownBusName: String?) in (client, ownBusName) }
    }

    /// Whether a session bus is there to reach players at all.
    public var isAvailable: Bool { connection.client?.isConnected ?? false }

    /// A player to use when none is playing or recently active (bus name or short name, e.g. "mpv").
    public var preferredPlayer: String? {
        get { lock.withLock { _ in _preferredPlayer } }
        set {
            lock.withLock { _ in
                _preferredPlayer = newValue
                if newValue != nil { _isGameMusic = true }
            }
        }
    }

    /// Every desktop player but the game's own.
    public var players: [MPRISPlayerInfo] {
        let (client, ownBusName) = connection
        return client?.players.filter { $0.name != ownBusName } ?? []
    }

    /// The player this object drives now: the one named by `preferredPlayer` when it is on the bus, else, while
    /// `isGameMusic`, the one the game last sent a queue or command to (a player the user starts meanwhile is theirs),
    /// else the one playing, else the most recently active, else any.
    public var currentPlayer: MPRISPlayerInfo? {
        let all = players
        let (recent, preferred, driven) = lock.withLock { _ in
            (lastActive, _preferredPlayer, _isGameMusic ? drivenPlayer : nil)
        }
        let (client, ownBusName) = connection
        if let preferred, let player = client?.player(named: preferred), player.name != ownBusName { return player }
        if let driven, let player = all.first(where: { $0.name == driven }) { return player }
        if let playing = all.first(where: { $0.status == .playing }) { return playing }
        if let recent, let player = all.first(where: { $0.name == recent }) { return player }
        return all.first
    }

    // MARK: Transport

    /// Asks the desktop player to play. The player it starts this way plays the game's music from then on: the session
    /// does not pause it as another app's, and the exit rule pauses it.
    public func play() { send(.play, started: true) }
    /// Asks the desktop player to pause.
    public func pause() { send(.pause) }
    /// Asks the desktop player to stop.
    public func stop() { send(.stop) }
    /// Asks the desktop player for its next track.
    public func skipToNextItem() { send(.next) }
    /// Asks the desktop player for its previous track.
    public func skipToPreviousItem() { send(.previous) }

    /// What the desktop player said it was doing when last heard from (`.stopped` when there is none).
    public var playbackState: PlaybackState {
        switch currentPlayer?.status {
        case .playing?: .playing
        case .paused?: .paused
        default: .stopped
        }
    }

    /// Seconds into the current track; setting it jumps there. A NaN or infinite time is ignored.
    public var currentPlaybackTime: Double {
        get { currentPlayer?.position ?? 0 }
        set { try? seek(to: newValue) }
    }

    /// Moves the player to `seconds` into its track: the throwing twin of setting `currentPlaybackTime`, by the
    /// same rule as the application player's: NaN and infinities are refused, a negative time is the start.
    public func seek(to seconds: Double) throws(InvalidNumber) {
        send(.setPosition(max(try seconds.finite("seconds"), 0)))
    }

    /// The current track, from the player's metadata.
    public var nowPlayingItem: MediaItem? { currentPlayer.flatMap(SystemMusicPlayer.item) }

    /// Replaces the player's queue with the collection and plays its first item. A player with an editable
    /// `TrackList` (VLC) gets the items through `AddTrack`; any other is handed one item through `OpenUri`, or an M3U
    /// playlist file of them. Returns once the commands are queued; a player's refusal arrives in `update()` as
    /// `.systemMusic(.commandFailed)`. Throws `unsupported` when no player is running, `playlistNotWritten` when the
    /// playlist file cannot be made. The player plays the game's music from then on (`isGameMusic`): the exit rule
    /// pauses it, even if it played the user's music at launch.
    public func setQueue(with collection: MediaItemCollection) throws(DesktopError) {
        let uris = collection.items.map { SystemMusicPlayer.uri($0.url) }
        guard !uris.isEmpty else { return }
        let player = try playerToDrive()
        let command: MPRISCommand
        if player.canEditTracks {
            command = .replaceTracks(uris)
        } else if uris.count == 1 {
            command = .openURI(uris[0])
        } else {
            command = .openURI(try writePlaylist(uris, for: player))
        }
        lock.withLock { _ in
            handedQueue[player.name] = uris
            drive(player.name)
        }
        connection.client?.send(command, to: player.name)
        recordStart(player.name, withGameMusic: true)
    }

    /// Adds the collection at the end of the player's queue, keeping the item playing now, its time and whether it
    /// plays. A player with an editable `TrackList` gets `AddTrack`s. Any other is handed a playlist of the item
    /// playing now, what is left of the queue the game gave it, and the new items, then is put back at its time and
    /// state; that needs a player that says what it plays (`xesam:url`) and can seek, else this throws
    /// `unsupported` with its name. As with `setQueue(with:)`, the player plays the game's music from then on
    /// (`isGameMusic`), and the exit rule pauses it.
    public func append(_ collection: MediaItemCollection) throws(DesktopError) {
        let added = collection.items.map { SystemMusicPlayer.uri($0.url) }
        guard !added.isEmpty else { return }
        let player = try playerToDrive()
        let name = player.identity ?? player.shortName
        if player.canEditTracks {
            lock.withLock { _ in
                handedQueue[player.name, default: []] += added
                drive(player.name)
            }
            connection.client?.send(.appendTracks(added), to: player.name)
            recordStart(player.name, withGameMusic: true)
            return
        }
        guard let current = player.url else {
            throw .unsupported(
                "\(name) does not say what it is playing (no xesam:url), so nothing can be appended to its queue")
        }
        guard player.canSeek, player.trackID != nil else {
            throw .unsupported("\(name) cannot seek, so appending to its queue would restart the song playing now")
        }
        let queue = lock.withLock { _ -> [String] in
            let handed = handedQueue[player.name] ?? []
            let rest = handed.firstIndex(of: current).map { Array(handed[($0 + 1)...]) } ?? []
            let queue = [current] + rest + added
            handedQueue[player.name] = queue
            drive(player.name)
            return queue
        }
        let playlist = try writePlaylist(queue, for: player)
        connection.client?.send(
            .openKeepingPlace(uri: playlist, seconds: player.position ?? 0, paused: player.status != .playing),
            to: player.name)
        recordStart(player.name, withGameMusic: true)
    }

    /// Makes `name` the player whose music is the game's. Call under `lock`.
    private func drive(_ name: String) {
        _isGameMusic = true
        drivenPlayer = name
    }

    private func playerToDrive() throws(DesktopError) -> MPRISPlayerInfo {
        guard let player = currentPlayer else { throw .unsupported("no desktop music player is running") }
        return player
    }

    /// Writes `uris` as an M3U file (atomically: a player never reads half of one) and returns its `file://` URI.
    private func writePlaylist(_ uris: [String], for player: MPRISPlayerInfo) throws(DesktopError) -> String {
        let folder = NSTemporaryDirectory() + "ambience-\(ProcessIdentity.current)"
        let path = folder + "/\(player.shortName).m3u"
        do throws(AtomicFileError) {
            do throws(Errno) { try FilePaths.makeFolder(folder) } catch { throw .failed(error) }
            let text =
                "#EXTM3U\n"
                + uris.map { $0.hasPrefix("file://") ? String($0.dropFirst(7)) : $0 }.joined(separator: "\n") + "\n"
            try AtomicFile.write(Array(text.utf8), to: path)
        } catch {
            throw .playlistNotWritten(path, reason: error.description)
        }
        return "file://" + path
    }

    static func uri(_ url: String) -> String { url.hasPrefix("/") ? "file://" + url : url }

    private func send(_ command: MPRISCommand, started: Bool = false) {
        guard let player = currentPlayer else { return }
        lock.withLock { _ in drive(player.name) }
        if started && player.status != .playing { recordStart(player.name, withGameMusic: false) }
        connection.client?.send(command, to: player.name)
    }

    // MARK: Notifications

    /// Starts delivering notifications in `AudioEngine.update()` as `.systemMusic(...)`. Calls nest: each `begin` needs
    /// its own `end`. A refused command (`commandFailed`) is reported either way.
    public func beginGeneratingPlaybackNotifications() { lock.withLock { _ in notificationDepth += 1 } }
    /// Balances one `beginGeneratingPlaybackNotifications()`.
    public func endGeneratingPlaybackNotifications() {
        lock.withLock { _ in notificationDepth = max(notificationDepth - 1, 0) }
    }

    /// Turns the client's events into the application player's notifications.
    package func handle(_ mprisEvents: [MPRISEvent]) -> [MusicEvent] {
        lock.withLock { _ in
            for event in mprisEvents {
                switch event {
                case .playerAppeared(let info), .playerChanged(let info):
                    guard info.name != ownBusName else { continue }
                    let before = lastSeen[info.name]
                    lastSeen[info.name] = info
                    if info.status == .playing { lastActive = info.name }
                    if before?.status != info.status {
                        post(
                            .playbackStateDidChange(
                                info.status == .playing ? .playing : info.status == .paused ? .paused : .stopped))
                    }
                    if before?.trackID != info.trackID || before?.title != info.title || before?.artURL != info.artURL
                        || before?.url != info.url
                    {
                        post(.nowPlayingItemDidChange(SystemMusicPlayer.item(info)))
                    }
                    if before?.volume != info.volume, let volume = info.volume { post(.volumeDidChange(Float(volume))) }
                case .playerVanished(let name):
                    if lastSeen.removeValue(forKey: name) != nil { post(.nowPlayingItemDidChange(nil)) }
                    if lastActive == name { lastActive = nil }
                    startedByGame.remove(name)
                case .commandFailed(let name, let command, let reason):
                    // An error, not a notification: reported whether or not notifications are on.
                    _ = events.push(.commandFailed(player: name, command: command.methodName, reason: reason))
                case .seeked, .busLost:
                    break
                }
            }
            return events.drain()
        }
    }

    static let notificationCapacity = 1024

    private func post(_ event: MusicEvent) { if notificationDepth > 0 { events.push(event) } }

    /// Notifications lost to a full queue.
    package var droppedEvents: Int { lock.withLock { _ in events.dropped } }

    /// The players the game started through this object, for the session's exit rule.
    package var playersStartedByGame: [String] { lock.withLock { _ in startedByGame.sorted() } }

    /// The player's current track as an item: its tags, its file (`xesam:url`, when a `file://` URL) and its cover
    /// (`mpris:artUrl`: a `file://` picture by path, an `http(s)` one noted but never fetched).
    static func item(_ info: MPRISPlayerInfo) -> MediaItem? {
        guard info.title != nil || info.trackID != nil else { return nil }
        var item = MediaItem(
            persistentID: MediaItem.stableID(info.name + (info.trackID ?? info.title ?? "")), url: "",
            title: info.title, artist: info.artist, albumTitle: info.album, playbackDuration: info.length ?? 0)
        if let path = info.url.flatMap(FileURL.pathBytes) {
            if let text = String(validating: path, as: UTF8.self) {
                item.url = text
            } else {
                item.url = String(decoding: path, as: UTF8.self)
                item.pathBytes = path
            }
        }
        item.artworkLocation = info.artURL.flatMap(ArtworkLocation.init(mprisArtURL:))
        if case .file? = item.artworkLocation { item.hasArtwork = true }
        return item
    }
}
