import AmbienceCore
import AmbiencePlatform
import CPulse
import Synchronization

// Part of the libpulse wrapper (PulseAudioMonitor.swift), split for length: the engine's own playback stream, on a
// connection and main loop of its own, so that the monitor's work (sink lists, events) never delays a block.

/// A playback stream on libpulse's threaded main loop whose write callback renders from the mixer, block by block,
/// straight into libpulse's buffer (`pa_stream_begin_write`; a block larger than it lends at once goes through a block
/// of ours, made at the open, and is copied): no lock, allocation or I/O of ours in it.
///
/// Every wait (connecting, the stream becoming ready, naming the sink) is bounded by a timer on the loop, so a frozen
/// server fails the open with `.notAnswering`. A stream the server ends (its last sink removed, the server gone) is
/// marked dead (`isAlive`), as SDL marks its device stopped; the route monitor then reports it.
final class PulseOutputStream: @unchecked Sendable {
    /// How long an open may take in all: connecting, naming the sink and the stream becoming ready share it.
    static let openSeconds = 2.0

    let sampleRate: Int
    let blockFrames: Int
    /// Asked for the stream: as configured until the open, then with the server's rule applied.
    private(set) var buffering: PulseBuffering
    /// The sink's description (as SDL names its devices), else its name.
    private(set) var deviceName = ""
    /// The server's buffer as it granted it, in bytes: tlength, minreq, prebuf.
    private(set) var granted = (tlength: 0, minreq: 0, prebuf: 0)
    private let pulse: LibPulse
    private let mainloop: OpaquePointer
    private let context: OpaquePointer
    /// Main-loop thread or lock only.
    private var stream: OpaquePointer?
    private let renderer: AudioRenderCallback
    private let dead = Atomic<Bool>(false)
    /// The server's account of the stream running dry (`pa_stream_set_underflow_callback`).
    let underflows = Atomic<Int>(0)
    /// True once closed.
    private let lifecycle = Lock(false)
    /// The loop's thread, raised from another thread once its id is known (AudioThreadPriority.swift).
    let audioThread: AudioThreadRaise
    /// One block, for a block larger than what `pa_stream_begin_write` lends (its memory pool's slot, 64 KiB less a
    /// header: 8,192 frames and up), or the block being written piece by piece (`PulseBuffering.Writing.asked`):
    /// rendered here, then copied by `pa_stream_write`. Made once, at the open.
    private let scratch: UnsafeMutablePointer<Float>
    /// Bytes of `scratch` already written, of the `scratchRendered` its last render made; all of them when none is
    /// waiting. Main-loop thread only.
    private var scratchWritten: Int
    private var scratchRendered: Int
    /// The requests traced (`AMBIENCE_PULSE_TRACE`), or nil.
    private let trace = PulseRequestTrace.configured()

