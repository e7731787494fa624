import AmbienceCore
import AmbiencePlatform
import CSDL2
import Synchronization

// The only file that calls SDL's audio API.

/// Something that fills audio blocks on the audio thread.
protocol AudioRenderCallback: AnyObject, Sendable {
    func renderAudio(into buffer: UnsafeMutablePointer<Float>, frames: Int)
}

/// An open SDL audio device pulling stereo float blocks from a render callback.
///
/// Opening and closing go through one `BoundedCallLane`: SDL's PulseAudio driver waits on the server without a bound, so a
/// frozen server would otherwise hang the engine's start, a reopen after a route change, or the game's exit.
final class SDLAudioDevice: @unchecked Sendable {
    /// How long opening a device may take, SDL's start included (its first start registers on the session bus).
    static let openSeconds = 5.0
    /// How long closing may take before the device is left behind.
    static let closeSeconds = 2.0
    /// Where SDL's audio devices are opened and closed, one call at a time.
    private static let lane = BoundedCallLane(name: "ambience-sdl-audio")

    private(set) var id: SDL_AudioDeviceID = 0
    private(set) var driver = ""
    private(set) var deviceName = ""
    let sampleRate: Int
    let blockFrames: Int
    /// What SDL's callback reaches, retained until SDL has closed the device.
    private let target: CallbackTarget
    /// SDL's audio thread, raised from another thread once its first block gave its id (AudioThreadPriority.swift).
    var audioThread: AudioThreadRaise { target.audioThread }

    /// Opens the default device (or `deviceName`) at `sampleRate`, stereo float, `blockFrames` per callback.
    /// Tries `SDL_AUDIODRIVER` if set, else PulseAudio, PipeWire and ALSA, and falls back to SDL's `dummy` driver.
    /// `awaitingNewDevice`: the engine is starting, and the device it names may have only just appeared (see
    /// `SDLAudio.open`); a reopen after a route change does not wait for a device that has gone.
    /// `busForStart`: the session bus SDL is to start on instead of its own, nil for its own (`SDLAudio.startAudio`).
    /// `threadPolicy`: what is asked for SDL's audio thread, through the grantor `grantor` makes (`AudioThreadRaise`).
    init(
        sampleRate: Int, blockFrames: Int, deviceName: String? = nil, appName: String, awaitingNewDevice: Bool = false,
        busForStart: @escaping @Sendable () -> String?, threadPolicy: AudioThreadPolicy,
        grantor: @escaping @Sendable () -> any PriorityGranting, renderer: AudioRenderCallback
    ) throws(OutputError) {
        self.sampleRate = sampleRate
        self.blockFrames = blockFrames
        let target = CallbackTarget(
            renderer: renderer, audioThread: AudioThreadRaise(output: "SDL", policy: threadPolicy, grantor: grantor))
        self.target = target
        let userdata = target.retainForSDL()
        // A new device's name is waited for until just before the caller gives up: under load SDL's hotplug thread
        // lagged past a fixed second, and the engine failed on a sink that was there.
        let nameDeadline = awaitingNewDevice ? monotonicDeadline(afterSeconds: Self.openSeconds - 0.5) : nil
        let opened = Self.lane.run(
            seconds: Self.openSeconds,
            {
                Result { () throws(OutputError) in
                    try SDLAudio.open(
                        deviceName: deviceName, appName: appName, sampleRate: sampleRate, blockFrames: blockFrames,
                        awaitingNewDeviceUntil: nameDeadline, busForStart: busForStart, userdata: userdata)
                }
            },
            late: { result in
                // Opened after the engine gave up: nobody will use it. It is still paused, so no callback ran.
                guard case .success((_, let id)) = result else { return target.release() }
                SDL_CloseAudioDevice(id)
                SDLAudio.release()
                target.release()
            })
        guard let opened else {
            // No callback ran: the device is paused until opened, and one opened late is closed paused.
            target.audioThread.threadEnded()
            throw .notAnswering(seconds: Self.openSeconds)
        }
        do {
            (driver, id) = try opened.get()
        } catch {
            target.audioThread.threadEnded()
            target.release()
            throw error
        }
        self.deviceName = deviceName ?? SDLAudio.defaultDeviceName() ?? "default"
        SDL_PauseAudioDevice(id, 0)
    }

