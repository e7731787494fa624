import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceDesktop
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// The route-change rule for the system music player, on the private sound server (PulseAudio, or PipeWire through
/// test.sh): an engine playing on a real device, a real mpv on a session bus of its own (so the MPRIS suite's players
/// are never touched), and the sink in use unloaded.
extension SoundServerSuites.RouteChangeTests {
    enum Answer: String, CaseIterable { case resume, stop }

    /// An engine on SDL's PulseAudio driver with desktop integration on `bus`.
    func engineOnPulseAudio(bus: VLCBus, appName: String) throws -> AudioEngine {
        var configuration = EngineConfiguration(output: .device(), appName: appName, desktopIntegration: true)
        configuration.sessionBusAddress = bus.address
        configuration.handlesTerminationSignals = false
        return try AmbienceIntegrationSupport.engineOnPulseAudio(configuration)
    }

    /// A playing mpv on a bus of its own, and an engine on the speakers that has seen it play.
    func mpvBesideAnEngine(drivenByTheGame: Bool) throws -> (VLCBus, AudioEngine) {
        let bus = try VLCBus()
        try bus.startMPV(playing: try bus.share(music, as: "music.wav"))
        try #require(eventually { bus.playerctl("-p", "mpv", "status") == "Playing" }, "mpv did not play")
        let engine = try engineOnPulseAudio(bus: bus, appName: "ambience-system-route")
        try #require(engine.outputDriver == "pulseaudio")
        engine.session.setCategory(.ambient)
        engine.session.setActive(true)
        if drivenByTheGame { engine.systemMusicPlayer.preferredPlayer = "mpv" }  // the game's music from now
        try #require(
            eventually {
                engine.update()
                let seen = engine.session.state.otherMusic
                return engine.currentRoute.sink == "speakers" && seen.playingPlayers.contains { $0.hasSuffix(".mpv") }
                    && (seen.gameDrivenPlayer != nil) == drivenByTheGame
            }, "the engine never saw mpv play on the speakers")
        return (bus, engine)
    }

    /// Unloads the speakers and waits until the engine reports `oldDeviceUnavailable`.
    func unplugSpeakers(_ engine: AudioEngine) throws {
        try PulseServer.pactl("unload-module", try #require(try PulseServer.moduleID(ofSink: "speakers")))
        #expect(
            eventually {
                engine.update().contains {
                    if case .session(.routeChange(let change)) = $0 {
                        change.reason == .oldDeviceUnavailable
                    } else {
                        false
                    }
                }
            }, "no oldDeviceUnavailable")
    }

    /// As iOS pauses the iPod player when the headphones go: the system player the game drives is paused with the
    /// game's audio; the alert's Resume resumes it, its Stop stops it.
    @Test(arguments: Answer.allCases)
    func anUnplugPausesTheSystemPlayerTheGameDrives(answer: Answer) throws {
        let (bus, engine) = try mpvBesideAnEngine(drivenByTheGame: true)
        defer { engine.shutdown() }
        try unplugSpeakers(engine)
        #expect(eventually { bus.playerctl("-p", "mpv", "status") == "Paused" }, "the driven player plays on")
        #expect(engine.session.isPausedForRouteChange)
        switch answer {
        case .resume:
            engine.session.resumeAfterRouteChange()
            #expect(eventually { bus.playerctl("-p", "mpv", "status") == "Playing" }, "Resume did not resume it")
        case .stop:
            engine.session.stopAfterRouteChange()
            #expect(eventually { bus.playerctl("-p", "mpv", "status") == "Stopped" }, "Stop did not stop it")
        }
        #expect(engine.currentRoute.sink == "headphones")
    }

    /// A player the game does not drive is the user's: the unplug, and either answer, leave it playing.
    @Test(arguments: Answer.allCases)
    func anUnplugLeavesASystemPlayerTheGameDoesNotDriveAlone(answer: Answer) throws {
        let (bus, engine) = try mpvBesideAnEngine(drivenByTheGame: false)
        defer { engine.shutdown() }
        let watcher = try MPRISClient(busAddress: bus.address, timeout: .seconds(2))
        defer { watcher.close() }
        #expect(eventually { watcher.player(named: "mpv")?.status == .playing })
        try unplugSpeakers(engine)
        if answer == .resume { engine.session.resumeAfterRouteChange() } else { engine.session.stopAfterRouteChange() }
        engine.flushDesktopCommands()
        // The marker: mpv announces its changes in order, so once this one is heard any pause would have been.
        _ = bus.playerctl("-p", "mpv", "volume", "0.4")
        #expect(eventually { abs((watcher.player(named: "mpv")?.volume ?? -1) - 0.4) < 0.01 }, "no marker")
        let notPlaying = watcher.drainEvents().filter {
            if case .playerChanged(let info) = $0 { info.status != .playing } else { false }
        }
        #expect(notPlaying.isEmpty, "\(notPlaying)")
        #expect(bus.playerctl("-p", "mpv", "status") == "Playing")
    }
}
