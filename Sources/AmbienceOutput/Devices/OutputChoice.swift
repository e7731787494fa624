import AmbiencePlatform

/// An open real-time output: an SDL audio device (SDLAudioDevice.swift) or the engine's own libpulse stream
/// (PulseOutputStream.swift). `DeviceOutput` holds one at a time.
protocol OutputDevice: AnyObject, Sendable {
    /// The sound system the audio goes to (`pulseaudio`, `pipewire`, `alsa`, `dummy`).
    var driver: String { get }
    /// The device as the user knows it (a sink's description).
    var deviceName: String { get }
    /// Whether it still plays: false once its server or the device went.
    var isAlive: Bool { get }
    /// Which code carries the mix to it.
    var backend: OutputBackend { get }
    /// Runs `body` while no block is being rendered.
    func withCallbackLocked(_ body: () -> Bool) -> Bool
    /// Stops rendering and lets the device go; bounded, safe to call twice.
    func close()
    /// The thread that renders blocks, and the priority asked for it.
    var audioThread: AudioThreadRaise { get }
}

extension SDLAudioDevice: OutputDevice {
    var backend: OutputBackend { .sdl }
}

extension PulseOutputStream: OutputDevice {
    /// The stream is on a PulseAudio server (pipewire-pulse says so too): routes name it as SDL's driver does.
    var driver: String { "pulseaudio" }
    var backend: OutputBackend { .libpulse }
}

extension OutputBackend {
    /// The backends to try, in order, for `configured`. `.automatic` is libpulse, then SDL when no PulseAudio server
    /// answers or libpulse is missing; but SDL alone when `SDL_AUDIODRIVER` names a driver (the user chose one of
    /// SDL's). `AMBIENCE_OUTPUT` decides before that: `sdl` is SDL alone, `libpulse` is libpulse then SDL even with
    /// `SDL_AUDIODRIVER` set (how the test suites run on the libpulse output).
    static func candidates(
        for configured: Self, environment: (String) -> String? = ProcessEnvironment.value
    ) -> [Self] {
        switch configured {
        case .sdl: return [.sdl]
        case .libpulse: return [.libpulse]
        case .automatic:
            switch environment("AMBIENCE_OUTPUT").flatMap(Self.init(rawValue:)) {
            case .sdl: return [.sdl]
            case .libpulse: return [.libpulse, .sdl]
            case .automatic, nil: break
            }
            if let driver = environment("SDL_AUDIODRIVER"), !driver.isEmpty { return [.sdl] }
            return [.libpulse, .sdl]
        }
    }
}

