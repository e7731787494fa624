import Glibc

/// Route watching's pure half: what the sound server reports in, the session events it means out. It follows the
/// sink our own stream plays on, its active port, and the card it belongs to, and decides nothing: moving the stream
/// or reopening the device is the policy's answer to the events. No I/O, no clocks (the caller passes the time), no
/// threads.
///
/// A route is a sink and its active port. What the server reports, and what the tracker makes of it:
/// - our sink removed: `currentDeviceRemoved` (a USB or Bluetooth device pulled);
/// - our sink's active port became unavailable (a jack pulled; the server may switch ports at once or a moment
///   later): `currentDeviceRemoved`, previous the old port, current the port now in use, reported once;
/// - another port of our sink became available and the server made it the active one (headphones plugged in):
///   `activePortChanged(newlyAvailable: true)`; a port that became available without being switched to is
///   `deviceAdded` (and if the switch follows within a second, it is still a port that appeared and took over);
/// - our sink's active port changed while the old one stayed available (picked by hand):
///   `activePortChanged(newlyAvailable: false)`;
/// - our sink removed by its card's profile switch (Bluetooth A2DP to headset, analog to HDMI), which replaces it
///   with a new sink of the same card: the removal, then `defaultDeviceChanged` to the card's new sink, whether that
///   sink is reported before the removal or up to a second after it.
package struct RouteTracker: Sendable, Equatable {
    /// After the default changes, the server's report of our stream lags the move: trust the new default this long
    /// (or until the report agrees).
    package static let moveTrustNanoseconds = 1_000_000_000

    package let processID: pid_t
    package let appName: String
    /// The sink our stream was last seen on (nil: none, or not known yet).
    package private(set) var ourSink: SinkInfo?
    private var trustMoveUntil = 0
    /// A port of our sink that became available without being switched to yet, and until when a switch to it counts
    /// as the port taking over.
    private var recentPlug: RecentPlug?
    /// Our sink went with its card still there in a profile that has sinks: the card's next sink replaces it.
    private var awaitedReplacement: AwaitedReplacement?

    private struct RecentPlug: Sendable, Equatable {
        var sink: String
        var port: String
        var until: Int
    }

    private struct AwaitedReplacement: Sendable, Equatable {
        var card: UInt32
        var previous: SinkInfo
        var until: Int
    }

    package init(processID: pid_t, appName: String) {
        self.processID = processID
        self.appName = appName
    }

    /// The game's own output stream: this process's, under the app's name (a process can hold other streams).
    package func isOurStream(_ stream: SinkInput) -> Bool {
        stream.processID == processID && stream.applicationName == appName
    }

    /// The session events one server event means. `snapshot` is the server as it is now (newer than the event);
    /// `driver` names the output in the routes; `now` is monotonic nanoseconds.
    package mutating func observe(_ event: PulseEvent, in snapshot: PulseSnapshot, driver: String, now: Int)
        -> [SessionEvent]
    {
        switch event {
        case .sinkRemoved(let sink, let streams)
        where streams.contains(where: isOurStream) || sink.name == ourSink?.name:
            let previous = route(of: sink, driver: driver)
            if let card = sink.cardIndex, let replacement = snapshot.sinks(ofCard: card).first {
                // A profile switch whose new sink is already there: a removal, then a new default.
                let current = follow(replacement, now: now, driver: driver)
                return [
                    .currentDeviceRemoved(previous: previous, current: current),
                    .defaultDeviceChanged(previous: previous, current: current)
                ]
            }
            if let card = sink.cardIndex, (snapshot.cardsByIndex[card]?.activeProfile?.sinks ?? 0) > 0 {
                // The card is still there with a profile that has sinks: its new sink is on its way.
                awaitedReplacement = AwaitedReplacement(
                    card: card, previous: sink, until: now + Self.moveTrustNanoseconds)
            }
            ourSink = snapshot.sinkAfterRemoval(pid: processID)
            return [.currentDeviceRemoved(previous: previous, current: ourSink.map { route(of: $0, driver: driver) })]

        case .sinkAdded(let sink):
            if let awaited = awaitedReplacement, sink.cardIndex == awaited.card, now < awaited.until {
                // The card's profile switch made this sink in place of ours: it is the new default for us.
                awaitedReplacement = nil
                let previous = ourSink.map { route(of: $0, driver: driver) }
                let current = follow(sink, now: now, driver: driver)
                // With no sink left meanwhile, the new one is first a device again.
                return (previous == nil ? [.deviceAdded(current, current: .none)] : [])
                    + [
                        .defaultDeviceChanged(
                            previous: previous ?? route(of: awaited.previous, driver: driver), current: current)
                    ]
            }
            let current = ourSink.map { route(of: $0, driver: driver) } ?? .none
            if ourSink == nil { ourSink = sink }
            return [.deviceAdded(route(of: sink, driver: driver), current: current)]

        case .sinkChanged(let old, let new) where new.name == ourSink?.name:
            ourSink = new
            let previous = route(of: old, driver: driver), current = route(of: new, driver: driver)
            // A jack pulled: the port in use became unavailable (the server may have switched to another port already).
            if let lost = old.activePortName, old.port(named: lost)?.availability != .no,
                new.port(named: lost)?.availability == .no
            {
                recentPlug = nil
                return [.currentDeviceRemoved(previous: previous, current: current)]
            }
            let plugged = new.ports.filter { port in
                port.availability == .yes && old.port(named: port.name)?.availability == .no
            }
            // The port in use changed while the old one is still there: a port that appeared took over, or a pick.
            if let was = old.activePortName, let active = new.activePortName, was != active,
                new.port(named: was)?.availability != .no
            {
                let justPlugged = recentPlug.map { $0.sink == new.name && $0.port == active && now < $0.until } ?? false
                recentPlug = nil
                return [
                    .activePortChanged(
                        previous: previous, current: current,
                        newlyAvailable: justPlugged || plugged.contains { $0.name == active })
                ]
            }
            // A jack plugged in, its port not (yet) in use.
            if let port = plugged.first {
                recentPlug = RecentPlug(sink: new.name, port: port.name, until: now + Self.moveTrustNanoseconds)
                return [.deviceAdded(current, current: current)]
            }
            return []

        case .cardChanged(_, let card)
        where card.index == awaitedReplacement?.card && (card.activeProfile?.sinks ?? 0) == 0:
            awaitedReplacement = nil  // switched to a profile without sinks (off, input only): nothing replaces ours
            return []

        case .cardRemoved(let card) where card.index == awaitedReplacement?.card:
            awaitedReplacement = nil
            return []

        case .defaultSinkChanged(let from, let to?) where to != ourSink?.name:
            guard let next = snapshot.sink(named: to) else { return [] }
            let previous = ourSink ?? from.flatMap { snapshot.sink(named: $0) }
            // Our stream never chose a sink, so it goes to the new default (and the policy makes sure of it).
            ourSink = next
            trustMoveUntil = now + Self.moveTrustNanoseconds
            return [
                .defaultDeviceChanged(
                    previous: previous.map { route(of: $0, driver: driver) } ?? .none,
                    current: route(of: next, driver: driver))
            ]

        default:
            return []
        }
    }

    /// Makes `sink` ours as the server's next report will (our stream goes there), trusted for a second.
    private mutating func follow(_ sink: SinkInfo, now: Int, driver: String) -> AudioRoute {
        ourSink = sink
        trustMoveUntil = now + Self.moveTrustNanoseconds
        return route(of: sink, driver: driver)
    }

    /// Whether a `refresh` at a later time could change the tracker though the server's snapshot is the one it saw
    /// at its last refresh, at `last`: a plug or a replacement is awaited, or the trust in a move ran out since.
    package func refreshIsDue(since last: Int) -> Bool {
        awaitedReplacement != nil || recentPlug != nil || trustMoveUntil > last
    }

    /// Catches up with where the server says our stream is (after the events, once per poll).
    package mutating func refresh(_ snapshot: PulseSnapshot, now: Int) {
        if let awaited = awaitedReplacement, now >= awaited.until { awaitedReplacement = nil }
        if let plug = recentPlug, now >= plug.until { recentPlug = nil }
        if let sink = snapshot.sinkOfStream(pid: processID) {
            if sink.name == ourSink?.name { trustMoveUntil = 0 }
            if now >= trustMoveUntil { ourSink = sink }
        } else if ourSink == nil {
            ourSink = snapshot.defaultSink
        }
    }

    package func route(of sink: SinkInfo, driver: String) -> AudioRoute {
        AudioRoute(name: sink.routeName, driver: driver, sink: sink.name, port: sink.activePort?.name)
    }
}
