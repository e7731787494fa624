import Foundation
import Glibc
import Synchronization
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDesktop
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// Another process on the session bus (issue #32, class 3): it can do no more to the game than a well-behaved player
/// can. Forged signals change nothing; a huge or malformed call costs an error reply, not the server's answers or
/// gigabytes; players that never answer, signal at 20 Hz, flicker or come by the dozen cost the game one timeout,
/// not one each. Every test has a bus of its own (`ThrowawayService.dbus`) and hostile peers written for it
/// (`HostileBusPeer`); the engine runs in this process or as the built `ambience`. Serialized: several load the
/// machine on purpose, and the times they check must not be another test's.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(10)), .serialized) struct BusHostileTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    /// Where the built `ambience` runs: on `bus`, with SDL's dummy driver.
    static func environment(_ bus: ThrowawayService) -> [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": bus.address, "SDL_AUDIODRIVER": "dummy"]
    }

    /// A minute of tone for `ambience play`: longer than any run here, so the queue never ends one.
    func tone() throws -> String { try fixtures.sineWAV("tone.wav", seconds: 60) }

    // MARK: a. Forged signals

    /// Drains the monitor until it has reported at least `count` changes, the last `last`, then for one second more:
    /// the bus hands a connection its messages in the order it routed them, so by the time the owner's last signal
    /// is in, whatever a forgery before it did is in too (and a second is far more than the monitor needs for it).
    static func changes(of monitor: ScreenLockMonitor, atLeast count: Int, endingWith last: Bool) -> [Bool] {
        var seen: [Bool] = []
        _ = eventually(within: 10) {
            seen += monitor.drain()
            return seen.count >= count && seen.last == last
        }
        usleep(1_000_000)
        return seen + monitor.drain()
    }

    /// Does `act` every 20 ms (at most 10 s) until the monitor's changes, gathered in `seen`, are `expected`. The
    /// monitor subscribes on its own thread, so the first signals may come before it listens: the owner repeats
    /// itself until heard (a repeat changes nothing). This is each test's positive control.
    static func monitor(
        _ monitor: ScreenLockMonitor, reports expected: [Bool], seen: inout [Bool], _ act: () throws -> Void
    ) -> Bool {
        eventually(within: 10) {
            try? act()
            seen += monitor.drain()
            return seen == expected
        }
    }

    /// The screensaver (a connection of the test's that owns `interface`) locks and unlocks through a monitor on a
    /// bus of the test's own; then a forger's `ActiveChanged(true)`, three times. The owner then says unlocked (no
    /// change) and locked: the monitor reports exactly that one lock. Heard, the forgery would have locked first,
    /// and the owner's "unlocked" would have been a change too.
    @Test(arguments: ScreenLockMonitor.screenSaverInterfaces)
    func aForgedActiveChangedLocksNothing(interface: String) throws {
        let bus = try ThrowawayService.dbus(in: fixtures)
        let owner = try busPeer(bus.address)
        defer { owner.close() }
        #expect(try owner.requestName(interface, timeout: busPeerTimeout))
        let monitor = ScreenLockMonitor(systemBusAddress: nil, sessionBusAddress: bus.address)
        defer { monitor.close() }
        let path = "/" + interface.replacingOccurrences(of: ".", with: "/")
        func announce(_ active: Bool) throws {
            try owner.emitSignal(path: path, interface: interface, member: "ActiveChanged", arguments: [.bool(active)])
        }
        var seen: [Bool] = []
        #expect(Self.monitor(monitor, reports: [true], seen: &seen) { try announce(true) })
        #expect(Self.monitor(monitor, reports: [true, false], seen: &seen) { try announce(false) })

        try HostileBusPeer.forgeSignal(
            bus: bus.address, path: path, interface: interface, member: "ActiveChanged", signature: "b",
            arguments: [true])
        try announce(false)
        try announce(true)
        let after = Self.changes(of: monitor, atLeast: 1, endingWith: true)
        #expect(after == [true], "a forged ActiveChanged was heard: the monitor reported \(after)")
    }

    /// The same for logind's `LockedHint`: a forged `PropertiesChanged` on our session's path, from a connection
    /// that is not logind's, locks nothing; logind's own (`StandInLogind`, which owns the name) still does.
    @Test func aForgedLockedHintLocksNothing() throws {
        let bus = try ThrowawayService.dbus(in: fixtures)
        let logind = try StandInLogind(address: bus.address, session: ScreenLockTests.sessionPath, locked: false)
        defer { logind.stop() }
        let monitor = ScreenLockMonitor(systemBusAddress: bus.address, sessionBusAddress: nil)
        defer { monitor.close() }
        var seen: [Bool] = []
        #expect(Self.monitor(monitor, reports: [true], seen: &seen) { try logind.setLocked(true) })
        #expect(Self.monitor(monitor, reports: [true, false], seen: &seen) { try logind.setLocked(false) })

        try HostileBusPeer.forgeSignal(
            bus: bus.address, path: ScreenLockTests.sessionPath, interface: "org.freedesktop.DBus.Properties",
            member: "PropertiesChanged", signature: "sa{sv}as",
            arguments: [ScreenLockMonitor.sessionInterface, ["LockedHint": true], [String]()])
        try logind.setLocked(false)
        try logind.setLocked(true)
        let after = Self.changes(of: monitor, atLeast: 1, endingWith: true)
        #expect(after == [true], "a forged LockedHint was heard: the monitor reported \(after)")
    }

    /// Only the bus daemon says who owns a name. A `NameOwnerChanged` "the screensaver is gone" that another
    /// connection addresses to each of the monitor's (the daemon delivers those whatever the match rules) does not
    /// unlock: after it, the owner says locked (no change), unlocked and locked, and the monitor reports just the two.
    @Test func aForgedNameOwnerChangedUnlocksNothing() throws {
        let interface = "org.freedesktop.ScreenSaver"
        let bus = try ThrowawayService.dbus(in: fixtures)
        let owner = try busPeer(bus.address)
        defer { owner.close() }
        #expect(try owner.requestName(interface, timeout: busPeerTimeout))
        let monitor = ScreenLockMonitor(systemBusAddress: nil, sessionBusAddress: bus.address)
        defer { monitor.close() }
        func announce(_ active: Bool) throws {
            try owner.emitSignal(
                path: "/org/freedesktop/ScreenSaver", interface: interface, member: "ActiveChanged",
                arguments: [.bool(active)])
        }
        var seen: [Bool] = []
        #expect(Self.monitor(monitor, reports: [true], seen: &seen) { try announce(true) })

        let sent = try HostileBusPeer.forgeOwnerLost(interface, toConnectionsOf: getpid(), bus: bus.address)
        #expect(sent >= 2, "the forgery reached \(sent) connections: the owner's and the monitor's at least")
        try announce(true)
        try announce(false)
        try announce(true)
        let after = Self.changes(of: monitor, atLeast: 2, endingWith: true)
        #expect(after == [false, true], "a forged NameOwnerChanged was heard: the monitor reported \(after)")
    }

    /// What a game hears: ambient audio behind a forged lock. The real screensaver silences it and gives it back
    /// (the positive control); then forgeries, and two seconds of frames in which the session stays unlocked and
    /// the game audible.
    @Test func aForgedActiveChangedDoesNotSilenceTheGame() throws {
        let bus = try ThrowawayService.dbus(in: fixtures)
        let interface = "org.freedesktop.ScreenSaver"
        let owner = try busPeer(bus.address)
        defer { owner.close() }
        #expect(try owner.requestName(interface, timeout: busPeerTimeout))
        let engine = try ScreenLockTests.engine(category: .ambient, sessionBus: bus.address, systemBus: nil)
        defer { engine.shutdown() }
        func announce(_ active: Bool) throws {
            try owner.emitSignal(
                path: "/org/freedesktop/ScreenSaver", interface: interface, member: "ActiveChanged",
                arguments: [.bool(active)])
        }
        #expect(ScreenLockTests.announce(true, to: engine) { try announce(true) })
        try ScreenLockTests.expectOutput(of: engine, locked: true, category: .ambient)
        #expect(ScreenLockTests.announce(false, to: engine) { try announce(false) })

        try HostileBusPeer.forgeSignal(
            bus: bus.address, path: "/org/freedesktop/ScreenSaver", interface: interface, member: "ActiveChanged",
            signature: "b", arguments: [true])
        let locked = eventually(within: 2) {
            _ = engine.update()
            return engine.session.state.isScreenLocked
        }
        #expect(!locked, "a forged ActiveChanged locked the session")
        try ScreenLockTests.expectOutput(of: engine, locked: false, category: .ambient)
    }

    /// A player (the engine's own `MPRISServer` over a paused `StillPlayer`) watched by a client. A forger that does
    /// not own the player's name sends `PropertiesChanged` (playing, another title, volume 0) and `Seeked`; then the
    /// player's own volume change, which the client sees (the positive control, and the proof the forgeries were
    /// handled before it). The client's account of the player is still the player's own.
    @Test func aForgedPropertiesChangedChangesNoPlayer() throws {
        let bus = try ThrowawayService.dbus(in: fixtures)
        let controls = StillPlayer(title: "The Real Title")
        let server = try MPRISServer(
            controls: controls, appName: "forgery-target", busAddress: bus.address, timeout: .seconds(2))
        defer { server.close() }
        let client = try MPRISClient(busAddress: bus.address, timeout: .seconds(2))
        defer { client.close() }
        #expect(eventually(within: 10) { client.player(named: server.busName)?.title == "The Real Title" })

        try HostileBusPeer.forgeSignal(
            bus: bus.address, path: MPRISClient.objectPath, interface: "org.freedesktop.DBus.Properties",
            member: "PropertiesChanged", signature: "sa{sv}as",
            arguments: [
                "org.mpris.MediaPlayer2.Player",
                ["PlaybackStatus": "Playing", "Metadata": ["xesam:title": "Forged"], "Volume": 0.25], [String]()
            ])
        try HostileBusPeer.forgeSignal(
            bus: bus.address, path: MPRISClient.objectPath, interface: "org.mpris.MediaPlayer2.Player",
            member: "Seeked", signature: "x", arguments: [999_000_000])
        controls.volume = 0.5
        server.notifyChanged()
        #expect(eventually(within: 10) { client.player(named: server.busName)?.volume == 0.5 })
        let player = client.player(named: server.busName)
        #expect(player?.status == .paused, "\(String(describing: player))")
        #expect(player?.title == "The Real Title", "\(String(describing: player))")
        let seeks = client.drainEvents().filter { if case .seeked = $0 { true } else { false } }
        #expect(seeks.isEmpty, "forged seeks were reported: \(seeks)")
    }

    // MARK: b. Huge and malformed calls

    /// One 60 MB call (bytes where `OpenUri` takes a string) to `ambience play`'s MPRIS player, with a plain `Get`
    /// asked beside it every 50 ms: the call gets an error within seconds, every `Get` an answer within seconds,
    /// the player stays on the bus, and its peak memory stays far below the gigabytes that decoding the bytes one
    /// value at a time costs. (Memory is not checked under the sanitizers, whose own costs dwarf it.)
    @Test func oneHugeCallCostsNeitherTheAnswersNorTheMemory() throws {
        let bus = try ThrowawayService.dbus(in: fixtures)
        let player = try LivePlayer(
            files: [try tone()], arguments: ["--seconds", "120"], environment: Self.environment(bus))
        defer { player.stop() }
        #expect(player.waitFor(event: "started", timeout: 30) != nil)
        let name = MPRISServer.busName(forApp: "ambience")
        #expect(eventually(within: 10) { HostileBusPeer.hasOwner(name, bus: bus.address) })
        let before = ProcessThreads.peakResidentBytes(of: player.process.pid) ?? 0

        let (call, get) = try HostileBusPeer.hugeCall(
            bus: bus.address, destination: name, bytes: 60_000_000, timeout: 40)
        let peak = ProcessThreads.peakResidentBytes(of: player.process.pid) ?? .max
        print(
            "BusHostile: a 60 MB call: \(call); slowest Get beside it: \(get); peak memory \(before >> 20) MB before, "
                + "\(peak >> 20) MB after")
        #expect(call.isError && call.seconds < 8, "the huge call: \(call)")
        #expect(get.reply == "return" && get.seconds < 8, "a Get beside it: \(get)")
        #expect(player.process.isRunning && HostileBusPeer.hasOwner(name, bus: bus.address), "the player left the bus")
        if !BuildProducts.sanitized {
            #expect(peak < 700 << 20, "peak memory \(peak >> 20) MB")
        }
    }

    /// Calls with the wrong signature, nesting as deep as the bus lets through, or 300 000 values, to an MPRIS
    /// server: each gets an error reply within seconds (a hang is a `NoReply` after 10 s), and the server still
    /// answers a plain `Get` afterwards.
    @Test func malformedCallsGetErrorRepliesAndTheServerGoesOn() throws {
        let bus = try ThrowawayService.dbus(in: fixtures)
        let server = try MPRISServer(
            controls: StillPlayer(title: "Target"), appName: "malformed-target", busAddress: bus.address,
            timeout: .seconds(2))
        defer { server.close() }
        let outcomes = try HostileBusPeer.malformedCalls(bus: bus.address, destination: server.busName, timeout: 10)
        print("BusHostile: malformed calls: \(outcomes.sorted { $0.key < $1.key })")
        #expect(outcomes.count == 9, "\(outcomes.keys.sorted())")
        for (name, outcome) in outcomes.sorted(by: { $0.key < $1.key }) where name != "afterwards" {
            #expect(outcome.isError && outcome.seconds < 5, "\(name): \(outcome)")
        }
        #expect(outcomes["afterwards"]?.reply == "return", "\(String(describing: outcomes["afterwards"]))")
    }
}

