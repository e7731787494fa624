import Ambience
import AmbiencePlatform
import CSDLMixerABI
import Glibc
import Synchronization

/// What the program opened: the format `Mix_QuerySpec` reports and `Mix_Chunk.abuf` holds. The engine mixes at
/// `frequency`; `format` and `channels` are the program's, converted on load.
struct OutputSpec: Equatable {
    var frequency: Int
    var format: SampleFormat
    var channels: Int
}

/// The open device: one engine, the thread that drives it, and how many `Mix_OpenAudio` calls it answers.
struct OpenDevice {
    let engine: AudioEngine
    let spec: OutputSpec
    /// Counts opens, as SDL_mixer does: `Mix_CloseAudio` closes when it reaches 0.
    var openCount: Int
    /// Tells one opening's engine from the next, so sounds made for an engine that is gone are made again.
    let generation: Int
    let updates: WorkerThread
}

/// Everything the stand-in knows, under one lock (`StandIn.state`). Engine calls are made under it (the engine never
/// calls back into the stand-in); the program's callbacks are never called under it.
struct MixerState {
    var device: OpenDevice?
    var openings = 0
    /// Mix_Init's flags that were asked for and are available.
    var initialized: Int32 = 0
    var channels = ChannelTable()
    var chunks = ChunkRegistry()
    /// Mix_ChannelFinished's callback.
    var channelFinished: standin_channel_finished?
    /// Channels whose end the update thread found and has not reported yet: a play on one waits for the report, so
    /// the callback sees the chunk that ended (SDL_mixer reports before anything else can play there). A shrink
    /// that drops one reports it itself, unless the update thread has begun to (`reportingNow`).
    var reporting: Set<Int32> = []
    /// The channel whose end the update thread is reporting now, and its chunk: Mix_GetChunk in that callback still
    /// gives it if a shrink dropped the channel meanwhile (a shrink does not wait for the callback).
    var reportingNow: (channel: Int32, chunk: ChunkPointer?)?
    /// Ends a game's call found (ChannelEnds.swift), in order, also in `reporting`, for the update thread to report at
    /// its next wake; a play on one of these channels, a shrink or a close reports it itself instead.
    var settledEnds: [Int32] = []
    /// Whether the session holds every voice (the engine's mixer suspended), as the update thread last saw.
    var voicesHeld = false
    /// The thread opening the device (Mix_OpenAudioDevice): one opens at a time, the others wait for it.
    var openingThread: UInt?
    /// The update thread, which never waits for its own reports.
    var updateThread: UInt?
    /// When the update thread's wait ends (monotonic nanoseconds; in the past while it runs a step): a change that
    /// needs it sooner wakes it (`wakeUpdates`).
    var updatesWakeAt = 0
    /// How fast the output renders against the monotonic clock (1: its rate; 0.97 at the slowest), as the update
    /// thread measures it (`RenderClock`): SDL's dummy driver sleeps whole milliseconds per block, up to 5 % fast at
    /// 512 frames, its disk driver about 1 % slow, and a one-shot's end is foreseen from it (`endOfPlay`).
    var renderPace = 1.0
    var isUpdateThread: Bool { updateThread == currentThreadIdentity() }
    /// Mix_MasterVolume, 0...128: the engine's `sfx` bus gain, where every channel plays.
    var masterVolume = Int(STANDIN_MIX_MAX_VOLUME)
    /// Mix_LoadMUS's music and what the music player is doing with it (MusicRegistry.swift).
    var music = MusicState()
    /// Mix_HookMusic's function and the stream playing it (MusicHook.swift), under this lock with the music it holds.
    var hook = MusicHook()
    /// The opening whose engine Mix_Playing's published answers count frames of (PlayingAnswers.swift), and how many
    /// channels were published last.
    var publishedOpening: Int?
    var publishedChannels = PlayingAnswers.channels
}

extension MixerState {
    /// Gets the update thread going at once when it waits past `time` (monotonic nanoseconds; nil: a tick from
    /// now), for a change it must act on by then: a play's end, a fade's step, a deadline (their ends, steps and
    /// deadlines are the thread's to find). A thread that wakes by then anyway is left alone: it sees the change
    /// when it plans its next wait (`nextUpdate`).
    mutating func wakeUpdates(by time: Int? = nil) {
        guard let device else { return }
        let time = time ?? monotonicNanoseconds() + updatePeriodNanoseconds
        guard updatesWakeAt > time else { return }
        updatesWakeAt = 0
        device.updates.wake()
    }

