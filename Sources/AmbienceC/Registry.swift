// The C API's handle registry, its error reporting, and the conversions every entry point shares.
//
// Handles are not addresses. An `ambience_engine *` (or sound, or bus) is a number: a 16-bit kind tag in the top
// bits and a serial below it, never reused. The registry maps live handles to their Swift boxes behind one mutex,
// so nothing is ever dereferenced on the caller's say-so: NULL, a destroyed handle (serial issued, no longer live),
// a handle of the wrong kind and garbage are all told apart and answered with a status, never a crash. Because
// serials are never reused, a stale handle can never alias a newer object (which an address, freed and reallocated,
// could). The top-bit tag also makes the value a non-canonical address, so a C program that dereferences a handle
// faults at once instead of reading something plausible.
//
// Voices are plain 64-bit serials mapped to `Voice` values; a voice that is gone (finished, stopped, stolen, or of
// a destroyed engine) is "stale".

import Ambience
import AmbiencePlatform
import CAmbience
import Glibc
import Synchronization

// MARK: - Errors

/// A failed call: the status the C caller sees and the message `ambience_last_error()` gives.
struct APIError: Error {
    let status: ambience_status
    let message: String

    init(_ status: ambience_status, _ message: String) {
        self.status = status
        self.message = message
    }

    static func invalid(_ message: String) -> APIError { APIError(AMBIENCE_ERROR_INVALID_ARGUMENT, message) }
}

extension APIError {
    init(_ error: EngineError) {
        switch error {
        case .decoding: self.init(AMBIENCE_ERROR_DECODING, error.description)
        case .output: self.init(AMBIENCE_ERROR_OUTPUT, error.description)
        case .mixer: self.init(AMBIENCE_ERROR_MIXER, error.description)
        case .outOfMixerMemory: self.init(AMBIENCE_ERROR_OUT_OF_MEMORY, error.description)
        case .notOffline: self.init(AMBIENCE_ERROR_NOT_OFFLINE, error.description)
        case .invalidNumber: self.init(AMBIENCE_ERROR_INVALID_ARGUMENT, error.description)
        case .processExiting: self.init(AMBIENCE_ERROR_SHUT_DOWN, error.description)
        }
    }
}

// MARK: - The thread-local last error

/// Each thread's message: a `malloc`ed C string, freed when replaced or when the thread ends. Made with the first
/// message; the process cannot have used up its keys before the C API's first call, and if it had, errors would go
/// unrecorded rather than crash (`ambience_last_error` then says "").
private let errorKey: ThreadLocalKey? = try? ThreadLocalKey { free($0) }

private func setLastError(_ message: String) {
    guard let errorKey else { return }
    let old = errorKey.value
    let copy = message.withCString { strdup($0) }
    // Refused (no memory for the thread's room): the key keeps the old message, which must stay alive.
    if errorKey.set(copy) { free(old) } else { free(copy) }
}

private func clearLastError() {
    guard let errorKey, let old = errorKey.value, errorKey.set(nil) else { return }
    free(old)
}

