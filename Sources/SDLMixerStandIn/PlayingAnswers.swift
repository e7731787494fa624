import Ambience
import AmbiencePlatform
import Synchronization

// Mix_Playing without the stand-in's lock (issue #33 item 4). A game loop asks it of every channel every frame
// (1,920 calls a second in `bench --sdl-mixer-stand-in`), and each call took the lock, settled the channel and
// counted it: about a third of the game thread's CPU, though almost every answer is the one before. Whoever holds the
// lock now publishes, as it lets go, each of the first channels' answer as the locked path would give it: none
// (0), a play that only a call or the update thread ends (1), or a one-shot's planned end frame, before which it is
// on (1) and from which the locked path must settle it (ChannelEnds.swift). A call whose answer is not settled by
// that (channel -1, a channel past the table, a one-shot past its planned end) takes the lock as before.

/// The published answers of one opening's channels, with the engine whose rendered frames the end frames count.
final class PlayingTable: Sendable {
    /// How many channels are answered without the lock (SDL_mixer opens 8; games allocate up to a few dozen).
    static let channels = 64
    /// No play on the channel, or no such channel: 0.
    static let none = Int.min
    /// A play that only a call or the update thread ends (a stream, loops to come, paused, no planned end): 1.
    static let on = Int.max

    private final class Cell: Sendable {
        let value = Atomic<Int>(PlayingTable.none)
    }

    let engine: AudioEngine?
    private let cells: [Cell] = (0..<PlayingTable.channels).map { _ in Cell() }

    init(engine: AudioEngine?) { self.engine = engine }

    /// Under the stand-in's lock.
    func store(_ value: Int, at i: Int) {
        if cells[i].value.load(ordering: .relaxed) != value { cells[i].value.store(value, ordering: .releasing) }
    }

    /// Mix_Playing's answer for channel `i` (0..<channels), or nil when the locked path must give it.
    func answer(_ i: Int) -> Int32? {
        let value = cells[i].value.load(ordering: .acquiring)
        if value == Self.none { return 0 }
        if value == Self.on { return 1 }
        guard let engine, engine.renderedFrames < value else { return nil }
        return 1
    }
}

extension MixerState {
    /// Channel `i`'s answer in the published form, as `mixPlaying`'s locked path gives it: a play is on unless it
    /// is a one-shot that `settle` would end, which it looks at only once the output has rendered its planned end
    /// (`opened`: a device is open; without one nothing is settled).
    func publishedAnswer(_ i: Int, opened: Bool) -> Int {
        // A pattern, not `!= nil`: that copied the voice (a retain of its mixer) for every channel at every publish.
        guard i < channels.slots.count else { return PlayingTable.none }
        guard case .some = channels.slots[i].voice else { return PlayingTable.none }
        guard opened, let end = channels.slots[i].endFrame, channels.slots[i].pausedAt == nil,
            channels.slots[i].stream == nil, channels.slots[i].loopsLeft == 0
        else { return PlayingTable.on }
        // An end frame equal to a mark (one that overflowed) is past every count, as the locked path finds it.
        return min(max(end, PlayingTable.none + 1), PlayingTable.on - 1)
    }

    /// Publishes every answer that can have changed (the channels there are, and those there were), for a new
    /// opening in a new table.
    mutating func publishAnswers(to readers: borrowing Lock<PlayingTable>) {
        let engine = device?.engine
        if playingTable.engine !== engine {
            let table = PlayingTable(engine: engine)
            playingTable = table
            publishedChannels = PlayingTable.channels
            readers.withLock { $0 = table }
        }
        let count = min(max(channels.slots.count, publishedChannels), PlayingTable.channels)
        let opened = engine != nil
        for i in 0..<count { playingTable.store(publishedAnswer(i, opened: opened), at: i) }
        publishedChannels = min(channels.slots.count, PlayingTable.channels)
    }

    /// Publishes the answer of `channel` alone (every one for -1), after a call that changed no other channel and
    /// neither opened nor closed the device (`GuardedMixerState.withChannelLock`).
    mutating func publishAnswer(of channel: Int32, to readers: borrowing Lock<PlayingTable>) {
        guard channel >= 0 else { return publishAnswers(to: readers) }
        guard Int(channel) < PlayingTable.channels else { return }
        playingTable.store(publishedAnswer(Int(channel), opened: device != nil), at: Int(channel))
    }
}