    /// Wakes the update thread for channel `i`'s play when it must look at it before its planned wake.
    mutating func wakeUpdates(for i: Int) {
        let (other, end) = channels.looks(i, now: monotonicNanoseconds(), render: renderPosition(), plan: lookPlan)
        // An end may wait for others (`endBatchWindow`): a thread that wakes within that anyway is left alone.
        let look = min(other ?? .max, end.map { $0 > .max - endBatchWindow ? .max : $0 + endBatchWindow } ?? .max)
        if look != .max { wakeUpdates(by: look) }
    }
}

/// The stand-in's one state, shared by every exported function and the update thread.
final class StandIn: Sendable {
    static let shared = StandIn()
    let state = GuardedMixerState()

    /// Runs `body` with the state, when the device is open; otherwise sets SDL_mixer's "not opened" error and
    /// returns `closed`.
    func withOpenDevice<R: Sendable>(else closed: R, _ body: (inout MixerState, OpenDevice) -> R) -> R {
        state.withLock { state in
            guard let device = state.device else {
                report(deviceNotOpen)
                return closed
            }
            return body(&state, device)
        }
    }
}

/// SDL_mixer's volume scale (0...128, MIX_MAX_VOLUME) as a linear gain.
func gain(_ volume: Int) -> Float { Float(volume) / Float(STANDIN_MIX_MAX_VOLUME) }

/// A caller's volume as SDL_mixer takes it: negative means "leave it", above 128 is 128.
func clampedVolume(_ volume: Int32) -> Int? {
    volume < 0 ? nil : Int(min(volume, STANDIN_MIX_MAX_VOLUME))
}

/// `MixerState` under its lock. Whoever holds the lock publishes, as it lets go, what Mix_PlayingMusic and
/// Mix_PausedMusic answer, so those two never take it: programs call them from their audio callbacks (pygame's
/// post-mix function calls Mix_PausedMusic every block), and there a wait on the lock, held by a thread the
/// scheduler has put aside, stretches the output's clock (pygame's one second of music took up to 2.9 s under load).
/// A pause by the session reaches the answer at the update thread's next tick, which takes the lock.
final class GuardedMixerState: Sendable {
    private let lock = Lock<MixerState>(MixerState())
    /// `MusicAnswers` as last published.
    private let answers = Atomic<UInt8>(0)
    /// What Mix_Playing reads without the lock (PlayingAnswers.swift).
    private let playing = PlayingAnswers()

    func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending MixerState) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try lock.withLock { (state: inout sending MixerState) throws(E) -> sending Result in
            defer {
                answers.store(state.musicAnswers.rawValue, ordering: .releasing)
                state.publishAnswers(to: playing)
            }
            return try body(&state)
        }
    }

    /// `withLock` for the channel calls a game loop makes every frame (Mix_Playing, Mix_PlayChannel): they change
    /// nothing the music's answers are made of, so those stay as last published (by the music's own calls, and by the
    /// update thread at each wake, which brings the session's pauses in), and the music player's lock is not taken.
    /// They change no channel but `channel` (any for -1; none for nil: the finished callbacks' bookkeeping), whose
    /// Mix_Playing answer alone is published again.
    func withChannelLock<Result: ~Copyable>(
        publishing channel: Int32?, _ body: (inout sending MixerState) -> sending Result
    ) -> sending Result {
        lock.withLock { (state: inout sending MixerState) -> sending Result in
            defer { if let channel { state.publishAnswer(of: channel, to: playing) } }
            return body(&state)
        }
    }

    /// What Mix_PlayingMusic and Mix_PausedMusic answer now, without the lock.
    var musicAnswers: MusicAnswers { MusicAnswers(rawValue: answers.load(ordering: .acquiring)) }
}

/// Mix_PlayingMusic's and Mix_PausedMusic's answers.
struct MusicAnswers: OptionSet {
    let rawValue: UInt8
    /// Music is on: playing, paused, or silenced by the session.
    static let playing = MusicAnswers(rawValue: 1)
    /// Paused by Mix_PauseMusic, or by the session or the desktop's media keys, which pause the same player. Held by
    /// Mix_HookMusic, it is paused only if the program paused it.
    static let paused = MusicAnswers(rawValue: 2)
}

extension MixerState {
    var musicAnswers: MusicAnswers {
        guard music.current != nil else { return [] }
        guard let device else { return .playing }
        if music.paused { return [.playing, .paused] }
        if music.hooked { return .playing }
        let playerState = device.engine.musicPlayer.playbackState
        return playerState == .paused || playerState == .interrupted ? [.playing, .paused] : .playing
    }
}
