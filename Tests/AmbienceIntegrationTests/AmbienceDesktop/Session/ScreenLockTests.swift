import Foundation
import Synchronization
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDesktop
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// The screen lock: the screensaver's `ActiveChanged` on a session bus, and logind's `LockedHint` on a system bus.
/// The buses and the signals are real (a private dbus-daemon each); the senders stand in for the screensaver and
/// for logind, which do not run here. Locked: ambient and soloAmbient render silence, playback plays on; unlocked:
/// the audio is back.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct ScreenLockTests {
    static let sessionPath = "/org/freedesktop/login1/session/_32"

    /// An offline engine with desktop integration on the given buses only, playing a looping tone.
    static func engine(category: SessionCategory, sessionBus: String?, systemBus: String?) throws -> AudioEngine {
        var configuration = EngineConfiguration.offline()
        configuration.desktopIntegration = true
        configuration.sessionBusAddress = sessionBus
        configuration.systemBusAddress = systemBus
        let engine = try AudioEngine(configuration)
        engine.session.setCategory(category)
        engine.session.setActive(true)
        engine.play(try engine.makeSound(tone(hz: 440, seconds: 1), name: "tone"), PlayOptions(loop: true))
        return engine
    }

    /// Sends `announce` until the engine's session has taken it in (the monitor subscribes on its own thread, so the
    /// first signals may come before it listens).
    static func announce(_ locked: Bool, to engine: AudioEngine, _ send: () throws -> Void) -> Bool {
        eventually {
            try? send()
            _ = engine.update()
            return engine.session.state.isScreenLocked == locked
        }
    }

    /// What the engine renders now: silent for ambient and soloAmbient behind a locked screen, else the tone.
    static func expectOutput(
        of engine: AudioEngine, locked: Bool, category: SessionCategory,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let out = try Signal(engine.render(frames: 4_800))
        if locked && category != .playback {
            #expect(out.peak(512..<4_800) == 0, "locked, \(category): silent", sourceLocation: sourceLocation)
            #expect(engine.session.isOutputSilenced, sourceLocation: sourceLocation)
        } else {
            #expect(
                out.rms(512..<4_800) > 0.1, "\(locked ? "locked" : "unlocked"), \(category): audible",
                sourceLocation: sourceLocation)
            #expect(!engine.session.isOutputSilenced, sourceLocation: sourceLocation)
        }
    }

    @Test(
        arguments: zip(
            SessionCategory.allCases,
            ["org.freedesktop.ScreenSaver", "org.gnome.ScreenSaver", "org.freedesktop.ScreenSaver"]))
    func theScreenSaverLocksAndUnlocks(category: SessionCategory, interface: String) throws {
        let fixtures = try Fixtures()
        let bus = try ThrowawayService.dbus(in: fixtures)
        defer { bus.kill() }
        let engine = try Self.engine(category: category, sessionBus: bus.address, systemBus: nil)
        defer { engine.shutdown() }
        try Self.expectOutput(of: engine, locked: false, category: category)

        let screenSaver = try busPeer(bus.address)
        defer { screenSaver.close() }
        // Only the name's owner is heard (another process's ActiveChanged is BusHostileTests' case).
        #expect(try screenSaver.requestName(interface, timeout: busPeerTimeout))
        let path = "/" + interface.replacingOccurrences(of: ".", with: "/")
        func activeChanged(_ active: Bool) throws {
            try screenSaver.emitSignal(
                path: path, interface: interface, member: "ActiveChanged", arguments: [.bool(active)])
        }
        #expect(Self.announce(true, to: engine) { try activeChanged(true) })
        try Self.expectOutput(of: engine, locked: true, category: category)
        #expect(Self.announce(false, to: engine) { try activeChanged(false) })
        try Self.expectOutput(of: engine, locked: false, category: category)
    }

    /// A screensaver that goes away while active (it crashed) never says `ActiveChanged(false)`: its name losing
    /// its owner unlocks, or the game would stay silent until the engine is made again.
    @Test func aScreenSaverThatGoesAwayWhileActiveNoLongerLocks() throws {
        let fixtures = try Fixtures()
        let bus = try ThrowawayService.dbus(in: fixtures)
        defer { bus.kill() }
        let engine = try Self.engine(category: .soloAmbient, sessionBus: bus.address, systemBus: nil)
        defer { engine.shutdown() }
        let screenSaver = try busPeer(bus.address)
        #expect(try screenSaver.requestName("org.gnome.ScreenSaver", timeout: busPeerTimeout))
        #expect(
            Self.announce(true, to: engine) {
                try screenSaver.emitSignal(
                    path: "/org/gnome/ScreenSaver", interface: "org.gnome.ScreenSaver",
                    member: "ActiveChanged", arguments: [.bool(true)])
            })
        try Self.expectOutput(of: engine, locked: true, category: .soloAmbient)
        screenSaver.close()
        #expect(
            eventually {
                _ = engine.update(); return !engine.session.state.isScreenLocked
            })
        try Self.expectOutput(of: engine, locked: false, category: .soloAmbient)
    }

    /// logind on a private system bus: it answers `GetSessionByPID` with our session and `Get(LockedHint)` with
    /// the lock as it stands, and announces changes with `PropertiesChanged`. The game starts on a locked screen.
    @Test(arguments: SessionCategory.allCases)
    func logindsLockedHintLocksAndUnlocks(category: SessionCategory) throws {
        let fixtures = try Fixtures()
        let bus = try ThrowawayService.dbus(in: fixtures)
        defer { bus.kill() }
        let logind = try StandInLogind(address: bus.address, session: Self.sessionPath, locked: true)
        defer { logind.stop() }

        let engine = try Self.engine(category: category, sessionBus: nil, systemBus: bus.address)
        defer { engine.shutdown() }
        // Started locked: nothing announced, the monitor asked.
        #expect(
            eventually {
                _ = engine.update()
                return engine.session.state.isScreenLocked
            })
        try Self.expectOutput(of: engine, locked: true, category: category)
        #expect(Self.announce(false, to: engine) { try logind.setLocked(false) })
        try Self.expectOutput(of: engine, locked: false, category: category)
        #expect(Self.announce(true, to: engine) { try logind.setLocked(true) })
        try Self.expectOutput(of: engine, locked: true, category: category)
        #expect(Self.announce(false, to: engine) { try logind.setLocked(false) })
        try Self.expectOutput(of: engine, locked: false, category: category)
        #expect(logind.sessionLookups.withLock { $0 } >= 1, "the monitor found its session through logind")
    }

    /// Two sources may report one lock: locked while either says so.
    @Test func theLockHoldsWhileAnySourceSaysSo() {
        var state = ScreenLockState()
        #expect(state.report(true, from: .logind) == true)
        #expect(state.report(true, from: .screenSaver) == nil)
        #expect(state.report(false, from: .logind) == nil, "the screensaver still says locked")
        #expect(state.isLocked)
        #expect(state.report(false, from: .screenSaver) == false)
        #expect(state.report(false, from: .screenSaver) == nil)
    }

    @Test func sessionIDsAreEscapedAsSystemdDoes() {
        #expect(ScreenLockMonitor.escapedPathElement("2") == "_32")
        #expect(ScreenLockMonitor.escapedPathElement("c12") == "c12")
        #expect(ScreenLockMonitor.escapedPathElement("a-b") == "a_2db")
    }

    @Test func noBusesMeansNoReportsAndNoDelay() throws {
        let start = Date()
        let monitor = ScreenLockMonitor(
            systemBusAddress: "unix:path=/nonexistent/system_bus_socket",
            sessionBusAddress: "unix:path=/nonexistent/session_bus_socket")
        #expect(Date().timeIntervalSince(start) < 2)
        #expect(monitor.drain().isEmpty)
        monitor.close()
        #expect(Date().timeIntervalSince(start) < 4, "closing waited for more than one bounded attempt")
    }

    /// The screensaver's owner on a bus of the test's own, and `ActiveChanged` from it.
    static func screenSaver(on bus: ThrowawayService) throws -> (DBusConnection, (Bool) throws -> Void) {
        let owner = try busPeer(bus.address)
        #expect(try owner.requestName("org.freedesktop.ScreenSaver", timeout: busPeerTimeout))
        return (
            owner,
            { active in
                try owner.emitSignal(
                    path: "/org/freedesktop/ScreenSaver", interface: "org.freedesktop.ScreenSaver",
                    member: "ActiveChanged", arguments: [.bool(active)])
            }
        )
    }

    /// A bus that does not answer when the monitor starts (a loaded desktop at login; here a dbus-daemon stopped
    /// with SIGSTOP for longer than a connection attempt's bound): the monitor returns at once, and once the bus
    /// answers, the screensaver is heard. It used to connect once, within 250 ms, and then never listen at all.
    @Test func aBusThatAnswersLateIsFollowedOnceItAnswers() throws {
        let fixtures = try Fixtures()
        let bus = try ThrowawayService.dbus(in: fixtures)
        defer { bus.kill() }
        let (owner, announce) = try Self.screenSaver(on: bus)
        defer { owner.close() }
        bus.freeze()
        let start = ContinuousClock.now
        let monitor = ScreenLockMonitor(systemBusAddress: nil, sessionBusAddress: bus.address)
        defer { monitor.close() }
        #expect(ContinuousClock.now - start < .seconds(1), "the monitor waited for the bus")
        usleep(UInt32(BusFollowingThread.setupTimeout / .milliseconds(1)) * 1_500)
        bus.thaw()
        var seen: [Bool] = []
        #expect(BusHostileTests.monitor(monitor, reports: [true], seen: &seen) { try announce(true) }, "\(seen)")
    }

    /// The session bus restarted under a locked screen: the monitor connects again, takes the new screensaver's
    /// word that the screen is unlocked, and follows the new screensaver's locks.
    @Test func aRestartedBusIsFollowedAgain() throws {
        let fixtures = try Fixtures()
        let bus = try ThrowawayService.dbus(in: fixtures)
        defer { bus.kill() }
        let monitor = ScreenLockMonitor(systemBusAddress: nil, sessionBusAddress: bus.address)
        defer { monitor.close() }
        var seen: [Bool] = []
        do {
            let (owner, announce) = try Self.screenSaver(on: bus)
            defer { owner.close() }
            #expect(BusHostileTests.monitor(monitor, reports: [true], seen: &seen) { try announce(true) })
        }
        try bus.start()
        let (owner, announce) = try Self.screenSaver(on: bus)
        defer { owner.close() }
        // Unlocked again, first by the old owner's name going, or by the new one's answer when asked.
        #expect(
            eventually {
                seen += monitor.drain(); return seen == [true, false]
            }, "\(seen)")
        #expect(BusHostileTests.monitor(monitor, reports: [true, false, true], seen: &seen) { try announce(true) })
    }
}

