import AmbienceCore
import AmbiencePlatform
import Dispatch
import Foundation
import Synchronization

/// What `MPRISServer` needs from the player it puts on the desktop. `MusicPlayer` conforms as it is (in the engine,
/// which knows both).
///
/// The server calls these from its own desktop thread, so they must be thread-safe.
package protocol MPRISPlayerControls: AnyObject, Sendable {
    var playbackState: PlaybackState { get }
    var nowPlayingItem: MediaItem? { get }
    /// Seconds into the now-playing item; setting it seeks.
    var currentPlaybackTime: Double { get set }
    /// 0…1.
    var volume: Float { get set }
    func play()
    func pause()
    func stop()
    func skipToNextItem()
    func skipToPreviousItem()
    /// A URL for the item's artwork (`file://` on disk), when one is known. By default none is.
    func artworkURL(for item: MediaItem) -> String?
    /// Starts calling `changed` whenever what the server shows may have changed: the playback state, the item (a
    /// replay of it too), the volume, a seek, a hold. It may be called on any thread, with the player's own lock
    /// held, so it only notes the change and returns. Returns the key that `removeChangeObserver` takes, or nil when
    /// the player cannot tell (the default): the server then looks at it every poll interval.
    func addChangeObserver(_ changed: @escaping @Sendable () -> Void) -> UInt64?
    /// Stops calling the observer `addChangeObserver` returned `key` for.
    func removeChangeObserver(_ key: UInt64)
}

extension MPRISPlayerControls {
    package func artworkURL(for item: MediaItem) -> String? { nil }
    package func addChangeObserver(_ changed: @escaping @Sendable () -> Void) -> UInt64? { nil }
    package func removeChangeObserver(_ key: UInt64) {}
}

/// Puts an application music player on the session bus as an MPRIS player, so the desktop (media keys, panels,
/// `playerctl`) can show and drive it: `org.mpris.MediaPlayer2.ambience.<app>` serving `/org/mpris/MediaPlayer2`.
///
/// Threads: the server runs one desktop thread that owns its bus connection. Method calls from the bus run there
/// and call the controls. The thread also looks at the controls when they signal a change (`addChangeObserver`),
/// after `notifyChanged()` or a call it handled, and every `fallbackInterval` besides (every `pollInterval` for
/// controls that cannot signal), and emits `PropertiesChanged` for what differs (never for `Position`, as MPRIS
/// asks) and `Seeked` when the position jumps.
package final class MPRISServer: Sendable {
    /// The name the server owns: `org.mpris.MediaPlayer2.ambience.<app>`, or with `.instance<pid>` appended when a
    /// second copy of the app already owns that.
    package let busName: String
    private let core: ServerCore

    /// Takes the bus name and starts serving. Throws `busUnavailable` when there is no bus (within `timeout`).
    /// `identity` is the name panels show (the app's name by default). `fallbackInterval`: how often controls that
    /// signal their changes are looked at anyway (what no signal tells: a playhead that stood still while the
    /// session held the audio, or a stream that ran dry); `pollInterval`: how often controls that cannot are.
    package init(
        controls: any MPRISPlayerControls, appName: String, identity: String? = nil,
        busAddress: String? = DesktopBus.sessionAddress, timeout: Duration = DesktopBus.defaultTimeout,
        pollInterval: Duration = .milliseconds(100), fallbackInterval: Duration = .seconds(2)
    ) throws(DesktopError) {
        let connection = try DBusConnection(address: busAddress, timeout: timeout)
        let wanted = MPRISServer.busName(forApp: appName)
        if try connection.requestName(wanted, timeout: timeout) {
            busName = wanted
        } else {
            let instance = "\(wanted).instance\(ProcessIdentity.current)"
            guard try connection.requestName(instance, timeout: timeout) else {
                throw .unsupported("\(wanted): the bus name is owned by another connection")
            }
            busName = instance
        }
        try connection.export(path: MPRISClient.objectPath)
        core = ServerCore(
            connection: connection, controls: controls, identity: identity ?? appName, pollInterval: pollInterval,
            fallbackInterval: fallbackInterval)
        core.start()
    }

    deinit { core.stop() }

    /// Leaves the bus: the name is released and the desktop sees the player vanish.
    package func close() { core.stop() }

    /// Asks the server to look at the player now rather than at its next poll.
    package func notifyChanged() { core.checkSoon() }

    /// `org.mpris.MediaPlayer2.ambience.<app>`, with every character of the app's name outside [A-Za-z0-9_] made
    /// `_` (and a leading digit escaped, as D-Bus requires).
    package static func busName(forApp appName: String) -> String {
        var element = String(
            appName.unicodeScalars.prefix(128).map { scalar -> Character in
                switch scalar {
                case "a"..."z", "A"..."Z", "0"..."9", "_": Character(scalar)
                default: "_"
                }
            })
        if element.isEmpty { element = "app" }
        if element.first!.isNumber { element = "_" + element }
        return MPRISClient.namePrefix + "ambience." + element
    }
}

