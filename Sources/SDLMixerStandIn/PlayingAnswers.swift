import Ambience
import AmbiencePlatform
import Synchronization

// Mix_Playing without the stand-in's lock (issue #33 item 4). A game loop asks it of every channel every frame
// (1,920 calls a second in `bench --sdl-mixer-stand-in`), and each call took the lock, settled the channel and
// counted it, though almost every answer is the one before. Whoever holds the lock now publishes, as it lets go, the
// answer of each channel it may have changed, as the locked path would give it: none (0), a play that only a call or
// the update thread ends (1), or a one-shot's planned end frame in the engine's rendered frames, before which it is on
// (1) and from which the locked path must settle it (ChannelEnds.swift). A call whose answer is not settled by that
// (channel -1, a channel past the table, a one-shot past its planned end) takes the lock as before. The cells are made
// once, with the stand-in's state, and live as long as the process; so does each opening's clock once published (a
// hundred bytes an opening). Session 49: the call reads two global atomics, which Swift initializes statically,
// where it passed `StandIn.shared`'s lazy initialization (`swift_once`), retained the state and took a lock around
// the clock (about 200 instructions a call, and a lock's atomics, against about 90 now).

/// Where Mix_Playing's fast path finds the cells, as a bit pattern (a pointer is not Sendable); 0 until the stand-in's
/// state exists (the locked path makes it).
private let publishedCells = Atomic<Int>(0)
/// The clock published last, read without a reference: `PlayingAnswers.kept` holds every clock ever published, so
/// none that a reader has loaded is freed under it.
private let publishedClock = Atomic<Unmanaged<PlayingClock>?>(nil)

/// One opening's number and its engine's rendered frames (with no engine open, a counter that stays 0: no cell holds
/// an end frame then). Immutable once published.
private final class PlayingClock: Sendable {
    let opening: Int
    let frames: RenderedFrames

    init(opening: Int, frames: RenderedFrames) {
        self.opening = opening
        self.frames = frames
    }
}

/// Mix_Playing's published answers: one cell per channel, and the open opening's clock (`PlayingClock`: its number
/// and its engine's rendered frames, which the end frames count). One, with the stand-in's state
/// (`GuardedMixerState`), for the process's life: never freed, since a reader may hold the cells' address it loaded.
final class PlayingAnswers: @unchecked Sendable {
    /// How many channels are answered without the lock (SDL_mixer opens 8; games allocate up to a few dozen).
    static let channels = 64
    /// No play on the channel, or no such channel: 0.
    static let none = -1
    /// A play that only a call or the update thread ends (a stream, loops to come, paused, no planned end): 1.
    static let on = -2
    /// The locked path's to answer.
    static let locked = -3
    /// An end frame takes the low bits of a cell (2^47 frames are 93 years at 48 kHz); the opening's number, the bits
    /// above, so that an end frame is never compared with another opening's engine.
    static let frameBits = 47
    static let frameMask = (1 << frameBits) - 1

    /// One atomic per channel, side by side (unchecked Sendable: reached only through the pointer, as atomics).
    private let cells: UnsafeMutablePointer<Atomic<Int>>
    /// Every clock published (`publishedClock`).
    private let kept = Lock<[PlayingClock]>([])

    init() {
        cells = .allocate(capacity: Self.channels)
        for i in 0..<Self.channels { (cells + i).initialize(to: Atomic(Self.none)) }
        publishedCells.store(Int(bitPattern: cells), ordering: .releasing)
    }

    /// An opening's number in a cell's high bits: 0 to 65,534 for an open device, 65,535 for none (-1), so that the
    /// clock published at a close never reads as an opening's.
    static func tag(_ opening: Int) -> Int { opening < 0 ? 0xFFFF : opening % 0xFFFF }

    /// A cell's value for a one-shot planned to end at `endFrame` in opening `opening`.
    static func endValue(_ endFrame: Int, opening: Int) -> Int {
        guard endFrame >= 0 else { return locked }
        return min(endFrame, frameMask) | tag(opening) << frameBits
    }

    /// Under the stand-in's lock, when the open engine changes.
    func open(_ frames: RenderedFrames?, opening: Int) {
        let clock = PlayingClock(opening: Self.tag(opening), frames: frames ?? RenderedFrames())
        kept.withLock { $0.append(clock) }
        publishedClock.store(Unmanaged.passUnretained(clock), ordering: .releasing)
    }

    /// Under the stand-in's lock.
    func store(_ value: Int, at i: Int) {
        if cells[i].load(ordering: .relaxed) != value { cells[i].store(value, ordering: .releasing) }
    }
}

/// Mix_Playing's answer for `channel` as last published, or nil when only the locked path can give it.
func publishedPlaying(_ channel: Int32) -> Int32? {
    guard channel >= 0, Int(channel) < PlayingAnswers.channels,
        let cells = UnsafeMutablePointer<Atomic<Int>>(bitPattern: publishedCells.load(ordering: .acquiring))
    else { return nil }
    let value = cells[Int(channel)].load(ordering: .acquiring)
    if value == PlayingAnswers.none { return 0 }
    if value == PlayingAnswers.on { return 1 }
    guard value >= 0, let clock = publishedClock.load(ordering: .acquiring) else { return nil }
    // Read in place: a binding of the counter would retain and release it.
    let before = clock._withUnsafeGuaranteedRef {
        $0.opening == value >> PlayingAnswers.frameBits && $0.frames.count < value & PlayingAnswers.frameMask
    }
    return before ? 1 : nil
}

extension MixerState {
    /// Channel `i`'s answer in the published form, as `mixPlaying`'s locked path gives it: a play is on unless it
    /// is a one-shot that `settle` would end, which it looks at only once the output has rendered its planned end
    /// (`opening`: the open device's number; without one nothing is settled).
    func publishedAnswer(_ i: Int, opening: Int?) -> Int {
        // A pattern, not `!= nil`: that copied the voice (a retain of its mixer) for every channel at every publish.
        guard i < channels.slots.count else { return PlayingAnswers.none }
        guard case .some = channels.slots[i].voice else { return PlayingAnswers.none }
        guard let opening, let end = channels.slots[i].endFrame, channels.slots[i].pausedAt == nil,
            channels.slots[i].stream == nil, channels.slots[i].loopsLeft == 0
        else { return PlayingAnswers.on }
        return PlayingAnswers.endValue(end, opening: opening)
    }

    /// Publishes every answer that can have changed (the channels there are, and those there were), and the engine
    /// when the device was opened or closed.
    mutating func publishAnswers(to answers: PlayingAnswers) {
        let opening = device?.generation
        if publishedOpening != opening {
            answers.open(device?.engine.renderedFrameCounter, opening: opening ?? -1)
            publishedOpening = opening
            publishedChannels = PlayingAnswers.channels
        }
        let count = min(max(channels.slots.count, publishedChannels), PlayingAnswers.channels)
        for i in 0..<count { answers.store(publishedAnswer(i, opening: opening), at: i) }
        publishedChannels = min(channels.slots.count, PlayingAnswers.channels)
    }

    /// Publishes the answer of `channel` alone (every one for -1), after a call that changed no other channel and
    /// neither opened nor closed the device (`GuardedMixerState.withChannelLock`).
    mutating func publishAnswer(of channel: Int32, to answers: PlayingAnswers) {
        guard channel >= 0 else { return publishAnswers(to: answers) }
        guard Int(channel) < PlayingAnswers.channels else { return }
        answers.store(publishedAnswer(Int(channel), opening: device?.generation), at: Int(channel))
    }
}
