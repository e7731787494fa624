import AmbiencePlatform
import Glibc

/// The mixer's real OpenAL sources: which are free, which voice slot each carries, what each was last told (so a
/// voice's start sends OpenAL only what differs: each AL call costs), which are to start at the next block
/// (`PendingStarts`), and when each starts being asked whether its one-shot has played out. Used under the mixer's
/// lock, with its context current.
struct SourcePool {
    private(set) var sources: [ALSource]
    /// Starts recorded by `Mixer.attach`, applied by whoever renders next (`Mixer.render`).
    let starts: PendingStarts
    private var free: [Int32]
    /// The voice slot each source carries, or -1.
    private(set) var owners: [Int32]
    private(set) var settings: [SourceSettings]
    /// From when, on the voice clock, a tick asks each source whether its one-shot has played out.
    private var pollFrom: [Int]

    /// Output frames before a real one-shot's predicted end when its source starts being asked: two 2048-frame
    /// blocks, or two of the blocks the mixer is ticked with when they are larger.
    static let endPollLeadFrames = 4096

    init(count: Int) {
        sources = ALSource.make(count: count)
        starts = PendingStarts(sources: sources)
        free = (0..<Int32(sources.count)).reversed()
        owners = Array(repeating: -1, count: sources.count)
        settings = Array(repeating: SourceSettings(), count: sources.count)
        pollFrom = Array(repeating: 0, count: sources.count)
        startFrames = Array(repeating: 0, count: sources.count)
    }

    /// Primes OpenAL Soft for the whole pool starting in one block (`ALSource.primeVoices`), on the thread that makes
    /// the mixer, so that the block's batch of starts on the audio thread (`PendingStarts`) neither grows OpenAL's
    /// voice array nor allocates its property blocks. The context must be current.
    func primeVoices(on device: LoopbackDevice) {
        var scratch = [Float](repeating: 0, count: 128)
        sources.withUnsafeBufferPointer { batch in
            ALSource.primeVoices(batch, sampleRate: device.sampleRate) {
                scratch.withUnsafeMutableBytes { bytes in
                    if let base = bytes.baseAddress { device.render(into: base, frames: 64) }
                }
            }
        }
    }

    /// The frame each source's recorded start plays from: where a start taken back before its block stood, since
    /// OpenAL reads a source that has not played as at 0.
    private(set) var startFrames: [Double]

    /// Notes that `source`'s start, recorded, plays from `frame`.
    mutating func noteStart(_ source: Int32, from frame: Double) {
        if source >= 0, Int(source) < startFrames.count { startFrames[Int(source)] = frame }
    }

    var count: Int { sources.count }
    var freeCount: Int { free.count }
    var inUse: Int { sources.count - free.count }

    /// Property calls sent to OpenAL (each takes OpenAL Soft's locks): what the settings cache saves is counted here.
    private(set) var propertyCalls = 0

    /// Free sources looked at for one that already has a new voice's settings.
    static let reuseLookahead = 8

    /// A free source, now carrying `slot`; nil when all are in use. Among the last few freed, one that already holds
    /// `buffer` at `placement` is taken first (the same sound restarted where it was: nothing but the play is sent),
    /// then one that holds `buffer`, then the last freed.
    mutating func take(for slot: Int32, buffer: ALBuffer? = nil, placement: Placement? = nil) -> Int32? {
        guard !free.isEmpty else { return nil }
        if let buffer {
            let position = placement.map(SourcePool.position)
            var chosen = -1
            for i in stride(from: free.count - 1, through: max(free.count - SourcePool.reuseLookahead, 0), by: -1) {
                let had = settings[Int(free[i])]
                guard had.buffer == buffer else { continue }
                if chosen < 0 { chosen = i }
                if position == nil || had.position == position {
                    chosen = i
                    break
                }
            }
            if chosen >= 0 { free.swapAt(chosen, free.count - 1) }
        }
        let source = free.removeLast()
        owners[Int(source)] = slot
        return source
    }

    /// Hands a source carrying one voice to another (a steal of a source, not of a slot).
    mutating func reassign(_ source: Int32, to slot: Int32) { owners[Int(source)] = slot }

    /// Stops a source and returns it to the free list; its settings (buffer included) stay cached.
    mutating func give(_ source: Int32) {
        let al = sources[Int(source)]
        // A start taken back never played; the stop clears the offset it was to start at.
        if starts.takeBack(source) || al.state != .stopped { al.stop() }
        owners[Int(source)] = -1
        free.append(source)
    }

    subscript(source: Int32) -> ALSource { sources[Int(source)] }

