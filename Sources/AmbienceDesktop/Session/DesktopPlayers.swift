import AmbienceCore
import AmbiencePlatform
import Synchronization

/// The desktop's music players (MPRIS) as the session needs them: who is playing, pause, resume, duck.
package final class DesktopPlayers: OtherPlayers {
    let client: MPRISClient
    /// Our own MPRIS server's name: the game's music is never "other".
    let ownBusName: String?
    /// Volumes before ducking, to restore exactly.
    private let savedVolumes: SavedVolumes

    /// `savedVolumes` outlives one connection: a player ducked before the session bus went away gets its volume
    /// back through the next one.
    init(client: MPRISClient, ownBusName: String?, savedVolumes: SavedVolumes = SavedVolumes()) {
        self.client = client
        self.ownBusName = ownBusName
        self.savedVolumes = savedVolumes
    }

    package func playingPlayers() -> [String] { playingPlayers(among: client.players) }

    /// The players playing among `players` (a copy of `client.players` already made), our own server left out.
    package func playingPlayers(among players: [MPRISPlayerInfo]) -> [String] {
        players.filter { $0.status == .playing && $0.name != ownBusName }.map(\.name)
    }

    package func uncontrollable(_ players: [String]) -> [String] {
        players.filter { name in
            guard let info = client.player(named: name) else { return false }
            return !(info.canControl && info.canPause && info.canPlay)
        }
    }

    package func pause(_ players: [String]) { for name in players { client.send(.pause, to: name) } }
    package func play(_ players: [String]) { for name in players { client.send(.play, to: name) } }
    package func stop(_ players: [String]) { for name in players { client.send(.stop, to: name) } }

    package func duck(_ players: [String], to scale: Double) {
        for name in players {
            if scale < 1 {
                let original = savedVolumes.save(client.player(named: name)?.volume ?? 1, for: name)
                client.send(.setVolume(original * scale), to: name)
            } else if let original = savedVolumes.take(name) {
                client.send(.setVolume(original), to: name)
            }
        }
    }

    /// Waits until every command sent so far has been carried out (the client handles jobs in order).
    package func flush() { client.refresh() }
}

/// Player volumes from before the session ducked them, by bus name.
final class SavedVolumes: Sendable {
    private let volumes = Lock<[String: Double]>([:])

    init() {}

    /// Keeps `volume` unless one is kept already (a second duck must not save the ducked volume); returns the kept one.
    func save(_ volume: Double, for name: String) -> Double {
        volumes.withLock { saved in
            if let kept = saved[name] { return kept }
            saved[name] = volume
            return volume
        }
    }

    func take(_ name: String) -> Double? { volumes.withLock { $0.removeValue(forKey: name) } }
}
