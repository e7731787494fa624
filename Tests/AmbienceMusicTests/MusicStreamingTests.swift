import AmbiencePlatform
import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceMixer
@testable import AmbienceMusic
@testable import AmbienceTestSupport

/// The music player never makes the game wait on the disk: the streaming side opens and decodes, the game's calls
/// touch plain state only, and the next item is open before the current one ends. Heard through offline renders,
/// with the disk replaced by a gated or throttled double (`SlowDisk.swift`) under the player's item opener.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct MusicStreamingTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    func tones(_ count: Int, seconds: Double) throws -> [String] {
        try (0..<count).map { try fixtures.sineWAV("tone\($0).wav", hz: 300 + 100 * Double($0), seconds: seconds) }
    }

    /// While the streaming thread is stuck opening a file, every call of the game returns and answers from the
    /// player's own state. (Were any of them to wait on the disk, the test would never get past it.) Once the disk
    /// answers, the late open is dropped and the item the game skipped to plays.
    @Test func gameCallsReturnWhileTheDiskDoesNotAnswer() throws {
        let rig = try MusicRig()
        defer { rig.shutdown() }
        let player = rig.player
        let files = try tones(3, seconds: 5)
        let gate = DiskGate(), log = OpenLog()
        player.setItemOpener { item throws(DecodingError) in
            log.append(item.url)
            gate.pass()
            return try AudioFile.open(item.url)
        }
        try player.setQueue(paths: files)
        player.beginGeneratingPlaybackNotifications()
        player.startStreamingThread()
        player.play()
        #expect(
            eventually { log.urls.count == 1 }, "the streaming thread never began to open the first item")

        player.skipToNextItem()
        #expect(player.nowPlayingItem?.url == files[1])
        #expect(player.indexOfNowPlayingItem == 1)
        #expect(player.playbackState == .playing)
        #expect(player.currentPlaybackTime == 0)
        player.currentPlaybackTime = 1.5
        #expect(player.currentPlaybackTime == 1.5)
        player.volume = 0.5
        player.append(MediaItemCollection(items: [MediaItem(path: files[0])]))
        let events = rig.events()
        #expect(events.contains(.nowPlayingItemDidChange(MediaItem(path: files[1]))))
        #expect(events.contains(.volumeDidChange(0.5)))
        #expect(log.urls == [files[0]], "nothing else was opened while the disk was stuck")

        gate.open()
        player.stopStreamingThread()
        // From here the offline render pumps the stream: the stuck open's late decoder is dropped, the skipped-to
        // item opens at the time the game asked for.
        let out = Signal(try rig.render(frames: 9_600))
        #expect(abs(out.dominantFrequency(in: 1_000..<9_600) - 400) < 1)
        #expect(abs(player.currentPlaybackTime - (1.5 + 9_600.0 / 48_000)) < 0.001)
        #expect(log.urls.starts(with: [files[0], files[1]]))
    }

    /// The item after the current one is opened as soon as the stream is full, long before the join, and the join
    /// uses it: each item is opened once.
    @Test func theNextItemIsOpenedAheadAndUsedAtTheJoin() throws {
        let rig = try MusicRig()
        defer { rig.shutdown() }
        let player = rig.player
        let files = try tones(3, seconds: 2)
        let log = OpenLog()
        player.setItemOpener { item throws(DecodingError) in
            log.append(item.url)
            return try AudioFile.open(item.url)
        }
        try player.setQueue(paths: files)
        player.play()
        _ = try rig.render(frames: 4_800)
        #expect(log.urls == [files[0], files[1]])
        let out = Signal(try rig.render(frames: 96_000))  // 0.1 s to 2.1 s: across the first join
        #expect(player.indexOfNowPlayingItem == 1)
        #expect(log.urls == [files[0], files[1], files[2]])
        #expect(abs(out.dominantFrequency(in: 0..<80_000) - 300) < 1)
        #expect(abs(out.dominantFrequency(in: 92_000..<96_000) - 400) < 15)
    }

    /// A player, rendered offline, that opens every item on a slow disk: 0.7 s an open, longer than the half second
    /// the stream holds, and 2 ms a read.
    func rigOnASlowDisk() throws -> MusicRig {
        let rig = try MusicRig()
        rig.player.setItemOpener { item throws(DecodingError) in
            Thread.sleep(forTimeInterval: 0.7)
            return ThrottledDecoder(try AudioFile.open(item.url), readDelay: 0.002)
        }
        return rig
    }

    /// Plays what is queued for 3.8 s, rendered block by block at the pace a sound card would pull them, and checks
    /// that the output's left channel is `expected` sample for sample (from the first sound: a sine starts at 0),
    /// with no underrun. `join`: where in `expected` the item changes, for the message.
    func expectPlayedAtPaceWithoutAGap(_ rig: MusicRig, _ expected: [Float], join: Int) throws {
        let player = rig.player
        player.startStreamingThread()
        player.play()
        let block = 1_024, blocks = Int(3.8 * 48_000) / block
        var out = Signal([], channels: 2, sampleRate: 48_000)
        let start = monotonicSeconds()
        for n in 0..<blocks {
            out.samples += try rig.render(frames: block).samples
            let due = start + Double((n + 1) * block) / 48_000
            let now = monotonicSeconds()
            if now < due { Thread.sleep(forTimeInterval: due - now) }
        }
        player.stopStreamingThread()

        let first = try #require((0..<out.frames).first { out.samples[$0 * 2] != 0 })
        let offset = first - 1  // the sine's first sample is 0
        try #require(offset + expected.count <= out.frames, "the items did not finish within the render")
        var worst: Float = 0, worstFrame = 0
        for f in 0..<expected.count {
            let error = abs(out.samples[(offset + f) * 2] - expected[f])
            if error > worst { worst = error; worstFrame = f }
        }
        #expect(worst < 1e-6, "off by \(worst) at frame \(worstFrame) of \(expected.count) (the join is at \(join))")
        #expect(rig.stats.underruns == 0)
    }

    /// On a slow disk, two items rendered at real-time pace join sample for sample: the second was opened while the
    /// first played. Without the open ahead, the join would wait 0.7 s on the disk and the stream would run dry.
    @Test func aJoinHasNoGapWhileTheDiskIsSlow() throws {
        let whole = try fixtures.sineWAV("whole.wav", hz: 441, seconds: 2.5, rate: 48_000, channels: 1, float: true)
        let a = fixtures.path("a.wav"), b = fixtures.path("b.wav")
        try fixtures.run("sox", [whole, a, "trim", "0s", "50001s"])
        try fixtures.run("sox", [whole, b, "trim", "50001s"])
        let rig = try rigOnASlowDisk()
        defer { rig.shutdown() }
        try rig.player.setQueue(paths: [a, b])
        try expectPlayedAtPaceWithoutAGap(rig, try AudioFile.decode(whole).samples, join: 50_001)
    }

    /// Repeat-one on the same slow disk: only a module or MIDI file loops inside its decoder, so an ordinary file's
    /// replay is opened ahead like any next item, and its second pass follows the first sample for sample. (While
    /// every repeated item counted as looping, nothing was opened ahead and the replay waited 0.7 s on the disk.)
    @Test func aRepeatOneReplayHasNoGapWhileTheDiskIsSlow() throws {
        let a = try fixtures.sineWAV("a.wav", hz: 441, seconds: 1.25, rate: 48_000, channels: 1, float: true)
        let rig = try rigOnASlowDisk()
        defer { rig.shutdown() }
        try rig.player.setQueue(paths: [a])
        rig.player.repeatMode = .one
        let once = try AudioFile.decode(a).samples
        try expectPlayedAtPaceWithoutAGap(rig, once + once, join: once.count)
    }

    /// A stream restarted while the player is not playing (a seek while paused; a play paused at once) stands still
    /// where it was put, however long the streaming thread runs meanwhile, and plays on from there. (Its source was
    /// left stopped, and OpenAL counts every buffer queued on a stopped source as played: the feeder took them back
    /// and decoded on, and the song ran out unheard.)
    @Test(arguments: [false, true])
    func aStreamRestartedWhileNotPlayingStandsStill(playThenPause: Bool) throws {
        let rig = try MusicRig()
        defer { rig.shutdown() }
        let player = rig.player
        try player.setQueue(paths: try tones(2, seconds: 5))
        player.startStreamingThread()
        defer { player.stopStreamingThread() }
        // The source has played once: stopping it leaves it stopped (a source never played stays initial).
        player.play()
        #expect(eventually { player.stream.channel.locked { $0.state } == .playing })
        _ = try rig.render(frames: 4_800)
        if playThenPause {
            player.stop()
            player.currentPlaybackTime = 2  // stopped: where play() is to start
            player.play()
            player.pause()
        } else {
            player.pause()
            player.currentPlaybackTime = 2
        }
        #expect(
            eventually {
                player.lock.withLock { _ in
                    player.stream.channel.locked { $0.sampleOffset } == 0 && !player.stream.isEmpty
                }
            })
        Thread.sleep(forTimeInterval: 2)
        #expect(player.playbackState == .paused)
        #expect(player.indexOfNowPlayingItem == 0)
        #expect(abs(player.currentPlaybackTime - 2) < 0.001, "the playhead moved while paused")

        player.play()
        let out = Signal(try rig.render(frames: 9_600))
        #expect(player.playbackState == .playing)
        #expect(player.indexOfNowPlayingItem == 0)
        #expect(abs(player.currentPlaybackTime - (2 + 9_600.0 / 48_000)) < 0.001)
        #expect(abs(out.dominantFrequency(in: 1_000..<9_600) - 300) < 1)
    }

    /// A stream that runs dry while playing (the disk stopped answering) is counted as an underrun and, once the
    /// disk answers, plays on from where it ran dry: what it had played is not played again.
    @Test func aStreamThatRanDryPlaysOnFromWhereItStopped() throws {
        let rig = try MusicRig()
        defer { rig.shutdown() }
        let player = rig.player
        let gate = DiskGate()
        player.setItemOpener { item throws(DecodingError) in
            GatedDecoder(try AudioFile.open(item.url), gate: gate, from: 24_000)
        }
        try player.setQueue(paths: try tones(1, seconds: 3))
        player.startStreamingThread()
        defer { player.stopStreamingThread() }
        defer { gate.open() }  // first: a feeder waiting at the gate could not be stopped
        player.play()
        #expect(
            eventually { player.lock.withLock { _ in player.stream.freeBufferCount == 0 } },
            "the stream never filled")
        // More than the disk gave: the stream runs dry and stops. (A stopped source's playhead reads 0: where it ran
        // dry is where its sound ends.)
        let before = Signal(try rig.render(frames: 48_000))
        #expect(player.stream.channel.locked { $0.state } == .stopped)
        let heard = try #require((0..<before.frames).last { abs(before.samples[$0 * 2]) > 1e-3 })
        let dry = Double(heard + 1) / 48_000
        #expect(dry > 0.4 && dry < 0.6, "ran dry at \(dry) s")
        #expect(rig.stats.underruns == 0)

        gate.open()
        #expect(
            eventually {
                rig.stats.underruns == 1 && player.lock.withLock { _ in player.stream.freeBufferCount == 0 }
            })
        let out = Signal(try rig.render(frames: 9_600))
        #expect(player.playbackState == .playing)
        #expect(abs(player.currentPlaybackTime - (dry + 9_600.0 / 48_000)) < 0.001)
        #expect(abs(out.dominantFrequency(in: 1_000..<9_600) - 300) < 1)
    }

    @Test func aWorkerThreadWakesAtOnceAndStopsByJoining() {
        let rounds = Lock<Int>(0), left = Lock<Bool>(false)
        let worker = WorkerThread(name: "test-worker") { control in
            while !control.isStopRequested {
                rounds.withLock { $0 += 1 }
                control.wait(seconds: 3_600)
            }
            left.withLock { $0 = true }
        }
        #expect(worker.isRunning)
        #expect(eventually { rounds.withLock { $0 } == 1 })
        worker.wake()  // an hour's wait ends at once
        #expect(eventually { rounds.withLock { $0 } == 2 })
        worker.stop()
        #expect(left.withLock { $0 }, "stop() returned before the loop had left")
        #expect(!worker.isRunning)
        worker.stop()  // a second stop is harmless
    }
}

/// A real decoder whose reads from frame `from` on wait at `gate`: a disk that stops answering mid-song.
private final class GatedDecoder: AudioDecoder {
    private let decoder: any AudioDecoder
    private let gate: DiskGate
    private let from: Int64

    init(_ decoder: any AudioDecoder, gate: DiskGate, from: Int64) {
        self.decoder = decoder
        self.gate = gate
        self.from = from
    }

    var info: AudioInfo { decoder.info }
    var position: Int64 { decoder.position }

    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(DecodingError) -> Int {
        if decoder.position >= from { gate.pass() }
        return try decoder.read(into: buffer, frames: frames)
    }

    func seek(toFrame frame: Int64) throws(DecodingError) { try decoder.seek(toFrame: frame) }
}
