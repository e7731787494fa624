import AmbienceCore
import AmbiencePlatform
import Dispatch
import Foundation
import Synchronization

/// Watches and drives the desktop's MPRIS media players over the session bus.
///
/// Threads: the client runs one desktop thread that owns its bus connection. It reads the players, follows their
/// signals (`NameOwnerChanged`, `PropertiesChanged`, `Seeked`) and carries out commands. Every package method may be
/// called from any thread and returns at once, except `refresh()`, which waits for a full re-read. `players` is a
/// snapshot; changes are queued as `MPRISEvent`s for `drainEvents()` (the engine calls it from `update()`).
///
/// Each call to a player waits at most `timeout`. A player that lets one go unanswered is marked not responding
/// and is not asked again until it shows signs of life or `retryInterval` has passed, so a hung player costs one
/// timeout, not a stream of them.
package final class MPRISClient: Sendable {
    package static let namePrefix = "org.mpris.MediaPlayer2."
    package static let objectPath = "/org/mpris/MediaPlayer2"
    static let rootInterface = "org.mpris.MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"
    static let trackListInterface = "org.mpris.MediaPlayer2.TrackList"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"

    private let core: ClientCore

    /// Connects to the bus at `busAddress` (the session bus by default) and starts watching. Throws
    /// `busUnavailable` when there is no bus, within `timeout` (nothing is autolaunched).
    package init(
        busAddress: String? = DesktopBus.sessionAddress, timeout: Duration = DesktopBus.defaultTimeout,
        retryInterval: Duration = .seconds(10)
    ) throws(DesktopError) {
        let connection = try DBusConnection(address: busAddress, timeout: timeout)
        for match in ClientCore.matches { try connection.follow(match, timeout: timeout) }
        core = ClientCore(connection: connection, timeout: timeout, retryInterval: retryInterval)
        core.start()
    }

    deinit { core.stop() }

    /// Stops the desktop thread and closes the connection. Waits for a call in flight (at most the timeout).
    package func close() { core.stop() }

    /// Every player known, by bus name.
    package var players: [MPRISPlayerInfo] { core.snapshot() }

    /// A count that moves whenever `players` may have changed, including the changes no event tells (a position, a
    /// player marked not responding): while it stands, `players` is what it was when it was read.
    package var changeCount: Int { core.shared.withLock { $0.changes } }

    /// The player with this bus name, or short name ("mpv").
    package func player(named name: String) -> MPRISPlayerInfo? {
        let full = name.hasPrefix(MPRISClient.namePrefix) ? name : MPRISClient.namePrefix + name
        return core.shared.withLock { $0.players[$0.aliases[full] ?? full] }
    }

    /// False once the bus has gone away or the client was closed.
    package var isConnected: Bool { core.shared.withLock { $0.running } }

    /// The events since the last call, oldest first.
    package func drainEvents() -> [MPRISEvent] {
        core.shared.withLock { $0.events.drain() }
    }

    /// Events that gave way to newer ones because nobody drained them.
    package var droppedEvents: Int { core.shared.withLock { $0.events.dropped } }

    /// Asks a player (bus name or short name) to do something. Returns at once; a failure arrives as
    /// `commandFailed`, and the effect as the player's own `playerChanged`/`seeked`.
    package func send(_ command: MPRISCommand, to player: String) {
        let given = player.hasPrefix(MPRISClient.namePrefix) ? player : MPRISClient.namePrefix + player
        let full = core.shared.withLock { $0.aliases[given] } ?? given
        core.enqueue(.command(command, full))
    }

    /// Re-reads every player and returns them. Waits for the desktop thread: a few milliseconds, plus one timeout
    /// for each player that stops answering now (players already known not to respond are skipped).
    /// For tools and start-up; a game loop reads `players` and drains events instead.
    @discardableResult
    package func refresh() -> [MPRISPlayerInfo] {
        let done = DispatchSemaphore(value: 0)
        if core.enqueue(.refresh(done)) { done.wait() }
        return players
    }
}

/// The client's state and its desktop thread.
///
/// `shared` is what other threads see. Everything else is confined to the desktop thread (hence
/// `@unchecked Sendable`): it is touched only inside `run()` and what `run()` calls.
final class ClientCore: @unchecked Sendable {
    enum Job {
        case command(MPRISCommand, String)
        case refresh(DispatchSemaphore)
    }

    struct Shared {
        /// One entry per player: a connection that owns several MPRIS names is listed under its preferred one.
        var players: [String: MPRISPlayerInfo] = [:] { didSet { changes &+= 1 } }
        /// How many times `players` was written (`MPRISClient.changeCount`).
        var changes = 0
        /// Each other name a listed player owns, to the name it is listed under.
        var aliases: [String: String] = [:]
        var events = EventQueue<MPRISEvent>(capacity: ClientCore.eventCapacity, overflow: .dropOldest)
        var jobs: [Job] = []
        /// False once the thread has left, or is leaving: no more jobs are taken.
        var running = true
    }

    /// Events kept for a game that does not drain them. Past the cap the oldest give way: players' states are
    /// state-like, and the newest say how things are now (and a lost bus is always kept).
    static let eventCapacity = 4096

