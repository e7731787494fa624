import AmbienceCore
import AmbiencePlatform
import CPulse
import Glibc
import Synchronization

// The only file that calls libpulse. libpulse is not linked: it is opened the first time a monitor is made, and every
// call goes through its function table (`pulse.pa_...`), looked up once.

/// libpulse's functions, looked up by the names the C target's header lists (CPulse/shim.h).
package typealias LibPulse = ambience_pulse_functions

/// Watches a PulseAudio server: its sinks (with their ports), its cards (with their profiles), the default sink and
/// every stream, kept live by subscription.
///
/// libpulse runs on its own thread (a `pa_threaded_mainloop`). Its callbacks update a snapshot and queue
/// `PulseEvent`s under one short lock; the game thread reads the snapshot and drains the events whenever it likes,
/// and never waits for the server. Requests (`setDefaultSink`, `moveSinkInput`, ...) wait for the server's
/// answer, with a timeout. `close()` (or the last reference going away) disconnects and joins the thread.
package final class PulseAudioMonitor: Sendable {
    /// Events kept for `drainEvents()`. Beyond this the oldest are dropped and counted: the snapshot always holds
    /// the present, and the newest events are the ones that explain it.
    static let eventCapacity = 1024

    private let connection: PulseConnection

    /// Connects to `server` (a PulseAudio address such as `unix:/run/user/1000/pulse/native`; nil means libpulse's
    /// usual choice: `PULSE_SERVER`, client.conf, the user's runtime folder), subscribes, and loads the sinks and
    /// streams. Never starts a server. Throws `.serverUnavailable` when nothing answers, `.timeout` when the
    /// connection or the first load takes longer than `timeout` each, `.libraryUnavailable` when `library` (libpulse)
    /// could not be loaded.
    ///
    /// `corkRole`: keep a corked, never-written playback stream of that `media.role` on the server, so that a policy
    /// module that corks streams of that role (module-role-cork) asks it to cork and uncork: those requests arrive as
    /// `PulseEvent.corkRequested` and `.uncorkRequested` (PulseCorkListener.swift).
    init(
        appName: String, server: String? = nil, timeout: Duration = .milliseconds(300), corkRole: String? = nil,
        library: OptionalLibrary<LibPulse> = PulseAudioMonitor.library
    ) throws(DesktopError) {
        connection = try PulseConnection(
            appName: appName, server: server, timeout: timeout, corkRole: corkRole, library: library)
    }

    deinit { connection.close() }

    /// libpulse, opened the first time it is needed. Without it the output is SDL's and there is no PulseAudio route
    /// detail: route changes come from SDL's device list, as with no server.
    package static let library = OptionalLibrary<LibPulse>(
        name: "libpulse.so.0", feature: "the libpulse output; route detail (sinks, ports, other apps' streams)",
        names: String(cString: ambience_pulse_function_names()))

    /// Disconnects and stops the libpulse thread. Safe to call twice; requests afterwards throw.
    func close() { connection.close() }

    /// Ends the cork listener's stream, if there is one, and makes no other: the server's cork requests go unheard
    /// from now on. The rest of the monitor carries on.
    func stopCorkListener() { connection.stopCorkListener() }

    // MARK: Snapshot (any thread, never blocks on the server)

    var snapshot: PulseSnapshot { connection.shared.withLock { $0.model } }
    var isConnected: Bool { snapshot.isConnected }
    var sinks: [SinkInfo] { snapshot.sinks }
    var defaultSinkName: String? { snapshot.defaultSinkName }
    var defaultSink: SinkInfo? { snapshot.defaultSink }
    var sinkInputs: [SinkInput] { snapshot.sinkInputs }
    var cards: [CardInfo] { snapshot.cardsByIndex.values.sorted { $0.index < $1.index } }
    /// The cork listener's stream on the server, once the server has it (nil without one, or before it is ready).
    package var corkListenerIndex: UInt32? { snapshot.corkListenerIndex }
    func otherAppsPlaying(excludingPID pid: pid_t) -> [SinkInput] { snapshot.otherAppsPlaying(excludingPID: pid) }
    /// How many times the snapshot has changed: the same count means the same snapshot.
    var snapshotChanges: Int { connection.shared.withLock { $0.modelChanges } }
    func sinkOfOurStream(pid: pid_t = ProcessIdentity.current) -> SinkInfo? { snapshot.sinkOfStream(pid: pid) }

    /// The events since the last call, oldest first.
    func drainEvents() -> [PulseEvent] { connection.shared.withLock { $0.pending.drain() } }
    /// Whether events wait for `drainEvents()`.
    var hasPendingEvents: Bool { connection.shared.withLock { !$0.pending.isEmpty } }
    /// Events dropped because nobody drained them in time.
    var droppedEvents: Int { connection.shared.withLock { $0.pending.dropped } }

    // MARK: Requests (block the caller until the server answers or `timeout` passes)

    /// Makes `name` the default sink. Streams that never chose a sink follow it.
    func setDefaultSink(_ name: String, timeout: Duration = .seconds(1)) throws(DesktopError) {
        try connection.request("set the default sink to \(name)", timeout: timeout) {
            pulse, context, callback, userdata in
            pulse.pa_context_set_default_sink(context, name, callback, userdata)
        }
    }

    /// Moves stream `index` to the sink named `sink`.
    package func moveSinkInput(
        index: UInt32, toSink sink: String, timeout: Duration = .seconds(1)
    ) throws(DesktopError) {
        try connection.request("move stream #\(index) to \(sink)", timeout: timeout) {
            pulse, context, callback, userdata in
            pulse.pa_context_move_sink_input_by_name(context, index, sink, callback, userdata)
        }
    }

    func setSinkInputMute(index: UInt32, muted: Bool, timeout: Duration = .seconds(1)) throws(DesktopError) {
        try connection.request("\(muted ? "mute" : "unmute") stream #\(index)", timeout: timeout) {
            pulse, context, callback, userdata in
            pulse.pa_context_set_sink_input_mute(context, index, muted ? 1 : 0, callback, userdata)
        }
    }

    /// Ends stream `index` on the server, as the server itself does to a stream it has nowhere to move: its client
    /// sees it fail.
    func killSinkInput(index: UInt32, timeout: Duration = .seconds(1)) throws(DesktopError) {
        try connection.request("end stream #\(index)", timeout: timeout) { pulse, context, callback, userdata in
            pulse.pa_context_kill_sink_input(context, index, callback, userdata)
        }
    }
}

