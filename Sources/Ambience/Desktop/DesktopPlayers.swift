import Synchronization

/// The desktop's music players (MPRIS) as the session needs them: who is playing, pause, resume, duck.
final class DesktopPlayers: OtherPlayers {
    let client: MPRISClient
    /// Our own MPRIS server's name: the game's music is never "other".
    let ownBusName: String?
    /// Volumes before ducking, to restore exactly.
    private let savedVolumes = Lock<[String: Double]>([:])

    init(client: MPRISClient, ownBusName: String?) {
        self.client = client
        self.ownBusName = ownBusName
    }

    func playingPlayers() -> [String] {
        client.players.filter { $0.status == .playing && $0.name != ownBusName }.map(\.name)
    }

    func pause(_ players: [String]) { for name in players { client.send(.pause, to: name) } }
    func play(_ players: [String]) { for name in players { client.send(.play, to: name) } }

    func duck(_ players: [String], to scale: Double) {
        for name in players {
            if scale < 1 {
                let original = client.player(named: name)?.volume ?? 1
                savedVolumes.withLock { $0[name] = $0[name] ?? original }
                client.send(.setVolume(original * scale), to: name)
            } else if let original = savedVolumes.withLock({ $0.removeValue(forKey: name) }) {
                client.send(.setVolume(original), to: name)
            }
        }
    }

    /// Waits until every command sent so far has been carried out (the client handles jobs in order).
    func flush() { client.refresh() }
}
