import AmbienceCore
import AmbienceDecoding
import AmbiencePlatform

/// The streaming side of the music player: it opens, probes, seeks and decodes, and nothing else does.
///
/// It runs on the streaming thread (or, offline, inside `render`), one step at a time, and owns every decoder. It
/// never holds the player's lock while it touches a file: it reads its orders from the player in short locked calls,
/// decodes with no lock held, and hands each finished block back with the generation it was made for. A block from
/// a generation the game has since replaced (a skip, a seek, a queue edit) is dropped, so a late block never plays.
/// It has the next item opened ahead (`AheadOpener`) as soon as the stream is full, so a join never waits on the disk.
final class MusicFeeder {
    /// How the feeder opens an item: `AudioFile` in the engine, a slow or gated disk in tests. `loops`: the song's
    /// own loop plays forever (`DecoderOptions.loopsForever`), asked for while the player repeats one item.
    typealias Opener = @Sendable (MediaItem, _ loops: Bool) throws(DecodingError) -> any AudioDecoder

    struct Feed {
        let entryID: UInt64
        let playID: UInt64
        let item: MediaItem
        let decoder: any AudioDecoder
        /// Opened to loop forever: a module or MIDI file then never ends by itself (other formats end as usual).
        var loops = false

        /// This feed at `rate`: an OpenAL queue holds one rate, so an item at another rate is resampled to join
        /// the stream without a gap.
        func at(rate: Int) -> Feed {
            guard decoder.info.sampleRate != rate else { return self }
            return Feed(
                entryID: entryID, playID: playID, item: item, decoder: ResampledDecoder(decoder, rate: rate),
                loops: loops)
        }
    }

    let ahead: AheadOpener
    private var generation: UInt64 = 0
    private var feed: Feed?
    /// The next item, fading in under the end of `feed` during a crossfade.
    private var incoming: Feed?
    private var ended = false
    private var rate = 48_000
    private var fadeLength = 0
    private var fadeDone = 0
    private var nextPlayID: UInt64 = 1
    private var block = StereoBlock()

    init(ahead: AheadOpener) { self.ahead = ahead }

    /// One round: take up a new generation, fill every free buffer, then open the next item ahead. Returns, when
    /// every buffer is queued after it, the seconds until the playing buffer or segment ends (nothing is due before);
    /// else nil.
    @discardableResult
    func step(_ player: MusicPlayer) -> Double? {
        guard let orders = player.beginFeederStep(generation: generation, hasFeed: feed != nil) else { return nil }
        if orders.generation != generation {
            generation = orders.generation
            feed = nil
            incoming = nil
            ended = false
            if let start = orders.start { begin(start, player) }
        }
        // Repeat-one was turned off under a song playing its own loop: it ends where this pass ends, and what
        // follows joins there.
        if let looping = feed, looping.loops, !orders.repeatsOne {
            looping.decoder.endLoopAfterThisPass()
            feed?.loops = false
        }
        var filled = 0
        for _ in 0..<orders.freeBuffers {
            // A start's first block is short: the first sound waits for it alone.
            let limit = orders.start != nil && filled == 0 ? StereoBlock.startFrames : StereoBlock.capacity
            guard feed != nil, fillBlock(player, crossfade: orders.crossfade, limit: limit) else { break }
            filled += 1
        }
        prepareNext(player)
        // Every buffer is queued now (the ones just filled went behind the one playing): nothing is due before it ends.
        return filled == orders.freeBuffers && orders.start == nil ? orders.quietSeconds : nil
    }

    /// Opens the item the game asked for, skipping (and reporting) unplayable ones, and seeks it.
    private func begin(_ start: MusicPlayer.StartOrder, _ player: MusicPlayer) {
        var order: MusicPlayer.StartOrder? = start
        var tried = 0
        while let current = order {
            tried += 1
            do throws(DecodingError) {
                let decoder = try ahead.open(current.item, loops: current.loops)
                // Engine-made from a finite, non-negative time: saturating keeps an absurd one at the item's end.
                let frame = (current.time * Double(decoder.info.sampleRate)).saturated(Int64.self, rounding: .down)
                if frame > 0 { try decoder.seek(toFrame: min(frame, decoder.info.frames)) }
                feed = makeFeed(
                    entryID: current.entryID, item: current.item, decoder: decoder, loops: current.loops, player)
                rate = decoder.info.sampleRate
                return
            } catch {
                order = player.startFailed(
                    generation: generation, entryID: current.entryID,
                    error: error.naming(current.item.url), tried: tried)
            }
        }
    }

