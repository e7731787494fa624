import AmbienceCore
import CPulse
import Glibc

// Part of the libpulse wrapper (PulseAudioMonitor.swift), split for length: libpulse's structures read into the
// snapshot's Swift values. Called on the libpulse thread, from the callbacks that received them. And `Reply`, an
// awaited answer, with the wrapper's one bounded wait on the main loop (the monitor's and the output's).

extension PulseConnection {
    static func string(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }

    static func sink(_ info: pa_sink_info) -> SinkInfo {
        let state: SinkInfo.State =
            switch info.state {
            case PA_SINK_RUNNING: .running
            case PA_SINK_IDLE: .idle
            case PA_SINK_SUSPENDED: .suspended
            default: .unknown
            }
        let ports = (0..<Int(info.n_ports)).compactMap { info.ports?[$0].map { port($0.pointee) } }
        return SinkInfo(
            index: info.index, name: string(info.name) ?? "", description: string(info.description) ?? "",
            state: state, isMuted: info.mute != 0, ports: ports,
            activePortName: info.active_port.flatMap { string($0.pointee.name) },
            cardIndex: info.card == UInt32.max ? nil : info.card)  // PA_INVALID_INDEX: no card
    }

    static func card(_ info: pa_card_info, _ pulse: LibPulse) -> CardInfo {
        // `profiles2` holds `n_profiles` pointers (and a NULL after them).
        let profiles = (0..<Int(info.n_profiles)).compactMap { i in
            info.profiles2?[i].map { p in
                CardProfile(
                    name: string(p.pointee.name) ?? "", description: string(p.pointee.description) ?? "",
                    sinks: p.pointee.n_sinks, priority: p.pointee.priority, isAvailable: p.pointee.available != 0)
            }
        }
        return CardInfo(
            index: info.index, name: string(info.name) ?? "",
            description: string(pulse.pa_proplist_gets(info.proplist, PA_PROP_DEVICE_DESCRIPTION)) ?? string(info.name)
                ?? "",
            profiles: profiles, activeProfileName: info.active_profile2.flatMap { string($0.pointee.name) })
    }

    static func port(_ info: pa_sink_port_info) -> SinkPort {
        let availability: SinkPort.Availability =
            switch UInt32(bitPattern: info.available) {
            case PA_PORT_AVAILABLE_NO.rawValue: .no
            case PA_PORT_AVAILABLE_YES.rawValue: .yes
            default: .unknown
            }
        return SinkPort(
            name: string(info.name) ?? "", description: string(info.description) ?? "", priority: info.priority,
            availability: availability)
    }

    static func sinkInput(_ info: pa_sink_input_info, _ pulse: LibPulse) -> SinkInput {
        func property(_ key: String) -> String? { string(pulse.pa_proplist_gets(info.proplist, key)) }
        return SinkInput(
            index: info.index, sinkIndex: info.sink, isCorked: info.corked != 0, isMuted: info.mute != 0,
            applicationName: property(PA_PROP_APPLICATION_NAME),
            processID: property(PA_PROP_APPLICATION_PROCESS_ID).flatMap { pid_t($0) },
            mediaRole: property(PA_PROP_MEDIA_ROLE), mediaName: string(info.name))
    }
}

/// One awaited answer (or timer), read and written only with the main-loop lock held. Shared by the wrapper's parts
/// (the monitor, the output stream).
final class Reply {
    private let mainloop: OpaquePointer
    private let pulse: LibPulse
    private(set) var isDone = false
    private(set) var succeeded = false

    init(mainloop: OpaquePointer, pulse: LibPulse) {
        self.mainloop = mainloop
        self.pulse = pulse
    }

    func finish(succeeded: Bool) {
        isDone = true
        self.succeeded = succeeded
        pulse.pa_threaded_mainloop_signal(mainloop, 0)
    }
}

extension Reply {
    /// The libpulse wrapper's one bounded wait: sleeps with the main-loop lock held until `done()`, or until
    /// `deadline` (libpulse's real-time clock, µs) passes, woken by a timer on the loop. False when the time ran out
    /// first.
    static func wait(
        _ pulse: LibPulse, mainloop: OpaquePointer, context: OpaquePointer, until deadline: UInt64,
        _ done: () -> Bool
    ) -> Bool {
        guard !done() else { return true }
        let alarm = Reply(mainloop: mainloop, pulse: pulse)
        guard
            let timer = pulse.pa_context_rttime_new(
                context, deadline, alarmCallback, Unmanaged.passUnretained(alarm).toOpaque())
        else { return done() }
        while !done() && !alarm.isDone { pulse.pa_threaded_mainloop_wait(mainloop) }
        pulse.pa_threaded_mainloop_get_api(mainloop)?.pointee.time_free(timer)
        return done()
    }

    private static let alarmCallback: pa_time_event_cb_t = { _, _, _, userdata in
        guard let userdata else { return }
        Unmanaged<Reply>.fromOpaque(userdata).takeUnretainedValue().finish(succeeded: false)
    }
}