extension BusHostileTests {
    // MARK: c. Players that never answer

    /// `ambience play FILE --seconds 4` on `bus`, run to its end (ended after 60 s if it has not).
    func play(forSeconds seconds: Int, on bus: ThrowawayService) throws -> ChildProcess.Output {
        try ChildProcess.run(
            [ToolRunner.executable, "play", try tone(), "--seconds", "\(seconds)"],
            environment: childEnvironment(Self.environment(bus)), timeout: 60)
    }

    /// Beside a player that never answers and signals at 20 Hz, or a name taken, held 50 ms (or not at all) without
    /// answering and dropped, over and over (each new owner is a new player to read, thousands a second with no
    /// hold), `play --seconds 4` ends in about 4 s: a silent player costs one timeout, then is left alone until its
    /// retry, its signals included, and a backlog of signals is dropped, not worked through, when the engine stops.
    @Test(arguments: [
        HostileBusPeer.Kind.mutePlayer(name: "org.mpris.MediaPlayer2.mute", hertz: 20),
        .flickeringName("org.mpris.MediaPlayer2.flicker", hold: 0.05),
        .flickeringName("org.mpris.MediaPlayer2.flicker", hold: 0)
    ])
    func playEndsOnTimeBesideAPlayerThatNeverAnswers(_ peer: HostileBusPeer.Kind) throws {
        let bus = try ThrowawayService.dbus(in: fixtures)
        let hostile = try HostileBusPeer(peer, bus: bus.address)
        defer { hostile.stop() }
        let play = try play(forSeconds: 4, on: bus)
        print("BusHostile: play --seconds 4 beside \(peer.arguments[0]) took \(play.seconds) s")
        #expect(!play.timedOut && play.seconds < 12, "play --seconds 4 took \(play.seconds) s")
        #expect(play.status == 0, "\(String(decoding: play.stderr, as: UTF8.self))")
        #expect(String(decoding: play.stdout, as: UTF8.self).contains("state: playing"))
    }