/// Stands in for logind on a bus: owns `org.freedesktop.login1`, answers `GetSessionByPID` and
/// `Properties.Get(LockedHint)` for one session, and emits `PropertiesChanged` when the lock changes.
final class StandInLogind: Sendable {
    let connection: DBusConnection
    let session: String
    let locked: Mutex<Bool>
    let sessionLookups = Mutex(0)
    private let thread: DesktopThread

    init(address: String, session: String, locked: Bool) throws {
        connection = try busPeer(address)
        self.session = session
        self.locked = Mutex(locked)
        guard try connection.requestName(ScreenLockMonitor.logindName, timeout: busPeerTimeout) else {
            throw FixtureError.toolFailed("org.freedesktop.login1 is taken")
        }
        try connection.export(path: "/org/freedesktop/login1")
        try connection.export(path: session)
        thread = DesktopThread(connection: connection)
        thread.start(name: "stand-in-logind") { [self] in serve() }
    }

    private func serve() {
        while thread.isRunning {
            for call in connection.receive(timeout: .milliseconds(100)) where call.kind == .methodCall {
                switch call.member {
                case "GetSessionByPID":
                    sessionLookups.withLock { $0 += 1 }
                    try? connection.reply(to: call, with: [.objectPath(session)])
                case "Get" where call.path == session && call.arguments.last?.string == "LockedHint":
                    try? connection.reply(to: call, with: [.variant(.bool(locked.withLock { $0 }))])
                default:
                    try? connection.replyError(
                        to: call, name: "org.freedesktop.DBus.Error.UnknownMethod", message: "not here")
                }
            }
        }
    }

    func setLocked(_ value: Bool) throws {
        locked.withLock { $0 = value }
        try connection.emitSignal(
            path: session, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            arguments: [
                .string(ScreenLockMonitor.sessionInterface), .dict(["LockedHint": .bool(value)]),
                .strings([])
            ])
    }

    func stop() { thread.stop() }
}
