import AmbienceCore
import AmbiencePlatform
import Foundation

/// The engine's hold on the session bus and everything that rides on it: the MPRIS client (other players and the
/// system music player) and the game's own MPRIS player.
///
/// When the bus goes away (the daemon crashed, the user's session restarted it) everything on it is closed and a
/// reconnect thread tries the same address every `retryInterval`, so the game thread never waits on a dead or hung
/// bus. `poll(_:)` (from `update()`) reports the loss and, later, hands over the new connection.
package final class DesktopLink: SessionMonitor {
    /// What rides on one connection to the bus.
    package struct Connection: Sendable {
        package let client: MPRISClient
        package let server: MPRISServer?
        package let players: DesktopPlayers

        func close() {
            server?.close()
            client.close()
        }
    }

    private enum Change: Equatable {
        case lost
        case restored
    }

    static let retryInterval: Duration = .seconds(2)

    private struct State {
        var current: Connection?
        /// Made by the reconnect thread, not yet handed over by `poll(_:)`.
        var restored: Connection?
        /// The reconnect thread, while the bus is gone and the link open.
        var reconnecting: WorkerThread?
        var closed = false
        /// What the MPRIS clients of lost connections had dropped, so the total never goes back.
        var droppedByLostClients = 0
    }

    private let address: String?
    private let appName: String
    private let controls: any MPRISPlayerControls
    private let onConnectionChanged: @Sendable (Connection?) -> Void
    private let state = Lock<State>(State())
    private let savedVolumes = SavedVolumes()

    /// Connects to the bus at `address` now (at most the desktop timeout). With no bus there, the link starts out
    /// disconnected and keeps trying in the background; with no address at all it never tries. A poll that finds the
    /// connection lost or restored calls `onConnectionChanged` with the live one (nil while the bus is gone) before
    /// it returns the event, so whatever rides on the link is moved before the session hears of it.
    package init(
        address: String?, appName: String, controls: any MPRISPlayerControls,
        onConnectionChanged: @escaping @Sendable (Connection?) -> Void
    ) {
        self.address = address
        self.appName = appName
        self.controls = controls
        self.onConnectionChanged = onConnectionChanged
        if let connection = connect() {
            state.withLock { $0.current = connection }
        } else if address != nil {
            startReconnecting()
        }
    }

    package var name: String { "MPRIS client" }

    /// MPRIS events dropped because nobody drained them, over every connection this link has had.
    package var droppedEvents: Int {
        state.withLock { $0.droppedByLostClients.addingSaturated($0.current?.client.droppedEvents ?? 0) }
    }

    /// The live connection, if the bus is there.
    package var connection: Connection? { state.withLock { $0.current } }

    /// The bus lost (`mediaServicesLost(.sessionBus)`) or back (`mediaServicesReset(.sessionBus)`), after
    /// `onConnectionChanged` has been told. Call from the game thread.
    package func poll(_ context: MonitorContext) -> [SessionEvent] {
        guard let change = takeChange() else { return [] }
        onConnectionChanged(connection)
        switch change {
        case .lost: return [.mediaServicesLost(.sessionBus)]
        case .restored: return [.mediaServicesReset(.sessionBus)]
        }
    }

    /// Notices a lost bus (closing what was on it and starting to reconnect) and hands over a connection the
    /// reconnect thread made.
    private func takeChange() -> Change? {
        let (lost, restored, finished) = state.withLock { state -> (Connection?, Connection?, WorkerThread?) in
            if let current = state.current, !current.client.isConnected {
                state.current = nil
                state.droppedByLostClients = state.droppedByLostClients.addingSaturated(current.client.droppedEvents)
                return (current, nil, nil)
            }
            guard state.current == nil, let restored = state.restored else { return (nil, nil, nil) }
            state.restored = nil
            state.current = restored
            // The thread that made it returns right after handing it over.
            defer { state.reconnecting = nil }
            return (nil, restored, state.reconnecting)
        }
        finished?.stop()
        if let lost {
            lost.close()
            startReconnecting()
            return .lost
        }
        return restored == nil ? nil : .restored
    }

    /// Closes the connection and stops reconnecting.
    package func close() {
        let (current, restored, reconnecting) = state.withLock { state in
            state.closed = true
            defer { state.current = nil; state.restored = nil; state.reconnecting = nil }
            return (state.current, state.restored, state.reconnecting)
        }
        current?.close()
        restored?.close()
        // A connect in flight is a handful of calls, each bounded by the desktop timeout (the server's by the retry
        // interval; plus one per player that does not answer), so the join is bounded too; the thread closes what it
        // made when it finds the link closed.
        reconnecting?.stop()
    }

    /// Connects the client and the game's own player. The client keeps the desktop timeout for every call it makes
    /// later (the game's 250 ms); `serverTimeout` bounds only the server's connect and name request.
    /// `wholeOrNothing`: a server that could not be made for want of the bus (no answer in time) fails the whole
    /// connect, so that it is tried again; otherwise the link goes on without the game's player on the desktop.
    private func connect(serverTimeout: Duration = DesktopBus.defaultTimeout, wholeOrNothing: Bool = false)
        -> Connection?
    {
        guard let address, let client = try? MPRISClient(busAddress: address) else { return nil }
        let server: MPRISServer?
        do throws(DesktopError) {
            server = try MPRISServer(
                controls: controls, appName: appName, busAddress: address, timeout: serverTimeout)
        } catch {
            let busMissing =
                switch error {
                case .busUnavailable, .timeout: true
                default: false
                }
            if busMissing && wholeOrNothing {
                client.close()
                return nil
            }
            server = nil
        }
        let players = DesktopPlayers(client: client, ownBusName: server?.busName, savedVolumes: savedVolumes)
        // Learn who is playing before the game sees the link again.
        players.flush()
        return Connection(client: client, server: server, players: players)
    }

    private func startReconnecting() {
        state.withLock { state in
            guard !state.closed, state.reconnecting == nil else { return }
            state.reconnecting = WorkerThread(name: "ambience.desktop-reconnect") { [self] control in reconnect(control)
            }
        }
    }

    /// Tries the bus every `retryInterval` until it answers or the link is closed.
    private func reconnect(_ control: WorkerThread.Control) {
        let (seconds, attoseconds) = DesktopLink.retryInterval.components
        let interval = Double(seconds) + Double(attoseconds) * 1e-18
        while true {
            control.wait(seconds: interval)
            if control.isStopRequested { return }
            // Off the game thread, the server's name request may take the retry interval; a bus that answers the
            // client but not that request in time is tried again whole, never restored without the game's player.
            guard let connection = connect(serverTimeout: DesktopLink.retryInterval, wholeOrNothing: true) else {
                continue
            }
            let kept = state.withLock { state -> Bool in
                guard !state.closed else { return false }
                state.restored = connection
                return true
            }
            if !kept { connection.close() }
            return
        }
    }
}
