import Synchronization

/// What a music player is doing (the iOS names).
public enum PlaybackState: String, Sendable {
    case stopped, playing, paused, interrupted, seekingForward, seekingBackward
}

public enum ShuffleMode: String, Sendable, CaseIterable { case off, songs, albums }
public enum RepeatMode: String, Sendable, CaseIterable { case none, one, all }

/// What a music player tells the game, delivered by `AudioEngine.update()`.
public enum MusicEvent: Sendable, Equatable {
    case nowPlayingItemDidChange(MediaItem?)
    case playbackStateDidChange(PlaybackState)
    case volumeDidChange(Float)
    case queueDidChange
    /// An item could not be played; the player moved on to the next one.
    case playbackError(MediaItem, DecodingError)
}

/// The application music player: a queue of items streamed gaplessly through the `music` bus.
///
/// Decoding runs ahead on the engine's streaming thread, so music never depends on how often the game calls
/// `update()`. All methods may be called from any thread; notifications arrive in `AudioEngine.update()`.
public final class MusicPlayer: @unchecked Sendable {
    private let mixer: Mixer
    private let channel: StreamChannel
    private let lock = Lock<Void>(())
    // Everything below is guarded by `lock`.
    private var queue: [Entry] = []
    private var order: [Int] = []
    /// Index into `order` of the item at the playhead (or the one that will play next when stopped).
    private var position: Int?
    private var state = PlaybackState.stopped
    private var resumeTime: Double = 0
    private var _shuffleMode = ShuffleMode.off
    private var _repeatMode = RepeatMode.none
    private var _volume: Float = 1
    private var notificationDepth = 0
    private var events: [MusicEvent] = []
    private var nextEntryID: UInt64 = 1
    private var nextPlayID: UInt64 = 1
    private var currentPlayID: UInt64 = 0
    private var stream: StreamQueue
    private var feed: Feed?
    /// The next item, fading in under the end of `feed` during a crossfade.
    private var incoming: Feed?
    private var fadeLength = 0
    private var fadeDone = 0
    private var _crossfadeDuration: Double = 0
    /// Seed for shuffling; fixed for reproducible tests.
    public var shuffleSeed: UInt64 = 0x5EED

    struct Entry {
        let id: UInt64
        let item: MediaItem
    }

    /// The item being decoded into the stream: may run ahead of the one being heard.
    private struct Feed {
        let orderIndex: Int
        let entryID: UInt64
        let playID: UInt64
        let decoder: any AudioDecoder

        /// This feed at `rate`: an OpenAL queue holds one rate, so an item at another rate is resampled to join
        /// the stream without a gap.
        func at(rate: Int) -> Feed {
            guard decoder.info.sampleRate != rate else { return self }
            return Feed(orderIndex: orderIndex, entryID: entryID, playID: playID, decoder: ResampledDecoder(decoder, rate: rate))
        }
    }

    static let bufferFrames = 4096
    static let bufferCount = 6

    init(mixer: Mixer, bus: Bus) throws(EngineError) {
        self.mixer = mixer
        guard let channel = mixer.makeStreamChannel(bus: bus) else { throw .outOfMixerMemory("music stream") }
        self.channel = channel
        stream = StreamQueue(buffers: mixer.withStream { ALBuffer.makeEmpty(count: MusicPlayer.bufferCount) })
    }

    func close() {
        lock.withLock { _ in
            mixer.withStream {
                channel.source.stop()
                channel.source.setBuffer(nil)
                for buffer in stream.allBuffers { buffer.delete() }
            }
            stream.reclaimAll()
            feed = nil
        }
        mixer.removeStreamChannel(channel)
    }

    // MARK: Notifications

    /// Starts delivering notifications. Calls nest: each `begin` needs its own `end`.
    public func beginGeneratingPlaybackNotifications() { lock.withLock { _ in notificationDepth += 1 } }
    public func endGeneratingPlaybackNotifications() { lock.withLock { _ in notificationDepth = max(notificationDepth - 1, 0) } }

    private func post(_ event: MusicEvent) {
        if notificationDepth > 0 && events.count < 4096 { events.append(event) }
    }