    /// A client beside a player that never answers and signals at 20 Hz: the player is asked once (one `GetAll`
    /// batch, seen by `dbus-monitor`), marked not responding, and its 160 signals in the next eight seconds do not
    /// make the client ask again before its retry (a minute here); each time it did would be one more `GetAll` and
    /// half a second. What the signals carry is applied all the same. Then `close()` returns at once: no backlog of
    /// reads is worked through first.
    @Test func aMutePlayersSignalsDoNotMakeTheClientAskAgain() throws {
        let bus = try ThrowawayService.dbus(in: fixtures)
        let name = "org.mpris.MediaPlayer2.mute"
        let watcher = try BusWatcher(bus: bus.address, rule: "type='method_call',destination='\(name)'")
        let mute = try HostileBusPeer(.mutePlayer(name: name, hertz: 20), bus: bus.address)
        defer { mute.stop() }
        // Its timeout is also the connect's: on a loaded machine one try may not be enough.
        var made: MPRISClient?
        _ = eventually(within: 10) {
            made =
                made
                ?? (try? MPRISClient(busAddress: bus.address, timeout: .milliseconds(500), retryInterval: .seconds(60)))
            return made != nil
        }
        let client = try #require(made)
        defer { client.close() }
        #expect(eventually(within: 10) { client.player(named: name)?.isResponding == false })
        usleep(8_000_000)
        let asked = watcher.calls(to: "GetAll")
        // What its signals carry is applied all the same: the title it announces moves on while it stays silent.
        let title = client.player(named: name)?.title
        #expect(title?.hasPrefix("Track ") == true, "\(String(describing: title))")
        #expect(eventually(within: 10) { client.player(named: name).map { $0.title != title } == true })
        #expect(client.player(named: name)?.isResponding == false)
        let closing = timed(within: 60) { client.close() }
        let closed = closing.map { "\($0) s" } ?? "over 60 s"
        print("BusHostile: a mute player at 20 Hz was asked GetAll \(asked) times in 8 s; close() took \(closed)")
        #expect(asked >= 1, "the player was never asked: the test saw nothing")
        #expect(asked <= 6, "asked \(asked) times: its signals made the client ask again")
        #expect(closing.map { $0 < 1.5 } == true, "close() took \(closed)")
    }

