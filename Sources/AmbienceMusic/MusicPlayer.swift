import AmbienceCore
import AmbienceDecoding
import AmbienceMixer
import AmbiencePlatform
import Synchronization

/// The application music player: a queue of items streamed gaplessly through the `music` bus.
///
/// Every call returns at once and may be made from any thread: the player's lock guards plain state only. Opening,
/// probing, seeking and decoding happen on the engine's streaming thread (`MusicFeeder`), never under that lock, so
/// a skip to a long song cannot stall the game's frame; what a call causes, errors included, arrives as events in
/// `AudioEngine.update()`. Music never depends on how often the game calls `update()`.
public final class MusicPlayer: @unchecked Sendable {
    let mixer: Mixer
    /// The stream half: the mixer's channel and what is queued on it. Guarded by `lock`.
    let stream: MusicStream
    let lock = Lock<Void>(())
    /// The streaming side; only the thread that pumps takes it, and the game never waits on it.
    private let feeding: Lock<MusicFeeder>
    private let ahead: AheadOpener
    /// How items are opened: the engine's decoding options, with `soundFont` as last set. Shared with the opener.
    private let decoding: SharedDecoderOptions
    // Everything below is guarded by `lock`.
    var queue: [Entry] = []
    var order = PlayOrder()
    /// Index into `order` of the item at the playhead (or the one that will play next when stopped).
    var position: Int?
    var state = PlaybackState.stopped
    /// Held (`isHeld`): the stream is paused whatever `state` says; `state` is what it does once let go.
    var held = false
    /// Let go while the session held the app's audio: the stream stays as the hold left it until `play()`.
    var waitsForPlay = false
    /// Where the now-playing item resumes, and the playhead until the stream has something queued.
    var resumeTime: Double = 0
    var _shuffleMode = ShuffleMode.off
    var _repeatMode = RepeatMode.none
    var _volume: Float = 1
    var _loudnessMatching = LoudnessMatching.off
    var notificationDepth = 0
    /// The entry last announced as now playing while notifications were on.
    var announcedEntry: UInt64?
    /// Notifications for `update()`. Past the cap the oldest give way: they are state changes, and the newest
    /// says how the player is now.
    private var events = EventQueue<MusicEvent>(capacity: MusicPlayer.notificationCapacity, overflow: .dropOldest)
    private var nextEntryID: UInt64 = 1
    /// Counts queue edits; `feederChoseAt` is the count when the feeder last chose the item to follow.
    var queueEdits: UInt64 = 0
    var feederChoseAt: UInt64 = 0
    var _crossfadeDuration: Double = 0
    private var worker: WorkerThread?
    /// Called at every change an observer shows (`addChangeObserver`), under `lock`.
    private var changeObservers: [(key: UInt64, changed: @Sendable () -> Void)] = []
    private var nextObserverKey: UInt64 = 1
    /// Seed for shuffling; fixed for reproducible tests.
    public var shuffleSeed: UInt64 = 0x5EED

    struct Entry {
        let id: UInt64
        let item: MediaItem
    }

    /// What the feeder opens to begin a generation.
    struct StartOrder {
        let entryID: UInt64
        let item: MediaItem
        let time: Double
        /// The player repeats one item: a module or MIDI file plays its own loop (`DecoderOptions.loopsForever`).
        let loops: Bool
    }

    /// What the feeder learns at the start of a step.
    struct FeederOrders {
        let generation: UInt64
        /// Set only when `generation` is new to the feeder.
        let start: StartOrder?
        let freeBuffers: Int
        let crossfade: Double
        /// Repeat-one is on: a song playing its own loop goes on looping.
        let repeatsOne: Bool
        /// Seconds of playing until the next buffer or segment ends (`MusicStream.reclaimPlayed`); nil when the
        /// stream was empty.
        let quietSeconds: Double?
    }

    /// Buffers of `StereoBlock.capacity` frames: 743 ms queued at 44.1 kHz, 557 ms still ahead when one has played.
    static let bufferCount = 4

