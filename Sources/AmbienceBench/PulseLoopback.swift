import Ambience
import AmbiencePlatform
import CPulse
import Synchronization

// The benchmark's own use of libpulse (its simple API): recording the sink's monitor, and the direct client whose
// clicks measure what the server and the recorder add. The engine's libpulse code stays in the Ambience library.
// libpulse-simple is opened at run time, as the engine opens libpulse, so the `ambience` command starts without it.

private let pulseSimple = OptionalLibrary<ambience_pulse_simple_functions>(
    name: "libpulse-simple.so.0", feature: "the latency bench's recorder and reference client",
    names: String(cString: ambience_pulse_simple_function_names()))

private func pulseSimpleFunctions() throws(BenchError) -> ambience_pulse_simple_functions {
    do { return try pulseSimple.functions() } catch { throw .pulse(error.description) }
}

private func pulseMessage(_ pulse: ambience_pulse_simple_functions, _ error: Int32) -> String {
    pulse.pa_strerror(error).map { String(cString: $0) } ?? "libpulse error \(error)"
}

/// What a monitor recording holds: mono samples, and every read's frame count and return time.
struct MonitorRecording: Sendable {
    var samples: [Float] = []
    var reads: [(frames: Int, nanoseconds: Int)] = []
}

/// Records the default sink's monitor (`@DEFAULT_MONITOR@`) as mono float, in small fragments, on a thread of its
/// own, timing each read on CLOCK_MONOTONIC.
final class MonitorRecorder: @unchecked Sendable {
    let sampleRate: Int
    let fragmentFrames: Int
    private let pulse: ambience_pulse_simple_functions
    private let stream: OpaquePointer
    private let recording = Mutex(MonitorRecording())
    private var worker: WorkerThread?

    init(sampleRate: Int, fragmentFrames: Int = 64, seconds: Double) throws(BenchError) {
        self.sampleRate = sampleRate
        self.fragmentFrames = fragmentFrames
        let pulse = try pulseSimpleFunctions()
        self.pulse = pulse
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(sampleRate), channels: 1)
        let fragmentBytes = UInt32(fragmentFrames * MemoryLayout<Float>.size)
        var attributes = pa_buffer_attr(
            maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max, minreq: UInt32.max,
            fragsize: fragmentBytes)
        var error: Int32 = 0
        guard
            let stream = pulse.pa_simple_new(
                nil, "ambience-bench", PA_STREAM_RECORD, "@DEFAULT_MONITOR@", "latency recorder",
                &spec, nil, &attributes, &error)
        else {
            throw .pulse("cannot record the default sink's monitor: \(pulseMessage(pulse, error))")
        }
        self.stream = stream
        let capacity = Int(max(seconds, 1) * Double(sampleRate))
        recording.withLock {
            $0.samples.reserveCapacity(capacity); $0.reads.reserveCapacity(capacity / fragmentFrames + 1)
        }
    }

    deinit {
        stop()
        pulse.pa_simple_free(stream)
    }

    func start() {
        guard worker == nil else { return }
        let unmanaged = Unmanaged.passUnretained(self)
        worker = WorkerThread(name: "ambience-recorder") { control in
            let recorder = unmanaged.takeUnretainedValue()
            var fragment = [Float](repeating: 0, count: recorder.fragmentFrames)
            var error: Int32 = 0
            while !control.isStopRequested {
                let status = fragment.withUnsafeMutableBytes {
                    recorder.pulse.pa_simple_read(recorder.stream, $0.baseAddress, $0.count, &error)
                }
                let now = monotonicNanoseconds()
                guard status >= 0 else { break }
                recorder.recording.withLock { r in
                    r.samples.append(contentsOf: fragment)
                    r.reads.append((r.samples.count, now))
                }
            }
        }
    }

    /// Waits until the first fragment has arrived (the monitor is flowing), up to `seconds`; whether it has.
    func waitForData(seconds: Double) -> Bool {
        let deadline = monotonicDeadline(afterSeconds: seconds)
        while monotonicNanoseconds() < deadline {
            if recording.withLock({ !$0.reads.isEmpty }) { return true }
            sleepUntil(monotonicNanoseconds: monotonicNanoseconds() + 5_000_000)
        }
        return false
    }

    /// Stops recording (within a fragment) and hands over what was recorded.
    @discardableResult
    func stop() -> MonitorRecording {
        worker?.stop()
        worker = nil
        return recording.withLock { $0 }
    }
}

/// The reference client: a libpulse playback stream holding one period, written straight from this thread. Its
/// clicks go out in the first frame of the next period written, with nothing between the call and the server.
enum DirectPulseClient {
    static func run(periodFrames: Int, sampleRate: Int, click: [Float], plan: () -> [Int]) throws(BenchError)
        -> LatencyClientResult
    {
        let pulse = try pulseSimpleFunctions()
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(sampleRate), channels: 1)
        let periodBytes = UInt32(periodFrames * MemoryLayout<Float>.size)
        var attributes = pa_buffer_attr(
            maxlength: UInt32.max, tlength: periodBytes, prebuf: UInt32.max, minreq: UInt32.max,
            fragsize: UInt32.max)
        var error: Int32 = 0
        guard
            let stream = pulse.pa_simple_new(
                nil, "ambience-bench", PA_STREAM_PLAYBACK, nil, "latency reference", &spec, nil,
                &attributes, &error)
        else {
            throw .pulse("cannot open a playback stream: \(pulseMessage(pulse, error))")
        }
        defer { pulse.pa_simple_free(stream) }
        var block = [Float](repeating: 0, count: periodFrames)
        var result = LatencyClientResult(driver: "libpulse (pa_simple)")
        var next = 0
        let schedule = plan()
        let end = (schedule.last ?? monotonicNanoseconds()) + LatencyClient.tailNanoseconds
        while monotonicNanoseconds() < end {
            for i in block.indices { block[i] = 0 }
            let now = monotonicNanoseconds()
            if next < schedule.count, now >= schedule[next] {
                for (i, v) in click.prefix(periodFrames).enumerated() { block[i] = v }
                result.triggers.append(now)
                next += 1
            }
            let status = block.withUnsafeBytes { pulse.pa_simple_write(stream, $0.baseAddress, $0.count, &error) }
            guard status >= 0 else { throw .pulse("write: \(pulseMessage(pulse, error))") }
            result.callbacks += 1
        }
        return result
    }
}