/// The server's desktop thread and what only it touches (hence `@unchecked Sendable`: `published` and `sample` are
/// confined to `run()`; `shared` is the only state other threads use).
final class ServerCore: @unchecked Sendable {
    private struct Shared {
        var checkSoon = false
    }

    /// What the desktop was last told, as plain values: the metadata is made from `item` and `art` only when they
    /// change. (Kept `DBusValue`s would read as leaks to LeakSanitizer where a static keeps a server: an indirect
    /// enum holds its case in the box pointer's spare bits.)
    private struct Published: Equatable {
        var status: String
        var item: MediaItem?
        var art: String?
        var volume: Double
    }

    /// The position at the last look, to tell a jump from playback moving on.
    private struct PositionSample {
        var position: Double
        var playing: Bool
        var trackID: String
        var at: ContinuousClock.Instant
    }

    static let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"
    /// A position further than this from where playback would have taken it counts as a jump (a `Seeked`).
    static let jumpTolerance = 1.0

    let connection: DBusConnection
    let controls: any MPRISPlayerControls
    let identity: String
    let pollInterval: Duration
    let fallbackInterval: Duration
    private let shared = Lock<Shared>(Shared())
    private let thread: DesktopThread

    // Desktop thread only.
    private var published: Published?
    private var sample: PositionSample?
    /// The last item path turned into a file URL, and the URL: making one reads the file system, and panels ask for
    /// the metadata again and again.
    private var lastFileURL: (path: String, url: String)?

    init(
        connection: DBusConnection, controls: any MPRISPlayerControls, identity: String, pollInterval: Duration,
        fallbackInterval: Duration = .seconds(2)
    ) {
        self.connection = connection
        self.controls = controls
        self.identity = identity
        self.pollInterval = pollInterval
        self.fallbackInterval = fallbackInterval
        thread = DesktopThread(connection: connection)
    }

    func start() { thread.start(name: "ambience.mpris-server") { [self] in run() } }

    func stop() { thread.stop() }

    /// Has the desktop thread look at the player. A burst of changes wakes it once: a look already due sees them all.
    func checkSoon() {
        let due = shared.withLock { shared in
            defer { shared.checkSoon = true }
            return shared.checkSoon
        }
        if !due { connection.wake() }
    }

    // MARK: The desktop thread

    private func run() {
        // Observed for as long as the thread runs: the player's changes wake it, and the poll becomes a fallback.
        let observer = controls.addChangeObserver { [weak self] in self?.checkSoon() }
        defer { if let observer { controls.removeChangeObserver(observer) } }
        let interval = observer == nil ? pollInterval : fallbackInterval
        lookAtPlayer()
        var nextPoll = ContinuousClock.now + interval
        while thread.isRunning {
            let messages = connection.receive(timeout: max(nextPoll - .now, .zero))
            var handledCall = false
            for message in messages where message.kind == .methodCall {
                answer(message)
                handledCall = true
            }
            let asked = shared.withLock { shared in
                defer { shared.checkSoon = false }
                return shared.checkSoon
            }
            let due = ContinuousClock.now >= nextPoll
            if handledCall || asked || due { lookAtPlayer() }
            if due { nextPoll = .now + interval }
        }
    }

    /// Compares the player with what the desktop was last told, and tells it what changed.
    private func lookAtPlayer() {
        let now = ContinuousClock.now
        let item = controls.nowPlayingItem
        let state = Published(
            status: status, item: item, art: item.flatMap { controls.artworkURL(for: $0) },
            volume: Double(controls.volume))
        let position = controls.currentPlaybackTime
        if let published, published != state {
            var changed: [String: DBusValue] = [:]
            if published.status != state.status { changed["PlaybackStatus"] = .string(state.status) }
            if published.item != state.item || published.art != state.art {
                changed["Metadata"] = .dict(metadata(state.item, art: state.art))
            }
            if published.volume != state.volume { changed["Volume"] = .double(state.volume) }
            if !changed.isEmpty { emitPropertiesChanged(changed) }
        }
        published = state
        let trackID = item.map(ServerCore.trackID) ?? ServerCore.noTrack
        if let sample, sample.trackID == trackID {
            let expected = sample.position + (sample.playing ? (now - sample.at) / .seconds(1) : 0)
            if abs(position - expected) > ServerCore.jumpTolerance { emitSeeked(position) }
        }
        sample = PositionSample(position: position, playing: state.status == "Playing", trackID: trackID, at: now)
    }