    // MARK: d. Many players that never answer

    /// 30 or 60 names, each on a connection that never answers: `play` starts and exits in a few seconds each, as
    /// with one such player (the calls to all go out at once and share one deadline).
    @Test(arguments: [30, 60])
    func manySilentPlayersCostOneTimeoutNotOneEach(count: Int) throws {
        let bus = try ThrowawayService.dbus(in: fixtures)
        let silent = try HostileBusPeer(
            .silentPlayers(prefix: "org.mpris.MediaPlayer2.silent.p", count: count), bus: bus.address)
        defer { silent.stop() }
        let player = try LivePlayer(
            files: [try tone()], arguments: ["--seconds", "1"], environment: Self.environment(bus))
        defer { player.stop() }
        let started = player.waitFor(event: "started", timeout: 60)
        let stopped = player.waitFor(event: "stopped", timeout: 60)
        let exitStart = monotonicSeconds()
        let exited = player.process.waitForExit(within: 60)
        let exit = monotonicSeconds() - exitStart
        print(
            "BusHostile: \(count) silent players: start \(started.map { "\($0.seconds) s" } ?? "over 60 s"), "
                + "exit \(exited ? "\(exit) s" : "over 60 s")")
        #expect(started.map { $0.seconds < 5 } == true, "start took \(started?.seconds ?? 60) s")
        #expect(stopped != nil)
        #expect(exited && exit < 5, "exit took \(exit) s")
    }

