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
        let wrongs = [
            "tlength=0", "minreq=-1", "minreq=65", "tlength=65", "adjust=2", "latency=3", "tlength", "tlength=x",
            "slack=-1", "slack=1000001", "write=1", "write=", "write=Whole"
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

    /// On PipeWire the slack past the first block is a whole block up to 5⅓ ms, then max(5⅓ ms, half a block): the
    /// queue a short block needs against scheduling delay, without a long block's whole period of latency. PulseAudio
    /// keeps two whole blocks, and a slack set by hand is kept on either.
    @Test func theServerKeepsOneBlockAndASlackThatCoversTheNextRender() {
        let pulseAudio = PulseBuffering.chosen.onServer(named: "pulseaudio")
        #expect(pulseAudio.targetFrames(blockFrames: 1024, sampleRate: 48_000) == 2048)
        #expect(pulseAudio.requestFrames(blockFrames: 1024, sampleRate: 48_000) == 1024)
        #expect(PulseBuffering.chosen.onServer(named: nil) == pulseAudio)
        var byHand = PulseBuffering.chosen
        byHand.slackMicroseconds = 1_000
        #expect(byHand.onServer(named: "pulseaudio") == byHand)
        #expect(PulseBuffering(parsing: PulseBuffering.chosen.description) == PulseBuffering.chosen)
        let chosen = PulseBuffering.chosen.onServer(named: "PulseAudio (on PipeWire 0.3.65)")
        #expect(chosen.slackMicroseconds == 5_333)
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
    }
}