    private func emitPropertiesChanged(_ changed: [String: DBusValue]) {
        try? connection.emitSignal(
            path: MPRISClient.objectPath, interface: MPRISClient.propertiesInterface, member: "PropertiesChanged",
            arguments: [.string(MPRISClient.playerInterface), .dict(changed), .strings([])])
    }

    private func emitSeeked(_ position: Double) {
        try? connection.emitSignal(
            path: MPRISClient.objectPath, interface: MPRISClient.playerInterface, member: "Seeked",
            arguments: [.int64(ServerCore.microseconds(position))])
    }

    // MARK: Properties

    /// Our own playhead in MPRIS's microseconds; saturating, so no time the player reports can trap.
    private static func microseconds(_ seconds: Double) -> Int64 { (seconds * 1_000_000).saturated(Int64.self) }

    private var status: String {
        switch controls.playbackState {
        case .playing, .seekingForward, .seekingBackward: "Playing"
        case .paused, .interrupted: "Paused"
        case .stopped: "Stopped"
        }
    }

    private static func trackID(_ item: MediaItem) -> String { "/org/ambience/track/\(item.persistentID)" }

    /// The player's metadata now.
    private var metadata: [String: DBusValue] {
        let item = controls.nowPlayingItem
        return metadata(item, art: item.flatMap { controls.artworkURL(for: $0) })
    }

    private func metadata(_ item: MediaItem?, art: String?) -> [String: DBusValue] {
        guard let item else { return ["mpris:trackid": .objectPath(ServerCore.noTrack)] }
        var metadata: [String: DBusValue] = ["mpris:trackid": .objectPath(ServerCore.trackID(item))]
        if let title = item.title { metadata["xesam:title"] = .string(title) }
        if let artist = item.artist { metadata["xesam:artist"] = .strings([artist]) }
        if let album = item.albumTitle { metadata["xesam:album"] = .string(album) }
        if let albumArtist = item.albumArtist { metadata["xesam:albumArtist"] = .strings([albumArtist]) }
        if let genre = item.genre { metadata["xesam:genre"] = .strings([genre]) }
        if let composer = item.composer { metadata["xesam:composer"] = .strings([composer]) }
        if let track = item.trackNumber { metadata["xesam:trackNumber"] = .int32(Int32(clamping: track)) }
        if let disc = item.discNumber { metadata["xesam:discNumber"] = .int32(Int32(clamping: disc)) }
        if item.playbackDuration > 0 {
            metadata["mpris:length"] = .int64(ServerCore.microseconds(item.playbackDuration))
        }
        if !item.url.isEmpty {
            metadata["xesam:url"] = .string(item.url.contains("://") ? item.url : fileURL(item.url))
        }
        if let art { metadata["mpris:artUrl"] = .string(art) }
        return metadata
    }

    private func fileURL(_ path: String) -> String {
        if let last = lastFileURL, last.path == path { return last.url }
        let url = URL(fileURLWithPath: path).absoluteString
        lastFileURL = (path, url)
        return url
    }

    private func properties(of interface: String) -> [String: DBusValue]? {
        switch interface {
        case MPRISClient.rootInterface:
            return [
                "CanQuit": .bool(false), "CanRaise": .bool(false), "HasTrackList": .bool(false),
                "Identity": .string(identity),
                "SupportedUriSchemes": .strings([]), "SupportedMimeTypes": .strings([])
            ]
        case MPRISClient.playerInterface:
            return [
                "PlaybackStatus": .string(status), "Rate": .double(1), "MinimumRate": .double(1),
                "MaximumRate": .double(1),
                "Metadata": .dict(metadata), "Volume": .double(Double(controls.volume)),
                "Position": .int64(ServerCore.microseconds(controls.currentPlaybackTime)),
                "CanGoNext": .bool(true), "CanGoPrevious": .bool(true), "CanPlay": .bool(true), "CanPause": .bool(true),
                "CanSeek": .bool(true), "CanControl": .bool(true)
            ]
        default:
            return nil
        }
    }

    // MARK: Method calls

    enum Reply {
        case values([DBusValue])
        case error(String, String)
    }

    private static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"

    func answer(_ call: DBusMessage) {
        let reply = reply(to: call)
        switch reply {
        case .values(let values): try? connection.reply(to: call, with: values)
        case .error(let name, let text): try? connection.replyError(to: call, name: name, message: text)
        }
    }