    /// Connects to the default server (`PULSE_SERVER`, client.conf, the user's runtime folder; never starts one) and
    /// opens a stereo float stream at `sampleRate` on `deviceName` (a sink's name or description), or where the
    /// server puts new streams when nil. The stream carries `appName` as its application name (the route monitor
    /// finds our stream by it and our process id) and `media.role=game`. `threadPolicy`: what is asked for the
    /// loop's thread, through the grantor `grantor` makes (`AudioThreadRaise`).
    init(
        sampleRate: Int, blockFrames: Int, deviceName: String?, appName: String, buffering: PulseBuffering,
        threadPolicy: AudioThreadPolicy, grantor: @escaping @Sendable () -> any PriorityGranting,
        renderer: AudioRenderCallback, library: OptionalLibrary<LibPulse> = PulseAudioMonitor.library
    ) throws(OutputError) {
        audioThread = AudioThreadRaise(output: "libpulse", policy: threadPolicy, grantor: grantor)
        self.sampleRate = sampleRate
        self.blockFrames = blockFrames
        self.buffering = buffering
        self.renderer = renderer
        scratch = .allocate(capacity: blockFrames * 2)
        scratch.initialize(repeating: 0, count: blockFrames * 2)
        scratchWritten = blockFrames * Self.frameBytes
        scratchRendered = scratchWritten
        do throws(SharedLibraryError) { pulse = try library.functions() } catch {
            scratch.deallocate()
            audioThread.threadEnded()
            throw .pulse("\(error)")
        }
        do throws(PulseSetupError) {
            (mainloop, context) = try PulseSetupError.loopAndContext(pulse, thread: "ambience-output", appName: appName)
        } catch {
            scratch.deallocate()
            audioThread.threadEnded()
            throw .pulse("libpulse could not create a main loop or context")
        }
        do throws(OutputError) {
            try open(deviceName: deviceName)
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
        scratch.deallocate()
    }

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    private var lastError: String {
        pulse.pa_strerror(pulse.pa_context_errno(context)).map { String(cString: $0) } ?? "unknown error"
    }

    private func open(deviceName wanted: String?) throws(OutputError) {
        pulse.pa_context_set_state_callback(context, Self.contextStateCallback, userdata)
        guard pulse.pa_context_connect(context, nil, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0 else {
            throw .pulse(lastError)
        }
        guard pulse.pa_threaded_mainloop_start(mainloop) >= 0 else { throw .pulse("the main loop did not start") }
        pulse.pa_threaded_mainloop_lock(mainloop)
        defer { pulse.pa_threaded_mainloop_unlock(mainloop) }
        let deadline = pulse.pa_rtclock_now() + UInt64(Self.openSeconds * 1e6)
        let connected = waitLocked(until: deadline) {
            let state = pulse.pa_context_get_state(context)
            return state == PA_CONTEXT_READY || PA_CONTEXT_IS_GOOD(state) == 0
        }
        guard pulse.pa_context_get_state(context) == PA_CONTEXT_READY else {
            if !connected { throw .notAnswering(seconds: Self.openSeconds) }
            throw .pulse(lastError)
        }
        // The buffer's rule depends on the server (`PulseBuffering.onServer`); a server that does not say gets
        // PulseAudio's.
        buffering = buffering.onServer(
            named: try serverNameLocked(deadline: deadline), blockFrames: blockFrames, sampleRate: sampleRate)
        var sink: (name: String, description: String)? = nil
        if let wanted {
            sink = try sinkLocked(named: wanted, deadline: deadline)
            if sink == nil { throw .pulse("no sink named '\(wanted)'") }
        }

        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(clamping: sampleRate), channels: 2)
        let properties = pulse.pa_proplist_new()
        _ = pulse.pa_proplist_sets(properties, PA_PROP_MEDIA_ROLE, "game")
        stream = pulse.pa_stream_new_with_proplist(context, "game audio", &spec, nil, properties)
        pulse.pa_proplist_free(properties)
        guard let stream else { throw .pulse(lastError) }
        pulse.pa_stream_set_state_callback(stream, Self.streamStateCallback, userdata)
        pulse.pa_stream_set_write_callback(stream, Self.writeCallback, userdata)
        pulse.pa_stream_set_underflow_callback(stream, Self.underflowCallback, userdata)
        var attributes = buffering.attributes(
            blockFrames: blockFrames, frameBytes: Self.frameBytes, sampleRate: sampleRate)
        let flags = buffering.adjustLatency ? PA_STREAM_ADJUST_LATENCY : PA_STREAM_NOFLAGS
        guard pulse.pa_stream_connect_playback(stream, sink?.name, &attributes, flags, nil, nil) >= 0 else {
            throw .pulse(lastError)
        }
        let ready = waitLocked(until: deadline) {
            PA_STREAM_IS_GOOD(pulse.pa_stream_get_state(stream)) == 0
                || pulse.pa_stream_get_state(stream) == PA_STREAM_READY
        }
        guard pulse.pa_stream_get_state(stream) == PA_STREAM_READY else {
            if !ready { throw .notAnswering(seconds: Self.openSeconds) }
            throw .pulse(lastError)
        }
        if let buffer = pulse.pa_stream_get_buffer_attr(stream)?.pointee {
            granted = (Int(buffer.tlength), Int(buffer.minreq), Int(buffer.prebuf))
        }
        let playing = pulse.pa_stream_get_device_name(stream).map { String(cString: $0) } ?? ""
        // Only a name to show: a server slow to list its sinks now costs what is left of the open's time, no more.
        let playingSink = (try? sinkLocked(named: playing, deadline: deadline)) ?? nil
        deviceName = sink?.description ?? playingSink?.description ?? playing
        Log.info(
            "output: libpulse stream on '\(playing)', asked \(buffering) blocks of \(blockFrames) frames, granted "
                + "tlength \(granted.tlength) B, minreq \(granted.minreq) B, prebuf \(granted.prebuf) B")
    }

    /// Stereo float32.
    static let frameBytes = 2 * MemoryLayout<Float>.size

    /// Whether the stream still plays: false once the server ended it or the connection went.
    var isAlive: Bool { !dead.load(ordering: .relaxed) }

    /// Runs `body` while the main loop is held, so no block is being rendered (the write callback runs on that loop).
    func withCallbackLocked(_ body: () -> Bool) -> Bool {
        lifecycle.withLock { closed in
            guard !closed, pulse.pa_threaded_mainloop_in_thread(mainloop) == 0 else { return body() }
            pulse.pa_threaded_mainloop_lock(mainloop)
            defer { pulse.pa_threaded_mainloop_unlock(mainloop) }
            return body()
        }
    }

    /// Ends the stream, disconnects and joins the loop's thread. Idempotent, and bounded: nothing here waits for the
    /// server (the disconnect closes the socket).
    func close() {
        audioThread.stopAsking()
        // After the loop's thread is joined (`pa_threaded_mainloop_stop`), not before: it may run until then.
        defer { audioThread.threadEnded() }
        lifecycle.withLock { closed in
            guard !closed else { return }
            closed = true
            pulse.pa_threaded_mainloop_lock(mainloop)
            if let stream {
                pulse.pa_stream_set_state_callback(stream, nil, nil)
                pulse.pa_stream_set_write_callback(stream, nil, nil)
                pulse.pa_stream_set_underflow_callback(stream, nil, nil)
                if pulse.pa_stream_get_state(stream) == PA_STREAM_READY { _ = pulse.pa_stream_disconnect(stream) }
                pulse.pa_stream_unref(stream)
                self.stream = nil
            }
            pulse.pa_context_set_state_callback(context, nil, nil)
            pulse.pa_context_disconnect(context)
            pulse.pa_context_unref(context)
            pulse.pa_threaded_mainloop_unlock(mainloop)
            pulse.pa_threaded_mainloop_stop(mainloop)
            pulse.pa_threaded_mainloop_free(mainloop)
            if let trace { Log.info("output: libpulse requests: \(trace.summary(frameBytes: Self.frameBytes))") }
        }
        dead.store(true, ordering: .relaxed)
    }

    // MARK: With the main-loop lock held

    /// Sleeps until `done()` or `deadline` (libpulse's real-time clock, µs) passes; false when the time ran out
    /// first. A timer on the loop wakes us.
    private func waitLocked(until deadline: UInt64, _ done: () -> Bool) -> Bool {
        Reply.wait(pulse, mainloop: mainloop, context: context, until: deadline, done)
    }

    /// The sink whose name or description is `name`, or nil when the server has none; `.notAnswering` when the
    /// server did not list its sinks by `deadline`.
    private func sinkLocked(named name: String, deadline: UInt64) throws(OutputError) -> (
        name: String, description: String
    )? {
        guard !name.isEmpty else { return nil }
        let query = InfoQuery(mainloop: mainloop, pulse: pulse, wanted: name)
        guard
            let operation = pulse.pa_context_get_sink_info_list(
                context, Self.sinkListCallback, Unmanaged.passUnretained(query).toOpaque())
        else { return nil }
        defer { pulse.pa_operation_unref(operation) }
        guard waitLocked(until: deadline, { query.isDone }) else {
            pulse.pa_operation_cancel(operation)  // its callback will not run: `query` may go
            throw .notAnswering(seconds: Self.openSeconds)
        }
        return query.found
    }

    /// The server's name ("pulseaudio", "PulseAudio (on PipeWire 0.3.65)"), with the main loop held.
    private func serverNameLocked(deadline: pa_usec_t) throws(OutputError) -> String? {
        let query = InfoQuery(mainloop: mainloop, pulse: pulse, wanted: "")
        guard
            let operation = pulse.pa_context_get_server_info(
                context, Self.serverInfoCallback, Unmanaged.passUnretained(query).toOpaque())
        else { return nil }
        defer { pulse.pa_operation_unref(operation) }
        guard waitLocked(until: deadline, { query.isDone }) else {
            pulse.pa_operation_cancel(operation)  // its callback will not run: `query` may go
            throw .notAnswering(seconds: Self.openSeconds)
        }
        return query.found?.name
    }

    // MARK: On the main-loop thread

    /// Renders as many whole blocks as fit in what the server will take now (`writable`, all it asked for so far):
    /// writing a whole block for a smaller request would queue more than `tlength`, a little more at every request.
    /// Or, written as asked, exactly `writable`: from a block (`feed`), or rendered now in pieces of at most a block.
    /// Writes into libpulse's own memory; stops if libpulse refuses.
    private func fill(_ stream: OpaquePointer, writable: Int) {
        let blockBytes = blockFrames * Self.frameBytes
        trace?.record(bytes: writable, held: scratchRendered - scratchWritten)
        switch buffering.writing {
        case .asked?, .ahead?:
            return feed(stream, asked: writable, renderingAhead: buffering.writing == .ahead, renderFrames: blockFrames)
        case .pieces?:
            if let piece = buffering.pieceRenderFrames(blockFrames: blockFrames) {
                return feed(stream, asked: writable, renderingAhead: false, renderFrames: piece)
            }
            var left = max(writable, 0) / Self.frameBytes
            while left > 0 {
                let frames = buffering.pieceLength(left: left, blockFrames: blockFrames)
                guard renderAndWrite(stream, frames: frames) else { return }
                left -= frames
            }
        case .whole?, nil:
            var written = 0
            while writable - written >= blockBytes {
                guard renderAndWrite(stream, frames: blockFrames) else { return }
                written += blockBytes
            }
        }
    }

    /// Renders `frames` (at most a block) into libpulse's own memory and writes them; false if libpulse refused.
    private func renderAndWrite(_ stream: OpaquePointer, frames: Int) -> Bool {
        let bytes = frames * Self.frameBytes
        var data: UnsafeMutableRawPointer? = nil
        var size = bytes
        guard pulse.pa_stream_begin_write(stream, &data, &size) == 0, var data else { return false }
        if size < bytes {
            // More than libpulse lends at once: render into our block, which the write copies.
            _ = pulse.pa_stream_cancel_write(stream)
            data = UnsafeMutableRawPointer(scratch)
        }
        renderer.renderAudio(into: data.assumingMemoryBound(to: Float.self), frames: frames)
        return pulse.pa_stream_write(stream, data, bytes, nil, 0, PA_SEEK_RELATIVE) == 0
    }

    /// Writes the `asked` bytes (whole frames) from the render in `scratch`, rendering the next `renderFrames` (at
    /// most a block) each time one runs out: the server's queue is topped up to its `tlength` at every request, where
    /// whole blocks left it up to a block short. `renderingAhead`: a render that ran out is followed at once by the
    /// next one, so the next request finds its data ready; else the render waits for the request that needs it.
    private func feed(_ stream: OpaquePointer, asked: Int, renderingAhead: Bool, renderFrames: Int) {
        let renderBytes = min(max(renderFrames, 1), blockFrames) * Self.frameBytes
        var left = max(asked, 0) - max(asked, 0) % Self.frameBytes
        let block = UnsafeMutableRawPointer(scratch)
        while left > 0 {
            if scratchWritten >= renderBytes {
                renderer.renderAudio(into: scratch, frames: renderBytes / Self.frameBytes)
                scratchWritten = 0
                scratchRendered = renderBytes
            }
            let count = min(left, renderBytes - scratchWritten)
            guard pulse.pa_stream_write(stream, block + scratchWritten, count, nil, 0, PA_SEEK_RELATIVE) == 0 else {
                return
            }
            scratchWritten += count
            left -= count
        }
        if renderingAhead && scratchWritten >= renderBytes {
            renderer.renderAudio(into: scratch, frames: renderBytes / Self.frameBytes)
            scratchWritten = 0
            scratchRendered = renderBytes
        }
    }

    private func stateChanged() {
        // The loop's thread is the one that writes blocks: its id is taken here, while connecting, so the write
        // callback makes no system call for it. Not the first call: pa_context_connect makes it on the thread that
        // opens the output (the game's), which must not be raised in the loop's place.
        if pulse.pa_threaded_mainloop_in_thread(mainloop) != 0 { audioThread.recordIfNeeded() }
        let contextState = pulse.pa_context_get_state(context)
        let streamState = stream.map { pulse.pa_stream_get_state($0) } ?? PA_STREAM_CREATING
        if PA_CONTEXT_IS_GOOD(contextState) == 0 || PA_STREAM_IS_GOOD(streamState) == 0 {
            dead.store(true, ordering: .relaxed)
        }
        pulse.pa_threaded_mainloop_signal(mainloop, 0)
    }

    // MARK: C callbacks (they capture nothing; `userdata` is the stream object, or a query)

    private static func output(_ userdata: UnsafeMutableRawPointer?) -> PulseOutputStream? {
        userdata.map { Unmanaged<PulseOutputStream>.fromOpaque($0).takeUnretainedValue() }
    }

    private static let contextStateCallback: pa_context_notify_cb_t = { _, userdata in output(userdata)?.stateChanged()
    }
    private static let streamStateCallback: pa_stream_notify_cb_t = { _, userdata in output(userdata)?.stateChanged() }

    private static let writeCallback: pa_stream_request_cb_t = { stream, bytes, userdata in
        guard let stream, let output = output(userdata) else { return }
        output.fill(stream, writable: bytes)
    }

    private static let underflowCallback: pa_stream_notify_cb_t = { _, userdata in
        output(userdata)?.underflows.add(1, ordering: .relaxed)
    }

    private static let serverInfoCallback: pa_server_info_cb_t = { _, info, userdata in
        guard let userdata else { return }
        let query = Unmanaged<InfoQuery>.fromOpaque(userdata).takeUnretainedValue()
        if let name = info.flatMap({ PulseConnection.string($0.pointee.server_name) }) { query.found = (name, name) }
        query.finish()
    }

    private static let sinkListCallback: pa_sink_info_cb_t = { _, info, eol, userdata in
        guard let userdata else { return }
        let query = Unmanaged<InfoQuery>.fromOpaque(userdata).takeUnretainedValue()
        guard eol == 0, let info else { return query.finish() }
        let name = PulseConnection.string(info.pointee.name) ?? ""
        let description = PulseConnection.string(info.pointee.description) ?? name
        if query.found == nil && (name == query.wanted || description == query.wanted) {
            query.found = (name, description)
        }
    }
}

/// A sink looked up by name or description, or the server's name, with the main-loop lock held.
private final class InfoQuery {
    private let mainloop: OpaquePointer
    private let pulse: LibPulse
    let wanted: String
    var found: (name: String, description: String)?
    private(set) var isDone = false

