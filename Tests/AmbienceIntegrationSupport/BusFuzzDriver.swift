// The bus fuzz target: any bytes as one D-Bus message in wire format, taken in as the engine's connection takes a
// message (header first, arguments within DBusLimits), then answered by the MPRIS server as a call and handled by
// the MPRIS client as a signal. Compiled into the libFuzzer binary by Tests/Fuzz/run.sh and replayed by the suite.

import Foundation
import Synchronization

@testable import Ambience
@testable import AmbienceCore
@testable import AmbienceDesktop

extension FuzzDrivers {
    static func bus(_ bytes: [UInt8]) -> [String] {
        let inspected: (header: DBusMessage, arguments: [DBusValue]?)?
        do throws(DesktopError) {
            inspected = try DBusConnection.inspect(marshalled: bytes)
        } catch {
            return []  // no libdbus: nothing to feed
        }
        guard let (header, arguments) = inspected else { return [] }
        var problems: [String] = []
        guard let arguments else { return problems }  // over the limits: refused, never decoded
        if count(arguments) > DBusLimits.values { problems.append("decoded \(count(arguments)) values past the limit") }
        var message = header
        message.arguments = arguments
        // Without a session bus (a bare fuzz run) only the decoding above is checked.
        guard let parts = BusFuzzParts.shared else { return problems }
        return problems + parts.feed(message)
    }

    private static func count(_ values: [DBusValue]) -> Int {
        values.reduce(0) { total, value in
            switch value {
            case .array(_, let items), .structure(let items): total + 1 + count(items)
            case .dict(let dict): total + 1 + 2 * dict.count + count(Array(dict.values))
            case .variant(let inner): total + 1 + count([inner])
            default: total + 1
            }
        }
    }
}

/// A server core and a client core on the session bus, neither started: the fuzz thread drives both, as their
/// desktop threads would.
private final class BusFuzzParts: @unchecked Sendable {
    static let shared: BusFuzzParts? = {
        guard let address = DesktopBus.sessionAddress, let connection = try? DBusConnection(address: address) else {
            return nil
        }
        return BusFuzzParts(connection)
    }()

    let controls = FuzzControls()
    let connection: DBusConnection
    let server: ServerCore
    let client: ClientCore
    /// A player the fuzzer's signals may speak for: the seeds are sent by ":1.5".
    let known = MPRISPlayerInfo(name: "org.mpris.MediaPlayer2.fuzz", uniqueName: ":1.5")
    private let lock = Mutex(())

    init(_ connection: DBusConnection) {
        self.connection = connection
        server = ServerCore(
            connection: connection, controls: controls, identity: "Fuzz", pollInterval: .seconds(3600))
        client = ClientCore(connection: connection, timeout: .milliseconds(20), retryInterval: .seconds(3600))
    }

    func feed(_ message: DBusMessage) -> [String] {
        lock.withLock { _ in
            var problems: [String] = []
            switch message.kind {
            case .methodCall:
                server.answer(message)
                problems += controls.problems()
            case .signal:
                var info = known
                info.isResponding = true
                client.players = [known.name: info]
                client.handle([message])
                for player in client.players.values {
                    for (what, number) in [("position", player.position), ("length", player.length)] {
                        if let number, !number.isFinite { problems.append("\(player.name) \(what) \(number)") }
                    }
                    if let volume = player.volume, !volume.isFinite {
                        problems.append("\(player.name) volume \(volume)")
                    }
                }
            case .methodReturn, .error:
                break
            }
            // The bus's answers to the replies sent (most go to names that are not there) must not pile up.
            _ = connection.receive(timeout: .zero)
            return problems
        }
    }
}

/// What the server drives: it records anything a bus caller could make absurd.
private final class FuzzControls: MPRISPlayerControls, @unchecked Sendable {
    private let state = Mutex((time: 0.0, volume: Float(1), bad: [String]()))
    var playbackState: PlaybackState { .playing }
    let nowPlayingItem: MediaItem? = {
        var item = MediaItem(path: "/nonexistent/fuzz.ogg")
        item.playbackDuration = 180
        return item
    }()
    var currentPlaybackTime: Double {
        get { state.withLock { $0.time } }
        set {
            state.withLock { state in
                if !newValue.isFinite || newValue < 0 { state.bad.append("seek to \(newValue)") }
                state.time = newValue
            }
        }
    }
    var volume: Float {
        get { state.withLock { $0.volume } }
        set {
            state.withLock { state in
                if !(0...1).contains(newValue) { state.bad.append("volume \(newValue)") }
                state.volume = newValue
            }
        }
    }
    func play() {}
    func pause() {}
    func stop() {}
    func skipToNextItem() {}
    func skipToPreviousItem() {}

    func problems() -> [String] {
        state.withLock { state in
            defer { state.bad.removeAll() }
            return state.bad
        }
    }
}
