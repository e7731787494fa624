import AmbienceCore
import AmbienceMixer
import AmbiencePlatform

extension MusicPlayer {
    // MARK: Transport

    /// What the player is doing.
    public var playbackState: PlaybackState { lock.withLock { _ in state } }

    /// Plays the now-playing item (the queue's first when none): a paused item goes on where it paused, a stopped one
    /// starts from the beginning. Returns at once; the music is heard once the streaming thread has decoded its first
    /// block. While the player is held (`isHeld`) it only records that it is to play once let go.
    public func play() {
        lock.withLock { _ in
            waitsForPlay = false
            switch state {
            case .playing: return
            case .paused where !stream.isEmpty:
                // The feeder may be in a long wait (all buffers queued when it paused): woken, it refills now.
                if !held {
                    stream.resume()
                    wakeFeeder()
                }
            default:
                if position == nil { position = order.isEmpty ? nil : 0 }
                guard let p = position else { return }
                stream.restart()
                requestStart(at: p, time: resumeTime)
                // As on iOS: the item that starts is announced, even if it became the now-playing item (by
                // setQueue) before notifications began.
                if notificationDepth > 0 && announcedEntry != queue[order[p]].id { announce(p) }
            }
            setState(.playing)
        }
    }

    /// Pauses where the music is; `play()` resumes there. While the player is held, it records that it is to stay
    /// paused once let go.
    public func pause() {
        lock.withLock { _ in
            guard state == .playing || state == .interrupted else { return }
            resumeTime = playheadTime()
            stream.pause()
            setState(.paused)
        }
    }

    /// Stops playback; the now-playing item stays, and `play()` starts it again from the beginning.
    public func stop() {
        lock.withLock { _ in
            stream.restart()
            resumeTime = 0
            setState(.stopped)
        }
    }

    /// Marks the player interrupted (by the session): silent, and resumable with `play()`.
    package func interrupt() {
        lock.withLock { _ in
            guard state == .playing else { return }
            resumeTime = playheadTime()
            stream.pause()
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
            stream.restart()
            endOfQueue()
            return
        }
        let playing = state == .playing
        stream.restart()
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
            stream.restart()
            if state == .playing || state == .paused {
                requestStart(at: p, time: time)  // paused: filled, and heard on play()
            } else {
                resumeTime = time
                noteChange()
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
            mixer.setStreamGain(stream.channel, clamped)
            post(.volumeDidChange(clamped))
            noteChange()
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
                stream.restart()
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
}
