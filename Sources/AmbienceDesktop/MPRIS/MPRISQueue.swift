import AmbienceCore
import AmbiencePlatform
import Foundation

/// The queue commands: several calls to one player, each depending on what the last one did, carried out on the
/// client's desktop thread. A failure stops the sequence and is reported as `commandFailed`.
///
/// What players do (seen with VLC 3.0 and mpv 0.35 with mpv-mpris 0.9):
/// - VLC has an editable TrackList but reports `HasTrackList` false, so the client asks for the interface itself.
///   Its `Tracks` property lists tracks added without being made current only after the next track change (a removal
///   refreshes it too), and it sends no `TrackAdded`: so a queue is built at the front (each `AddTrack` after
///   `NoTrack` goes first), in reverse, and the first item last, made current, which refreshes the list.
/// - mpv has no TrackList. `OpenUri` with a playlist file replaces its playlist; its track ids are playlist positions
///   (`/0`), so the reload is noticed by the position going back, and then the old one is set again.
extension ClientCore {
    static let noTrack = "/org/mpris/MediaPlayer2/TrackList/NoTrack"
    /// How long a player may take to act on an `AddTrack` or an `OpenUri` before the sequence gives up.
    static let settleTime: Duration = .seconds(2)

    func performQueueCommand(_ command: MPRISCommand, on info: MPRISPlayerInfo) {
        do throws(DesktopError) {
            switch command {
            case .replaceTracks(let uris): try replaceTracks(uris, on: info.name)
            case .appendTracks(let uris): try appendTracks(uris, on: info.name)
            case .openKeepingPlace(let uri, let seconds, let paused):
                try open(uri, keeping: seconds, paused: paused, on: info)
            default: return
            }
        } catch {
            if case .timeout = error { markSilent(info.name) }
            shared.withLock { post(.commandFailed(info.name, command, error), &$0) }
        }
    }

    private func replaceTracks(_ uris: [String], on name: String) throws(DesktopError) {
        guard let first = uris.first else { return }
        let old = try tracks(of: name)
        let before = try currentTrack(of: name)
        for uri in uris.dropFirst().reversed() { try addTrack(uri, after: Self.noTrack, makeCurrent: false, on: name) }
        try addTrack(first, after: Self.noTrack, makeCurrent: true, on: name)
        try waitUntil(name, "to play \(first)") { (try? self.currentTrack(of: name)) ?? before != before }
        for track in old {
            _ = try call(name, MPRISClient.trackListInterface, "RemoveTrack", [.objectPath(track)])
        }
        read([name])
    }

    private func appendTracks(_ uris: [String], on name: String) throws(DesktopError) {
        let listed = try tracks(of: name)
        guard let last = listed.last else { return try replaceTracks(uris, on: name) }
        // Each add goes right after the anchor, so the last item is added first.
        for uri in uris.reversed() { try addTrack(uri, after: last, makeCurrent: false, on: name) }
    }

    private func open(_ uri: String, keeping seconds: Double, paused: Bool, on info: MPRISPlayerInfo)
        throws(DesktopError)
    {
        let name = info.name
        let started = ContinuousClock.now
        _ = try call(name, MPRISClient.playerInterface, "OpenUri", [.string(uri)])
        // The reload shows as the position going back to the start (the track id may not change).
        if seconds > 1 {
            try waitUntil(name, "to open \(uri)") {
                ((try? self.position(of: name)) ?? nil).map { $0 < seconds - 0.5 } ?? false
            }
        } else {
            try waitUntil(name, "to open \(uri)") { ContinuousClock.now - started > .milliseconds(200) }
        }
        // A player still loading ignores a jump (mpv does): jump until the position is where it was.
        let deadline = ContinuousClock.now + Self.settleTime
        while true {
            guard let track = try currentTrack(of: name) else {
                throw .unsupported(
                    "\(info.identity ?? name): no track id after opening \(uri), so its place cannot be restored")
            }
            _ = try call(
                name, MPRISClient.playerInterface, "SetPosition",
                [.objectPath(track), .int64((seconds * 1_000_000).saturated(Int64.self))])
            handle(connection.receive(timeout: .milliseconds(50)))
            if let now = try position(of: name), abs(now - seconds) < 1 { break }
            guard ContinuousClock.now < deadline else {
                throw .timeout("\(name) to go back to \(seconds) s after opening \(uri)")
            }
        }
        _ = try call(name, MPRISClient.playerInterface, paused ? "Pause" : "Play", [])
        read([name])
    }

    private func addTrack(_ uri: String, after track: String, makeCurrent: Bool, on name: String) throws(DesktopError) {
        _ = try call(
            name, MPRISClient.trackListInterface, "AddTrack", [.string(uri), .objectPath(track), .bool(makeCurrent)])
    }

    private func tracks(of name: String) throws(DesktopError) -> [String] {
        try call(
            name, MPRISClient.propertiesInterface, "Get", [.string(MPRISClient.trackListInterface), .string("Tracks")]
        )
        .first?.strings ?? []
    }

    private func currentTrack(of name: String) throws(DesktopError) -> String? {
        let reply = try call(
            name, MPRISClient.propertiesInterface, "Get", [.string(MPRISClient.playerInterface), .string("Metadata")])
        return reply.first?.dict?["mpris:trackid"]?.string
    }

    private func call(_ name: String, _ interface: String, _ member: String, _ arguments: [DBusValue])
        throws(DesktopError) -> [DBusValue]
    {
        try connection.call(
            destination: name, path: MPRISClient.objectPath, interface: interface, member: member,
            arguments: arguments, timeout: timeout)
    }

    /// Waits (handling signals meanwhile) until `done` says so, at most `settleTime`.
    private func waitUntil(_ name: String, _ what: String, _ done: () -> Bool) throws(DesktopError) {
        let deadline = ContinuousClock.now + Self.settleTime
        while !done() {
            guard ContinuousClock.now < deadline else { throw .timeout("\(name) \(what)") }
            handle(connection.receive(timeout: .milliseconds(20)))
        }
    }
}