    deinit { close() }

    /// Stops the callback and closes the device. Safe to call twice. Returns within `closeSeconds`: a device that
    /// SDL cannot close by then (its server frozen) is left behind with its thread, and its callback is never called
    /// again (it is paused here first).
    func close() {
        target.audioThread.stopAsking()
        guard id != 0 else { return }
        let (id, target) = (self.id, self.target)
        self.id = 0
        // The program shut SDL down under the engine (SDL_Quit, at its exit, before the engine's): SDL closed the
        // device and joined its thread then, and a second close would free it again.
        guard SDL_WasInit(Uint32(SDL_INIT_AUDIO)) != 0 else {
            SDLAudio.release(shutDownUnderUs: true)
            target.audioThread.threadEnded()
            target.release()
            return
        }
        // Held back here, not on the lane: a lane stuck in an earlier call must not leave the callback rendering from
        // a mixer that is about to close. Bounded: it takes only SDL's device lock, which the callback holds briefly.
        SDL_PauseAudioDevice(id, 1)
        // The thread leaves the watchdog once SDL_CloseAudioDevice has joined it, even late: a device left behind
        // keeps its (paused) thread, which stays watched.
        let closed: Void? = Self.lane.run(seconds: Self.closeSeconds) {
            SDL_CloseAudioDevice(id)
            target.audioThread.threadEnded()
            SDLAudio.release()
            target.release()
        }
        if closed == nil {
            Log.warning(
                "SDL did not close the audio device '\(deviceName)' within \(Self.closeSeconds) s (is the sound server "
                    + "frozen?); it is left behind")
        }
    }

    /// Whether SDL still considers the device usable.
    var isAlive: Bool { id != 0 && SDL_GetAudioDeviceStatus(id) != SDL_AUDIO_STOPPED }

    /// Runs `body` while SDL holds the callback back (`SDL_LockAudioDevice`).
    func withCallbackLocked(_ body: () -> Bool) -> Bool {
        guard id != 0 else { return body() }
        SDL_LockAudioDevice(id)
        defer { SDL_UnlockAudioDevice(id) }
        return body()
    }

    func setPaused(_ paused: Bool) { if id != 0 { SDL_PauseAudioDevice(id, paused ? 1 : 0) } }
}

/// The renderer as SDL's callback sees it. SDL's pointer holds a retain of its own, given back by `release()` once
/// SDL has closed the device (or never opened it), so a close that never finishes leaves nothing dangling.
private final class CallbackTarget: Sendable {
    private let renderer: AudioRenderCallback
    let audioThread: AudioThreadRaise

    init(renderer: AudioRenderCallback, audioThread: AudioThreadRaise) {
        self.renderer = renderer
        self.audioThread = audioThread
    }

    /// The pointer SDL's callback gets, as a bit pattern (an integer crosses to the opening thread), with a retain.
    func retainForSDL() -> UInt { UInt(bitPattern: Unmanaged.passRetained(self).toOpaque()) }

    func release() { Unmanaged.passUnretained(self).release() }

    fileprivate func fill(_ stream: UnsafeMutablePointer<UInt8>, bytes: Int) {
        // SDL's thread has no hook before its first block: its id is taken there, once (see AudioThreadRaise).
        audioThread.recordIfNeeded()
        let frames = bytes / (2 * MemoryLayout<Float>.size)
        stream.withMemoryRebound(to: Float.self, capacity: frames * 2) {
            renderer.renderAudio(into: $0, frames: frames)
        }
    }
}