/// How deep the libpulse output's server buffer is, and how it is written: one mix block (period) plus a slack that
/// covers the next block's render, written in whole blocks; or, for long blocks on PulseAudio, a queue of fixed time
/// topped up as the server asks. Chosen by measurement on each server (README, "Small periods" and "Trigger-to-sound
/// latency"); `AMBIENCE_PULSE_BUFFER` (`tlength=3,minreq=1,prebuf=1,adjust=0,slack=5333,write=asked,queue=10667`)
/// overrides it, for the bench.
package struct PulseBuffering: Sendable, Equatable, CustomStringConvertible {
    /// `tlength` in blocks, at most: what the server keeps queued for us.
    package var targetBlocks: Int
    /// `minreq`: the least the server asks for at a time; 0 lets the server choose.
    package var requestBlocks: Int
    /// `prebuf`: what must be queued before playback starts, and again after the stream ran dry (0: never stop).
    package var prebufferBlocks: Int
    /// `PA_STREAM_ADJUST_LATENCY`: the server sets the sink's latency from `tlength` instead of queueing on top of it.
    package var adjustLatency: Bool
    /// How much of `tlength` past its first block is kept for long blocks, in µs: the slack is cut to this, or to
    /// half a block if that is more (0 keeps whole blocks; nil: the server's rule, `onServer`). A short block's slack
    /// is a whole block, which a burst of scheduling delay needs; a long block's render fits in half of it, and a
    /// whole one only adds latency (on PipeWire, 1,024 frames with two blocks queued: 27 ms over SDL_mixer's p99).
    package var slackMicroseconds: Int?
    /// How the write callback answers the server's requests (nil: the server's rule, `onServer`).
    package var writing: Writing?
    /// With writes as asked: `tlength` in µs, at least half a block and at most `targetBlocks` blocks (nil or 0: the
    /// blocks). What the queue must hold against a late wake-up is time, whatever the block's length; against the
    /// next block's render, which grows with the block, half a block.
    package var queueMicroseconds: Int?

    /// How the write callback answers a request for `n` bytes.
    package enum Writing: String, Sendable, Equatable {
        /// Whole blocks, rendered at the request, as many as fit in it; none for less than a block.
        case whole
        /// Exactly `n` bytes, from a block rendered when the one before ran out: the server's queue is topped up at
        /// every request, whatever its size, and a block is rendered when its first byte is asked for.
        case asked
        /// Exactly `n` bytes, from a block rendered as soon as the one before ran out, so that the next request is
        /// answered at once (SDL 2.26's pulseaudio driver's order: render, write as asked, wait).
        case ahead
        /// Exactly `n` bytes, from pieces of `pieceFrames` (a part of a block) each rendered when its first byte
        /// is asked for, or with no piece set, rendered at the request itself: a start waits for the next piece, a
        /// fraction of a block, not for the next block.
        case pieces
    }

    /// With writes in pieces: the frames of each render, at most a block (0: each request rendered as it comes, in
    /// renders of at most a block; nil: the server's rule, `onServer`). Each render costs OpenAL Soft a visit to
    /// every voice, so the piece trades a start's wait against the mix's cost.
    package var pieceFrames: Int?

    /// Whether requests are answered with exactly what they ask (not whole blocks): the queue is then `queue` µs.
    var writesAsAsked: Bool { writing == .asked || writing == .ahead || writing == .pieces }

    /// With writes in pieces, the frames of each render from a block of `blockFrames`, or nil when each request is
    /// rendered as it comes (`pieceLength`).
    package func pieceRenderFrames(blockFrames: Int) -> Int? {
        guard let piece = pieceFrames, piece > 0 else { return nil }
        return min(piece, max(blockFrames, 1))
    }

    /// With each request rendered as it comes, the frames of the next render when `left` frames of it are still to
    /// write: at most a block (the output's own block of memory).
    package func pieceLength(left: Int, blockFrames: Int) -> Int { min(max(left, 0), max(blockFrames, 1)) }

    package init(
        targetBlocks: Int, requestBlocks: Int, prebufferBlocks: Int, adjustLatency: Bool, slackMicroseconds: Int? = 0,
        writing: Writing? = nil
    ) {
        self.targetBlocks = targetBlocks
        self.requestBlocks = requestBlocks
        self.prebufferBlocks = prebufferBlocks
        self.adjustLatency = adjustLatency
        self.slackMicroseconds = slackMicroseconds
        self.writing = writing
    }

    /// The measured choice: up to two blocks; the second is cut by the server's rule (`onServer`).
    package static let chosen = PulseBuffering(
        targetBlocks: 2, requestBlocks: 1, prebufferBlocks: 1, adjustLatency: true, slackMicroseconds: nil,
        writing: nil)

    /// What a server gets where nothing was set.
    /// - **PipeWire's pulse server:** whole blocks; the second block is cut to max(5⅓ ms, half a block), a whole
    ///   block up to 256 frames at 48 kHz: p99 from the call to the sound fell from 37.1 to 21.2 ms at 512 frames and
    ///   from 68.8 to 31.5 at 1,024 (SDL_mixer: 32.0 and 42.0), with the same underflows in `stress`.
    /// - **PulseAudio:** two whole blocks for a block of up to 4 ms (`pulseAudioWholeBlockMicroseconds`); a longer
    ///   one is written as asked, in pieces (session 48), with 8 ms queued for a block of up to 8 ms and 10⅔ ms
    ///   (`pulseAudioQueueMicroseconds`) past it, or half a block if that is more, asked for the whole buffer. Under
    ///   adjust-latency the server keeps three quarters of that queued and asks for a quarter at a time, so the queue
    ///   never falls below about 4 ms whatever the block, where whole blocks let it fall to one block short of
    ///   `tlength` (and `tlength` cannot be less than two blocks there: the server keeps it at least twice
    ///   `minreq`). A piece is a quarter of the block, or the server's request when that is more: a start waits for
    ///   the next piece, not the next block (p99 from the call to the sound at 512 frames 7.2 ms against 17.6 from a
    ///   block rendered ahead), for the cost of a render per piece (OpenAL Soft visits every voice in each).
    package func onServer(named name: String?, blockFrames: Int, sampleRate: Int) -> PulseBuffering {
        var chosen = self
        let pipeWire = name?.contains("PipeWire") == true
        let blockMicroseconds = Double(max(blockFrames, 0)) * 1e6 / Double(max(sampleRate, 1))
        if chosen.slackMicroseconds == nil { chosen.slackMicroseconds = pipeWire ? 5_333 : 0 }
        if chosen.writing == nil {
            chosen.writing = !pipeWire && blockMicroseconds > Self.pulseAudioWholeBlockMicroseconds ? .pieces : .whole
        }
        if chosen.queueMicroseconds == nil {
            let short = blockMicroseconds <= Self.pulseAudioShortQueueBlockMicroseconds
            let pulseAudio = short ? Self.pulseAudioShortQueueMicroseconds : Self.pulseAudioQueueMicroseconds
            chosen.queueMicroseconds = pipeWire ? 0 : pulseAudio
        }
        if chosen.pieceFrames == nil && chosen.writing == .pieces {
            let request = chosen.requestFrames(blockFrames: blockFrames, sampleRate: sampleRate) ?? 0
            chosen.pieceFrames = max(max(blockFrames, 1) / 4, request, 1)
        }
        return chosen
    }

    /// On PulseAudio: what writes as asked ask for the whole buffer (512 frames at 48 kHz), or for a block of up to
    /// 8 ms, the shorter queue; and the longest block written whole.
    static let pulseAudioQueueMicroseconds = 10_667
    static let pulseAudioShortQueueMicroseconds = 8_000
    static let pulseAudioShortQueueBlockMicroseconds = 8_000.0
    static let pulseAudioWholeBlockMicroseconds = 4_000.0

    /// `tlength` in frames for blocks of `blockFrames` at `sampleRate`.
    package func targetFrames(blockFrames: Int, sampleRate: Int) -> Int {
        let block = max(blockFrames, 1)
        let (whole, overflow) = max(targetBlocks, 1).multipliedReportingOverflow(by: block)
        guard !overflow else { return Int.max / 2 }
        if let queue = queueMicroseconds, queue > 0, writesAsAsked {
            let frames = (Double(queue) * Double(max(sampleRate, 1)) / 1e6).saturated(
                Int.self, rounding: .toNearestOrAwayFromZero)
            // At least half a block: the next block is rendered while the queue plays out, and its render grows
            // with the block (a fixed 10⅔ ms would leave a 4,096-frame block's render 8 ms against its 85).
            return max(1, min(whole, max(frames, block / 2)))
        }
        guard let slack = slackMicroseconds, slack > 0, targetBlocks > 1 else { return whole }
        let slackFrames = (Double(slack) * Double(max(sampleRate, 1)) / 1e6).saturated(
            Int.self, rounding: .toNearestOrAwayFromZero)
        return block + min(whole - block, max(block / 2, slackFrames))
    }

    /// `minreq` in frames (nil: the server's choice): at most the slack, so the server asks as soon as a block fits.
    /// PulseAudio keeps `tlength` at least twice `minreq` under `adjust`, so a whole-block `minreq` would put a long
    /// block's queue back to two blocks (granted 2,072 frames for 1,536 asked, at 1,024). Written as asked: at most
    /// a quarter of `tlength`, PulseAudio's own default.
    package func requestFrames(blockFrames: Int, sampleRate: Int) -> Int? {
        guard requestBlocks > 0 else { return nil }
        let block = max(blockFrames, 1)
        let (asked, overflow) = requestBlocks.multipliedReportingOverflow(by: block)
        if writesAsAsked {
            let quarter = max(targetFrames(blockFrames: block, sampleRate: sampleRate) / 4, 1)
            return overflow ? quarter : min(asked, quarter)
        }
        let slack = targetFrames(blockFrames: block, sampleRate: sampleRate) - block
        guard (slackMicroseconds ?? 0) > 0, slack > 0 else { return overflow ? Int.max / 2 : asked }
        return overflow ? slack : min(asked, slack)
    }

    /// `AMBIENCE_PULSE_BUFFER` over `chosen`; a malformed value is logged and ignored.
    package static var configured: PulseBuffering {
        guard let text = ProcessEnvironment.value("AMBIENCE_PULSE_BUFFER"), !text.isEmpty else { return chosen }
        guard let parsed = PulseBuffering(parsing: text) else {
            Log.warning(
                "output: AMBIENCE_PULSE_BUFFER '\(text)' is not "
                    + "tlength=N,minreq=N,prebuf=N,adjust=0|1,slack=µs,write=whole|asked|ahead|pieces,queue=µs,piece=N")
            return chosen
        }
        return parsed
    }

    /// Reads `tlength=N,minreq=N,prebuf=N,adjust=0|1,slack=µs,write=whole|asked|ahead|pieces,queue=µs,piece=N`
    /// (blocks; any subset, the rest from `chosen`); nil when a key or number is wrong. Blocks are 1–64 (`minreq` and
    /// `prebuf` 0–64); `slack` and `queue` are 0–1,000,000 µs; `piece` is 0–65,536 frames.
    package init?(parsing text: String) {
        self = Self.chosen
        for field in text.split(separator: ",") {
            let parts = field.split(separator: "=", maxSplits: 1).map { String($0.filter { $0 != " " }) }
            guard parts.count == 2 else { return nil }
            let number = parts[0] == "write" ? 0 : Int(parts[1]) ?? -1
            guard number >= 0 else { return nil }
            switch parts[0] {
            case "slack" where number <= 1_000_000: slackMicroseconds = number
            case "queue" where number <= 1_000_000: queueMicroseconds = number
            case "piece" where number <= 65_536: pieceFrames = number
            case "tlength" where (1...64).contains(number): targetBlocks = number
            case "minreq" where number <= 64: requestBlocks = number
            case "prebuf" where number <= 64: prebufferBlocks = number
            case "adjust" where number <= 1: adjustLatency = number == 1
            case "write": guard let way = Writing(rawValue: parts[1]) else { return nil }; writing = way
            default: return nil
            }
        }
    }

    package var description: String {
        "tlength=\(targetBlocks),minreq=\(requestBlocks),prebuf=\(prebufferBlocks),adjust=\(adjustLatency ? 1 : 0)"
            + (slackMicroseconds.map { ",slack=\($0)" } ?? "") + (writing.map { ",write=\($0.rawValue)" } ?? "")
            + (queueMicroseconds.map { ",queue=\($0)" } ?? "") + (pieceFrames.map { ",piece=\($0)" } ?? "")
    }
}