/// The snapshot and the queued events: what both threads share.
struct PulseShared {
    var model = PulseSnapshot() { didSet { modelChanges &+= 1 } }
    /// Counts the changes to `model`, so that a reader can tell that it has seen the present one.
    var modelChanges = 0
    var pending = EventQueue<PulseEvent>(capacity: PulseAudioMonitor.eventCapacity, overflow: .dropOldest)

    mutating func post(_ event: PulseEvent?) {
        guard let event else { return }
        pending.push(event)
    }
}

/// Owns the libpulse main loop and context (and the cork listener's stream, PulseCorkListener.swift). Every libpulse
/// call is made on the main-loop thread (callbacks) or with the main-loop lock held; `lifecycle` keeps `close()` from
/// freeing them under a request.
final class PulseConnection: @unchecked Sendable {
    let shared = Lock(PulseShared())
    /// libpulse's functions (the connection exists only once they loaded).
    let pulse: LibPulse
    let mainloop: OpaquePointer
    let context: OpaquePointer
    private let serverLabel: String
    /// The `media.role` of the stream that hears the server's cork requests; nil: no such stream (main-loop thread or
    /// main-loop lock only after the start).
    var corkRole: String?
    /// That stream, while it exists (main-loop thread or main-loop lock only).
    var corkStream: OpaquePointer?
    /// It was stopped while the server was still making it: it is ended as soon as it is ready.
    var corkStreamEndsWhenReady = false
    /// True once closed. Held for a whole request, so requests are serialized with each other and with `close()`.
    private let lifecycle = Lock(false)
    // Main-loop thread or main-loop lock only:
    private var wasReady = false
    private var loadsPending = 0
    private var loadFailure: String?