    func drainEvents() -> [MusicEvent] {
        lock.withLock { _ in
            let drained = events
            events.removeAll(keepingCapacity: true)
            return drained
        }
    }

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
            if wasPlaying { startStream(at: 0, time: 0) }
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
            let orderIndex = order.firstIndex(of: queueIndex)!
            let removingCurrent = orderIndex == position
            queue.remove(at: queueIndex)
            order.remove(at: orderIndex)
            for i in order.indices where order[i] > queueIndex { order[i] -= 1 }
            if let p = position, orderIndex < p { position = p - 1 }
            post(.queueDidChange)
            if removingCurrent {
                let playing = state == .playing
                stopStream()
                resumeTime = 0
                if orderIndex < order.count {
                    setPosition(orderIndex, force: true)
                    if playing { startStream(at: orderIndex, time: 0) }
                } else {
                    endOfQueue()
                }
            } else {
                restartIfUpcomingChanged()
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
        for i in order.indices where order[i] >= at { order[i] += entries.count }
        let newIndices = Array(at..<(at + entries.count))
        if afterCurrentInOrder, let p = position {
            order.insert(contentsOf: newIndices, at: p + 1)
        } else if _shuffleMode == .off {
            // Keep the play order equal to the queue order.
            let orderAt = order.firstIndex(where: { $0 > newIndices.last! }) ?? order.count
            order.insert(contentsOf: newIndices, at: orderAt)
        } else {
            order.append(contentsOf: newIndices)
        }
        if position == nil && state == .stopped { position = order.firstIndex(of: at) }
        post(.queueDidChange)
        restartIfUpcomingChanged()
    }

    /// If the stream already decoded ahead into an item that is no longer next, re-feed from the playhead.
    private func restartIfUpcomingChanged() {
        guard let feed, let p = position, feed.orderIndex != p || feed.playID != currentPlayID else { return }
        let expected = nextOrderIndex(after: p, natural: true)
        if feed.orderIndex != expected || (expected.map { queue[order[$0]].id } != feed.entryID) {
            let time = playheadTime()
            let playing = state == .playing
            stopStream()
            startStream(at: p, time: time, playImmediately: playing)
        }
    }

    // MARK: Transport

