import Synchronization

/// The system music player: the desktop's own player (any MPRIS player: mpv, VLC, Rhythmbox, Spotify), driven with
/// the same API as the application player where MPRIS allows. Notifications arrive in `AudioEngine.update()` as
/// `.systemMusic(...)` events.
///
/// It drives `preferredPlayer` when set, else the player that is playing, else the one most recently active.
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

    /// Without a connection until the engine hands it one (`use(client:ownBusName:)`).
    init() {}

    /// Drives the players through this connection (nil while the session bus is gone). The players seen on an
    /// earlier one are forgotten; those the game started are still paused at exit if they come back under their names.
    func use(client: MPRISClient?, ownBusName: String?) {
        lock.withLock { _ in
            self.client = client
            self.ownBusName = ownBusName
            if !lastSeen.isEmpty { post(.nowPlayingItemDidChange(nil)) }
            lastSeen.removeAll()
            lastActive = nil
        }
    }

    private var connection: (client: MPRISClient?, ownBusName: String?) {
        lock.withLock { _ -> (client: MPRISClient?, ownBusName: String?) in (client, ownBusName) }
    }

    /// Whether a session bus is there to reach players at all.
    public var isAvailable: Bool { connection.client?.isConnected ?? false }

    /// A player to use when none is playing or recently active (bus name or short name, e.g. "mpv").
    public var preferredPlayer: String? {
        get { lock.withLock { _ in _preferredPlayer } }
        set { lock.withLock { _ in _preferredPlayer = newValue } }
    }

    /// Every desktop player but the game's own.
    public var players: [MPRISPlayerInfo] {
        let (client, ownBusName) = connection
        return client?.players.filter { $0.name != ownBusName } ?? []
    }

    /// The player this object drives now: the one named by `preferredPlayer` when it is on the bus, else the one
    /// playing, else the most recently active, else any.
    public var currentPlayer: MPRISPlayerInfo? {
        let all = players
        let (recent, preferred) = lock.withLock { _ in (lastActive, _preferredPlayer) }
        let (client, ownBusName) = connection
        if let preferred, let player = client?.player(named: preferred), player.name != ownBusName { return player }
        if let playing = all.first(where: { $0.status == .playing }) { return playing }
        if let recent, let player = all.first(where: { $0.name == recent }) { return player }
        return all.first
    }

    // MARK: Transport

    public func play() { send(.play, started: true) }
    public func pause() { send(.pause) }
    public func stop() { send(.stop) }
    public func skipToNextItem() { send(.next) }
    public func skipToPreviousItem() { send(.previous) }

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

    /// Plays the collection's first item through `OpenUri`. MPRIS players offer no queue to replace, so more than
    /// one item is `unsupported`; nothing is sent then.
    public func setQueue(with collection: MediaItemCollection) throws(DesktopError) {
        guard let first = collection.items.first else { return }
        guard collection.items.count == 1 else {
            throw .unsupported("the system music player can open one item at a time (MPRIS has no queue to replace)")
        }
        guard let player = currentPlayer else { throw .unsupported("no desktop music player is running") }
        let uri = first.url.hasPrefix("/") ? "file://" + first.url : first.url
        connection.client?.send(.openURI(uri), to: player.name)
        lock.withLock { _ in _ = startedByGame.insert(player.name) }
    }

    private func send(_ command: MPRISCommand, started: Bool = false) {
        guard let player = currentPlayer else { return }
        if started && player.status != .playing { lock.withLock { _ in _ = startedByGame.insert(player.name) } }
        connection.client?.send(command, to: player.name)
    }

    // MARK: Notifications

    public func beginGeneratingPlaybackNotifications() { lock.withLock { _ in notificationDepth += 1 } }
    public func endGeneratingPlaybackNotifications() { lock.withLock { _ in notificationDepth = max(notificationDepth - 1, 0) } }

    /// Turns the client's events into the application player's notifications.
    func handle(_ mprisEvents: [MPRISEvent]) -> [MusicEvent] {
        lock.withLock { _ in
            for event in mprisEvents {
                switch event {
                case .playerAppeared(let info), .playerChanged(let info):
                    guard info.name != ownBusName else { continue }
                    let before = lastSeen[info.name]
                    lastSeen[info.name] = info
                    if info.status == .playing { lastActive = info.name }
                    if before?.status != info.status {
                        post(.playbackStateDidChange(info.status == .playing ? .playing : info.status == .paused ? .paused : .stopped))
                    }
                    if before?.trackID != info.trackID || before?.title != info.title { post(.nowPlayingItemDidChange(SystemMusicPlayer.item(info))) }
                    if before?.volume != info.volume, let volume = info.volume { post(.volumeDidChange(Float(volume))) }
                case .playerVanished(let name):
                    if lastSeen.removeValue(forKey: name) != nil { post(.nowPlayingItemDidChange(nil)) }
                    if lastActive == name { lastActive = nil }
                    startedByGame.remove(name)
                case .seeked, .commandFailed, .busLost:
                    break
                }
            }
            return events.drain()
        }
    }

    static let notificationCapacity = 1024

    private func post(_ event: MusicEvent) { if notificationDepth > 0 { events.push(event) } }

    /// Notifications lost to a full queue.
    var droppedEvents: Int { lock.withLock { _ in events.dropped } }

    /// The players the game started through this object, for the session's exit rule.
    var playersStartedByGame: [String] { lock.withLock { _ in startedByGame.sorted() } }

    static func item(_ info: MPRISPlayerInfo) -> MediaItem? {
        guard info.title != nil || info.trackID != nil else { return nil }
        return MediaItem(persistentID: MediaItem.stableID(info.name + (info.trackID ?? info.title ?? "")), url: "",
                         title: info.title, artist: info.artist, albumTitle: info.album, playbackDuration: info.length ?? 0)
    }
}
