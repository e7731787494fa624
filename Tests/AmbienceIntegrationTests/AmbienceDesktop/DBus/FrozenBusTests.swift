import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDesktop
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// A bus that does not answer (issue #32, class 4, its D-Bus half): a dbus-daemon stopped with SIGSTOP (the kernel
/// still queues connections to it), a socket that accepts and never speaks, and one that never accepts (its listen
/// queue full, so `connect()` itself waits). The built `ambience` meets each as its session and system bus: it ends
/// by itself on time, one SIGTERM ends it at once, and its reconnects never pile up threads stuck in `connect()`.
/// (The sound server's half is `FrozenSoundServerTests`.) Serialized: the times measured must not be another test's.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(10)), .serialized) struct FrozenBusTests {
    enum Hostility: String, CaseIterable, CustomTestStringConvertible {
        case stoppedDaemon = "a dbus-daemon stopped with SIGSTOP"
        case silentSocket = "a socket that accepts and never speaks"
        case unacceptingSocket = "a socket that never accepts"
        var testDescription: String { rawValue }
    }

    /// A bus of that kind, held as it is until `end()`.
    final class HostileBus {
        let address: String
        private let daemon: ThrowawayService?
        private let socket: MuteBusSocket?

        init(_ hostility: Hostility, in fixtures: Fixtures) throws {
            switch hostility {
            case .stoppedDaemon:
                let daemon = try ThrowawayService.dbus(in: fixtures)
                daemon.freeze()
                (self.daemon, socket, address) = (daemon, nil, daemon.address)
            case .silentSocket, .unacceptingSocket:
                let socket = try MuteBusSocket(
                    path: fixtures.path("mute-bus.sock"), hostility == .silentSocket ? .accepting : .neverAccepting)
                (daemon, self.socket, address) = (nil, socket, socket.address)
            }
        }

        func end() {
            daemon?.thaw()
            daemon?.kill()
            socket?.close()
        }
    }

    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    /// The bus at `address` as both the session and the system bus, and SDL's dummy driver.
    static func environment(_ address: String) -> [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": address, "DBUS_SYSTEM_BUS_ADDRESS": address, "SDL_AUDIODRIVER": "dummy"]
    }

    /// A minute of tone: longer than any run here.
    func tone() throws -> String { try fixtures.sineWAV("tone.wav", seconds: 60) }

    /// `ambience ARGUMENTS` on the bus at `address`, to its end (ended after 60 s if it has not).
    func run(_ arguments: [String], on address: String) throws -> ChildProcess.Output {
        try ChildProcess.run(
            [ToolRunner.executable] + arguments, environment: childEnvironment(Self.environment(address)),
            timeout: 60)
    }

    /// Sends SIGTERM and returns the seconds until the process was gone (nil: still there after 30 s).
    static func terminate(_ process: ChildProcess) -> Double? {
        let start = monotonicSeconds()
        kill(process.pid, SIGTERM)
        return process.waitForExit(within: 30) ? monotonicSeconds() - start : nil
    }

    /// `session` and `play --seconds 2` end by themselves within seconds, with status 0; `session` says there is no
    /// bus, and `play` played.
    @Test(arguments: Hostility.allCases)
    func sessionAndPlayEndByThemselves(on hostility: Hostility) throws {
        let bus = try HostileBus(hostility, in: fixtures)
        defer { bus.end() }
        let session = try run(["session"], on: bus.address)
        let play = try run(["play", try tone(), "--seconds", "2"], on: bus.address)
        print(
            "FrozenBus: on \(hostility.rawValue), session took \(session.seconds) s, play --seconds 2 \(play.seconds) s"
        )
        #expect(!session.timedOut && session.seconds < 8, "session took \(session.seconds) s")
        #expect(session.status == 0, "\(String(decoding: session.stderr, as: UTF8.self))")
        #expect(String(decoding: session.stdout, as: UTF8.self).contains("music players: unavailable"))
        #expect(!play.timedOut && play.seconds < 10, "play --seconds 2 took \(play.seconds) s")
        #expect(play.status == 0, "\(String(decoding: play.stderr, as: UTF8.self))")
        #expect(String(decoding: play.stdout, as: UTF8.self).contains("state: playing"))
    }

    /// `play --seconds 60` on such a bus, a second after it started (its reconnect thread at work): one SIGTERM
    /// ends it within seconds.
    @Test(arguments: Hostility.allCases)
    func oneSIGTERMEndsPlay(on hostility: Hostility) throws {
        let bus = try HostileBus(hostility, in: fixtures)
        defer { bus.end() }
        let player = try LivePlayer(
            files: [try tone()], arguments: ["--seconds", "60"], environment: Self.environment(bus.address))
        defer { player.stop() }
        #expect(player.waitFor(event: "started", timeout: 30) != nil)
        usleep(1_000_000)
        let took = Self.terminate(player.process)
        print("FrozenBus: on \(hostility.rawValue), SIGTERM ended play in \(took.map { "\($0) s" } ?? "over 30 s")")
        #expect(took.map { $0 < 4 } == true, "SIGTERM took \(took.map { "\($0) s" } ?? "over 30 s")")
    }

    /// A bus that freezes while `play` runs on it (its MPRIS player on the bus, its client following the others):
    /// `play --seconds 4` still ends on time, and `play --seconds 60` ends at once on one SIGTERM.
    @Test(arguments: [false, true])
    func playEndsWhenItsBusFreezesMidPlay(terminated: Bool) throws {
        let bus = try ThrowawayService.dbus(in: fixtures)
        defer {
            bus.thaw()
            bus.kill()
        }
        let start = monotonicSeconds()
        let player = try LivePlayer(
            files: [try tone()], arguments: ["--seconds", terminated ? "60" : "4"],
            environment: Self.environment(bus.address))
        defer { player.stop() }
        #expect(player.waitFor(event: "started", timeout: 30) != nil)
        #expect(
            eventually(within: 10) {
                HostileBusPeer.hasOwner(MPRISServer.busName(forApp: "ambience"), bus: bus.address)
            })
        bus.freeze()
        if terminated {
            usleep(1_000_000)
            let took = Self.terminate(player.process)
            print("FrozenBus: frozen mid-play, SIGTERM ended play in \(took.map { "\($0) s" } ?? "over 30 s")")
            #expect(took.map { $0 < 4 } == true, "SIGTERM took \(took.map { "\($0) s" } ?? "over 30 s")")
        } else {
            let ended = player.process.waitForExit(within: 60)
            let took = monotonicSeconds() - start
            print("FrozenBus: frozen mid-play, play --seconds 4 took \(took) s")
            #expect(ended && took < 12, "play --seconds 4 took \(took) s")
            #expect(player.process.terminationStatus == 0)
        }
    }

    /// While the bus does not answer, the engine tries it again every 2 s. Over ten seconds of that, at most one
    /// thread of `play` is ever stuck in `connect()` (the rule: one per address), and the number of its threads does
    /// not grow.
    @Test(arguments: Hostility.allCases)
    func reconnectsLeaveAtMostOneThreadInConnect(on hostility: Hostility) throws {
        let bus = try HostileBus(hostility, in: fixtures)
        defer { bus.end() }
        let player = try LivePlayer(
            files: [try tone()], arguments: ["--seconds", "60"], environment: Self.environment(bus.address))
        defer { player.stop() }
        #expect(player.waitFor(event: "started", timeout: 30) != nil)
        let pid = player.process.pid
        usleep(2_000_000)
        let early = ProcessThreads.count(of: pid)
        var stuck = ProcessThreads.inConnect(of: pid)
        for _ in 0..<12 {
            usleep(1_000_000)
            stuck = max(stuck, ProcessThreads.inConnect(of: pid))
        }
        let late = ProcessThreads.count(of: pid)
        print(
            "FrozenBus: on \(hostility.rawValue), play had \(early) threads, 12 s later \(late), \(stuck) in connect()")
        #expect(player.process.isRunning)
        #expect(stuck <= 1, "\(stuck) threads stuck in connect()")
        #expect(late <= early + 3, "threads grew from \(early) to \(late)")
    }

    /// Connects to one address at the same moment: on a bus that answers, every one succeeds (the second of two was
    /// refused as if the bus were stuck, and under load that lost the MPRIS tests their bus); on a socket that never
    /// accepts, each fails within its own timeout, and once one is left behind in `connect()` the next fails at once.
    @Test func connectsAtOnceWaitTheirTurnAndOnlyAStuckOneRefusesTheNext() throws {
        let daemon = try ThrowawayService.dbus(in: fixtures)
        defer { daemon.kill() }
        let answering = daemon.address
        let never = try MuteBusSocket(path: fixtures.path("never.sock"), .neverAccepting)
        defer { never.close() }
        let results = Lock<[Bool]>([])
        for (address, timeout) in [(answering, Duration.seconds(10)), (never.address, .seconds(1))] {
            let started = monotonicSeconds()
            DispatchQueue.concurrentPerform(iterations: 6) { _ in
                let opened = (try? DBusConnection(address: address, timeout: timeout)) != nil
                results.withLock { $0.append(opened) }
            }
            let took = monotonicSeconds() - started
            let opened = results.withLock { all in
                defer { all = [] }
                return all
            }
            if address == answering {
                #expect(opened == Array(repeating: true, count: 6), "\(opened)")
            } else {
                #expect(opened == Array(repeating: false, count: 6), "\(opened)")
                #expect(took < 4, "six connects with a 1 s timeout took \(took) s")
            }
        }
        // One of those is still in connect(): the next attempt is refused without waiting.
        let started = monotonicSeconds()
        #expect(throws: DesktopError.self) { try DBusConnection(address: never.address, timeout: .seconds(5)) }
        #expect(monotonicSeconds() - started < 1)
    }
}
