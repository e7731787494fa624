import AmbienceCore
import AmbiencePlatform

// MARK: Session effects

extension AudioEngine: SessionOutput {
    package func pauseAppAudio(_ reason: SessionAction.PauseReason) {
        mixer.setSuspended(true)
        guard musicPlayer.playbackState == .playing else { return }
        state.withLock { $0.musicPausedBySession = true }
        if reason == .interruption { musicPlayer.interrupt() } else { musicPlayer.pause() }
    }

    package func resumeAppAudio() {
        mixer.setSuspended(false)
        if takeMusicPausedBySession() { musicPlayer.play() }
    }

    package func stopAppAudio() {
        mixer.rewindAndHoldUnpausedVoices()
        if takeMusicPausedBySession() { musicPlayer.stop() }
    }

    /// Whether the session paused the music player, forgotten as it is read: one resume or stop answers it.
    private func takeMusicPausedBySession() -> Bool {
        state.withLock { state in
            defer { state.musicPausedBySession = false }; return state.musicPausedBySession
        }
    }

    package func setOutputSilenced(_ silenced: Bool) { mixer.setOutputSilenced(silenced) }

    package func followDefaultDevice() -> Bool {
        guard let device = state.withLock({ $0.device }) else { return true }  // offline: no device to follow
        // A live stream already plays where the server sends it; only a closed or dead one is reopened.
        guard device.isNull || !device.isDeviceAlive else { return true }
        return device.followDefaultDevice()
    }

    package func moveStream(toSink sink: String) {
        guard let (server, ours) = routes?.ourStream() else { return }
        // A move that fails (the stream or the sink went meanwhile, no answer) leaves the stream where the server
        // put it; the next default change moves it again.
        do {
            try server.moveSinkInput(index: ours.index, toSink: sink)
        } catch {
            Log.warning("output: could not move our stream to \(sink): \(error)")
        }
        // The cork listener hears only what is meant for streams on its sink: it goes where the output goes.
        if let listener = server.corkListenerIndex { try? server.moveSinkInput(index: listener, toSink: sink) }
    }

    package func renderToNullDevice() {
        let device = state.withLock { $0.device }
        routes?.endOurStreamsWithoutSink()  // else, on PipeWire, closing the SDL device can wait forever
        device?.renderToNull()
    }

    package var isAppAudioPlaying: Bool { musicPlayer.playbackState == .playing || mixer.hasPlayingVoices }

    package var currentRoute: AudioRoute {
        if isOffline { return AudioRoute(name: "offline", driver: "offline") }
        guard let device = state.withLock({ $0.device }) else { return .none }
        if device.isNull { return .none }
        return routes?.route(driver: device.driver) ?? device.route
    }
}
