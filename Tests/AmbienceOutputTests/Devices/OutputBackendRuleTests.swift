import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceOutput
@testable import AmbienceTestSupport

/// The output's choice of backend, as a rule (no server needed).
@Suite struct OutputBackendRuleTests {
    typealias Backend = OutputBackend

    @Test func automaticTriesLibpulseThenSDLUnlessTheEnvironmentChose() {
        let none: (String) -> String? = { _ in nil }
        #expect(Backend.candidates(for: .automatic, environment: none) == [.libpulse, .sdl])
        #expect(Backend.candidates(for: .automatic, environment: { $0 == "SDL_AUDIODRIVER" ? "dummy" : nil }) == [.sdl])
        #expect(
            Backend.candidates(for: .automatic, environment: { $0 == "SDL_AUDIODRIVER" ? "" : nil }) == [
                .libpulse, .sdl
            ])
        // AMBIENCE_OUTPUT wins over SDL_AUDIODRIVER; a value it does not know is ignored.
        let both: (String) -> String? = { $0 == "AMBIENCE_OUTPUT" ? "libpulse" : "pulseaudio" }
        #expect(Backend.candidates(for: .automatic, environment: both) == [.libpulse, .sdl])
        #expect(Backend.candidates(for: .automatic, environment: { $0 == "AMBIENCE_OUTPUT" ? "sdl" : nil }) == [.sdl])
        #expect(
            Backend.candidates(for: .automatic, environment: { $0 == "AMBIENCE_OUTPUT" ? "alsa" : nil }) == [
                .libpulse, .sdl
            ])
        // A backend the game named is the only one tried, whatever the environment says.
        #expect(Backend.candidates(for: .sdl, environment: both) == [.sdl])
        #expect(Backend.candidates(for: .libpulse, environment: { _ in "sdl" }) == [.libpulse])
    }

    @Test func bufferingParsesWhatTheBenchSetsAndRefusesTheRest() throws {
        let parsed = try #require(PulseBuffering(parsing: "tlength=4, minreq=2,prebuf=0,adjust=0,slack=0"))
        #expect(parsed == PulseBuffering(targetBlocks: 4, requestBlocks: 2, prebufferBlocks: 0, adjustLatency: false))
        #expect(PulseBuffering(parsing: parsed.description) == parsed)
        #expect(PulseBuffering(parsing: "prebuf=2")?.targetBlocks == PulseBuffering.chosen.targetBlocks)
        let asked = try #require(PulseBuffering(parsing: "tlength=1,minreq=0,write=ahead"))
        #expect(asked.writing == .ahead && asked.targetBlocks == 1 && asked.requestBlocks == 0)
        #expect(PulseBuffering(parsing: asked.description) == asked)
        #expect(PulseBuffering(parsing: "write=asked")?.writing == .asked)
        #expect(PulseBuffering(parsing: "queue=8000")?.queueMicroseconds == 8_000)
        let pieces = try #require(PulseBuffering(parsing: "write=pieces,piece=64,queue=5333"))
        #expect(pieces.writing == .pieces && pieces.pieceFrames == 64 && pieces.queueMicroseconds == 5_333)
        #expect(PulseBuffering(parsing: pieces.description) == pieces)
        let wrongs = [
            "tlength=0", "minreq=-1", "minreq=65", "tlength=65", "adjust=2", "latency=3", "tlength", "tlength=x",
            "slack=-1", "slack=1000001", "write=1", "write=", "write=Whole", "queue=-1", "queue=1000001",
            "piece=-1", "piece=65537", "piece=x", "write=piece"
        ]
        for wrong in wrongs {
            #expect(PulseBuffering(parsing: wrong) == nil, "\(wrong)")
        }
        // Bytes toward libpulse saturate instead of trapping.
        let huge = PulseBuffering(targetBlocks: 64, requestBlocks: 1, prebufferBlocks: 0, adjustLatency: true)
        #expect(huge.attributes(blockFrames: Int.max / 2, frameBytes: 8, sampleRate: 48_000).tlength == UInt32.max - 1)
        #expect(huge.attributes(blockFrames: 256, frameBytes: Int.max, sampleRate: Int.max).prebuf == 0)
        #expect(PulseBuffering.chosen.attributes(blockFrames: 128, frameBytes: 8, sampleRate: 48_000).minreq == 1024)
    }

    /// Written in pieces, each render is a piece of at most a block (the output's own block of memory), served as
    /// the server asks; with no piece, a request is rendered at once, in renders of at most a block, to its last
    /// frame; no render is empty or negative.
    @Test func aRequestIsRenderedInPiecesOfAtMostABlock() {
        func split(_ frames: Int, block: Int) -> [Int] {
            var rule = PulseBuffering.chosen
            rule.writing = .pieces
            var left = frames
            var lengths: [Int] = []
            while left > 0 {
                let length = rule.pieceLength(left: left, blockFrames: block)
                guard length > 0 else { break }
                lengths.append(length)
                left -= length
            }
            return lengths
        }
        #expect(split(128, block: 512) == [128])
        #expect(split(1_200, block: 512) == [512, 512, 176])
        #expect(split(0, block: 256).isEmpty && split(-5, block: 256).isEmpty)
        #expect(split(3, block: 0) == [1, 1, 1])
        func piece(_ frames: Int?, block: Int) -> Int? {
            var rule = PulseBuffering.chosen
            rule.writing = .pieces
            rule.pieceFrames = frames
            return rule.pieceRenderFrames(blockFrames: block)
        }
        #expect(piece(128, block: 512) == 128 && piece(4_096, block: 256) == 256 && piece(1, block: 0) == 1)
        #expect(piece(0, block: 512) == nil && piece(nil, block: 512) == nil)
        #expect(piece(Int.max, block: Int.max) == Int.max)
    }

    /// On PipeWire the slack past the first block is a whole block up to 5⅓ ms, then max(5⅓ ms, half a block): the
    /// queue a short block needs against scheduling delay, without a long block's whole period of latency. PulseAudio
    /// keeps two whole blocks up to 4 ms a block, and a longer block is written as asked, in pieces, into 8 ms up to
    /// 8 ms a block, then 10⅔ ms or half a block, whichever is more; whatever was set by hand is kept on either.
    @Test func theServerKeepsOneBlockAndASlackThatCoversTheNextRender() {
        func onPulseAudio(_ frames: Int, _ rate: Int = 48_000) -> PulseBuffering {
            PulseBuffering.chosen.onServer(named: "pulseaudio", blockFrames: frames, sampleRate: rate)
        }
        // Up to 4 ms a block (192 frames at 48 kHz), two whole blocks.
        #expect(onPulseAudio(128).writing == .whole && onPulseAudio(192).writing == .whole)
        #expect(onPulseAudio(128).targetFrames(blockFrames: 128, sampleRate: 48_000) == 256)
        #expect(onPulseAudio(128).pieceFrames == nil)
        // Past it, in pieces: up to 8 ms a block, 8 ms asked, a quarter of it at a time.
        #expect(onPulseAudio(193).writing == .pieces && onPulseAudio(256).writing == .pieces)
        #expect(onPulseAudio(256).targetFrames(blockFrames: 256, sampleRate: 48_000) == 384)
        #expect(onPulseAudio(256).requestFrames(blockFrames: 256, sampleRate: 48_000) == 96)
        // Past 8 ms a block (385 frames at 48 kHz, 353 at 44.1 kHz): 10⅔ ms asked, a quarter of it at a time.
        #expect(onPulseAudio(385).writing == .pieces && onPulseAudio(353, 44_100).writing == .pieces)
        for frames in [512, 1024] {
            #expect(onPulseAudio(frames).targetFrames(blockFrames: frames, sampleRate: 48_000) == 512)
            #expect(onPulseAudio(frames).requestFrames(blockFrames: frames, sampleRate: 48_000) == 128)
        }
        // A piece is a quarter of the block, or the server's request when that is more.
        let pieces = [256, 512, 1024, 4096].map { onPulseAudio($0).pieceRenderFrames(blockFrames: $0) }
        #expect(pieces == [96, 128, 256, 1024])
        #expect(onPulseAudio(256, 44_100).pieceRenderFrames(blockFrames: 256) == 88)
        // A piece set by hand is kept; `write=pieces` alone gets the rule's.
        var handPiece = PulseBuffering.chosen
        handPiece.writing = .pieces
        #expect(handPiece.onServer(named: "pulseaudio", blockFrames: 1024, sampleRate: 48_000).pieceFrames == 256)
        handPiece.pieceFrames = 0
        #expect(handPiece.onServer(named: "pulseaudio", blockFrames: 1024, sampleRate: 48_000).pieceFrames == 0)
        // A longer block's render, done while the queue plays out, grows with it: at least half a block queued.
        #expect(onPulseAudio(4096).targetFrames(blockFrames: 4096, sampleRate: 48_000) == 2048)
        #expect(onPulseAudio(4096).requestFrames(blockFrames: 4096, sampleRate: 48_000) == 512)
        #expect(onPulseAudio(16_384).targetFrames(blockFrames: 16_384, sampleRate: 48_000) == 8192)
        // At 44.1 kHz 10⅔ ms is 470 frames, under half of a 1,024-frame block: half a block.
        #expect(onPulseAudio(1024, 44_100).targetFrames(blockFrames: 1024, sampleRate: 44_100) == 512)
        #expect(onPulseAudio(512, 44_100).targetFrames(blockFrames: 512, sampleRate: 44_100) == 470)
        // A server that does not say gets PulseAudio's rule.
        #expect(PulseBuffering.chosen.onServer(named: nil, blockFrames: 1024, sampleRate: 48_000) == onPulseAudio(1024))
        var byHand = PulseBuffering.chosen
        byHand.slackMicroseconds = 1_000
        byHand.writing = .asked
        byHand.queueMicroseconds = 0
        #expect(byHand.onServer(named: "pulseaudio", blockFrames: 1024, sampleRate: 48_000) == byHand)
        #expect(byHand.targetFrames(blockFrames: 1024, sampleRate: 48_000) == 1024 + 512)
        #expect(PulseBuffering(parsing: PulseBuffering.chosen.description) == PulseBuffering.chosen)
        let chosen = PulseBuffering.chosen.onServer(
            named: "PulseAudio (on PipeWire 0.3.65)", blockFrames: 1024, sampleRate: 48_000)
        #expect(chosen.slackMicroseconds == 5_333 && chosen.writing == .whole)
        let at48k = [128, 256, 512, 1024, 2048].map { chosen.targetFrames(blockFrames: $0, sampleRate: 48_000) }
        #expect(at48k == [256, 512, 768, 1536, 3072])
        // The server asks as soon as a block fits: minreq is the slack, a whole block only for short blocks.
        let requests = [128, 256, 512, 1024].map { chosen.requestFrames(blockFrames: $0, sampleRate: 48_000) }
        #expect(requests == [128, 256, 256, 512])
        // 5,333 µs at 44.1 kHz is 235 frames: less than a 256-frame block, more than half of one.
        #expect(chosen.targetFrames(blockFrames: 256, sampleRate: 44_100) == 256 + 235)
        // No slack asked, or one block asked: whole blocks, as the bench's overrides set them.
        var whole = chosen
        whole.slackMicroseconds = 0
        #expect(whole.targetFrames(blockFrames: 1024, sampleRate: 48_000) == 2048)
        #expect(whole.requestFrames(blockFrames: 1024, sampleRate: 48_000) == 1024)
        whole.requestBlocks = 0
        #expect(whole.requestFrames(blockFrames: 1024, sampleRate: 48_000) == nil)
        whole.requestBlocks = 1
        whole.targetBlocks = 1
        whole.slackMicroseconds = 5_333
        #expect(whole.targetFrames(blockFrames: 1024, sampleRate: 48_000) == 1024)
        // Absurd sizes saturate.
        #expect(chosen.targetFrames(blockFrames: Int.max, sampleRate: Int.max) == Int.max / 2)
        #expect(chosen.targetFrames(blockFrames: 0, sampleRate: 0) >= 1)
        #expect(onPulseAudio(1024).targetFrames(blockFrames: Int.max, sampleRate: Int.max) == Int.max / 2)
        #expect(onPulseAudio(1024).targetFrames(blockFrames: 1024, sampleRate: Int.max) == 2048)
        #expect(onPulseAudio(1024).requestFrames(blockFrames: 0, sampleRate: 0) == 1)
        #expect(onPulseAudio(0).writing == .whole && onPulseAudio(Int.max, 0).writing == .pieces)
    }
}
