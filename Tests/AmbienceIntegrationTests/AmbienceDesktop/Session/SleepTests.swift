import AmbiencePlatform
import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDesktop
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// System sleep and wake: logind's `PrepareForSleep` signal on a system bus. The bus and the signal are real; the
/// sender stands in for logind, which does not run here.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct SleepTests {
    @Test func sleepInterruptsAndWakeResumesWithARouteChange() throws {
        let fixtures = try Fixtures()
        // A bus of the test's own stands in for the system bus.
        let bus = try ThrowawayService.dbus(in: fixtures)
        defer { bus.kill() }
        let address = bus.address
        // And a session bus of its own: on the shared one its solo-ambient session would pause the MPRIS suite's mpv.
        let sessionBus = try ThrowawayService.dbus(in: fixtures)
        defer { sessionBus.kill() }

        var configuration = EngineConfiguration.offline()
        configuration.desktopIntegration = true
        configuration.systemBusAddress = address
        configuration.sessionBusAddress = sessionBus.address
        let engine = try AudioEngine(configuration)
        defer { engine.shutdown() }
        let sound = try engine.makeSound(tone(hz: 440, seconds: 1), name: "tone")
        engine.play(sound, PlayOptions(loop: true))
        _ = try engine.render(frames: 4_800)

        let logind = try busPeer(address)
        defer { logind.close() }
        // Only logind's own signal counts: the test takes its name, as logind has it.
        #expect(try logind.requestName("org.freedesktop.login1", timeout: busPeerTimeout))
        func announce(_ sleeping: Bool) throws {
            try logind.emitSignal(
                path: "/org/freedesktop/login1", interface: "org.freedesktop.login1.Manager",
                member: "PrepareForSleep", arguments: [.bool(sleeping)])
        }

        var events: [AudioEvent] = []
        try announce(true)
        #expect(
            eventually {
                events += engine.update()
                return events.contains(.session(.interruption(.began)))
            })
        #expect(try Signal(engine.render(frames: 4_800)).peak(512..<4_800) == 0)

        try announce(false)
        events = []
        #expect(
            eventually {
                events += engine.update()
                return events.contains(.session(.interruption(.ended(shouldResume: true))))
            })
        #expect(
            events.contains {
                if case .session(.routeChange(let change)) = $0 { change.reason == .wakeFromSleep } else { false }
            })
        #expect(try Signal(engine.render(frames: 4_800)).rms(512..<4_800) > 0.1)
    }

    @Test func noSystemBusMeansNoSleepMonitorAndNoDelay() throws {
        // A session bus of the test's own: on the shared one, the MPRIS suite's mpv may be playing, and the engine
        // would rightly report the secondary-audio hint.
        let fixtures = try Fixtures()
        let bus = try ThrowawayService.dbus(in: fixtures)
        defer { bus.kill() }
        var configuration = EngineConfiguration.offline()
        configuration.desktopIntegration = true
        configuration.sessionBusAddress = bus.address
        configuration.systemBusAddress = "unix:path=/nonexistent/system_bus_socket"
        let start = Date()
        let engine = try AudioEngine(configuration)
        defer { engine.shutdown() }
        #expect(Date().timeIntervalSince(start) < 2)
        #expect(engine.update().isEmpty)
    }

    /// The one monitor shape: each signal comes out of `poll` as the session's event, oldest first, carrying what the
    /// context says at that poll (whether the game makes sound, where the output goes).
    @Test func pollTurnsEachSignalIntoTheSessionsEvent() throws {
        let logind = try FakeLogind(sending: [true, false])
        defer { logind.close() }
        let monitor = logind.monitor
        let speakers = AudioRoute(name: "Speakers", driver: "pulseaudio", sink: "speakers")
        let context = MonitorContext(appAudioPlaying: { true }, currentRoute: { speakers }, isLookDue: false)
        var events: [SessionEvent] = []
        #expect(
            eventually {
                events += monitor.poll(context)
                return events.count >= 2
            })
        #expect(events == [.prepareForSleep(appAudioPlaying: true), .wokeFromSleep(current: speakers)])
        #expect(monitor.name == "sleep monitor" && monitor.droppedEvents == 0)
    }

    /// Sleep, wake, sleep, wake in one go: each poll ends with a wake, so the second sleep is judged after the session
    /// handled the first wake (here the game is silent by then, and the second sleep must say so).
    @Test func aSleepAfterAWakeIsJudgedAtTheNextPoll() throws {
        let logind = try FakeLogind(sending: [true, false, true, false])
        defer { logind.close() }
        let monitor = logind.monitor
        usleep(500_000)  // all four queued, as when update() was not called meanwhile
        let playing = Lock(true)
        let speakers = AudioRoute(name: "Speakers", driver: "pulseaudio", sink: "speakers")
        let context = MonitorContext(
            appAudioPlaying: { playing.withLock { $0 } }, currentRoute: { speakers }, isLookDue: false)
        var events: [SessionEvent] = []
        var wakeBeforeTheEnd = false
        #expect(
            eventually {
                let batch = monitor.poll(context)
                // At most one wake in a poll, and only at its end.
                if batch.dropLast().contains(.wokeFromSleep(current: speakers)) { wakeBeforeTheEnd = true }
                events += batch
                if batch.last == .wokeFromSleep(current: speakers) { playing.withLock { $0 = false } }
                return events.count >= 4
            })
        #expect(!wakeBeforeTheEnd)
        #expect(
            events == [
                .prepareForSleep(appAudioPlaying: true), .wokeFromSleep(current: speakers),
                .prepareForSleep(appAudioPlaying: false), .wokeFromSleep(current: speakers)
            ])
    }
}

/// A sleep monitor on a bus of its own, where a stand-in for logind has sent `PrepareForSleep` for each of `signals`
/// (true: going to sleep; false: woken).
private struct FakeLogind {
    let fixtures: Fixtures  // holds the bus's folder
    let bus: ThrowawayService
    let monitor: SleepMonitor
    let connection: DBusConnection

    init(sending signals: [Bool]) throws {
        fixtures = try Fixtures()
        let bus = try ThrowawayService.dbus(in: fixtures)
        do {
            monitor = try SleepMonitor(address: bus.address)
            let connection = try busPeer(bus.address)
            self.connection = connection
            #expect(try connection.requestName("org.freedesktop.login1", timeout: busPeerTimeout))
            for sleeping in signals {
                try connection.emitSignal(
                    path: "/org/freedesktop/login1", interface: "org.freedesktop.login1.Manager",
                    member: "PrepareForSleep", arguments: [.bool(sleeping)])
            }
        } catch {
            bus.kill()
            throw error
        }
        self.bus = bus
    }

    func close() {
        connection.close()
        monitor.close()
        bus.kill()
    }
}