    let connection: DBusConnection
    let timeout: Duration
    let retryInterval: Duration
    let shared = Lock<Shared>(Shared())
    private let thread: DesktopThread

    // Desktop thread only (MPRISQueue.swift's extension included).
    var players: [String: MPRISPlayerInfo] = [:]
    /// Players not answering, and when they may be asked again.
    var silentUntil: [String: ContinuousClock.Instant] = [:]

    init(connection: DBusConnection, timeout: Duration, retryInterval: Duration) {
        self.connection = connection
        self.timeout = timeout
        self.retryInterval = retryInterval
        thread = DesktopThread(connection: connection)
    }

    func start() { thread.start(name: "ambience.mpris-client") { [self] in run() } }

    func stop() {
        shared.withLock { $0.running = false }
        // The thread leaves at its next turn: after the call in flight, if any (each is bounded by the timeout).
        thread.stop()
    }

    /// Queues a job for the desktop thread; false when the thread has stopped.
    @discardableResult
    func enqueue(_ job: Job) -> Bool {
        let queued = shared.withLock { shared -> Bool in
            guard shared.running else { return false }
            shared.jobs.append(job)
            return true
        }
        if queued { connection.wake() }
        return queued
    }

    func snapshot() -> [MPRISPlayerInfo] {
        shared.withLock { $0.players.values.sorted { $0.name < $1.name } }
    }

    // MARK: The desktop thread

    private func run() {
        scanAll()
        while true {
            guard
                let jobs = shared.withLock({ shared -> [Job]? in
                    guard shared.running else { return nil }
                    defer { shared.jobs.removeAll() }
                    return shared.jobs
                })
            else { break }
            for job in jobs { perform(job) }
            guard connection.isConnected else {
                shared.withLock { shared in
                    shared.players.removeAll()
                    _ = shared.events.push(.busLost)
                }
                break
            }
            handle(connection.receive(timeout: nextWait()))
            retrySilentPlayers()
        }
        // Anyone waiting on a refresh gets the snapshot as it stands.
        let leftover = shared.withLock { shared -> [Job] in
            shared.running = false
            defer { shared.jobs.removeAll() }
            return shared.jobs
        }
        for case .refresh(let done) in leftover { done.signal() }
    }

    private func perform(_ job: Job) {
        switch job {
        case .refresh(let done):
            scanAll()
            done.signal()
        case .command(let command, let name):
            carryOut(command, on: name)
        }
    }

    /// How long `receive` may wait: until the next silent player is due for another try.
    private func nextWait() -> Duration {
        guard let due = silentUntil.values.min() else { return .seconds(5) }
        return min(max(due - .now, .milliseconds(10)), .seconds(5))
    }

    private func retrySilentPlayers() {
        let now = ContinuousClock.now
        read(silentUntil.filter { $0.value <= now }.keys.sorted())
    }

    // MARK: Players

    /// MPRIS's microseconds as seconds; nil for what is no finite number (a player's NaN stays on the bus).
    static func seconds(_ value: DBusValue) -> Double? {
        value.number.map { $0 / 1_000_000 }.flatMap { $0.isFinite ? $0 : nil }
    }

    func apply(_ properties: [String: DBusValue], to info: inout MPRISPlayerInfo) {
        for (key, value) in properties {
            switch key {
            case "PlaybackStatus":
                info.status =
                    switch value.string {
                    case "Playing": .playing
                    case "Paused": .paused
                    default: .stopped
                    }
            case "Metadata":
                let metadata = value.dict ?? [:]
                info.title = metadata["xesam:title"]?.string
                info.artist = metadata["xesam:artist"]?.strings?.joined(separator: ", ")
                info.album = metadata["xesam:album"]?.string
                info.artURL = metadata["mpris:artUrl"]?.string
                info.length = metadata["mpris:length"].flatMap(ClientCore.seconds)
                info.trackID = metadata["mpris:trackid"]?.string
                info.url = metadata["xesam:url"]?.string
            case "Position": info.position = ClientCore.seconds(value)
            case "Volume": info.volume = value.number.flatMap { $0.isFinite ? $0 : nil }
            case "Identity": info.identity = value.string
            case "CanControl": info.canControl = value.bool ?? info.canControl
            case "CanPlay": info.canPlay = value.bool ?? info.canPlay
            case "CanPause": info.canPause = value.bool ?? info.canPause
            case "CanGoNext": info.canGoNext = value.bool ?? info.canGoNext
            case "CanGoPrevious": info.canGoPrevious = value.bool ?? info.canGoPrevious
            case "CanSeek": info.canSeek = value.bool ?? info.canSeek
            default: break
            }
        }
    }

    /// Stores a player's new state and tells the game: appeared, or changed (position alone does not count). Only
    /// the owner's preferred name is listed; its other names become aliases.
    func publish(_ info: MPRISPlayerInfo, announce: Bool = true) {
        let old = players[info.name]
        players[info.name] = info
        let preferred = preferredName(of: info)
        guard preferred == info.name else {
            // An alias. If it was listed before the preferred name turned up, the preferred one takes its place.
            let wasListed = shared.withLock { $0.players[info.name] != nil }
            if wasListed, let better = preferred.flatMap({ players[$0] }) {
                shared.withLock { shared in
                    shared.players[info.name] = nil
                    post(.playerVanished(info.name), &shared)
                }
                list(better, old: nil, announce: true)
            }
            setAliases(of: info)
            return
        }
        list(info, old: old, announce: announce)
        setAliases(of: info)
    }