    public var playbackState: PlaybackState { lock.withLock { _ in state } }

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
                startStream(at: p, time: resumeTime, playImmediately: true)
                if position == nil { return } // every item failed
            }
            setState(.playing)
        }
    }

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
        if playing { startStream(at: target, time: 0, playImmediately: true) }
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
            if state == .playing {
                startStream(at: p, time: time, playImmediately: true)
            } else {
                resumeTime = time
                if state == .paused { startStream(at: p, time: time, playImmediately: false) }
            }
        }
    }

    public var nowPlayingItem: MediaItem? {
        get { lock.withLock { _ in position.map { queue[order[$0]].item } } }
        set {
            lock.withLock { _ in
                guard let item = newValue, let q = queue.firstIndex(where: { $0.item == item }), let o = order.firstIndex(of: q) else { return }
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

    public var shuffleMode: ShuffleMode {
        get { lock.withLock { _ in _shuffleMode } }
        set {
            lock.withLock { _ in
                guard _shuffleMode != newValue else { return }
                _shuffleMode = newValue
                rebuildOrder(keepingCurrent: position.map { order[$0] })
                restartIfUpcomingChanged()
            }
        }
    }

    public var repeatMode: RepeatMode {
        get { lock.withLock { _ in _repeatMode } }
        set {
            lock.withLock { _ in
                _repeatMode = newValue
                restartIfUpcomingChanged()
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
    public var playOrder: [Int] { lock.withLock { _ in order } }

    // MARK: Order

    private func rebuildOrder(keepingCurrent current: Int?) {
        var rng = SplitMix64(seed: shuffleSeed)
        switch _shuffleMode {
        case .off:
            order = Array(queue.indices)
        case .songs:
            order = Array(queue.indices)
            order.shuffle(using: &rng)
        case .albums:
            var albums: [String: [Int]] = [:]
            var albumOrder: [String] = []
            for (i, entry) in queue.enumerated() {
                let key = entry.item.albumTitle ?? ""
                if albums[key] == nil { albumOrder.append(key) }
                albums[key, default: []].append(i)
            }
            albumOrder.shuffle(using: &rng)
            order = albumOrder.flatMap { key in
                albums[key]!.sorted { (queue[$0].item.discNumber ?? 0, queue[$0].item.trackNumber ?? 0, $0) < (queue[$1].item.discNumber ?? 0, queue[$1].item.trackNumber ?? 0, $1) }
            }
        }
        if let current, let at = order.firstIndex(of: current) {
            if _shuffleMode != .off {
                // The playing item leads the new order, as on iOS.
                order.remove(at: at)
                order.insert(current, at: 0)
                position = 0
            } else {
                position = at
            }
        }
    }

    /// The order index that follows `p`; `natural` means the item ended by itself (so repeat-one replays it).
    private func nextOrderIndex(after p: Int, natural: Bool) -> Int? {
        if natural && _repeatMode == .one { return p }
        if p + 1 < order.count { return p + 1 }
        return _repeatMode == .all && !order.isEmpty ? 0 : nil
    }

    // MARK: State

    private func setState(_ new: PlaybackState) {
        guard new != state else { return }
        state = new
        post(.playbackStateDidChange(new))
    }

    private func setPosition(_ new: Int?, force: Bool = false) {
        let old = position.map { queue.indices.contains(order[$0]) ? queue[order[$0]].id : 0 }
        position = new
        let now = new.map { queue[order[$0]].id }
        if force || old != now { post(.nowPlayingItemDidChange(new.map { queue[order[$0]].item })) }
    }

    private func endOfQueue() {
        resumeTime = 0
        setPosition(nil, force: true)
        setState(.stopped)
    }

    // MARK: Streaming

    /// Empties the stream; nothing sounds until `startStream`.
    private func stopStream() {
        mixer.withStream {
            channel.source.stop()
            channel.source.setBuffer(nil)
        }
        stream.reclaimAll()
        feed = nil
        incoming = nil
        currentPlayID = 0
    }

    /// Opens the item at `orderIndex` (skipping unplayable ones), seeks to `time`, fills the queue and plays.
    private func startStream(at orderIndex: Int, time: Double, playImmediately: Bool = true) {
        var index: Int? = orderIndex
        var seekTime = time
        var tried = 0
        while let i = index, tried < order.count {
            tried += 1
            let entry = queue[order[i]]
            do {
                let decoder = try AudioFile.open(fileSystemPath: entry.item.fileSystemPath, name: entry.item.url)
                // Engine-made from a finite, non-negative time: saturating keeps an absurd one at the item's end.
                let frame = (seekTime * Double(decoder.info.sampleRate)).saturated(Int64.self, rounding: .down)
                if frame > 0 { try decoder.seek(toFrame: min(frame, decoder.info.frames)) }
                feed = Feed(orderIndex: i, entryID: entry.id, playID: nextPlayID, decoder: decoder)
                nextPlayID += 1
                currentPlayID = feed!.playID
                setPosition(i)
                fill()
                if playImmediately { mixer.withStream { channel.source.play() } }
                return
            } catch {
                post(.playbackError(entry.item, error.naming(entry.item.url)))
                seekTime = 0
                index = nextOrderIndex(after: i, natural: false)
            }
        }
        // Nothing in the queue could be played.
        endOfQueue()
    }

    /// Refills finished buffers and follows the playhead. Called by the streaming thread, or per block when offline.
    func pump() {
        lock.withLock { _ in
            guard feed != nil || !stream.queued.isEmpty else { return }
            let (sourceStopped, playhead) = reclaimProcessed()
            followPlayhead(playhead)
            if state == .playing && sourceStopped {
                if stream.queued.isEmpty {
                    if feed == nil {
                        endOfQueue()
                        return
                    }
                } else {
                    // Starved: restart from where it stopped.
                    mixer.underruns.add(1, ordering: .relaxed)
                }
            }
            fill()
            if state == .playing && sourceStopped && !stream.queued.isEmpty { mixer.withStream { channel.source.play() } }
        }
    }

    /// Unqueues played buffers; returns whether the source has stopped and the playhead in frames from the queue head.
    private func reclaimProcessed() -> (Bool, Int) {
        mixer.withStream {
            while let buffer = channel.source.unqueueProcessed() { stream.reclaim(buffer) }
            return (channel.source.state == .stopped || channel.source.state == .initial, channel.source.sampleOffset)
        }
    }

    /// Moves `position` to the item at the playhead, announcing a natural change of item.
    private func followPlayhead(_ offset: Int) {
        guard let segment = stream.segment(at: offset)?.segment, segment.playID != currentPlayID else { return }
        currentPlayID = segment.playID
        if let o = order.firstIndex(where: { queue[$0].id == segment.entryID }) { setPosition(o, force: true) }
    }

    /// Seconds into the now-playing item.
    private func playheadTime() -> Double {
        guard !stream.queued.isEmpty else { return resumeTime }
        let offset = mixer.withStream { channel.source.sampleOffset }
        guard let (segment, within) = stream.segment(at: offset) else { return resumeTime }
        return Double(segment.startFrame + Int64(within)) / Double(stream.sampleRate)
    }

    /// Decodes into every free buffer, crossing from item to item without a gap.
    private func fill() {
        var emptyItems = 0
        while stream.hasFreeBuffer, var current = feed {
            if stream.queued.isEmpty { stream.sampleRate = current.decoder.info.sampleRate }
            let rate = stream.sampleRate
            current = current.at(rate: rate)
            feed = current
            var segments: [StreamQueue.Segment] = []
            var filled = 0
            while filled < MusicPlayer.bufferFrames {
                let start = current.decoder.position
                let remaining = Int(max(current.decoder.info.frames - start, 0))
                beginCrossfadeIfDue(after: current, remaining: remaining, rate: rate)
                var want = MusicPlayer.bufferFrames - filled
                let fadeFrames = Int(_crossfadeDuration * Double(rate))
                if incoming != nil {
                    want = min(want, max(remaining, 1))
                } else if fadeFrames > 0 && remaining > fadeFrames {
                    want = min(want, remaining - fadeFrames)  // stop exactly where the fade must begin
                }
                var got = 0
                do {
                    got = try stream.decode(from: current.decoder, into: filled, frames: want)
                } catch {
                    let item = queue[order[current.orderIndex]].item
                    post(.playbackError(item, error.naming(item.url)))
                }
                if got > 0 {
                    if let incoming {
                        stream.mixIn(from: incoming.decoder, at: filled, frames: got, fadeDone: fadeDone, fadeLength: fadeLength)
                        fadeDone += got
                    }
                    segments.append(.init(entryID: current.entryID, playID: current.playID, startFrame: start, frames: got))
                    filled += got
                    emptyItems = 0
                    continue
                }
                // This item is done: the next one follows in the same buffer, at the stream's rate (already under
                // way if it was fading in).
                emptyItems += 1
                let following = incoming ?? (emptyItems <= order.count ? openNext(after: current) : nil)
                incoming = nil
                guard let next = following?.at(rate: rate) else { feed = nil; break }
                feed = next
                current = next
            }
            if filled > 0 {
                mixer.withStream { stream.queueFilled(frames: filled, segments: segments, on: channel.source) }
            }
        }
    }

    /// Opens the next item to fade in once the current one is within the crossfade of its end.
    private func beginCrossfadeIfDue(after current: Feed, remaining: Int, rate: Int) {
        let fadeFrames = Int(_crossfadeDuration * Double(rate))
        guard fadeFrames > 0, incoming == nil, remaining > 0, remaining <= fadeFrames else { return }
        guard let next = openNext(after: current) else { return }
        incoming = next.at(rate: rate)
        fadeLength = remaining
        fadeDone = 0
    }

    /// The decoder for the item after `feed`, skipping (and reporting) unplayable ones.
    private func openNext(after feed: Feed) -> Feed? {
        var index = nextOrderIndex(after: feed.orderIndex, natural: true)
        var tried = 0
        while let i = index, tried < order.count {
            tried += 1
            let entry = queue[order[i]]
            do {
                let decoder = try AudioFile.open(fileSystemPath: entry.item.fileSystemPath, name: entry.item.url)
                defer { nextPlayID += 1 }
                return Feed(orderIndex: i, entryID: entry.id, playID: nextPlayID, decoder: decoder)
            } catch {
                post(.playbackError(entry.item, error.naming(entry.item.url)))
                index = nextOrderIndex(after: i, natural: false)
            }
        }
        return nil
    }
}

/// A small, seedable random generator, so shuffles are reproducible.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