    /// `ambience session --json` beside 60 silent players lists every one of them, within seconds.
    @Test func sessionListsSixtySilentPlayersWithinSeconds() throws {
        let bus = try ThrowawayService.dbus(in: fixtures)
        let prefix = "org.mpris.MediaPlayer2.silent.p"
        let silent = try HostileBusPeer(.silentPlayers(prefix: prefix, count: 60), bus: bus.address)
        defer { silent.stop() }
        let session = try ChildProcess.run(
            [ToolRunner.executable, "session", "--json"], environment: childEnvironment(Self.environment(bus)),
            timeout: 120)
        let json = try? JSONSerialization.jsonObject(with: session.stdout) as? [String: Any]
        let players = (json?["players"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        print("BusHostile: session beside 60 silent players took \(session.seconds) s and listed \(players.count)")
        #expect(!session.timedOut && session.status == 0, "\(String(decoding: session.stderr, as: UTF8.self))")
        #expect(session.seconds < 8, "session took \(session.seconds) s")
        #expect(players.filter { $0.hasPrefix(prefix) }.count == 60, "\(players)")
    }
}

/// An MPRIS player that stays as it is told: paused on one item, volume 1. Thread-safe.
final class StillPlayer: MPRISPlayerControls {
    private let state: Mutex<(playback: PlaybackState, time: Double, volume: Float)>
    let item: MediaItem

    init(title: String) {
        state = Mutex((.paused, 0, 1))
        item = MediaItem(
            persistentID: 7, url: "/music/still.ogg", title: title, artist: "Nobody", albumTitle: "Nowhere",
            playbackDuration: 300)
    }

    var playbackState: PlaybackState { state.withLock { $0.playback } }
    var nowPlayingItem: MediaItem? { item }
    var currentPlaybackTime: Double {
        get { state.withLock { $0.time } }
        set { state.withLock { $0.time = newValue } }
    }
    var volume: Float {
        get { state.withLock { $0.volume } }
        set { state.withLock { $0.volume = newValue } }
    }
    func play() { state.withLock { $0.playback = .playing } }
    func pause() { state.withLock { $0.playback = .paused } }
    func stop() { state.withLock { $0.playback = .stopped } }
    func skipToNextItem() {}
    func skipToPreviousItem() {}
}
