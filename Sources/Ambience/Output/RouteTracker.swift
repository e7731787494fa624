import Glibc

/// Route watching's pure half: what the sound server reports in, the session events it means out. It follows the
/// sink our own stream plays on and decides nothing: moving the stream or reopening the device is the policy's
/// answer to the events. No I/O, no clocks (the caller passes the time), no threads.
struct RouteTracker: Sendable, Equatable {
    /// After the default changes, the server's report of our stream lags the move: trust the new default this long
    /// (or until the report agrees).
    static let moveTrustNanoseconds = 1_000_000_000

    let processID: pid_t
    let appName: String
    /// The sink our stream was last seen on (nil: none, or not known yet).
    private(set) var ourSink: SinkInfo?
    private var trustMoveUntil = 0

    init(processID: pid_t, appName: String) {
        self.processID = processID
        self.appName = appName
    }

    /// The game's own output stream: this process's, under the app's name (a process can hold other streams).
    func isOurStream(_ stream: SinkInput) -> Bool {
        stream.processID == processID && stream.applicationName == appName
    }

    /// The session events one server event means. `snapshot` is the server as it is now (newer than the event);
    /// `driver` names the output in the routes; `now` is monotonic nanoseconds.
    mutating func observe(_ event: PulseEvent, in snapshot: PulseSnapshot, driver: String, now: Int) -> [SessionEvent] {
        switch event {
        case .sinkRemoved(let sink, let streams) where streams.contains(where: isOurStream) || sink.name == ourSink?.name:
            let previous = route(of: sink, driver: driver)
            ourSink = snapshot.sinkAfterRemoval(pid: processID)
            return [.currentDeviceRemoved(previous: previous, current: ourSink.map { route(of: $0, driver: driver) })]

        case .sinkAdded(let sink):
            let current = ourSink.map { route(of: $0, driver: driver) } ?? .none
            if ourSink == nil { ourSink = sink }
            return [.deviceAdded(route(of: sink, driver: driver), current: current)]

        case .sinkChanged(let old, let new) where new.name == ourSink?.name:
            ourSink = new
            // A jack pulled: the port in use became unavailable (the server may have switched to another port already).
            if let lost = old.activePortName, old.port(named: lost)?.availability != .no, new.port(named: lost)?.availability == .no {
                return [.currentDeviceRemoved(previous: route(of: old, driver: driver), current: route(of: new, driver: driver))]
            }
            // A jack plugged in: a port of our sink became available.
            let plugged = new.ports.contains { port in port.availability == .yes && old.port(named: port.name)?.availability == .no }
            if plugged {
                let current = route(of: new, driver: driver)
                return [.deviceAdded(current, current: current)]
            }
            return []

        case .defaultSinkChanged(let from, let to?) where to != ourSink?.name:
            guard let next = snapshot.sink(named: to) else { return [] }
            let previous = ourSink ?? from.flatMap { snapshot.sink(named: $0) }
            // Our stream never chose a sink, so it goes to the new default (and the policy makes sure of it).
            ourSink = next
            trustMoveUntil = now + Self.moveTrustNanoseconds
            return [.defaultDeviceChanged(previous: previous.map { route(of: $0, driver: driver) } ?? .none,
                                          current: route(of: next, driver: driver))]

        default:
            return []
        }
    }

    /// Catches up with where the server says our stream is (after the events, once per poll).
    mutating func refresh(_ snapshot: PulseSnapshot, now: Int) {
        if let sink = snapshot.sinkOfStream(pid: processID) {
            if sink.name == ourSink?.name { trustMoveUntil = 0 }
            if now >= trustMoveUntil { ourSink = sink }
        } else if ourSink == nil {
            ourSink = snapshot.defaultSink
        }
    }

    func route(of sink: SinkInfo, driver: String) -> AudioRoute {
        AudioRoute(name: sink.routeName, driver: driver, sink: sink.name)
    }
}
