import Foundation
import Testing

@testable import AmbienceCore
@testable import AmbienceTestSupport

/// The sound server's cork requests as the session's rules see them: no audio, no services.
@Suite(.offTheCooperativePool) struct CorkRequestPolicyTests {
    static let speakers = AudioRoute(name: "Speakers", driver: "pulseaudio", sink: "speakers")
    static let headphones = AudioRoute(name: "Headphones", driver: "pulseaudio", sink: "headphones")

    func activePolicy(_ category: SessionCategory) -> SessionPolicy {
        var policy = SessionPolicy()
        _ = policy.handle(.setCategory(category, [], playingPlayers: []))
        _ = policy.handle(.activate(playingPlayers: []))
        return policy
    }

    /// Every category: the server has muted the game's output already, so each is interrupted alike.
    @Test(arguments: SessionCategory.allCases)
    func aCorkBeginsAnInterruptionAndTheUncorkEndsIt(category: SessionCategory) {
        var policy = activePolicy(category)
        #expect(
            policy.handle(.corkRequested(appAudioPlaying: true)) == [
                .pauseAppAudio(.interruption), .notify(.interruption(.began))
            ])
        #expect(policy.state.isInterrupted)
        #expect(policy.handle(.corkRequested(appAudioPlaying: true)).isEmpty, "a second request changes nothing")
        #expect(
            policy.handle(.uncorkRequested) == [.resumeAppAudio, .notify(.interruption(.ended(shouldResume: true)))])
        #expect(!policy.state.isInterrupted)
        #expect(policy.handle(.uncorkRequested).isEmpty, "nothing left to end")
    }

    @Test func silenceIsNotResumed() {
        var policy = activePolicy(.soloAmbient)
        #expect(policy.handle(.corkRequested(appAudioPlaying: false)) == [.notify(.interruption(.began))])
        #expect(policy.handle(.uncorkRequested) == [.notify(.interruption(.ended(shouldResume: false)))])
    }

    /// The uncork ends only what the cork began: the game's own interruption (a video) outlasts a call inside it.
    @Test func anUncorkLeavesTheGamesOwnInterruptionAlone() {
        var policy = activePolicy(.soloAmbient)
        _ = policy.handle(.interruptionBegan(appAudioPlaying: true))
        #expect(policy.handle(.corkRequested(appAudioPlaying: false)).isEmpty)
        #expect(policy.handle(.uncorkRequested).isEmpty)
        #expect(policy.state.isInterrupted)
        #expect(policy.handle(.interruptionEnded).contains(.notify(.interruption(.ended(shouldResume: true)))))
    }

    /// The game may end the cork's interruption itself; the late uncork then finds nothing to end.
    @Test func theGameMayEndItFirst() {
        var policy = activePolicy(.ambient)
        _ = policy.handle(.corkRequested(appAudioPlaying: true))
        #expect(policy.handle(.interruptionEnded).contains(.resumeAppAudio))
        #expect(policy.handle(.uncorkRequested).isEmpty)
        // And activating again recovers from an uncork that never comes, as from any interruption.
        _ = policy.handle(.corkRequested(appAudioPlaying: false))
        _ = policy.handle(.deactivate(notifyOthers: false))
        _ = policy.handle(.activate(playingPlayers: []))
        #expect(!policy.state.isInterrupted)
        #expect(policy.handle(.uncorkRequested).isEmpty)
    }

    /// A new sound server never sends the old one's uncork: its return ends the interruption (and its listener is
    /// asked again at once if the call is still on).
    @Test func aNewSoundServerEndsIt() {
        var policy = activePolicy(.playback)
        _ = policy.handle(.corkRequested(appAudioPlaying: true))
        #expect(
            policy.handle(.mediaServicesReset(.soundServer)) == [
                .notify(.mediaServicesWereReset(.soundServer)), .resumeAppAudio,
                .notify(.interruption(.ended(shouldResume: true)))
            ])
        _ = policy.handle(.corkRequested(appAudioPlaying: true))
        #expect(policy.handle(.mediaServicesReset(.sessionBus)) == [.notify(.mediaServicesWereReset(.sessionBus))])
        #expect(policy.state.isInterrupted)
    }

    /// A route change waiting for its answer keeps the audio paused through the call's end.
    @Test func aRouteChangeAlertOutlivesTheCall() {
        var policy = activePolicy(.soloAmbient)
        _ = policy.handle(.corkRequested(appAudioPlaying: true))
        _ = policy.handle(.currentDeviceRemoved(previous: Self.speakers, current: Self.headphones))
        #expect(policy.handle(.uncorkRequested) == [.notify(.interruption(.ended(shouldResume: false)))])
        #expect(policy.state.isPausedForRouteChange)
    }
}