    init(mainloop: OpaquePointer, pulse: LibPulse, wanted: String) {
        self.mainloop = mainloop
        self.pulse = pulse
        self.wanted = wanted
    }

    func finish() {
        isDone = true
        pulse.pa_threaded_mainloop_signal(mainloop, 0)
    }
}

extension PulseBuffering {
    /// libpulse's buffer attributes for blocks of `blockFrames` frames of `frameBytes` at `sampleRate`; maxlength is
    /// left to the server.
    func attributes(blockFrames: Int, frameBytes: Int, sampleRate: Int) -> pa_buffer_attr {
        func bytes(frames: Int) -> UInt32 {
            let (product, overflow) = max(frames, 0).multipliedReportingOverflow(by: max(frameBytes, 0))
            return overflow ? UInt32.max - 1 : min(UInt32(clamping: product), UInt32.max - 1)
        }
        func bytes(blocks: Int) -> UInt32 {
            let (frames, overflow) = max(blocks, 0).multipliedReportingOverflow(by: max(blockFrames, 0))
            return overflow ? UInt32.max - 1 : bytes(frames: frames)
        }
        let request = requestFrames(blockFrames: blockFrames, sampleRate: sampleRate)
        return pa_buffer_attr(
            maxlength: UInt32.max,
            tlength: bytes(frames: targetFrames(blockFrames: blockFrames, sampleRate: sampleRate)),
            prebuf: bytes(blocks: prebufferBlocks),
            minreq: request.map { bytes(frames: $0) } ?? UInt32.max, fragsize: UInt32.max)
    }
}

/// libpulse made no main loop or context (out of memory): what the monitor and the output both start with.
struct PulseSetupError: Error {
    /// A threaded main loop named `thread` (not started) and a context on it that carries `appName`.
    static func loopAndContext(_ pulse: LibPulse, thread: String, appName: String) throws(PulseSetupError)
        -> (mainloop: OpaquePointer, context: OpaquePointer)
    {
        guard let mainloop = pulse.pa_threaded_mainloop_new() else { throw PulseSetupError() }
        pulse.pa_threaded_mainloop_set_name(mainloop, thread)
        let properties = pulse.pa_proplist_new()
        _ = pulse.pa_proplist_sets(properties, PA_PROP_APPLICATION_NAME, appName)
        let context = pulse.pa_context_new_with_proplist(
            pulse.pa_threaded_mainloop_get_api(mainloop), appName, properties)
        pulse.pa_proplist_free(properties)
        guard let context else {
            pulse.pa_threaded_mainloop_free(mainloop)
            throw PulseSetupError()
        }
        return (mainloop, context)
    }
}