    private func reply(to call: DBusMessage) -> Reply {
        let member = call.member ?? ""
        // A call may leave out the interface; then the member names it (the member names here are unambiguous).
        let interface = call.interface ?? ServerCore.interface(defining: member)
        let args = call.arguments
        func expect(_ signature: String) -> Bool { call.signature == signature }
        switch (interface, member) {
        case ("org.freedesktop.DBus.Introspectable", "Introspect"):
            return .values([.string(ServerCore.introspection)])
        case (MPRISClient.propertiesInterface, "Get"):
            guard expect("ss"), let name = args[0].string, let property = args[1].string else {
                return .error(ServerCore.invalidArgs, "Get takes (ss)")
            }
            guard let all = properties(of: name) else {
                return .error("org.freedesktop.DBus.Error.UnknownInterface", "no interface \(name)")
            }
            guard let value = all[property] else {
                return .error("org.freedesktop.DBus.Error.UnknownProperty", "no property \(name).\(property)")
            }
            return .values([.variant(value)])
        case (MPRISClient.propertiesInterface, "GetAll"):
            guard expect("s"), let name = args[0].string else {
                return .error(ServerCore.invalidArgs, "GetAll takes (s)")
            }
            guard let all = properties(of: name) else {
                return .error("org.freedesktop.DBus.Error.UnknownInterface", "no interface \(name)")
            }
            return .values([.dict(all)])
        case (MPRISClient.propertiesInterface, "Set"):
            guard expect("ssv"), let name = args[0].string, let property = args[1].string else {
                return .error(ServerCore.invalidArgs, "Set takes (ssv)")
            }
            guard let all = properties(of: name) else {
                return .error("org.freedesktop.DBus.Error.UnknownInterface", "no interface \(name)")
            }
            guard all[property] != nil else {
                return .error("org.freedesktop.DBus.Error.UnknownProperty", "no property \(name).\(property)")
            }
            guard name == MPRISClient.playerInterface, property == "Volume" else {
                return .error("org.freedesktop.DBus.Error.PropertyReadOnly", "\(name).\(property) is read-only")
            }
            guard let volume = args[2].number, volume.isFinite else {
                return .error(ServerCore.invalidArgs, "Volume is a double")
            }
            controls.volume = Float(min(max(volume, 0), 1))
            return .values([])
        case (MPRISClient.rootInterface, "Raise"), (MPRISClient.rootInterface, "Quit"):
            return .values([])  // CanRaise and CanQuit are false: a game's window and life are its own
        case (MPRISClient.playerInterface, "Play"): controls.play()
        case (MPRISClient.playerInterface, "Pause"): controls.pause()
        case (MPRISClient.playerInterface, "PlayPause"):
            if status == "Playing" { controls.pause() } else { controls.play() }
        case (MPRISClient.playerInterface, "Stop"): controls.stop()
        case (MPRISClient.playerInterface, "Next"): controls.skipToNextItem()
        case (MPRISClient.playerInterface, "Previous"): controls.skipToPreviousItem()
        case (MPRISClient.playerInterface, "Seek"):
            guard expect("x"), let offset = args[0].number else {
                return .error(ServerCore.invalidArgs, "Seek takes (x)")
            }
            let target = controls.currentPlaybackTime + offset / 1_000_000
            let length = controls.nowPlayingItem?.playbackDuration ?? 0
            if length > 0 && target > length {
                controls.skipToNextItem()  // past the end: the next track, as MPRIS says
            } else {
                jump(to: max(target, 0))
            }
        case (MPRISClient.playerInterface, "SetPosition"):
            guard expect("ox"), let track = args[0].string, let micro = args[1].number else {
                return .error(ServerCore.invalidArgs, "SetPosition takes (ox)")
            }
            // MPRIS: a stale track ID or a position outside the track is ignored.
            if let item = controls.nowPlayingItem, ServerCore.trackID(item) == track, micro >= 0,
                item.playbackDuration <= 0 || micro / 1_000_000 <= item.playbackDuration
            {
                jump(to: micro / 1_000_000)
            }
        case (MPRISClient.playerInterface, "OpenUri"):
            return .error(
                "org.freedesktop.DBus.Error.NotSupported",
                "\(identity) plays its own music (SupportedUriSchemes is empty)")
        default:
            return .error("org.freedesktop.DBus.Error.UnknownMethod", "no method \(interface).\(member)")
        }
        return .values([])
    }

    /// Seeks and tells the desktop at once (the next look then sees no jump).
    private func jump(to seconds: Double) {
        controls.currentPlaybackTime = seconds
        let position = controls.currentPlaybackTime
        emitSeeked(position)
        let playing = status == "Playing"
        let trackID = controls.nowPlayingItem.map(ServerCore.trackID) ?? ServerCore.noTrack
        sample = PositionSample(position: position, playing: playing, trackID: trackID, at: .now)
    }

    private static func interface(defining member: String) -> String {
        switch member {
        case "Introspect": "org.freedesktop.DBus.Introspectable"
        case "Get", "GetAll", "Set": MPRISClient.propertiesInterface
        case "Raise", "Quit": MPRISClient.rootInterface
        default: MPRISClient.playerInterface
        }
    }
}