    package init(mixer: Mixer, bus: Bus, decoding: DecoderOptions = DecoderOptions()) throws(EngineError) {
        self.mixer = mixer
        guard let channel = mixer.makeStreamChannel(bus: bus, bufferCount: MusicPlayer.bufferCount) else {
            throw .outOfMixerMemory("music stream")
        }
        stream = MusicStream(channel: channel)
        let shared = SharedDecoderOptions(decoding)
        self.decoding = shared
        ahead = AheadOpener(opener: { item, loops throws(DecodingError) in
            var options = shared.options.withLock { $0 }
            options.loopsForever = loops
            return try AudioFile.open(fileSystemPath: item.fileSystemPath, name: item.url, options: options)
        })
        feeding = Lock(MusicFeeder(ahead: ahead))
    }

    package func close() {
        stopStreamingThread()
        lock.withLock { _ in stream.restart() }
        mixer.removeStreamChannel(stream.channel)
    }

    /// The General MIDI SoundFont (an SF2 file) MIDI items are played with, from the next item opened on (one playing
    /// keeps the font it was opened with). It starts as `EngineConfiguration.decoding.soundFont`; nil means the first
    /// of `DecoderOptions.defaultSoundFonts` that is installed. A file that is not there makes MIDI items fail to
    /// open, with a `playbackError` that names it.
    public var soundFont: String? {
        get { decoding.options.withLock { $0.soundFont } }
        set { decoding.options.withLock { $0.soundFont = newValue } }
    }

    // MARK: Streaming

    /// Feeds the stream from a thread of its own, woken at once by every call that moves the playhead, with the
    /// next item opened ahead on another.
    package func startStreamingThread() {
        // `feeding` is never taken inside `lock` (a round takes them the other way round).
        feeding.withLock { _ in ahead.startThread() }
        lock.withLock { _ in
            guard worker == nil else { return }
            // 4 buffers of 8192 frames hold about three quarters of a second. Once every one is queued, nothing is
            // due before the playing buffer or segment ends (a buffer frees, or the playhead enters another
            // play-through), so the round waits until then, plus one 10 ms block for the mixer to have rendered past
            // it, at most `longestWait`: one wake-up per buffer (5.4 a second at 44.1 kHz; 11 with the 4096-frame
            // buffers before session 48, 38 with a 30 ms wait). Otherwise (the feed ran out, a start, no music) a
            // round every 10 ms. A play, seek or skip wakes it (`wakeFeeder`).
            worker = WorkerThread(name: "ambience-stream", scheduling: .batch) { [self] control in
                while !control.isStopRequested {
                    control.wait(seconds: pump().map { min($0 + 0.01, MusicPlayer.longestWait) } ?? 0.01)
                }
            }
        }
    }

    /// The streaming thread's longest wait with every buffer queued: longer than a buffer at 44.1 and 48 kHz (186 and
    /// 171 ms), so that it wakes once per buffer; a buffer at a lower rate is looked at more than once.
    static let longestWait = 0.25

    /// Stops the streaming thread and waits for it to leave the player.
    func stopStreamingThread() {
        let stopping = lock.withLock { _ in
            defer { worker = nil }
            return worker
        }
        guard let stopping else { return }
        stopping.stop()
        feeding.withLock { _ in ahead.stopThread() }
    }

    /// One round of the feeder: on the streaming thread, or per block when offline. Returns how long nothing is due
    /// once every buffer is queued (`MusicFeeder.step`), else nil.
    @discardableResult
    func pump() -> Double? { feeding.withLock { $0.step(self) } }

    /// Wakes the streaming thread for a round now (under `lock`).
    func wakeFeeder() { worker?.wake() }

    /// Pumps, unless a streaming thread does it (an offline render calls this once per block).
    package func pumpUnlessThreaded() {
        if lock.withLock({ _ in worker == nil }) { pump() }
    }

    /// How the feeder opens items: a test's slow or gated disk.
    func setItemOpener(_ opener: @escaping @Sendable (MediaItem) throws(DecodingError) -> any AudioDecoder) {
        ahead.opener = { item, _ throws(DecodingError) in try opener(item) }
    }

    // MARK: Notifications

    /// Starts delivering notifications. Calls nest: each `begin` needs its own `end`.
    public func beginGeneratingPlaybackNotifications() { lock.withLock { _ in notificationDepth += 1 } }
    /// Balances one `beginGeneratingPlaybackNotifications()`; at zero the player stops queuing notifications.
    public func endGeneratingPlaybackNotifications() {
        lock.withLock { _ in notificationDepth = max(notificationDepth - 1, 0) }
    }

