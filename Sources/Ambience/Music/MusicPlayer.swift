import Synchronization

/// The application music player: a queue of items streamed gaplessly through the `music` bus.
///
/// Every call returns at once and may be made from any thread: the player's lock guards plain state only. Opening,
/// probing, seeking and decoding happen on the engine's streaming thread (`MusicFeeder`), never under that lock, so
/// a skip to a long song cannot stall the game's frame; what a call causes, errors included, arrives as events in
/// `AudioEngine.update()`. Music never depends on how often the game calls `update()`.
public final class MusicPlayer: @unchecked Sendable {
    private let mixer: Mixer
    private let channel: StreamChannel
    private let lock = Lock<Void>(())
    /// The streaming side; only the thread that pumps takes it, and the game never waits on it.
    private let feeding: Lock<MusicFeeder>
    private let ahead: AheadOpener
    // Everything below is guarded by `lock`.
    private var queue: [Entry] = []
    private var order = PlayOrder()
    /// Index into `order` of the item at the playhead (or the one that will play next when stopped).
    private var position: Int?
    private var state = PlaybackState.stopped
    /// Where the now-playing item resumes, and the playhead until the stream has something queued.
    private var resumeTime: Double = 0
    private var _shuffleMode = ShuffleMode.off
    private var _repeatMode = RepeatMode.none
    private var _volume: Float = 1
    private var _loudnessMatching = LoudnessMatching.off
    private var notificationDepth = 0
    /// The entry last announced as now playing while notifications were on.
    private var announcedEntry: UInt64?
    /// Notifications for `update()`. Past the cap the oldest give way: they are state changes, and the newest
    /// says how the player is now.
    private var events = EventQueue<MusicEvent>(capacity: MusicPlayer.notificationCapacity, overflow: .dropOldest)
    private var nextEntryID: UInt64 = 1
    private var stream: StreamQueue
    /// Bumped whenever the stream is emptied: a block decoded for an older generation is refused.
    private var generation: UInt64 = 0
    /// What the feeder should open when it takes up `generation`.
    private var startOrder: StartOrder?
    /// The play-through heard now (0 before the generation's first block).
    private var currentPlayID: UInt64 = 0
    /// The item the feeder is decoding, which may be ahead of the one heard.
    private var fed: (entryID: UInt64, playID: UInt64)?
    /// The feeder has reached the end of the queue in this generation.
    private var streamEnded = false
    private var awaitingFirstBlock = true
    /// Counts queue edits; `feederChoseAt` is the count when the feeder last chose the item to follow.
    private var queueEdits: UInt64 = 0
    private var feederChoseAt: UInt64 = 0
    private var _crossfadeDuration: Double = 0
    private var worker: WorkerThread?
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
    }

    static let bufferCount = 6

    init(mixer: Mixer, bus: Bus, decoding: DecoderOptions = DecoderOptions()) throws(EngineError) {
        self.mixer = mixer
        guard let channel = mixer.makeStreamChannel(bus: bus) else { throw .outOfMixerMemory("music stream") }
        self.channel = channel
        stream = StreamQueue(buffers: mixer.withStream { ALBuffer.makeEmpty(count: MusicPlayer.bufferCount) })
        ahead = AheadOpener(opener: { item, loops throws(DecodingError) in
            var options = decoding
            options.loopsForever = loops
            return try AudioFile.open(fileSystemPath: item.fileSystemPath, name: item.url, options: options)
        })
        feeding = Lock(MusicFeeder(ahead: ahead))
    }

    func close() {
        stopStreamingThread()
        lock.withLock { _ in
            mixer.withStream {
                channel.source.stop()
                channel.source.setBuffer(nil)
                for buffer in stream.allBuffers { buffer.delete() }
            }
            stream.reclaimAll()
            generation += 1
        }
        mixer.removeStreamChannel(channel)
    }

    // MARK: Streaming

    /// Feeds the stream from a thread of its own, woken at once by every call that moves the playhead, with the
    /// next item opened ahead on another.
    func startStreamingThread() {
        // `feeding` is never taken inside `lock` (a round takes them the other way round).
        feeding.withLock { _ in ahead.startThread() }
        lock.withLock { _ in
            guard worker == nil else { return }
            // 6 buffers of 4096 frames hold about half a second: a round every 10 ms keeps them full.
            worker = WorkerThread(name: "ambience-stream", scheduling: .batch) { [self] control in
                while !control.isStopRequested {
                    pump()
                    control.wait(seconds: 0.01)
                }
            }
        }
    }

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

    /// One round of the feeder: on the streaming thread, or per block when offline.
    func pump() { feeding.withLock { $0.step(self) } }

    /// Pumps, unless a streaming thread does it (an offline render calls this once per block).
    func pumpUnlessThreaded() {
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

    private func post(_ event: MusicEvent) {
        if notificationDepth > 0 { events.push(event) }
    }

    /// Logged outside the player's lock: a handler-less log writes to stderr, which a full pipe can block. The error
    /// names the file.
    private static func logSkipped(_ error: DecodingError) { Log.warning("music: skipped a queued file: \(error)") }

    func drainEvents() -> [MusicEvent] { lock.withLock { _ in events.drain() } }

    /// Notifications lost to a full queue.
    var droppedEvents: Int { lock.withLock { _ in events.dropped } }

    // MARK: Queue

    /// Replaces the queue. The first item becomes the now-playing item; playback state is kept.
    public func setQueue(with collection: MediaItemCollection) {
        lock.withLock { _ in
            let wasPlaying = state == .playing
            stopStream()
            queue = collection.items.map(makeEntry)
            rebuildOrder(keepingCurrent: nil)
            resumeTime = 0
            post(.queueDidChange)
            setPosition(queue.isEmpty ? nil : 0)
            if wasPlaying, !queue.isEmpty { requestStart(at: 0, time: 0) }
            if queue.isEmpty { setState(.stopped) }
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
                stopStream()
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
    private func upcomingMayHaveChanged() {
        queueEdits &+= 1
        restartIfUpcomingChanged()
    }

    /// If the stream already decoded ahead into an item that is no longer next, re-feed from the playhead.
    private func restartIfUpcomingChanged() {
        guard let p = position, currentPlayID != 0 else { return }
        let ahead =
            stream.firstSegment(after: currentPlayID)?.entryID
            ?? fed.flatMap { $0.playID > currentPlayID ? $0.entryID : nil }
        guard let ahead else { return }
        let expected = nextOrderIndex(after: p, natural: true).map { queue[order[$0]].id }
        guard ahead != expected else { return }
        let time = playheadTime()
        stopStream()
        requestStart(at: p, time: time)
    }

    // MARK: Transport

    /// What the player is doing.
    public var playbackState: PlaybackState { lock.withLock { _ in state } }

    /// Plays the now-playing item (the queue's first when none): a paused item goes on where it paused, a stopped one
    /// starts from the beginning. Returns at once; the music is heard once the streaming thread has decoded its first
    /// block.
    public func play() {
        lock.withLock { _ in
            switch state {
            case .playing: return
            case .paused where !stream.queued.isEmpty:
                mixer.withStream { channel.source.play() }
            default:
                if position == nil { position = order.isEmpty ? nil : 0 }
                guard let p = position else { return }
                stopStream()
                requestStart(at: p, time: resumeTime)
                // As on iOS: the item that starts is announced, even if it became the now-playing item (by
                // setQueue) before notifications began.
                if notificationDepth > 0 && announcedEntry != queue[order[p]].id { announce(p) }
            }
            setState(.playing)
        }
    }

    /// Pauses where the music is; `play()` resumes there.
    public func pause() {
        lock.withLock { _ in
            guard state == .playing || state == .interrupted else { return }
            resumeTime = playheadTime()
            mixer.withStream { channel.source.pause() }
            setState(.paused)
        }
    }

    /// Stops playback; the now-playing item stays, and `play()` starts it again from the beginning.
    public func stop() {
        lock.withLock { _ in
            stopStream()
            resumeTime = 0
            setState(.stopped)
        }
    }

    /// Marks the player interrupted (by the session): silent, and resumable with `play()`.
    func interrupt() {
        lock.withLock { _ in
            guard state == .playing else { return }
            resumeTime = playheadTime()
            mixer.withStream { channel.source.pause() }
            setState(.interrupted)
        }
    }

    /// Goes to the item that follows in the play order (with `RepeatMode.all`, the first after the last).
    public func skipToNextItem() {
        lock.withLock { _ in
            guard let p = position else { return }
            jump(to: nextOrderIndex(after: p, natural: false))
        }
    }

    /// Goes to the previous item, or to the start of this one when more than 3 seconds in.
    public func skipToPreviousItem() {
        lock.withLock { _ in
            guard let p = position else { return }
            if playheadTime() > 3 || p == 0 && _repeatMode != .all {
                jump(to: p)
            } else {
                jump(to: p > 0 ? p - 1 : order.count - 1)
            }
        }
    }

    /// Seeks to the start of the now-playing item.
    public func skipToBeginning() { currentPlaybackTime = 0 }

    private func jump(to orderIndex: Int?) {
        guard let target = orderIndex else {
            stopStream()
            endOfQueue()
            return
        }
        let playing = state == .playing
        stopStream()
        resumeTime = 0
        setPosition(target, force: true)
        if playing { requestStart(at: target, time: 0) }
    }

    /// Seconds into the now-playing item. Setting it seeks sample-accurately; the new position is heard in the next
    /// block. A NaN or infinite time is ignored (`seek(to:)` says so instead).
    public var currentPlaybackTime: Double {
        get { lock.withLock { _ in playheadTime() } }
        set { try? seek(to: newValue) }
    }

    /// Seeks the now-playing item to `seconds`, clamped to the item (a time past its end is its end); NaN and
    /// infinities are refused and the playhead stays where it is.
    public func seek(to seconds: Double) throws(InvalidNumber) {
        let requested = try seconds.finite("seek time")
        lock.withLock { _ in
            guard let p = position else { return }
            let length = queue[order[p]].item.playbackDuration
            let time = length > 0 ? min(max(requested, 0), length) : max(requested, 0)
            stopStream()
            if state == .playing || state == .paused {
                requestStart(at: p, time: time)  // paused: filled, and heard on play()
            } else {
                resumeTime = time
            }
        }
    }

    /// The item at the playhead (nil with an empty queue). Setting it to an item of the queue jumps there; any other
    /// item is ignored.
    public var nowPlayingItem: MediaItem? {
        get { lock.withLock { _ in position.map { queue[order[$0]].item } } }
        set {
            lock.withLock { _ in
                guard let item = newValue, let q = queue.firstIndex(where: { $0.item == item }),
                    let o = order.firstIndex(of: q)
                else { return }
                jump(to: o)
            }
        }
    }

    /// Index in the queue (queue order, not shuffled order) of the now-playing item.
    public var indexOfNowPlayingItem: Int? {
        get { lock.withLock { _ in position.map { order[$0] } } }
        set {
            lock.withLock { _ in
                guard let q = newValue, queue.indices.contains(q), let o = order.firstIndex(of: q) else { return }
                jump(to: o)
            }
        }
    }

    /// Whether the queue plays shuffled. Changing it keeps the now-playing item and reorders what follows.
    public var shuffleMode: ShuffleMode {
        get { lock.withLock { _ in _shuffleMode } }
        set {
            lock.withLock { _ in
                guard _shuffleMode != newValue else { return }
                _shuffleMode = newValue
                rebuildOrder(keepingCurrent: position.map { order[$0] })
                upcomingMayHaveChanged()
            }
        }
    }

    /// What happens at the end of an item and at the end of the queue.
    ///
    /// With `.one`, a tracker module or MIDI file plays its own loop: a module whose order list jumps back loops
    /// there, seamlessly, and a MIDI file plays again from its start without a reopen (libopenmpt's repeat count -1,
    /// libfluidsynth's player loop). Every other format is played again from its start, gaplessly. Turned on mid-song,
    /// `.one` takes effect when the song next starts (its first replay starts from the top); turned off, the song
    /// ends where its loop's pass under way ends and the queue goes on.
    public var repeatMode: RepeatMode {
        get { lock.withLock { _ in _repeatMode } }
        set {
            lock.withLock { _ in
                _repeatMode = newValue
                upcomingMayHaveChanged()
            }
        }
    }

    /// The player's own gain (0…1), applied before the music bus. Clamped to `MixerLimits.volume`; a NaN or
    /// infinite value is ignored (`setVolume(_:)` says so instead).
    public var volume: Float {
        get { lock.withLock { _ in _volume } }
        set { try? setVolume(newValue) }
    }

    /// Sets the player's own gain, clamped to `MixerLimits.volume`; NaN and infinities are refused.
    public func setVolume(_ volume: Float) throws(InvalidNumber) {
        let clamped = try volume.clamped(to: MixerLimits.volume, "volume")
        lock.withLock { _ in
            guard clamped != _volume else { return }
            _volume = clamped
            mixer.setStreamGain(channel, clamped)
            post(.volumeDidChange(clamped))
        }
    }

    /// Plays every item at one loudness (-18 LUFS, `LoudnessGain.target`), from its ReplayGain or R128 tags, else
    /// from the media library's analysis; never lifting a peak past full scale (an item whose peak is unknown is only
    /// turned down). Off by default. A change is heard
    /// at once: the now-playing item restarts where it is, at its new gain.
    public var loudnessMatching: LoudnessMatching {
        get { lock.withLock { _ in _loudnessMatching } }
        set {
            lock.withLock { _ in
                guard newValue != _loudnessMatching else { return }
                _loudnessMatching = newValue
                guard let p = position, state == .playing || state == .paused else { return }
                let time = playheadTime()
                stopStream()
                requestStart(at: p, time: time)
            }
        }
    }

    /// The loudness-matching gain for the entry the feeder is opening (pure `LoudnessGain` under the lock).
    func loudnessDecision(entryID: UInt64, item: MediaItem, tags: LoudnessMeasurement?) -> LoudnessGain.Decision {
        lock.withLock { _ in
            var albumNeighbour = false
            if _loudnessMatching == .automatic, let o = orderIndex(ofEntry: entryID) {
                albumNeighbour = [o - 1, o + 1].contains {
                    order.indices.contains($0) && queue[order[$0]].item.isSameAlbum(as: item)
                }
            }
            return LoudnessGain.decide(
                tags: tags, analysis: item.loudness, mode: _loudnessMatching, albumNeighbour: albumNeighbour)
        }
    }

    /// Seconds over which one item fades out while the next fades in (equal power). 0, the default, joins items
    /// gaplessly, sample for sample. Clamped to `MixerLimits.crossfade`; a NaN or infinite value is ignored.
    public var crossfadeDuration: Double {
        get { lock.withLock { _ in _crossfadeDuration } }
        set {
            guard let seconds = try? newValue.clamped(to: MixerLimits.crossfade, "crossfade") else { return }
            lock.withLock { _ in _crossfadeDuration = seconds }
        }
    }

    /// The order in which the queue plays, as queue indices (differs from queue order when shuffling).
    public var playOrder: [Int] { lock.withLock { _ in order.queueIndices } }

    // MARK: Order

    private func rebuildOrder(keepingCurrent current: Int?) {
        if let p = order.rebuild(for: queue.map(\.item), shuffle: _shuffleMode, seed: shuffleSeed, keeping: current) {
            position = p
        }
    }

    /// The order index that follows `p`; `natural` means the item ended by itself (so repeat-one replays it).
    private func nextOrderIndex(after p: Int, natural: Bool) -> Int? {
        order.next(after: p, natural: natural, repeating: _repeatMode)
    }

    // MARK: State

    private func setState(_ new: PlaybackState) {
        guard new != state else { return }
        state = new
        post(.playbackStateDidChange(new))
    }

    private func setPosition(_ new: Int?, force: Bool = false) {
        // After a queue replacement `position` may point past the new order: that counts as a change.
        let old = position.map {
            order.indices.contains($0) && queue.indices.contains(order[$0]) ? queue[order[$0]].id : 0
        }
        position = new
        let now = new.map { queue[order[$0]].id }
        if force || old != now { announce(new) }
    }

    private func announce(_ orderIndex: Int?) {
        guard notificationDepth > 0 else { return }
        announcedEntry = orderIndex.map { queue[order[$0]].id }
        post(.nowPlayingItemDidChange(orderIndex.map { queue[order[$0]].item }))
    }

    private func endOfQueue() {
        resumeTime = 0
        setPosition(nil, force: true)
        setState(.stopped)
    }

    // MARK: The stream (game side)

    /// Empties the stream and starts a new generation; nothing sounds until the feeder fills it.
    private func stopStream() {
        mixer.withStream {
            channel.source.stop()
            channel.source.setBuffer(nil)
        }
        stream.reclaimAll()
        generation &+= 1
        startOrder = nil
        fed = nil
        streamEnded = false
        awaitingFirstBlock = true
        currentPlayID = 0
    }

    /// Asks the feeder to open the item at `orderIndex` at `time` (after `stopStream`); it plays if the player is
    /// playing by then. An item that cannot be opened is reported and skipped by `startFailed`.
    private func requestStart(at orderIndex: Int, time: Double) {
        let entry = queue[order[orderIndex]]
        resumeTime = time
        startOrder = StartOrder(entryID: entry.id, item: entry.item, time: time, loops: _repeatMode == .one)
        setPosition(orderIndex)
        worker?.wake()
    }

    /// Moves `position` to the item at the playhead, announcing a natural change of item.
    private func followPlayhead(_ offset: Int) {
        guard let segment = stream.segment(at: offset)?.segment, segment.playID != currentPlayID else { return }
        currentPlayID = segment.playID
        if let o = orderIndex(ofEntry: segment.entryID) { setPosition(o, force: true) }
    }

    private func orderIndex(ofEntry id: UInt64) -> Int? {
        guard let q = queue.firstIndex(where: { $0.id == id }) else { return nil }
        return order.firstIndex(of: q)
    }

    /// Seconds into the now-playing item.
    private func playheadTime() -> Double {
        guard !stream.queued.isEmpty else { return resumeTime }
        let offset = mixer.withStream { channel.source.sampleOffset }
        guard let (segment, within) = stream.segment(at: offset) else { return resumeTime }
        return Double(segment.startFrame + Int64(within)) / Double(stream.sampleRate)
    }

    // MARK: The stream (feeder side): short locked calls, no I/O

    /// Unqueues played buffers, follows the playhead and notices the end of the queue; then says what to feed.
    /// Nil when there is nothing to do.
    func beginFeederStep(generation feederGeneration: UInt64, hasFeed: Bool) -> FeederOrders? {
        lock.withLock { _ in
            let isNew = feederGeneration != generation
            guard isNew || hasFeed || !stream.queued.isEmpty else { return nil }
            if !stream.queued.isEmpty {
                let (stopped, offset) = mixer.withStream {
                    while let buffer = channel.source.unqueueProcessed() { stream.reclaim(buffer) }
                    return (
                        channel.source.state == .stopped || channel.source.state == .initial,
                        channel.source.sampleOffset
                    )
                }
                followPlayhead(offset)
                if state == .playing && stopped && stream.queued.isEmpty && streamEnded {
                    endOfQueue()
                    return nil
                }
            }
            return FeederOrders(
                generation: generation, start: isNew ? startOrder : nil,
                freeBuffers: stream.freeBufferCount, crossfade: _crossfadeDuration, repeatsOne: _repeatMode == .one)
        }
    }

    /// The item that follows the entry `entryID` (`natural`: it ended by itself, so repeat-one replays it), and
    /// whether it is to play its own loop (repeat-one); nil at the end of the queue or when `feederGeneration` is no
    /// longer the stream's.
    func entry(after entryID: UInt64, natural: Bool, generation feederGeneration: UInt64)
        -> (UInt64, MediaItem, loops: Bool)?
    {
        lock.withLock { _ in
            feederChoseAt = queueEdits
            guard feederGeneration == generation, let o = orderIndex(ofEntry: entryID),
                let next = nextOrderIndex(after: o, natural: natural)
            else { return nil }
            let entry = queue[order[next]]
            return (entry.id, entry.item, _repeatMode == .one)
        }
    }

    func isCurrent(_ feederGeneration: UInt64) -> Bool { lock.withLock { _ in feederGeneration == generation } }

    var queueCount: Int { lock.withLock { _ in order.count } }

    /// The item a generation began with could not be opened: reports it and moves on to the next playable one, or
    /// stops at the end of the queue. Returns what to open instead.
    func startFailed(generation feederGeneration: UInt64, entryID: UInt64, error: DecodingError, tried: Int)
        -> StartOrder?
    {
        let (restart, reported) = lock.withLock { _ -> (StartOrder?, Bool) in
            guard feederGeneration == generation, let o = orderIndex(ofEntry: entryID) else { return (nil, false) }
            post(.playbackError(queue[order[o]].item, error))
            guard tried < order.count, let next = nextOrderIndex(after: o, natural: false) else {
                endOfQueue()
                return (nil, true)
            }
            requestStart(at: next, time: 0)
            return (startOrder, true)
        }
        if reported { Self.logSkipped(error) }
        return restart
    }

    /// Queues a block the feeder decoded for `feederGeneration`, with the errors it met on the way; false when the
    /// stream has moved on and the block was dropped. Plays the stream if the player is playing and it is not.
    func publish(
        _ block: StereoBlock, generation feederGeneration: UInt64, rate: Int,
        fed feeding: (entryID: UInt64, playID: UInt64)?, ended: Bool,
        errors: [(MediaItem, DecodingError)]
    ) -> Bool {
        let published = lock.withLock { _ in
            guard feederGeneration == generation else { return false }
            for (item, error) in errors { post(.playbackError(item, error)) }
            fed = feeding
            streamEnded = ended
            guard block.frames > 0 else { return true }
            let sourceState = mixer.withStream {
                if stream.queued.isEmpty { stream.sampleRate = rate }
                stream.queue(block, on: channel.source)
                return channel.source.state
            }
            if currentPlayID == 0, let first = block.segments.first { currentPlayID = first.playID }
            if state == .playing && sourceState != .playing {
                // A stream that had started and ran dry is an underrun; the generation's first block is not.
                if !awaitingFirstBlock { mixer.underruns.add(1, ordering: .relaxed) }
                mixer.withStream { channel.source.play() }
            }
            awaitingFirstBlock = false
            // The queue was edited while the block was decoded: what it holds ahead must still be next. (Checked
            // only then: the feeder skips unplayable items, which the queue alone cannot tell.)
            if feederChoseAt != queueEdits && block.segments.contains(where: { $0.playID > currentPlayID }) {
                restartIfUpcomingChanged()
            }
            return true
        }
        // Only a current feeder's errors are news: a stale one's files are met again by the feeder that replaced it.
        if published { for (_, error) in errors { Self.logSkipped(error) } }
        return published
    }
}