/// SDL's audio subsystem is process-wide: one driver for every device.
package enum SDLAudio {
    /// The engine's own reference on SDL's audio subsystem.
    private enum Reference {
        case none
        /// The engine started SDL's audio: kept for the life of the process (stopping and starting SDL's PulseAudio
        /// driver again is what crashed SDL 2.26 with no sink).
        case sole
        /// The program had started it: one more reference while the engine has devices open, given back after the
        /// last, so the program's own quit ends SDL's audio as it expects (pygame checks `SDL_WasInit`).
        case onTop
    }

    /// Open devices, their driver, the engine's reference on SDL's audio, and whether the program shut SDL's audio
    /// down under the engine's devices (SDL_Quit).
    private static let state = Lock<(users: Int, driver: String?, reference: Reference, shutDownUnderUs: Bool)>(
        (0, nil, .none, false))

    static let callback: SDL_AudioCallback = { userdata, stream, length in
        guard let userdata, let stream, length > 0 else { return }
        Unmanaged<CallbackTarget>.fromOpaque(userdata).takeUnretainedValue().fill(stream, bytes: Int(length))
    }

    /// Keeps SDL from installing its SIGINT/SIGTERM handlers (which only post an SDL_QUIT that a game without an
    /// SDL event loop never reads) when it first starts its event subsystem, which opening audio does: the signals
    /// stay the engine's (or, when the game opts out, the program's). A host that starts SDL's events before the
    /// engine keeps SDL's handlers.
    package static func leaveTerminationSignalsToTheEngine() {
        SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1")
    }

    static func open(
        deviceName: String?, appName: String, sampleRate: Int, blockFrames: Int, awaitingNewDeviceUntil: Int?,
        busForStart: () -> String?, userdata: UInt
    ) throws(OutputError) -> (String, SDL_AudioDeviceID) {
        let result: Result<(String, SDL_AudioDeviceID), OutputError> = state.withLock { state in
            SDL_SetHint(SDL_HINT_AUDIO_DEVICE_APP_NAME, appName)
            SDL_SetHint(SDL_HINT_APP_NAME, appName)
            // The stream says it is a game's (media.role), so other apps and our own monitor can tell it from music.
            // SDL 2.26 gives the hint to PipeWire only; its pulseaudio driver takes the role from PULSE_PROP.
            SDL_SetHint(SDL_HINT_AUDIO_DEVICE_STREAM_ROLE, "game")
            // The engine's own reference on SDL's audio, even when the program started it first: a program that
            // quits its audio subsystem (SDL counts the references) while the engine plays leaves its devices open. A whole
            // SDL_Quit ignores the count: the engine does not start SDL again behind the program's back (it renders
            // to nothing), until the program starts SDL's audio itself.
            let started = SDL_WasInit(Uint32(SDL_INIT_AUDIO)) != 0
            if !started && state.shutDownUnderUs {
                return .failure(.sdl("the program shut SDL's audio down (SDL_Quit)"))
            }
            if started && state.shutDownUnderUs { (state.reference, state.shutDownUnderUs) = (.none, false) }
            if !started {
                ProcessEnvironment.addPulseProperty("media.role", "game")
                guard startAudio(onBus: busForStart()) == 0 else { return .failure(.sdl(lastError())) }
                state.reference = .sole
            } else if case .none = state.reference {
                guard SDL_InitSubSystem(Uint32(SDL_INIT_AUDIO)) == 0 else { return .failure(.sdl(lastError())) }
                state.reference = .onTop
            }
            var want = SDL_AudioSpec()
            want.freq = Int32(sampleRate)
            want.format = SDL_AudioFormat(AUDIO_F32SYS)
            want.channels = 2
            want.samples = Uint16(clamping: blockFrames)
            want.callback = callback
            want.userdata = UnsafeMutableRawPointer(bitPattern: userdata)
            var candidates: [String]
            if let current = state.driver, state.users > 0 {
                candidates = [current]
            } else if let chosen = ProcessEnvironment.value("SDL_AUDIODRIVER"), !chosen.isEmpty {
                candidates = [chosen, "dummy"]
            } else {
                candidates = ["pulseaudio", "pipewire", "alsa", "dummy"]
            }
            for driver in candidates {
                // Switch drivers only when needed: re-initialising SDL's PulseAudio driver while the server has no
                // sink at all crashes inside SDL 2.26 (it reads the missing default sink's name).
                let current = SDL_GetCurrentAudioDriver().map { String(cString: $0) }
                if state.users == 0 && current != driver {
                    SDL_AudioQuit()
                    guard SDL_AudioInit(driver) == 0 else { continue }
                } else if let awaitingNewDeviceUntil, let deviceName, driver != "dummy" {
                    // A driver started earlier learns of new devices on SDL's hotplug thread, which can lag behind a
                    // device that has just appeared: wait for the name (until the deadline) before opening it.
                    awaitDevice(named: deviceName, until: awaitingNewDeviceUntil)
                }
                var have = SDL_AudioSpec()
                let id = SDL_OpenAudioDevice(deviceName, 0, &want, &have, 0)
                if id > 0 {
                    state.users += 1
                    state.driver = driver
                    return .success((driver, id))
                }
            }
            return .failure(.noDriver(tried: candidates))
        }
        return try result.get()
    }

    /// Starts SDL's audio, keeping SDL off a session bus that does not answer. SDL 2.26 joins the session bus (and
    /// through it rtkit, for its audio thread's priority) the first time any of its subsystems starts, inside
    /// libdbus's global lock and without a bound: a frozen bus (SIGSTOP, a socket that never accepts) hung the start,
    /// and every later libdbus call in the process waited behind that lock. So the bus is asked first, within the
    /// desktop timeout. Only when it does not answer does SDL get an address where nothing listens, for this call
    /// only: it fails at once and stays off the bus for the life of the process (its audio thread then runs without
    /// rtkit's priority, the price of not hanging). A healthy bus costs one extra connection, a millisecond or two.
    /// The variable is set around the call with `setenv`, which another thread's `getenv` could race; the engine
    /// reads the bus address before, and a game that starts SDL's video first keeps SDL's bus use as it was.
    /// The desktop layer asks the bus (`busForStart`, from the engine): nil leaves SDL's bus as it is, an address
    /// replaces it for this call.
    private static func startAudio(onBus replacement: String?) -> Int32 {
        guard let replacement else { return SDL_InitSubSystem(Uint32(SDL_INIT_AUDIO)) }
        return ProcessEnvironment.withVariable("DBUS_SESSION_BUS_ADDRESS", setTo: replacement) {
            SDL_InitSubSystem(Uint32(SDL_INIT_AUDIO))
        }
    }

    /// One device fewer; `shutDownUnderUs`: SDL's audio was found shut down when it was closed.
    static func release(shutDownUnderUs: Bool = false) {
        state.withLock { state in
            if shutDownUnderUs { state.shutDownUnderUs = true }
            state.users -= 1
            guard state.users == 0 else { return }
            state.driver = nil
            if case .onTop = state.reference, !shutDownUnderUs {
                SDL_QuitSubSystem(Uint32(SDL_INIT_AUDIO))
                state.reference = .none
            }
        }
    }

    static func defaultDeviceName() -> String? {
        var name: UnsafeMutablePointer<CChar>? = nil
        var spec = SDL_AudioSpec()
        guard SDL_GetDefaultAudioInfo(&name, &spec, 0) == 0, let name else { return nil }
        defer { SDL_free(name) }
        return String(cString: name)
    }

    /// Returns once SDL lists a playback device of that name, or at `deadline` (monotonic nanoseconds).
    private static func awaitDevice(named name: String, until deadline: Int) {
        while !deviceNames().contains(name) && monotonicNanoseconds() < deadline {
            sleepUntil(monotonicNanoseconds: monotonicNanoseconds() + 10_000_000)
        }
    }

    /// Names of the playback devices SDL can see.
    static func deviceNames() -> [String] {
        (0..<max(SDL_GetNumAudioDevices(0), 0)).compactMap { SDL_GetAudioDeviceName($0, 0).map { String(cString: $0) } }
    }

    static func lastError() -> String { String(cString: SDL_GetError()) }
}