    static let notificationCapacity = 4096

    func post(_ event: MusicEvent) {
        if notificationDepth > 0 { events.push(event) }
    }

    /// Starts calling `changed` at every change of what the desktop shows of the player (the MPRIS server): its
    /// state, the item at the playhead (a replay of the same item too), its volume, a seek, a hold or its end. Called
    /// on the thread that made the change, under the player's lock: it must only note the change and return, never
    /// call the player. Returns the key that `removeChangeObserver` takes.
    package func addChangeObserver(_ changed: @escaping @Sendable () -> Void) -> UInt64? {
        lock.withLock { _ in
            defer { nextObserverKey += 1 }
            changeObservers.append((nextObserverKey, changed))
            return nextObserverKey
        }
    }

    /// Stops calling the observer `key` names; once this returns it is not called again.
    package func removeChangeObserver(_ key: UInt64) {
        lock.withLock { _ in changeObservers.removeAll { $0.key == key } }
    }

    /// Tells the change observers that what they show may have changed (under `lock`).
    func noteChange() {
        for observer in changeObservers { observer.changed() }
    }

    /// Logged outside the player's lock: a handler-less log writes to stderr, which a full pipe can block. The error
    /// names the file.
    static func logSkipped(_ error: DecodingError) { Log.warning("music: skipped a queued file: \(error)") }

    package func drainEvents() -> [MusicEvent] { lock.withLock { _ in events.drain() } }

    /// Notifications lost to a full queue.
    package var droppedEvents: Int { lock.withLock { _ in events.dropped } }

    // MARK: Queue

    /// Replaces the queue. The first item becomes the now-playing item; playback state is kept.
    public func setQueue(with collection: MediaItemCollection) {
        lock.withLock { _ in
            let wasPlaying = state == .playing
            stream.restart()
            queue = collection.items.map(makeEntry)
            rebuildOrder(keepingCurrent: nil)
            resumeTime = 0
            post(.queueDidChange)
            setPosition(queue.isEmpty ? nil : 0)
            if wasPlaying, !queue.isEmpty { requestStart(at: 0, time: 0) }
            if queue.isEmpty { setState(.stopped) }
            // setPosition compares against the new queue, so a paused or stopped player's new item goes unsaid.
            noteChange()
        }
    }

    /// Replaces the queue with files. Unreadable files still take a place and are skipped with a `playbackError`.
    public func setQueue(paths: [String]) throws(EngineError) {
        setQueue(with: MediaItemCollection(items: paths.map(MediaItem.init(path:))))
    }

    /// The items in queue order (not shuffled order).
    public var items: [MediaItem] { lock.withLock { _ in queue.map(\.item) } }

    /// Adds items at the end of the queue. What is playing goes on undisturbed.
    public func append(_ collection: MediaItemCollection) {
        lock.withLock { _ in insertEntries(collection.items, atQueueIndex: queue.count, afterCurrentInOrder: false) }
    }

    /// Adds items right after the now-playing item, so they play next.
    public func prepend(_ collection: MediaItemCollection) {
        lock.withLock { _ in
            let at = position.map { order[$0] + 1 } ?? 0
            insertEntries(collection.items, atQueueIndex: at, afterCurrentInOrder: true)
        }
    }

    /// Inserts items after `item` (which must be in the queue); returns false when it is not.
    @discardableResult
    public func insert(_ collection: MediaItemCollection, after item: MediaItem) -> Bool {
        lock.withLock { _ in
            guard let index = queue.firstIndex(where: { $0.item == item }) else { return false }
            insertEntries(collection.items, atQueueIndex: index + 1, afterCurrentInOrder: false)
            return true
        }
    }

    /// Removes an item. Removing the now-playing item moves on to the next one.
    @discardableResult
    public func remove(_ item: MediaItem) -> Bool {
        lock.withLock { _ in
            guard let queueIndex = queue.firstIndex(where: { $0.item == item }) else { return false }
            queue.remove(at: queueIndex)
            let orderIndex = order.remove(queueIndex: queueIndex)!  // every queue index is in the order
            let removingCurrent = orderIndex == position
            if let p = position, orderIndex < p { position = p - 1 }
            post(.queueDidChange)
            if removingCurrent {
                let playing = state == .playing
                stream.restart()
                resumeTime = 0
                if orderIndex < order.count {
                    setPosition(orderIndex, force: true)
                    if playing { requestStart(at: orderIndex, time: 0) }
                } else {
                    endOfQueue()
                }
            } else {
                upcomingMayHaveChanged()
            }
            return true
        }
    }