    init(
        appName: String, server: String?, timeout: Duration, corkRole: String?, library: OptionalLibrary<LibPulse>
    ) throws(DesktopError) {
        self.corkRole = corkRole
        serverLabel = server ?? ProcessEnvironment.value("PULSE_SERVER") ?? "the default PulseAudio server"
        do throws(SharedLibraryError) { pulse = try library.functions() } catch {
            throw .libraryUnavailable("\(serverLabel): \(error)")
        }
        do throws(PulseSetupError) {
            (mainloop, context) = try PulseSetupError.loopAndContext(pulse, thread: "ambience-pulse", appName: appName)
        } catch {
            throw .serverUnavailable("\(serverLabel): libpulse could not create a main loop or context")
        }
        do throws(DesktopError) {
            try connect(server: server, timeout: timeout)
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    private var lastError: String {
        pulse.pa_strerror(pulse.pa_context_errno(context)).map { String(cString: $0) } ?? "unknown error"
    }
    /// Connecting or ready (with the main-loop lock held).
    private var isAlive: Bool { PA_CONTEXT_IS_GOOD(pulse.pa_context_get_state(context)) != 0 }

    private func connect(server: String?, timeout: Duration) throws(DesktopError) {
        pulse.pa_context_set_state_callback(context, PulseConnection.stateCallback, userdata)
        pulse.pa_context_set_subscribe_callback(context, PulseConnection.subscribeCallback, userdata)
        guard pulse.pa_context_connect(context, server, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0 else {
            throw .serverUnavailable("\(serverLabel): \(lastError)")
        }
        guard pulse.pa_threaded_mainloop_start(mainloop) >= 0 else {
            throw .serverUnavailable("\(serverLabel): libpulse could not start its thread")
        }
        pulse.pa_threaded_mainloop_lock(mainloop)
        defer { pulse.pa_threaded_mainloop_unlock(mainloop) }

        waitLocked(timeout) { pulse.pa_context_get_state(context) == PA_CONTEXT_READY || !isAlive }
        guard pulse.pa_context_get_state(context) == PA_CONTEXT_READY else {
            if isAlive { throw .timeout("connecting to \(serverLabel) (no answer in \(timeout))") }
            throw .serverUnavailable("\(serverLabel): \(lastError)")
        }
        wasReady = true
        shared.withLock { $0.model.isConnected = true }

        // Subscribe first, then load: every change after the load arrives as an event.
        let mask =
            PA_SUBSCRIPTION_MASK_SERVER.rawValue | PA_SUBSCRIPTION_MASK_SINK.rawValue
            | PA_SUBSCRIPTION_MASK_SINK_INPUT.rawValue
            | PA_SUBSCRIPTION_MASK_CARD.rawValue
        let operations = [
            pulse.pa_context_subscribe(
                context, pa_subscription_mask_t(rawValue: mask), PulseConnection.subscribedCallback, userdata),
            pulse.pa_context_get_server_info(context, PulseConnection.initialServerInfoCallback, userdata),
            pulse.pa_context_get_sink_info_list(context, PulseConnection.initialSinkCallback, userdata),
            pulse.pa_context_get_sink_input_info_list(context, PulseConnection.initialSinkInputCallback, userdata),
            pulse.pa_context_get_card_info_list(context, PulseConnection.initialCardCallback, userdata)
        ]
        loadsPending = operations.count
        for case let operation? in operations { pulse.pa_operation_unref(operation) }
        guard !operations.contains(where: { $0 == nil }) else {
            throw .serverUnavailable("\(serverLabel): \(lastError)")
        }
        waitLocked(timeout) { loadsPending == 0 || !isAlive }
        guard isAlive else { throw .serverUnavailable("\(serverLabel): \(lastError)") }
        guard loadsPending == 0 else {
            throw .timeout("loading sinks, streams and cards from \(serverLabel) (\(timeout))")
        }
        if let loadFailure { throw .remoteError(name: "PulseAudio", message: "\(serverLabel): \(loadFailure)") }
        openCorkStream()  // asynchronous: it is ready when the server says so (`PulseSnapshot.corkListenerIndex`)
    }

    /// Disconnects and joins the libpulse thread. Idempotent. Must not run on that thread (it never does: callbacks
    /// hold this object, not the monitor, whose deinit is what calls this).
    func close() {
        lifecycle.withLock { closed in
            guard !closed else { return }
            closed = true
            pulse.pa_threaded_mainloop_lock(mainloop)
            pulse.pa_context_set_state_callback(context, nil, nil)
            pulse.pa_context_set_subscribe_callback(context, nil, nil)
            closeCorkStream(evenIfNotReady: true)  // the disconnect ends a stream still being made
            pulse.pa_context_disconnect(context)  // cancels pending operations: their callbacks never run
            pulse.pa_context_unref(context)
            pulse.pa_threaded_mainloop_unlock(mainloop)
            pulse.pa_threaded_mainloop_stop(mainloop)
            pulse.pa_threaded_mainloop_free(mainloop)
        }
        shared.withLock { $0.model.isConnected = false }
    }

    /// Ends the cork listener's stream for good (the connection stays). Idempotent.
    func stopCorkListener() {
        lifecycle.withLock { closed in
            guard !closed, pulse.pa_threaded_mainloop_in_thread(mainloop) == 0 else { return }
            pulse.pa_threaded_mainloop_lock(mainloop)
            corkRole = nil
            closeCorkStream()
            pulse.pa_threaded_mainloop_unlock(mainloop)
        }
    }

    /// Sends one request and waits for the server's yes or no.
    func request(
        _ what: String, timeout: Duration,
        _ start: (LibPulse, OpaquePointer, pa_context_success_cb_t, UnsafeMutableRawPointer) -> OpaquePointer?
    ) throws(DesktopError) {
        try lifecycle.withLock { (closed: inout Bool) throws(DesktopError) -> Void in
            guard !closed else { throw .serverUnavailable("\(what): the monitor is closed") }
            guard pulse.pa_threaded_mainloop_in_thread(mainloop) == 0 else {
                throw .unsupported("\(what): requests cannot be made from the PulseAudio thread")
            }
            pulse.pa_threaded_mainloop_lock(mainloop)
            defer { pulse.pa_threaded_mainloop_unlock(mainloop) }
            guard isAlive else { throw .serverUnavailable("\(what): lost the connection to \(serverLabel)") }
            let reply = Reply(mainloop: mainloop, pulse: pulse)
            guard
                let operation = start(
                    pulse, context, PulseConnection.replyCallback, Unmanaged.passUnretained(reply).toOpaque())
            else {
                throw .remoteError(name: "PulseAudio", message: "\(what): \(lastError)")
            }
            defer { pulse.pa_operation_unref(operation) }
            waitLocked(timeout) { reply.isDone || !isAlive }
            guard reply.isDone else {
                pulse.pa_operation_cancel(operation)  // its callback will not run: `reply` may go
                if isAlive { throw .timeout("\(what) (no answer in \(timeout))") }
                throw .serverUnavailable("\(what): lost the connection to \(serverLabel)")
            }
            guard reply.succeeded else { throw .remoteError(name: "PulseAudio", message: "\(what): \(lastError)") }
        }
    }

    /// With the main-loop lock held: sleeps until `done()` or `timeout` passes. A timer on the loop wakes us.
    private func waitLocked(_ timeout: Duration, until done: () -> Bool) {
        let components = timeout.components
        let microseconds =
            UInt64(max(components.seconds, 0)) * 1_000_000 + UInt64(max(components.attoseconds, 0) / 1_000_000_000_000)
        _ = Reply.wait(pulse, mainloop: mainloop, context: context, until: pulse.pa_rtclock_now() + microseconds, done)
    }

    // MARK: On the libpulse thread

    private func contextStateChanged() {
        if wasReady && !isAlive {
            wasReady = false
            let reason = pulse.pa_context_get_state(context) == PA_CONTEXT_FAILED ? lastError : "disconnected"
            let message = "\(serverLabel): \(reason)"
            shared.withLock {
                $0.model.isConnected = false
                $0.post(.connectionLost(message))
            }
        }
        pulse.pa_threaded_mainloop_signal(mainloop, 0)
    }

    private func serverChanged(_ type: pa_subscription_event_type_t, index: UInt32) {
        let facility = type.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue
        let removed = type.rawValue & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue
        var operation: OpaquePointer?
        switch facility {
        case PA_SUBSCRIPTION_EVENT_SERVER.rawValue:
            operation = pulse.pa_context_get_server_info(context, PulseConnection.serverInfoCallback, userdata)
        case PA_SUBSCRIPTION_EVENT_CARD.rawValue where removed:
            shared.withLock { $0.post($0.model.removeCard(index: index)) }
        case PA_SUBSCRIPTION_EVENT_CARD.rawValue:
            // A profile switch, or a jack plugged or pulled: a port's availability is posted as a change of the card
            // only (the sink changes too only if the server switches ports), so read the sinks again as well.
            if let cardQuery = pulse.pa_context_get_card_info_by_index(
                context, index, PulseConnection.cardCallback, userdata)
            {
                pulse.pa_operation_unref(cardQuery)
            }
            operation = pulse.pa_context_get_sink_info_list(context, PulseConnection.sinkCallback, userdata)
        case PA_SUBSCRIPTION_EVENT_SINK.rawValue where removed:
            shared.withLock { $0.post($0.model.removeSink(index: index)) }
        case PA_SUBSCRIPTION_EVENT_SINK.rawValue:
            operation = pulse.pa_context_get_sink_info_by_index(context, index, PulseConnection.sinkCallback, userdata)
            openCorkStream()  // if the server ended it with the last sink, it can play again
        case PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue where removed:
            shared.withLock { $0.post($0.model.removeSinkInput(index: index)) }
        case PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue:
            operation = pulse.pa_context_get_sink_input_info(
                context, index, PulseConnection.sinkInputCallback, userdata)
        default:
            break
        }
        if let operation { pulse.pa_operation_unref(operation) }
    }

    /// `initial` values fill the snapshot without events: they describe the start, not a change.
    private func received(defaultSink name: String?, initial: Bool) {
        shared.withLock { shared in
            let event = shared.model.setDefaultSinkName(name)
            if !initial { shared.post(event) }
        }
    }

    private func received(_ sink: SinkInfo, initial: Bool) {
        shared.withLock { shared in
            let event = shared.model.update(sink)
            if !initial { shared.post(event) }
        }
    }

    private func received(_ card: CardInfo, initial: Bool) {
        shared.withLock { shared in
            let event = shared.model.update(card)
            if !initial { shared.post(event) }
        }
    }

    private func received(_ input: SinkInput, initial: Bool) {
        shared.withLock { shared in
            let event = shared.model.update(input)
            if !initial { shared.post(event) }
        }
    }

    private func loadFinished(failure: String? = nil) {
        if let failure { loadFailure = loadFailure ?? failure }
        loadsPending -= 1
        pulse.pa_threaded_mainloop_signal(mainloop, 0)
    }

    // MARK: C callbacks (they capture nothing; `userdata` is the connection, or a `Reply`)

    static func connection(_ userdata: UnsafeMutableRawPointer?) -> PulseConnection? {
        userdata.map { Unmanaged<PulseConnection>.fromOpaque($0).takeUnretainedValue() }
    }

    private static let stateCallback: pa_context_notify_cb_t = { _, userdata in
        connection(userdata)?.contextStateChanged()
    }

    private static let subscribeCallback: pa_context_subscribe_cb_t = { _, type, index, userdata in
        connection(userdata)?.serverChanged(type, index: index)
    }

    private static let subscribedCallback: pa_context_success_cb_t = { _, success, userdata in
        connection(userdata)?.loadFinished(failure: success != 0 ? nil : "subscribing to changes was refused")
    }

    private static let initialServerInfoCallback: pa_server_info_cb_t = { _, info, userdata in
        guard let connection = connection(userdata) else { return }
        if let info { connection.received(defaultSink: string(info.pointee.default_sink_name), initial: true) }
        connection.loadFinished(failure: info == nil ? "reading the server's information failed" : nil)
    }

    private static let serverInfoCallback: pa_server_info_cb_t = { _, info, userdata in
        guard let info else { return }
        connection(userdata)?.received(defaultSink: string(info.pointee.default_sink_name), initial: false)
    }

    private static let initialSinkCallback: pa_sink_info_cb_t = { _, info, eol, userdata in
        guard let connection = connection(userdata) else { return }
        if eol != 0 {
            connection.loadFinished(failure: eol < 0 ? "listing sinks failed" : nil)
        } else if let info {
            connection.received(sink(info.pointee), initial: true)
        }
    }

    /// A sink that vanished between the event and this query ends with `eol < 0`: nothing to record.
    private static let sinkCallback: pa_sink_info_cb_t = { _, info, eol, userdata in
        guard eol == 0, let info else { return }
        connection(userdata)?.received(sink(info.pointee), initial: false)
    }

    private static let initialSinkInputCallback: pa_sink_input_info_cb_t = { _, info, eol, userdata in
        guard let connection = connection(userdata) else { return }
        if eol != 0 {
            connection.loadFinished(failure: eol < 0 ? "listing streams failed" : nil)
        } else if let info {
            connection.received(sinkInput(info.pointee, connection.pulse), initial: true)
        }
    }

    private static let sinkInputCallback: pa_sink_input_info_cb_t = { _, info, eol, userdata in
        guard eol == 0, let info else { return }
        guard let connection = connection(userdata) else { return }
        connection.received(sinkInput(info.pointee, connection.pulse), initial: false)
    }

    private static let initialCardCallback: pa_card_info_cb_t = { _, info, eol, userdata in
        guard let connection = connection(userdata) else { return }
        if eol != 0 {
            connection.loadFinished(failure: eol < 0 ? "listing cards failed" : nil)
        } else if let info {
            connection.received(card(info.pointee, connection.pulse), initial: true)
        }
    }

    /// A card that vanished between the event and this query ends with `eol < 0`: nothing to record.
    private static let cardCallback: pa_card_info_cb_t = { _, info, eol, userdata in
        guard eol == 0, let info else { return }
        guard let connection = connection(userdata) else { return }
        connection.received(card(info.pointee, connection.pulse), initial: false)
    }

    private static let replyCallback: pa_context_success_cb_t = { _, success, userdata in
        guard let userdata else { return }
        Unmanaged<Reply>.fromOpaque(userdata).takeUnretainedValue().finish(succeeded: success != 0)
    }

}
