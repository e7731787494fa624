import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// The session rules carried out on real rendered audio (offline engine).
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct SessionRulesTests {
    func engineWithTone(category: SessionCategory) throws -> (AudioEngine, Voice) {
        let engine = try AudioEngine(.offline())
        engine.session.setCategory(category)
        engine.session.setActive(true)
        let sound = try engine.makeSound(tone(hz: 440, seconds: 1), name: "tone")
        let voice = engine.play(sound, PlayOptions(loop: true))
        _ = try engine.render(frames: 4_800)
        return (engine, voice)
    }

    @Test(arguments: SessionCategory.allCases)
    func backgroundSilencesWithinOneBlockExceptPlayback(category: SessionCategory) throws {
        let (engine, _) = try engineWithTone(category: category)
        engine.session.enterBackground()
        let background = try Signal(engine.render(frames: 9_600))
        if category == .playback {
            #expect(background.rms(512..<9_600) > 0.1)
        } else {
            #expect(background.peak(512..<9_600) == 0)  // silent from the second block on
        }
        engine.session.enterForeground()
        #expect(try Signal(engine.render(frames: 9_600)).rms(512..<9_600) > 0.1)
    }

    @Test func interruptionPausesAndItsEndResumesWhereItWas() throws {
        let engine = try AudioEngine(.offline())
        let sound = try engine.makeSound(tone(hz: 440, seconds: 2), name: "tone")
        let voice = engine.play(sound)
        _ = try engine.render(frames: 24_000)
        let before = try #require(voice.elapsed)
        engine.session.beginInterruption()
        let during = try Signal(engine.render(frames: 24_000))
        #expect(during.peak(512..<24_000) == 0)
        #expect(abs(try #require(voice.elapsed) - before) < 0.02)  // it kept its place
        engine.session.endInterruption()
        let after = try Signal(engine.render(frames: 9_600))
        #expect(after.rms(512..<9_600) > 0.1)
        let events = engine.update()
        #expect(events.contains(.session(.interruption(.began))))
        #expect(events.contains(.session(.interruption(.ended(shouldResume: true)))))
    }

    @Test func interruptionPausesTheMusicPlayerAndResumesIt() throws {
        let fixtures = try Fixtures()
        let engine = try AudioEngine(.offline())
        try engine.musicPlayer.setQueue(paths: [try fixtures.sineWAV("m.wav", seconds: 3)])
        engine.musicPlayer.play()
        _ = try engine.render(frames: 24_000)
        engine.session.beginInterruption()
        #expect(engine.musicPlayer.playbackState == .interrupted)
        let position = engine.musicPlayer.currentPlaybackTime
        #expect(try Signal(engine.render(frames: 24_000)).peak(512..<24_000) == 0)
        engine.session.endInterruption()
        #expect(engine.musicPlayer.playbackState == .playing)
        #expect(abs(engine.musicPlayer.currentPlaybackTime - position) < 0.05)
        #expect(try Signal(engine.render(frames: 9_600)).rms(512..<9_600) > 0.1)
    }

    @Test func nothingPlayingMeansNothingResumes() throws {
        let engine = try AudioEngine(.offline())
        engine.session.beginInterruption()
        engine.session.endInterruption()
        #expect(engine.update().contains(.session(.interruption(.ended(shouldResume: false)))))
    }

    @Test func categoryChangeIsNotified() throws {
        let engine = try AudioEngine(.offline())
        engine.session.setCategory(.ambient)
        engine.session.setCategory(.ambient)
        engine.session.setCategory(.playback, options: .mixWithOthers)
        let notes = engine.update().compactMap { if case .session(let n) = $0 { n } else { nil } }
        #expect(notes == [.categoryChanged(.ambient), .categoryChanged(.playback)])
    }

    @Test func oldDeviceUnavailablePausesUntilResumeThenContinues() throws {
        let fixtures = try Fixtures()
        let engine = try AudioEngine(.offline())
        try engine.musicPlayer.setQueue(paths: [try fixtures.sineWAV("m.wav", seconds: 3)])
        engine.musicPlayer.play()
        let sound = try engine.makeSound(tone(hz: 880, seconds: 1), name: "sfx")
        let voice = engine.play(sound, PlayOptions(loop: true))
        _ = try engine.render(frames: 24_000)
        let speakers = AudioRoute(name: "Speakers", driver: "pulseaudio", sink: "speakers")
        let headphones = AudioRoute(name: "Headphones", driver: "pulseaudio", sink: "headphones")
        engine.session.handle(.currentDeviceRemoved(previous: speakers, current: headphones))
        #expect(engine.musicPlayer.playbackState == .paused)
        #expect(try Signal(engine.render(frames: 24_000)).peak(512..<24_000) == 0)
        #expect(
            engine.update().contains(
                .session(
                    .routeChange(RouteChange(reason: .oldDeviceUnavailable, previous: speakers, current: headphones)))))
        let musicTime = engine.musicPlayer.currentPlaybackTime
        engine.session.resumeAfterRouteChange()
        #expect(engine.musicPlayer.playbackState == .playing)
        #expect(voice.isPlaying)
        #expect(abs(engine.musicPlayer.currentPlaybackTime - musicTime) < 0.05)
        #expect(try Signal(engine.render(frames: 9_600)).rms(512..<9_600) > 0.1)
    }

    /// Stop means stop: the effect the route change paused is silent and back at its start, the music is stopped,
    /// and neither a later Resume nor an interruption's end brings them back; what the game plays afterwards sounds.
    @Test func stopAfterRouteChangeStopsAndRewindsWhatItPaused() throws {
        let fixtures = try Fixtures()
        let engine = try AudioEngine(.offline())
        try engine.musicPlayer.setQueue(paths: [try fixtures.sineWAV("m.wav", hz: 300, seconds: 3)])
        engine.musicPlayer.play()
        let loop = try engine.makeSound(tone(hz: 880, seconds: 1), name: "loop")
        let oneShot = try engine.makeSound(tone(hz: 660, seconds: 2), name: "one-shot")
        let looping = engine.play(loop, PlayOptions(loop: true))
        let shot = engine.play(oneShot)
        let before = try Signal(engine.render(frames: 24_000))
        #expect(
            before.amplitude(of: 880, in: 4_800..<24_000) > 0.1 && before.amplitude(of: 660, in: 4_800..<24_000) > 0.1)
        #expect(try #require(shot.elapsed) > 0.4)
        let speakers = AudioRoute(name: "Speakers", driver: "pulseaudio", sink: "speakers")
        engine.session.handle(
            .currentDeviceRemoved(previous: speakers, current: AudioRoute(name: "Headphones", driver: "pulseaudio")))
        engine.session.stopAfterRouteChange()
        #expect(!engine.session.isPausedForRouteChange)
        #expect(engine.musicPlayer.playbackState == .stopped)
        for voice in [looping, shot] {
            #expect(voice.isAlive && !voice.isPlaying, "stopped, not freed: the game may play it again")
            #expect(voice.elapsed == 0, "rewound to its start")
        }
        #expect(try Signal(engine.render(frames: 24_000)).peak(0..<24_000) == 0)
        // Neither a late Resume nor an interruption's end brings anything back.
        engine.session.resumeAfterRouteChange()
        engine.session.beginInterruption()
        engine.session.endInterruption()
        #expect(try Signal(engine.render(frames: 24_000)).peak(0..<24_000) == 0)
        #expect(engine.musicPlayer.playbackState == .stopped)
        #expect(shot.elapsed == 0 && looping.elapsed == 0)
        // The pause is lifted: a new effect sounds, and the stopped one plays again from its start when asked.
        let fresh = engine.play(loop, PlayOptions(gain: 0.5, loop: true))
        #expect(try Signal(engine.render(frames: 9_600)).amplitude(of: 880, in: 1_024..<9_600) > 0.05)
        fresh.stop()
        #expect(shot.resume() == .ok)
        let again = try Signal(engine.render(frames: 24_000))
        #expect(again.amplitude(of: 660, in: 4_800..<24_000) > 0.1)
        let played = try #require(shot.elapsed)
        #expect(abs(played - 0.5) < 0.05, "played from the start: \(played) s after half a second")
    }
}
