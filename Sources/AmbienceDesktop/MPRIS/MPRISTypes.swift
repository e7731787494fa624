import AmbienceCore
import Foundation

/// An MPRIS player on the desktop (mpv, a browser, Spotify…), as last read from the session bus.
public struct MPRISPlayerInfo: Sendable, Equatable {
    /// What the player says it is doing (MPRIS `PlaybackStatus`).
    public enum Status: String, Sendable {
        /// `Playing`.
        case playing
        /// `Paused`.
        case paused
        /// `Stopped`, or a status the player did not give.
        case stopped
    }

    /// The bus name: `org.mpris.MediaPlayer2.mpv`.
    public var name: String
    /// The player's own name for itself ("mpv").
    public var identity: String?
    /// What the player is doing, as last read.
    public var status: Status = .stopped
    /// The current track's title (`xesam:title`), when the player says.
    public var title: String?
    /// The artists, joined with ", ".
    public var artist: String?
    /// The current track's album (`xesam:album`), when the player says.
    public var album: String?
    /// Where the player keeps the track's cover (`mpris:artUrl`), as it gives it.
    public var artURL: String?
    /// Seconds.
    public var length: Double?
    /// The track's `mpris:trackid` (an object path), needed to set the position.
    public var trackID: String?
    /// Seconds into the track when last read: at a change of state, a seek, or a refresh. MPRIS does not signal the
    /// position's steady progress; while playing it moves on at the player's rate.
    public var position: Double?
    /// 0…1 (some players allow more).
    public var volume: Double?
    /// What the current track plays (`xesam:url`), when the player says.
    public var url: String?
    /// Whether the player serves `org.mpris.MediaPlayer2.TrackList` and lets it be edited (found by asking it:
    /// VLC 3 has one but reports `HasTrackList` false).
    public var canEditTracks = false
    /// Whether the player may be controlled at all (`CanControl`); the session never pauses or ducks one that says no.
    public var canControl = false
    /// Whether it accepts `Play` (`CanPlay`).
    public var canPlay = false
    /// Whether it accepts `Pause` (`CanPause`).
    public var canPause = false
    /// Whether it accepts `Next` (`CanGoNext`).
    public var canGoNext = false
    /// Whether it accepts `Previous` (`CanGoPrevious`).
    public var canGoPrevious = false
    /// Whether it accepts `Seek` and `SetPosition` (`CanSeek`).
    public var canSeek = false
    /// The connection that owns the name (":1.8").
    package var uniqueName: String
    package var processID: Int?
    /// False once a call to the player went unanswered within the timeout. It is then not asked again until it sends
    /// a signal, its name changes hands, or the client's retry interval has passed; commands to it are sent without
    /// waiting for a reply.
    package var isResponding = true

    /// The name without the MPRIS prefix, as `playerctl -p` takes it ("mpv").
    public var shortName: String { String(name.dropFirst(MPRISClient.namePrefix.count)) }

    package init(name: String, uniqueName: String) {
        self.name = name
        self.uniqueName = uniqueName
    }
}

/// Something asked of a desktop player.
package enum MPRISCommand: Sendable, Equatable {
    case play, pause, playPause, stop, next, previous
    /// Moves the position by this many seconds (negative: back).
    case seek(by: Double)
    /// Jumps to this many seconds into the current track.
    case setPosition(Double)
    case openURI(String)
    /// 0…1.
    case setVolume(Double)
    /// Replaces the player's track list with these URIs and plays the first (players with an editable TrackList).
    case replaceTracks([String])
    /// Adds these URIs after the last track the player lists, leaving the current one alone (editable TrackList).
    case appendTracks([String])
    /// Opens `uri` (a playlist whose first item is the one playing now) and puts the player back where it was:
    /// `seconds` into that item, paused or playing.
    case openKeepingPlace(uri: String, seconds: Double, paused: Bool)

    /// The MPRIS method (or property) it becomes, as reports name it.
    package var methodName: String {
        switch self {
        case .play: "Play"
        case .pause: "Pause"
        case .playPause: "PlayPause"
        case .stop: "Stop"
        case .next: "Next"
        case .previous: "Previous"
        case .seek: "Seek"
        case .setPosition: "SetPosition"
        case .openURI: "OpenUri"
        case .setVolume: "Volume"
        case .replaceTracks, .appendTracks: "AddTrack"
        case .openKeepingPlace: "OpenUri"
        }
    }
}

/// What the client saw on the bus; drained by `MPRISClient.drainEvents()`, in order.
package enum MPRISEvent: Sendable, Equatable {
    case playerAppeared(MPRISPlayerInfo)
    /// The bus name, which no longer has an owner.
    case playerVanished(String)
    /// Anything but the position changed (status, track, volume, capabilities, responsiveness).
    case playerChanged(MPRISPlayerInfo)
    /// The player jumped: (bus name, seconds into the track).
    case seeked(String, Double)
    /// A command was refused or went unanswered: (bus name, command, why).
    case commandFailed(String, MPRISCommand, DesktopError)
    /// The session bus went away; the client has stopped.
    case busLost
}

/// Which bus names are one player.
extension MPRISPlayerInfo {
    /// Whether two names are one player: one connection owns both, or one process owns `X` and `X.instance…` on
    /// two connections (VLC 3 does).
    static func samePlayer(_ a: MPRISPlayerInfo, _ b: MPRISPlayerInfo) -> Bool {
        if a.uniqueName == b.uniqueName { return true }
        guard let pid = a.processID, pid == b.processID else { return false }
        return baseName(a.name) == baseName(b.name)
    }

    /// The name without an `.instance…` suffix.
    static func baseName(_ name: String) -> String {
        guard isInstanceName(name), let dot = name.lastIndex(of: ".") else { return name }
        return String(name[..<dot])
    }

    /// `org.mpris.MediaPlayer2.X.instance<digits>`: the name a second instance (or every instance) of a player takes.
    static func isInstanceName(_ name: String) -> Bool {
        let parts = name.dropFirst(MPRISClient.namePrefix.count).split(separator: ".")
        guard parts.count >= 2, let last = parts.last, last.hasPrefix("instance") else { return false }
        let digits = last.dropFirst("instance".count)
        return !digits.isEmpty && digits.allSatisfy(\.isNumber)
    }
}