    private func makeEntry(_ item: MediaItem) -> Entry {
        defer { nextEntryID += 1 }
        return Entry(id: nextEntryID, item: item)
    }

    private func insertEntries(_ items: [MediaItem], atQueueIndex at: Int, afterCurrentInOrder: Bool) {
        guard !items.isEmpty else { return }
        let entries = items.map(makeEntry)
        queue.insert(contentsOf: entries, at: at)
        order.insert(
            queueIndex: at, count: entries.count, after: afterCurrentInOrder ? position : nil,
            inQueueOrder: _shuffleMode == .off)
        if position == nil && state == .stopped { position = order.firstIndex(of: at) }
        post(.queueDidChange)
        upcomingMayHaveChanged()
    }

    /// After a queue edit, a shuffle or a repeat change.
    func upcomingMayHaveChanged() {
        queueEdits &+= 1
        restartIfUpcomingChanged()
    }

    /// If the stream already decoded ahead into an item that is no longer next, re-feed from the playhead.
    func restartIfUpcomingChanged() {
        guard let p = position, let ahead = stream.entryAhead else { return }
        let expected = nextOrderIndex(after: p, natural: true).map { queue[order[$0]].id }
        guard ahead != expected else { return }
        let time = playheadTime()
        stream.restart()
        requestStart(at: p, time: time)
    }

    // MARK: Order

    func rebuildOrder(keepingCurrent current: Int?) {
        if let p = order.rebuild(for: queue.map(\.item), shuffle: _shuffleMode, seed: shuffleSeed, keeping: current) {
            position = p
        }
    }

    /// The order index that follows `p`; `natural` means the item ended by itself (so repeat-one replays it).
    func nextOrderIndex(after p: Int, natural: Bool) -> Int? {
        order.next(after: p, natural: natural, repeating: _repeatMode)
    }

    // MARK: State

    func setState(_ new: PlaybackState) {
        guard new != state else { return }
        state = new
        post(.playbackStateDidChange(new))
        noteChange()
    }

    func setPosition(_ new: Int?, force: Bool = false) {
        // After a queue replacement `position` may point past the new order: that counts as a change.
        let old = position.map {
            order.indices.contains($0) && queue.indices.contains(order[$0]) ? queue[order[$0]].id : 0
        }
        position = new
        let now = new.map { queue[order[$0]].id }
        if force || old != now {
            announce(new)
            noteChange()
        }
    }

    func announce(_ orderIndex: Int?) {
        guard notificationDepth > 0 else { return }
        announcedEntry = orderIndex.map { queue[order[$0]].id }
        post(.nowPlayingItemDidChange(orderIndex.map { queue[order[$0]].item }))
    }

    func endOfQueue() {
        resumeTime = 0
        setPosition(nil, force: true)
        setState(.stopped)
    }

    // MARK: The stream (game side)

    /// Asks the feeder to open the item at `orderIndex` at `time` (after `stream.restart()`); it plays if the player is
    /// playing by then. An item that cannot be opened is reported and skipped by `startFailed`.
    func requestStart(at orderIndex: Int, time: Double) {
        let entry = queue[order[orderIndex]]
        resumeTime = time
        stream.startOrder = StartOrder(entryID: entry.id, item: entry.item, time: time, loops: _repeatMode == .one)
        setPosition(orderIndex)
        worker?.wake()
        noteChange()  // the playhead jumps to `time`
    }

    func orderIndex(ofEntry id: UInt64) -> Int? {
        guard let q = queue.firstIndex(where: { $0.id == id }) else { return nil }
        return order.firstIndex(of: q)
    }

    /// Seconds into the now-playing item.
    func playheadTime() -> Double {
        stream.playheadTime() ?? resumeTime
    }
}

/// Decoding options that the player changes and its opener reads, on other threads.
final class SharedDecoderOptions: Sendable {
    let options: Lock<DecoderOptions>
    init(_ options: DecoderOptions) { self.options = Lock(options) }
}