    /// A feed for an opened item, at its loudness-matching gain when the player matches loudness.
    private func makeFeed(
        entryID: UInt64, item: MediaItem, decoder: any AudioDecoder, loops: Bool, _ player: MusicPlayer
    ) -> Feed {
        defer { nextPlayID += 1 }
        let decision = player.loudnessDecision(entryID: entryID, item: item, tags: decoder.info.tags.loudness)
        let gained: any AudioDecoder = decision.gain == 1 ? decoder : GainedDecoder(decoder, gain: decision.gain)
        // Repeat-one asks every item to loop; only modules and MIDI files do (their length is then unbounded).
        // Another format replays as a new item, opened ahead like any other.
        let loopsForever = loops && decoder.info.frames == AudioInfo.maximumFrames
        return Feed(entryID: entryID, playID: nextPlayID, item: item, decoder: gained, loops: loopsForever)
    }

    /// Decodes one block, crossing from item to item without a gap, and hands it to the player. Returns false when
    /// the player refused it (a newer generation) or the stream has ended.
    private func fillBlock(_ player: MusicPlayer, crossfade: Double, limit: Int) -> Bool {
        block.reset(limit: limit)
        var errors: [(MediaItem, DecodingError)] = []
        var emptyItems = 0
        // engine-made: a clamped crossfade at the stream's rate
        let fadeFrames = (crossfade * Double(rate)).saturated(Int.self)
        while block.room > 0, let current = feed?.at(rate: rate) {
            feed = current
            let remaining = Int(max(current.decoder.info.frames - current.decoder.position, 0))
            if fadeFrames > 0, incoming == nil, remaining > 0, remaining <= fadeFrames {
                guard case .found(let next) = following(current, natural: true, player, &errors) else { return false }
                incoming = next?.at(rate: rate)
                fadeLength = remaining
                fadeDone = 0
            }
            var want = block.room
            if incoming != nil {
                want = min(want, max(remaining, 1))
            } else if fadeFrames > 0 && remaining > fadeFrames {
                want = min(want, remaining - fadeFrames)  // stop exactly where the fade must begin
            }
            var got = 0
            do throws(DecodingError) {
                got = try block.append(
                    from: current.decoder, frames: want, entryID: current.entryID, playID: current.playID)
            } catch {
                errors.append((current.item, error.naming(current.item.url)))
            }
            if got > 0 {
                if let incoming {
                    block.mixIn(from: incoming.decoder, frames: got, fadeDone: fadeDone, fadeLength: fadeLength)
                    fadeDone += got
                }
                emptyItems = 0
                continue
            }
            // This item is done: the next one follows in the same block (already under way if it was fading in).
            emptyItems += 1
            let next: Feed?
            if let fading = incoming {
                next = fading
            } else if emptyItems > player.queueCount {
                next = nil  // every item in the queue is empty
            } else {
                guard case .found(let found) = following(current, natural: true, player, &errors) else { return false }
                next = found
            }
            incoming = nil
            feed = next
            if next == nil { ended = true }
        }
        let fed = feed.map { (entryID: $0.entryID, playID: $0.playID) }
        return player.publish(block, generation: generation, rate: rate, fed: fed, ended: ended, errors: errors)
            && !ended
    }

    private enum Following { case found(Feed?), stale }

    /// The feed for the item after `current`: opened ahead when it could be, else opened now; unplayable ones are
    /// reported and skipped. `.stale` when the game has moved the stream elsewhere meanwhile.
    private func following(
        _ current: Feed, natural: Bool, _ player: MusicPlayer,
        _ errors: inout [(MediaItem, DecodingError)]
    ) -> Following {
        var after = current.entryID
        var isNatural = natural
        for _ in 0..<max(player.queueCount, 1) {
            guard let (entryID, item, loops) = player.entry(after: after, natural: isNatural, generation: generation)
            else { return player.isCurrent(generation) ? .found(nil) : .stale }
            switch ahead.take(AheadOpener.Request(entryID: entryID, loops: loops), item) {
            case .success(let decoder):
                let next = makeFeed(entryID: entryID, item: item, decoder: decoder, loops: loops, player)
                return .found(next.at(rate: rate))
            case .failure(let error):
                errors.append((item, error.naming(item.url)))
                after = entryID
                isNatural = false
            }
        }
        return .found(nil)
    }

    /// Has the item that will follow the current one opened ahead, unless it already is, or the current one loops
    /// forever (nothing follows it until repeat-one is turned off).
    private func prepareNext(_ player: MusicPlayer) {
        guard let feed, incoming == nil, !feed.loops else { return }
        guard let (entryID, item, loops) = player.entry(after: feed.entryID, natural: true, generation: generation)
        else { return }
        ahead.prepare(AheadOpener.Request(entryID: entryID, loops: loops), item)
    }
}