    private func list(_ info: MPRISPlayerInfo, old: MPRISPlayerInfo?, announce: Bool) {
        var comparable = old
        comparable?.position = info.position
        shared.withLock { shared in
            let listed = shared.players[info.name] != nil
            shared.players[info.name] = info
            let event: MPRISEvent? =
                if !listed { .playerAppeared(info) } else if comparable != info && announce {
                    .playerChanged(info)
                } else { nil }
            if let event { post(event, &shared) }
        }
    }

    /// The name a player is listed under: the one without an `.instance…` suffix, else the shortest.
    private func preferredName(of info: MPRISPlayerInfo) -> String? {
        players.values.filter { MPRISPlayerInfo.samePlayer($0, info) }.map(\.name).min { a, b in
            let (aInstance, bInstance) = (MPRISPlayerInfo.isInstanceName(a), MPRISPlayerInfo.isInstanceName(b))
            if aInstance != bInstance { return !aInstance }
            return a.count != b.count ? a.count < b.count : a < b
        }
    }

    private func setAliases(of info: MPRISPlayerInfo) {
        let preferred = preferredName(of: info)
        let others = players.values.filter { MPRISPlayerInfo.samePlayer($0, info) && $0.name != preferred }.map(\.name)
        shared.withLock { shared in
            for (alias, target) in shared.aliases where target == preferred || others.contains(alias) {
                shared.aliases[alias] = nil
            }
            if let preferred { for alias in others { shared.aliases[alias] = preferred } }
        }
    }

    func vanish(_ name: String) {
        silentUntil[name] = nil
        guard let gone = players.removeValue(forKey: name) else { return }
        let listed = shared.withLock { shared -> Bool in
            shared.aliases[name] = nil
            guard shared.players.removeValue(forKey: name) != nil else { return false }
            post(.playerVanished(name), &shared)
            return true
        }
        // The same connection still owns another name: the player is listed under that one now.
        if listed, let next = preferredName(of: gone), let info = players[next] { list(info, old: nil, announce: true) }
        setAliases(of: gone)
    }

    func post(_ event: MPRISEvent, _ shared: inout Shared) {
        _ = shared.events.push(event)
    }

    func markSilent(_ name: String) {
        guard var info = players[name] else { return }
        silentUntil[name] = .now + retryInterval
        info.isResponding = false
        publish(info)
    }

    // MARK: Commands

    private func carryOut(_ command: MPRISCommand, on name: String) {
        guard let info = players[name] else {
            let error = DesktopError.remoteError(
                name: "org.freedesktop.DBus.Error.ServiceUnknown", message: "no MPRIS player \(name)")
            shared.withLock { post(.commandFailed(name, command, error), &$0) }
            return
        }
        // Commands are made by the engine from finite times; saturating bounds an absurd one.
        func microseconds(_ seconds: Double) -> Int64 { (seconds * 1_000_000).saturated(Int64.self) }
        var interface = MPRISClient.playerInterface
        var arguments: [DBusValue] = []
        let member: String
        switch command {
        case .play: member = "Play"
        case .pause: member = "Pause"
        case .playPause: member = "PlayPause"
        case .stop: member = "Stop"
        case .next: member = "Next"
        case .previous: member = "Previous"
        case .seek(let seconds):
            member = "Seek"
            arguments = [.int64(microseconds(seconds))]
        case .setPosition(let seconds):
            guard let track = info.trackID else {
                shared.withLock {
                    post(.commandFailed(name, command, .unsupported("\(name): no track to set the position in")), &$0)
                }
                return
            }
            member = "SetPosition"
            arguments = [.objectPath(track), .int64(microseconds(seconds))]
        case .openURI(let uri):
            member = "OpenUri"
            arguments = [.string(uri)]
        case .setVolume(let volume):
            interface = MPRISClient.propertiesInterface
            member = "Set"
            arguments = [.string(MPRISClient.playerInterface), .string("Volume"), .variant(.double(volume))]
        case .replaceTracks, .appendTracks, .openKeepingPlace:
            // Several calls, each waiting on the last: MPRISQueue.swift.
            return performQueueCommand(command, on: info)
        }
        do throws(DesktopError) {
            if info.isResponding {
                _ = try connection.call(
                    destination: name, path: MPRISClient.objectPath, interface: interface, member: member,
                    arguments: arguments, timeout: timeout)
            } else {
                // Known not to answer: send it, but do not wait for it.
                try connection.send(
                    destination: name, path: MPRISClient.objectPath, interface: interface, member: member,
                    arguments: arguments)
            }
        } catch {
            if case .timeout = error { markSilent(name) }
            shared.withLock { post(.commandFailed(name, command, error), &$0) }
        }
    }
}