private var emptyCString: UnsafePointer<CChar> {
    UnsafeRawPointer(("" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self)
}

@_cdecl("ambience_last_error")
public func ambience_last_error() -> UnsafePointer<CChar> {
    guard let message = errorKey?.value else { return emptyCString }
    return UnsafePointer(message.assumingMemoryBound(to: CChar.self))
}

/// Runs one entry point: records its outcome for `ambience_last_error()` and turns it into a status.
/// (`body` throws untyped only because Swift does not infer typed throws for multi-statement closures.)
func api(_ function: StaticString, _ body: () throws -> Void) -> ambience_status {
    // Another thread is running exit(): return at once, so this thread can be joined, rather than reach an engine
    // that is shutting down (ProcessExit).
    if ProcessExit.mustRefuse {
        setLastError("\(function): the process is exiting")
        return AMBIENCE_ERROR_SHUT_DOWN
    }
    do {
        try body()
        clearLastError()
        return AMBIENCE_OK
    } catch {
        let failure =
            switch error {
            case let failure as APIError: failure
            case let engineError as EngineError: APIError(engineError)
            case let libraryError as LibraryError: APIError(AMBIENCE_ERROR_LIBRARY, libraryError.description)
            case let desktopError as DesktopError: APIError(AMBIENCE_ERROR_UNSUPPORTED, desktopError.description)
            default: APIError.invalid("\(error)")
            }
        setLastError("\(function): \(failure.message)")
        return failure.status
    }
}

// MARK: - Boxes

/// A C callback and its userdata. The engine never reads userdata; it only hands it back.
struct Callback<Function>: @unchecked Sendable {
    let function: Function
    let userdata: UnsafeMutableRawPointer?
}

struct Callbacks: Sendable {
    var routeChange: Callback<ambience_route_change_callback>?
    var interruption: Callback<ambience_interruption_callback>?
    var nowPlaying: Callback<ambience_now_playing_callback>?
    var playbackState: Callback<ambience_playback_state_callback>?
    var silenceHint: Callback<ambience_silence_hint_callback>?
    var playbackError: Callback<ambience_playback_error_callback>?
    var voiceFinished: Callback<ambience_voice_finished_callback>?
    var libraryChanged: Callback<ambience_library_changed_callback>?
    var mediaServices: Callback<ambience_media_services_callback>?
}

/// What an `ambience_engine *` stands for.
final class EngineBox: Sendable {
    let handle: UInt
    let engine: AudioEngine
    /// Handles of master, music, sfx, ui, voice (the order of `ambience_builtin_bus`).
    let builtinBuses: [UInt]
    let hasEffects: Bool
    let callbacks = Lock(Callbacks())
    /// Set by `ambience_engine_shutdown` (and destroy): every later call is refused.
    let isShutDown = Atomic<Bool>(false)
    /// Set by `ambience_engine_destroy`: `ambience_update` stops delivering events.
    let isDestroyed = Atomic<Bool>(false)
    /// `ambience_update` is running (it must not run twice at once, nor re-enter from a callback).
    let isUpdating = Atomic<Bool>(false)
    /// Serializes read-modify-write of the ducking rules.
    let duckingLock = Lock<Void>(())

    init(handle: UInt, engine: AudioEngine, builtinBuses: [UInt]) {
        self.handle = handle
        self.engine = engine
        self.builtinBuses = builtinBuses
        hasEffects = engine.capabilities.effects
    }
}

/// What an `ambience_sound *` stands for. The box holds its `Sound`, so the cache never evicts a sound with a live
/// handle: it plays until `ambience_sound_unload`.
final class SoundBox: Sendable {
    let handle: UInt
    let owner: EngineBox
    let sound: Sound

    init(handle: UInt, owner: EngineBox, sound: Sound) {
        self.handle = handle
        self.owner = owner
        self.sound = sound
    }
}

/// What an `ambience_bus *` stands for.
final class BusBox: Sendable {
    let handle: UInt
    let owner: EngineBox
    let bus: Bus

    init(handle: UInt, owner: EngineBox, bus: Bus) {
        self.handle = handle
        self.owner = owner
        self.bus = bus
    }
}

/// What an `ambience_library *` stands for: a media library the engine's `ambience_update` drains.
final class LibraryBox: Sendable {
    let handle: UInt
    let owner: EngineBox
    let library: MediaLibrary
    /// The last `ambience_library_list`.
    let listing = Lock<[MediaItem]>([])
    /// Unbalanced `begin…ChangeNotifications` calls, ended when the library is closed.
    let notificationDepth = Lock(0)

    init(handle: UInt, owner: EngineBox, library: MediaLibrary) {
        self.handle = handle
        self.owner = owner
        self.library = library
    }

    /// Ends every notification the C caller began, so the watcher thread stops.
    func endAllNotifications() {
        let depth = notificationDepth.withLock { depth in
            defer { depth = 0 }
            return depth
        }
        for _ in 0..<depth { library.endGeneratingLibraryChangeNotifications() }
    }
}

struct VoiceEntry: Sendable {
    let owner: EngineBox
    let voice: Voice
    /// The voice's placement as last set through the C API (the Swift API has no getter), so position and velocity
    /// can be set one at a time.
    var placement: Placement
}

// MARK: - The registry

enum HandleKind: UInt, CustomStringConvertible {
    case engine = 0xA3E0
    case sound = 0xA350
    case bus = 0xA3B0
    case library = 0xA31B

    var description: String {
        switch self {
        case .engine: "engine"
        case .sound: "sound"
        case .bus: "bus"
        case .library: "library"
        }
    }

    static let shift = UInt(UInt.bitWidth - 16)
    static let serialMask: UInt = (1 << shift) - 1

    func handle(serial: UInt) -> UInt { rawValue << HandleKind.shift | (serial & HandleKind.serialMask) }
}

struct RegistryState {
    var engines: [UInt: EngineBox] = [:]
    var sounds: [UInt: SoundBox] = [:]
    var buses: [UInt: BusBox] = [:]
    var libraries: [UInt: LibraryBox] = [:]
    /// The live C handle of each loaded `Sound`, so loading a file twice gives the same handle.
    var soundHandles: [ObjectIdentifier: UInt] = [:]
    var voices: [UInt64: VoiceEntry] = [:]
    var voiceIDs: [Voice: UInt64] = [:]
    /// Serials are shared by every kind and never reused.
    var nextSerial: UInt = 1
    var nextVoice: UInt64 = 1
    /// Voice-table size at which `ambience_update` sweeps out dead voices.
    var voiceSweepAt = 1024

    mutating func serial() -> UInt {
        defer { nextSerial += 1 }
        return nextSerial
    }

    mutating func addVoice(_ voice: Voice, owner: EngineBox, placement: Placement) -> UInt64 {
        let id = nextVoice
        nextVoice += 1
        voices[id] = VoiceEntry(owner: owner, voice: voice, placement: placement)
        voiceIDs[voice] = id
        return id
    }

    mutating func removeVoice(_ id: UInt64) {
        if let entry = voices.removeValue(forKey: id), voiceIDs[entry.voice] == id { voiceIDs[entry.voice] = nil }
    }

    /// Removes an engine and everything that belongs to it; returns the box and its libraries (whose notifications
    /// the caller ends, outside the lock).
    mutating func removeEngine(_ handle: UInt) -> (EngineBox, [LibraryBox])? {
        guard let box = engines.removeValue(forKey: handle) else { return nil }
        let ownLibraries = libraries.values.filter { $0.owner === box }
        for library in ownLibraries { libraries[library.handle] = nil }
        for (key, sound) in sounds where sound.owner === box {
            sounds[key] = nil
            soundHandles[ObjectIdentifier(sound.sound)] = nil
        }
        for (key, bus) in buses where bus.owner === box { buses[key] = nil }
        for (id, entry) in voices where entry.owner === box { removeVoice(id) }
        return (box, ownLibraries)
    }

    func libraries(of box: EngineBox) -> [LibraryBox] { libraries.values.filter { $0.owner === box } }
}

let registry = Lock(RegistryState())

/// Takes part in the process's exit once (`ProcessExit`, which every engine joins): engines still alive when the
/// program exits are shut down and released, so the output device is closed and the session's exit rule applies even
/// when the program forgot, and nothing of theirs is left running while the process ends.
let exitStepAdded: Bool = {
    _ = ProcessExit.add(ProcessExit.Participant(shutDown: destroyAllEngines, waitOutCallers: {}))
    return true
}()

@Sendable func destroyAllEngines() {
    let removed = registry.withLock { state in state.engines.keys.compactMap { state.removeEngine($0) } }
    for (box, libraries) in removed {
        for library in libraries { library.endAllNotifications() }
        box.isDestroyed.store(true, ordering: .releasing)
        box.isShutDown.store(true, ordering: .releasing)
        box.engine.shutdown()
    }
}

// MARK: - Looking handles up

private func lookup<Box>(
    _ pointer: OpaquePointer?, _ kind: HandleKind, _ what: String,
    _ table: (RegistryState) -> [UInt: Box]
) throws(APIError) -> Box {
    guard let pointer else { throw APIError(AMBIENCE_ERROR_NULL_HANDLE, "\(what) is NULL") }
    let value = UInt(bitPattern: pointer)
    let serial = value & HandleKind.serialMask
    let hex = "0x" + String(value, radix: 16)
    guard value >> HandleKind.shift == kind.rawValue, serial != 0 else {
        throw APIError.invalid("\(what) (\(hex)) is not an ambience \(kind) handle")
    }
    let (box, issued) = registry.withLock { state in (table(state)[value], serial < state.nextSerial) }
    if let box { return box }
    if issued { throw APIError(AMBIENCE_ERROR_DESTROYED_HANDLE, "\(what) (\(hex)) was destroyed") }
    throw APIError.invalid("\(what) (\(hex)) is not an ambience \(kind) handle")
}

private func checkRunning(_ box: EngineBox) throws(APIError) {
    if box.isShutDown.load(ordering: .acquiring) {
        throw APIError(AMBIENCE_ERROR_SHUT_DOWN, "the engine was shut down")
    }
}

/// The engine behind a handle, which must not be shut down.
func engineBox(_ pointer: OpaquePointer?, allowShutDown: Bool = false) throws(APIError) -> EngineBox {
    let box = try lookup(pointer, .engine, "engine", { $0.engines })
    if !allowShutDown { try checkRunning(box) }
    return box
}

func soundBox(_ pointer: OpaquePointer?) throws(APIError) -> SoundBox {
    let box = try lookup(pointer, .sound, "sound", { $0.sounds })
    try checkRunning(box.owner)
    return box
}

func busBox(_ pointer: OpaquePointer?, _ what: String = "bus") throws(APIError) -> BusBox {
    let box = try lookup(pointer, .bus, what, { $0.buses })
    try checkRunning(box.owner)
    return box
}

func libraryBox(_ pointer: OpaquePointer?) throws(APIError) -> LibraryBox {
    let box = try lookup(pointer, .library, "library", { $0.libraries })
    try checkRunning(box.owner)
    return box
}

/// The live entry of a voice, or `.stale`.
func voiceEntry(_ id: UInt64) throws(APIError) -> VoiceEntry {
    let (entry, issued) = registry.withLock { state in (state.voices[id], id < state.nextVoice) }
    guard let entry else {
        if id == 0 { throw APIError(AMBIENCE_ERROR_STALE_VOICE, "AMBIENCE_VOICE_NONE is not a voice") }
        if issued { throw staleVoice(id) }
        throw APIError.invalid("voice \(id) was never returned by ambience_play")
    }
    try checkRunning(entry.owner)
    return entry
}

func staleVoice(_ id: UInt64) -> APIError {
    APIError(AMBIENCE_ERROR_STALE_VOICE, "voice \(id) has finished, was stopped or was stolen")
}

/// Runs a Swift voice call; a `.stale` answer forgets the voice and reports it.
func voiceCall(_ id: UInt64, _ body: (VoiceEntry) -> VoiceResult) throws(APIError) {
    let entry = try voiceEntry(id)
    switch body(entry) {
    case .ok: return
    case .stale:
        registry.withLock { $0.removeVoice(id) }
        throw staleVoice(id)
    case .invalid(let refusal):
        throw APIError.invalid(refusal.description)
    }
}

/// Drops voices that have ended without an event (stopped, or finished while nobody looked), once the table has
/// doubled since the last sweep. Liveness is checked outside the registry lock.
func sweepVoices() {
    let candidates: [(UInt64, Voice)] = registry.withLock { state in
        guard state.voices.count >= state.voiceSweepAt else { return [] }
        return state.voices.map { ($0.key, $0.value.voice) }
    }
    guard !candidates.isEmpty else { return }
    let dead = candidates.filter { !$0.1.isAlive }.map(\.0)
    registry.withLock { state in
        for id in dead { state.removeVoice(id) }
        state.voiceSweepAt = max(1024, state.voices.count * 2)
    }
}

// MARK: - Arguments

/// A required UTF-8 string argument.
func string(_ pointer: UnsafePointer<CChar>?, _ what: String) throws(APIError) -> String {
    guard let pointer else { throw APIError.invalid("\(what) is NULL") }
    guard let value = String(validatingCString: pointer) else {
        throw APIError(AMBIENCE_ERROR_INVALID_UTF8, "\(what) is not valid UTF-8")
    }
    return value
}

/// An optional UTF-8 string argument (NULL gives nil).
func optionalString(_ pointer: UnsafePointer<CChar>?, _ what: String) throws(APIError) -> String? {
    guard let pointer else { return nil }
    return try string(pointer, what)
}

/// An array of `count` UTF-8 strings.
func strings(_ pointer: UnsafePointer<UnsafePointer<CChar>?>?, count: Int, _ what: String) throws(APIError) -> [String]
{
    guard count >= 0, count <= 1 << 24 else {
        throw APIError.invalid("\(what): count \(UInt(bitPattern: count)) is too large")
    }
    guard count > 0 else { return [] }
    guard let pointer else { throw APIError.invalid("\(what) is NULL but count is \(count)") }
    var result: [String] = []
    result.reserveCapacity(count)
    for i in 0..<count { result.append(try string(pointer[i], "\(what)[\(i)]")) }
    return result
}

func output<T>(_ pointer: UnsafeMutablePointer<T>?, _ what: String) throws(APIError) -> UnsafeMutablePointer<T> {
    guard let pointer else { throw APIError.invalid("\(what) is NULL") }
    return pointer
}

/// Runs an engine call whose numbers the engine checks (`MixerLimits`): its refusal becomes
/// AMBIENCE_ERROR_INVALID_ARGUMENT, so C and Swift accept and clamp exactly the same values.
func checked<T>(_ body: () throws(InvalidNumber) -> T) throws(APIError) -> T {
    do { return try body() } catch { throw APIError.invalid(error.description) }
}

/// Copies a string into the caller's buffer under the API's one rule (see "Ownership" in ambience.h).
func copyOut(
    _ value: String, _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int,
    _ required: UnsafeMutablePointer<Int>?
) throws(APIError) {
    guard size >= 0 else { throw APIError.invalid("buffer_size \(UInt(bitPattern: size)) is too large") }
    let bytes = Array(value.utf8)
    required?.pointee = bytes.count + 1
    guard let buffer else {
        if size == 0 { return }
        throw APIError.invalid("buffer is NULL but buffer_size is \(size)")
    }
    guard size > 0 else {
        throw APIError(AMBIENCE_ERROR_BUFFER_TOO_SMALL, "buffer_size 0, \(bytes.count + 1) bytes needed")
    }
    var count = min(bytes.count, size - 1)
    if count < bytes.count {
        // Cut at a character boundary: never leave half a UTF-8 sequence.
        while count > 0 && bytes[count] & 0xC0 == 0x80 { count -= 1 }
    }
    bytes.withUnsafeBufferPointer { source in
        if count > 0, let base = source.baseAddress { memcpy(buffer, base, count) }
    }
    buffer[count] = 0
    if count < bytes.count {
        throw APIError(AMBIENCE_ERROR_BUFFER_TOO_SMALL, "buffer_size \(size), \(bytes.count + 1) bytes needed")
    }
}

/// Calls `body` with a C string for an optional Swift string (NULL for nil).
func withOptionalCString<R>(_ value: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let value else { return body(nil) }
    return value.withCString { body($0) }
}
