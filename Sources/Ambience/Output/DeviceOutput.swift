import Foundation
import Synchronization

/// Real-time output: an SDL audio device pulling blocks from the mixer, or, when no device is left, a null output
/// that renders at real-time pace into nothing so that time (music, voices) still advances.
///
/// Reopening the device keeps the mixer — the OpenAL loopback device with its buffers, sources and voice positions —
/// untouched: nothing is reloaded. Called from the game thread only.
final class DeviceOutput: @unchecked Sendable {
    private let sampleRate: Int
    private let blockFrames: Int
    private let appName: String
    private let deviceName: String?
    private let renderer: MixerRenderer
    private var device: SDLAudioDevice?
    private var null: NullOutput?
    private var lastProbe = 0

    init(mixer: Mixer, sampleRate: Int, blockFrames: Int, deviceName: String?, appName: String) throws(OutputError) {
        self.sampleRate = sampleRate
        self.blockFrames = blockFrames
        self.appName = appName
        self.deviceName = deviceName
        renderer = MixerRenderer(mixer: mixer)
        device = try SDLAudioDevice(sampleRate: sampleRate, blockFrames: blockFrames, deviceName: deviceName, appName: appName, renderer: renderer)
    }

    deinit { close() }

    var driver: String { device?.driver ?? "null" }

    /// Where the audio goes now.
    var route: AudioRoute {
        guard let device else { return .none }
        return AudioRoute(name: device.deviceName, driver: device.driver)
    }

    /// Whether the device is still there. SDL marks a device that died (its sink removed, its card unplugged) stopped.
    var isDeviceAlive: Bool { device?.isAlive ?? false }
    var isNull: Bool { device == nil }

    /// Closes the current device and opens the system default. Falls back to the null output when nothing opens.
    @discardableResult
    func followDefaultDevice() -> Bool {
        device?.close()
        device = nil
        do {
            device = try SDLAudioDevice(sampleRate: sampleRate, blockFrames: blockFrames, deviceName: deviceName, appName: appName, renderer: renderer)
            null?.stop()
            null = nil
            return true
        } catch {
            renderToNull()
            return false
        }
    }

    /// With no device, whether it is time to look for one again (twice a second: opening costs milliseconds).
    func isProbeDue() -> Bool {
        let now = monotonicNanoseconds()
        guard now - lastProbe > 500_000_000 else { return false }
        lastProbe = now
        return true
    }

    /// Renders into nothing at real-time pace.
    func renderToNull() {
        device?.close()
        device = nil
        if null == nil {
            let output = NullOutput(renderer: renderer, sampleRate: sampleRate, blockFrames: blockFrames)
            output.start()
            null = output
        }
    }

    func close() {
        device?.close()
        device = nil
        null?.stop()
        null = nil
    }
}

/// Connects the audio thread to the mixer, counting blocks that took longer than real time as underruns.
final class MixerRenderer: AudioRenderCallback {
    let mixer: Mixer
    init(mixer: Mixer) { self.mixer = mixer }

    func renderAudio(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        let start = monotonicNanoseconds()
        mixer.render(into: buffer, frames: frames)
        let budget = frames * 1_000_000_000 / mixer.configuration.sampleRate
        if monotonicNanoseconds() - start > budget { mixer.underruns.add(1, ordering: .relaxed) }
    }
}

/// A render thread paced by the clock, for when there is no device at all.
final class NullOutput: Sendable {
    private let renderer: MixerRenderer
    private let sampleRate: Int
    private let blockFrames: Int
    private let running = Atomic<Bool>(false)
    private let finished = Lock<Bool>(true)

    init(renderer: MixerRenderer, sampleRate: Int, blockFrames: Int) {
        self.renderer = renderer
        self.sampleRate = sampleRate
        self.blockFrames = blockFrames
    }

    func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finished.withLock { $0 = false }
        let thread = Thread { [self] in
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames * 2)
            defer { buffer.deallocate() }
            let blockNanos = blockFrames * 1_000_000_000 / sampleRate
            var due = monotonicNanoseconds()
            while running.load(ordering: .relaxed) {
                renderer.renderAudio(into: buffer, frames: blockFrames)
                due += blockNanos
                let wait = due - monotonicNanoseconds()
                if wait > 0 { usleep(UInt32(wait / 1000)) } else { due = monotonicNanoseconds() }
            }
            finished.withLock { $0 = true }
        }
        thread.name = "ambience.null-output"
        thread.start()
    }

    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        while !finished.withLock({ $0 }) { usleep(1_000) }
    }
}