    /// Plays at once a start still recorded, so that what follows (a pause, a stop, a question about its state or
    /// playhead) finds the source as a start inside `play()` would have left it. Context current.
    func settle(_ source: Int32) {
        if starts.takeBack(source) { sources[Int(source)].play() }
    }

    /// Pauses a source where it is (a recorded start is played first, then paused at its first sample).
    func pause(_ source: Int32) {
        settle(source)
        sources[Int(source)].pause()
    }

    /// Sends the source only the settings that differ from what it has.
    mutating func configure(_ index: Int, _ wanted: SourceSettings) {
        let had = settings[index]
        let source = sources[index]
        propertyCalls += had.differences(from: wanted)
        if had.buffer != wanted.buffer { source.setBuffer(wanted.buffer) }
        if had.loop != wanted.loop { source.setLooping(wanted.loop) }
        if had.pitch != wanted.pitch { source.setPitch(wanted.pitch) }
        if had.relative != wanted.relative { source.setRelative(wanted.relative) }
        if had.rolloff != wanted.rolloff { source.setRolloff(wanted.rolloff) }
        if had.referenceDistance != wanted.referenceDistance { source.setReferenceDistance(wanted.referenceDistance) }
        if had.maxDistance != wanted.maxDistance { source.setMaxDistance(wanted.maxDistance) }
        if had.velocity != wanted.velocity {
            source.setVelocity(wanted.velocity.x, wanted.velocity.y, wanted.velocity.z)
        }
        if had.reverb != wanted.reverb { source.setReverbSend(wanted.reverb) }
        if had.position != wanted.position {
            source.setPosition(wanted.position.x, wanted.position.y, wanted.position.z)
        }
        if had.maxGain != wanted.maxGain { source.setMaxGain(wanted.maxGain) }
        if had.gain != wanted.gain { source.setGain(wanted.gain) }
        settings[index] = wanted
    }

    /// Notes a direct filter set on (or taken off) a source; OpenAL copies a filter's parameters when it is set.
    mutating func noteFiltered(_ index: Int, _ on: Bool) { settings[index].filtered = on }

    /// Places a source: a pan is a point on a unit circle around the listener, a world point uses the listener's
    /// distance settings. A folded stereo sound's mono source stands at the listener's point whatever its placement,
    /// unattenuated: OpenAL Soft 1.19 places, attenuates and Doppler-shifts mono sources only, and plays a stereo one
    /// as two speakers before the listener wherever it is (`Mixer.makeSound`).
    mutating func place(_ index: Int, _ placement: Placement, listener: ListenerState, folded: Bool) {
        configure(index, SourcePool.placed(settings[index], placement, listener: listener, folded: folded))
    }

    /// `settings` with a placement's: what `place` sends, for a caller that first asks whether anything differs.
    static func placed(
        _ settings: SourceSettings, _ placement: Placement, listener: ListenerState, folded: Bool
    ) -> SourceSettings {
        var wanted = settings
        if folded {
            wanted.relative = true
            wanted.rolloff = 0
            wanted.velocity = .zero
            wanted.position = .zero
            return wanted
        }
        switch placement {
        case .pan:
            wanted.relative = true
            wanted.rolloff = 0
            wanted.velocity = .zero
        case .world(_, let velocity):
            wanted.relative = false
            wanted.rolloff = listener.rolloff
            wanted.referenceDistance = listener.referenceDistance
            wanted.maxDistance = listener.maxDistance
            wanted.velocity = velocity
        }
        wanted.position = SourcePool.position(placement)
        return wanted
    }

    /// Where OpenAL puts a placement: a pan is a point on a unit circle around the listener (relative), a world
    /// voice its own point.
    static func position(_ placement: Placement) -> Vector3 {
        switch placement {
        case .pan(let pan):
            let angle = Double(min(max(pan, -1), 1)) * Double.pi / 2
            return Vector3(x: Float(sin(angle)), y: 0, z: Float(-cos(angle)))
        case .world(let position, _):
            return position
        }
    }

    /// Sets a source's gain and the most OpenAL lets it be, unless it has them already.
    mutating func setGain(_ index: Int, _ gain: Float, most: Float) {
        if settings[index].maxGain != most {
            sources[index].setMaxGain(most)
            settings[index].maxGain = most
            propertyCalls += 1
        }
        guard settings[index].gain != gain else { return }
        sources[index].setGain(gain)
        settings[index].gain = gain
        propertyCalls += 1
    }

    /// Idle sources keep their last buffer (a replay of the same sound then skips re-attaching it); OpenAL refuses
    /// to delete a buffer a source holds.
    mutating func detach(_ buffer: ALBuffer) {
        for i in settings.indices where settings[i].buffer == buffer {
            sources[i].setBuffer(nil)
            settings[i].buffer = nil
        }
    }

