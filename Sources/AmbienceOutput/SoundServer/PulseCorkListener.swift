import AmbienceCore
import AmbiencePlatform
import CPulse

// Part of the libpulse wrapper (PulseAudioMonitor.swift), split for length: the cork listener.
//
// PulseAudio's module-role-cork (src/modules/stream-interaction.c) mutes every stream whose `media.role` is one of its
// `cork_roles` when a stream of a `trigger_roles` role (`phone` by default) appears, and sends it the stream event
// PA_STREAM_EVENT_REQUEST_CORK; when the last such stream goes it unmutes it and, if the stream is corked, sends
// PA_STREAM_EVENT_REQUEST_UNCORK. The game's output stream is SDL's, and SDL ignores stream events, so the engine keeps
// a stream of its own beside it, with the output stream's role, to hear them:
// - corked from the start and never written, so it costs the server nothing and keeps no sink awake, and no monitor
//   (ours in another game included) takes it for audio playing;
// - stream-interaction.c's `apply_interaction_to_sink` treats every stream as uncorked while a new stream is being
//   put (`if (new_stream && corked) corked = false`), so when a trigger stream appears this corked stream is muted and
//   asked to cork like a playing one; when the trigger goes, `uncork_or_unduck` unmutes it and, because it is
//   corked, asks it to uncork;
// - what it cannot hear, by the same source: a trigger stream that starts corked and is uncorked later, or is
//   unmuted, or moves onto our sink (those are processed with `new_stream` false, and a corked stream is then left
//   alone); with `global=0` (the default) only a trigger on the same sink counts, so it is moved with the output.
// PipeWire's PulseAudio server has no module-role-cork and sends no stream events (ARCHITECTURE.md, "Cork requests").

extension PulseConnection {
    /// Opens the cork listener's stream, if this connection has a role for it and has none now. Asynchronous: the
    /// server makes it ready later, which `corkStreamStateChanged` records. Main-loop thread or lock only.
    func openCorkStream() {
        guard let corkRole, corkStream == nil else { return }
        var spec = pa_sample_spec(format: PA_SAMPLE_S16LE, rate: 8_000, channels: 1)
        let properties = pulse.pa_proplist_new()
        _ = pulse.pa_proplist_sets(properties, PA_PROP_MEDIA_ROLE, corkRole)
        let stream = pulse.pa_stream_new_with_proplist(context, PulseSnapshot.corkStreamName, &spec, nil, properties)
        pulse.pa_proplist_free(properties)
        guard let stream else {
            Log.info(
                "output: no cork listener (libpulse could not make a stream); the sound server's requests go unheard")
            return
        }
        pulse.pa_stream_set_state_callback(stream, PulseConnection.corkStateCallback, userdata)
        pulse.pa_stream_set_event_callback(stream, PulseConnection.corkEventCallback, userdata)
        // No sink named: it plays where the output stream plays, the default, and follows it as that stream does.
        guard pulse.pa_stream_connect_playback(stream, nil, nil, PA_STREAM_START_CORKED, nil, nil) >= 0 else {
            Log.info("output: no cork listener (the server refused its stream); the sound server's requests go unheard")
            release(stream)
            return
        }
        corkStream = stream
    }

    /// Ends the cork listener's stream, if there is one. libpulse refuses to disconnect a stream the server is still
    /// making (PipeWire can take a while), and would make it anyway: such a stream is ended once it is ready, unless
    /// the whole connection is going (`evenIfNotReady`). Main-loop thread or lock only.
    func closeCorkStream(evenIfNotReady: Bool = false) {
        guard let stream = corkStream else { return }
        let state = pulse.pa_stream_get_state(stream)
        if state == PA_STREAM_CREATING && !evenIfNotReady {
            corkStreamEndsWhenReady = true
            return
        }
        corkStream = nil
        corkStreamEndsWhenReady = false
        if state == PA_STREAM_READY { _ = pulse.pa_stream_disconnect(stream) }
        release(stream)
        shared.withLock { $0.model.corkListenerIndex = nil }
    }

    private func release(_ stream: OpaquePointer) {
        pulse.pa_stream_set_state_callback(stream, nil, nil)
        pulse.pa_stream_set_event_callback(stream, nil, nil)
        pulse.pa_stream_unref(stream)  // libpulse holds its own reference while it calls back
    }

    /// On the libpulse thread: the stream is ready (the server lists it), or the server ended it (its sink went with
    /// no other left, or it was killed). An ended one is let go; the next sink event opens a new one.
    private func corkStreamStateChanged(_ stream: OpaquePointer) {
        guard stream == corkStream else { return }
        let state = pulse.pa_stream_get_state(stream)
        if state == PA_STREAM_READY && corkStreamEndsWhenReady {
            closeCorkStream()
        } else if state == PA_STREAM_READY {
            let index = pulse.pa_stream_get_index(stream)
            shared.withLock { $0.model.corkListenerIndex = index }
        } else if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED {
            closeCorkStream()
        }
    }

    private static let corkStateCallback: pa_stream_notify_cb_t = { stream, userdata in
        guard let stream else { return }
        connection(userdata)?.corkStreamStateChanged(stream)
    }

    /// Only the two requests count; any other event (`format-lost`, a module's own) is not ours to act on.
    private static let corkEventCallback: pa_stream_event_cb_t = { _, name, _, userdata in
        guard let name, let connection = connection(userdata) else { return }
        let event: PulseEvent? =
            switch String(cString: name) {
            case PA_STREAM_EVENT_REQUEST_CORK: .corkRequested
            case PA_STREAM_EVENT_REQUEST_UNCORK: .uncorkRequested
            default: nil
            }
        connection.shared.withLock { $0.post(event) }
    }
}
