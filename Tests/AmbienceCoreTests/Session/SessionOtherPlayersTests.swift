import AmbiencePlatform
import Testing

@testable import AmbienceCore
@testable import AmbienceTestSupport

/// The session's bookkeeping toward the desktop players, with a recording stand-in for them (pure logic; the real
/// players over MPRIS are tested in the MPRIS suite).
@Suite(.offTheCooperativePool) struct SessionOtherPlayersTests {
    final class RecordingPlayers: OtherPlayers, @unchecked Sendable {
        var playing: [String]
        var calls: [String] = []
        init(playing: [String]) { self.playing = playing }
        func playingPlayers() -> [String] { playing }
        func uncontrollable(_ players: [String]) -> [String] { [] }
        func pause(_ players: [String]) { calls.append("pause \(players)") }
        func play(_ players: [String]) { calls.append("play \(players)") }
        func stop(_ players: [String]) { calls.append("stop \(players)") }
        func duck(_ players: [String], to scale: Double) { calls.append("duck \(players) \(scale)") }
    }

    /// Deactivating while the session bus is gone: the players the session paused are resumed once it is back.
    @Test func aResumeOwedWhileTheBusIsGoneIsSentWhenItReturns() {
        let session = AudioSession()
        let players = RecordingPlayers(playing: ["mpv"])
        session.attach(otherPlayers: players)
        session.setCategory(.soloAmbient)
        session.setActive(true)
        #expect(players.calls == ["pause [\"mpv\"]"])
        session.attach(otherPlayers: nil)  // the bus went away
        session.setActive(false, options: .notifyOthersOnDeactivation)
        let again = RecordingPlayers(playing: [])
        session.attach(otherPlayers: again)  // the bus is back
        #expect(again.calls == ["play [\"mpv\"]"])
        session.attach(otherPlayers: again)
        #expect(again.calls == ["play [\"mpv\"]"], "owed once, sent once")
    }

    @Test func anUnduckOwedWhileTheBusIsGoneIsSentWhenItReturns() {
        let session = AudioSession()
        let players = RecordingPlayers(playing: ["vlc"])
        session.attach(otherPlayers: players)
        session.setCategory(.playback, options: [.mixWithOthers, .duckOthers])
        session.setActive(true)
        #expect(players.calls == ["duck [\"vlc\"] 0.3"])
        session.attach(otherPlayers: nil)
        session.setActive(false, options: .notifyOthersOnDeactivation)
        session.attach(otherPlayers: players)
        #expect(players.calls.last == "duck [\"vlc\"] 1.0")
    }
    /// The ducked volume is checked at the edge: NaN and infinities are refused and change nothing, the rest clamped.
    @Test func theDuckedVolumeIsCheckedAndAppliedToPlayersDuckedNow() throws {
        let session = AudioSession()
        let players = RecordingPlayers(playing: ["vlc"])
        session.attach(otherPlayers: players)
        session.setCategory(.playback, options: [.mixWithOthers, .duckOthers])
        session.othersDuckedVolume = 0.5
        session.setActive(true)
        #expect(players.calls == ["duck [\"vlc\"] 0.5"])
        #expect(throws: InvalidNumber.self) { try session.setOthersDuckedVolume(.nan) }
        session.othersDuckedVolume = .infinity
        #expect(session.othersDuckedVolume == 0.5)
        #expect(players.calls.count == 1, "a refused volume sends nothing")
        try session.setOthersDuckedVolume(-2)
        #expect(session.othersDuckedVolume == 0)
        #expect(players.calls.last == "duck [\"vlc\"] 0.0")
    }
    /// The engine's side of the executor, recorded: each decision reaches it once, in the policy's order.
    final class RecordingOutput: SessionOutput, @unchecked Sendable {
        var calls: [String] = []
        func pauseAppAudio(_ reason: SessionAction.PauseReason) { calls.append("pause \(reason)") }
        func resumeAppAudio() { calls.append("resume") }
        func stopAppAudio() { calls.append("stop") }
        func setOutputSilenced(_ silenced: Bool) { calls.append("silenced \(silenced)") }
        /// Whether a device opens when followed.
        var opens = true
        func followDefaultDevice() -> Bool {
            calls.append("follow default")
            return opens
        }
        func moveStream(toSink sink: String) { calls.append("move to \(sink)") }
        func renderToNullDevice() { calls.append("null") }
        var isAppAudioPlaying: Bool { true }
        var currentRoute: AudioRoute { .none }
    }

    @Test func everyRouteDecisionIsCarriedOutOnceByTheExecutor() {
        let session = AudioSession()
        let output = RecordingOutput()
        session.attach(output: output)
        let speakers = AudioRoute(name: "Speakers", driver: "pulseaudio", sink: "speakers")
        let headphones = AudioRoute(name: "Headphones", driver: "pulseaudio", sink: "headphones")
        session.handle(.defaultDeviceChanged(previous: speakers, current: headphones))
        session.handle(.currentDeviceRemoved(previous: headphones, current: speakers))
        session.resumeAfterRouteChange()
        session.handle(.currentDeviceRemoved(previous: speakers, current: nil))
        // the output falling to null: told once
        session.handle(.currentDeviceRemoved(previous: speakers, current: nil))
        session.handle(.deviceAdded(speakers, current: .none))
        session.enterBackground()
        #expect(
            output.calls == [
                "follow default", "move to headphones",
                "follow default", "pause routeChange", "resume",
                "null", "pause interruption",
                "follow default", "resume",
                "silenced true"
            ])
        let reasons = session.drainNotifications().compactMap { note -> RouteChangeReason? in
            if case .routeChange(let change) = note { change.reason } else { nil }
        }
        #expect(
            reasons == [
                .routeConfigurationChange, .oldDeviceUnavailable, .noSuitableRouteForCategory, .newDeviceAvailable
            ])
    }
    /// A device that will not open is no device left: the executor reports it and the policy says so, once.
    @Test func aDeviceThatWillNotOpenIsReportedAsNoRoute() {
        let session = AudioSession()
        let output = RecordingOutput()
        output.opens = false
        session.attach(output: output)
        let speakers = AudioRoute(name: "Speakers", driver: "sdl")
        let hdmi = AudioRoute(name: "HDMI", driver: "sdl")
        session.handle(.currentDeviceRemoved(previous: speakers, current: hdmi))
        #expect(output.calls == ["follow default", "pause routeChange", "null", "pause interruption"])
        #expect(
            session.drainNotifications() == [
                .routeChange(RouteChange(reason: .oldDeviceUnavailable, previous: speakers, current: hdmi)),
                .routeChange(RouteChange(reason: .noSuitableRouteForCategory, previous: .none, current: .none)),
                .interruption(.began)
            ])
        #expect(!session.state.hasDevice)
    }
}