    /// Idle sources keep their last send too, and OpenAL refuses to delete a slot a source still sends to.
    mutating func detach(_ reverb: ALEffectSlot) {
        for i in settings.indices where settings[i].reverb == reverb {
            var wanted = settings[i]
            wanted.reverb = nil
            configure(i, wanted)
        }
    }

    /// Stops every source and lets go of every buffer (before the device closes).
    mutating func stopAll() {
        for i in sources.indices { _ = starts.takeBack(Int32(clamping: i)) }
        for source in sources { source.stop(); source.setBuffer(nil) }
        for i in settings.indices { settings[i].buffer = nil }
    }

    func deleteAll() {
        for i in sources.indices { _ = starts.takeBack(Int32(clamping: i)) }
        for source in sources { source.stop(); source.setBuffer(nil); source.delete() }
    }

    // MARK: End polling

    /// Sets when a tick starts asking a real one-shot's source whether it has played out: its end as predicted
    /// from `position` (in the sound's frames) and its speed, less a lead that covers OpenAL's fixed-point pitch
    /// and the block in flight. Asking costs an AL call per source (a cache miss or two inside OpenAL Soft): every
    /// block for every real one-shot, that was 2 % of all the work with 4096 real voices. Whatever may make a voice
    /// end sooner than predicted (a pitch change, doppler, a device reset) has it asked every block from then on
    /// (`pollEveryBlock`). A pause only makes the end later: asking early costs a call and misses nothing.
    mutating func predictEnd(of voice: VoiceSlot, from position: Double, clock: Int, blockFrames: Int, doppler: Bool) {
        guard voice.source >= 0, !voice.loop else { return }
        if doppler {
            pollFrom[Int(voice.source)] = 0
            return
        }
        let remaining = voice.outputFramesToEnd(from: position)
        let lead = Double(max(SourcePool.endPollLeadFrames, 2 * blockFrames)) + remaining / 1000
        pollFrom[Int(voice.source)] = clock &+ max(remaining - lead, 0).saturated(Int.self, rounding: .down)
    }

    /// Asks about this source every block from now on.
    mutating func pollEveryBlock(_ source: Int32) { pollFrom[Int(source)] = 0 }

    /// Asks about every source every block (after a device reset, which can stop them).
    mutating func pollAllEveryBlock() { for i in pollFrom.indices { pollFrom[i] = 0 } }

    /// Whether a tick at `clock` should ask this source.
    func isPollDue(_ source: Int, at clock: Int) -> Bool { pollFrom[source] <= clock }

    /// Whether a source's voice is a one-shot that OpenAL has played to the end. Paused and suspended sources
    /// report `.paused`: `.stopped` always means played out, even if it was paused after its last sample. A start
    /// still recorded is `.stopped` too, and has not begun. Over values its callers read in place: as a method of the
    /// pool it had the whole pool copied at each call (callgrind: 16 copies a tick of the mixer).
    static func hasPlayedOut(looping: Bool, startPending: Bool, state: @autoclosure () -> ALSource.State) -> Bool {
        !looping && !startPending && state() == .stopped
    }
}

/// The settings of a source that a voice's start may leave as they are; the defaults are OpenAL's.
struct SourceSettings {
    var buffer: ALBuffer? = nil
    var loop = false
    var pitch: Float = 1
    var relative = false
    var rolloff: Float = 1
    var referenceDistance: Float = 1
    var maxDistance: Float = .greatestFiniteMagnitude
    var velocity = Vector3.zero
    var reverb: ALEffectSlot? = nil
    var filtered = false
    /// Sent with every voice's start until they were cached too: a restarted sound usually stands where it stood.
    var position = Vector3.zero
    var gain: Float = 1
    /// `AL_MAX_GAIN`: 1, but for a folded stereo sound's voice at the listener's point (Mixer.foldScale).
    var maxGain: Float = 1

    /// How many of the settings `configure` sends differ between the two.
    func differences(from other: SourceSettings) -> Int {
        var n = 0
        if buffer != other.buffer { n += 1 }
        if loop != other.loop { n += 1 }
        if pitch != other.pitch { n += 1 }
        if relative != other.relative { n += 1 }
        if rolloff != other.rolloff { n += 1 }
        if referenceDistance != other.referenceDistance { n += 1 }
        if maxDistance != other.maxDistance { n += 1 }
        if velocity != other.velocity { n += 1 }
        if reverb != other.reverb { n += 1 }
        if position != other.position { n += 1 }
        if gain != other.gain { n += 1 }
        if maxGain != other.maxGain { n += 1 }
        return n
    }
}
