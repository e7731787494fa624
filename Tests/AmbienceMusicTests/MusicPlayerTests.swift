import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceMixer
@testable import AmbienceMusic
@testable import AmbienceTestSupport

/// The application music player, heard through offline renders.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct MusicPlayerTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    /// A continuous sine cut into two files at `cut` frames, plus the uncut original.
    func splitSine(hz: Double = 441, seconds: Double = 2, cut: Int) throws -> (whole: String, a: String, b: String) {
        let whole = try fixtures.sineWAV("whole.wav", hz: hz, seconds: seconds, rate: 48_000, channels: 1, float: true)
        let a = fixtures.path("a.wav"), b = fixtures.path("b.wav")
        try fixtures.run("sox", [whole, a, "trim", "0s", "\(cut)s"])
        try fixtures.run("sox", [whole, b, "trim", "\(cut)s"])
        return (whole, a, b)
    }

    @Test func wavPairJoinsSampleExactly() throws {
        let (whole, a, b) = try splitSine(cut: 30_001)
        let rig = try MusicRig()
        try rig.player.setQueue(paths: [a, b])
        rig.player.play()
        let out = try Signal(rig.render(frames: 100_000))
        let original = try AudioFile.decode(whole).samples
        var worst: Float = 0
        for f in 0..<original.count {
            worst = max(worst, abs(out.samples[f * 2] - original[f]), abs(out.samples[f * 2 + 1] - original[f]))
        }
        #expect(worst < 1e-6)
        #expect(out.peak(original.count..<100_000) == 0)
    }

    /// An item at 44.1 kHz after one at 48 kHz joins the stream without a gap (resampled to the stream's rate), at
    /// its own pitch and for its own length.
    @Test func anItemAtAnotherRateFollowsWithoutAGap() throws {
        let a = try fixtures.sineWAV("a.wav", hz: 440, seconds: 1, rate: 48_000)
        let b = try fixtures.sineWAV("b.wav", hz: 660, seconds: 1, rate: 44_100)
        let rig = try MusicRig()
        try rig.player.setQueue(paths: [a, b])
        rig.player.play()
        let out = try Signal(rig.render(frames: 120_000))
        let start = try #require(out.firstFrame(above: 0.01))
        for window in stride(from: start, to: start + 96_000 - 240, by: 240) {
            #expect(out.rms(window..<(window + 240)) > 0.05, "quiet 5 ms at frame \(window)")
        }
        #expect(abs(out.dominantFrequency(in: (start + 10_000)..<(start + 40_000)) - 440) < 2)
        #expect(abs(out.dominantFrequency(in: (start + 58_000)..<(start + 90_000)) - 660) < 2)
        #expect(out.peak((start + 96_000 + 64)..<120_000) == 0)
    }

    /// A file whose name is not UTF-8 (Latin-1 "café.wav", as the library indexes it) plays; one that has gone is
    /// reported under its readable name and the next item plays.
    @Test func itemsNamedByNonUTF8BytesPlay() throws {
        let source = try fixtures.sineWAV("source.wav", hz: 440, seconds: 1, rate: 48_000, channels: 1)
        let bytes = Array(fixtures.path("caf").utf8) + [0xE9] + Array(".wav".utf8)
        let name = (bytes + [0]).map { CChar(bitPattern: $0) }
        #expect(name.withUnsafeBufferPointer { rename(source, $0.baseAddress) } == 0)
        var cafe = MediaItem(persistentID: 1, url: fixtures.path("caf\u{FFFD}.wav"), title: "Café")
        cafe.pathBytes = bytes
        var gone = MediaItem(persistentID: 2, url: fixtures.path("gon\u{FFFD}.wav"), title: "Gone")
        gone.pathBytes = Array(fixtures.path("gon").utf8) + [0xE9] + Array(".wav".utf8)
        let rig = try MusicRig()
        rig.player.beginGeneratingPlaybackNotifications()
        rig.player.setQueue(with: MediaItemCollection(items: [gone, cafe]))
        rig.player.play()
        let out = try Signal(rig.render(frames: 24_000))
        #expect(abs(out.dominantFrequency(in: 4_000..<20_000) - 440) < 1)
        #expect(rig.player.nowPlayingItem?.title == "Café")
        #expect(rig.events().contains(.playbackError(gone, .unreadable(gone.url, errno: ENOENT))))
    }

    @Test(arguments: ["ogg", "mp3"])
    func compressedPairHasNoPhaseJumpAtTheJoin(format: String) throws {
        let cut = 48_000 + 1_234
        let (whole, wa, wb) = try splitSine(hz: 441, seconds: 2, cut: cut)
        let a = fixtures.path("a.\(format)"), b = fixtures.path("b.\(format)")
        if format == "ogg" {
            try fixtures.run("oggenc", ["-Q", "-q", "8", "-o", a, wa])
            try fixtures.run("oggenc", ["-Q", "-q", "8", "-o", b, wb])
        } else {
            // lame misreads float WAVs (it doubles them), so it gets 16-bit input.
            for (wav, mp3) in [(wa, a), (wb, b)] {
                try fixtures.run("sox", [wav, "-b", "16", wav + ".16.wav"])
                try fixtures.run("lame", ["--quiet", "-b", "320", wav + ".16.wav", mp3])
            }
        }
        let rig = try MusicRig()
        try rig.player.setQueue(paths: [a, b])
        rig.player.play()
        let out = try Signal(rig.render(frames: 110_000))
        // Both sides of the join follow the one continuous sine: a phase jump or a dropped or doubled sample would
        // leave the second side out of step with it. (Each file's hard edge rings a little in a lossy codec, so the
        // few hundred samples at the cut itself are left out.)
        let original = try AudioFile.decode(whole).samples
        #expect(out.rmsError(against: original, (cut - 4_000)..<(cut - 400)) < 0.03)
        #expect(out.rmsError(against: original, (cut + 400)..<(cut + 4_000)) < 0.03)
        #expect(out.rms((cut - 400)..<(cut + 400)) > 0.3)
        // The two files add up to the original length, sample-exactly.
        let end = try #require((0..<out.frames).last { abs(out.samples[$0 * 2]) > 1e-4 })
        #expect(abs(end - 96_000) <= 30)
    }

    @Test func seekLandsOnTheRightSample() throws {
        let (whole, _, _) = try splitSine(cut: 10)
        let rig = try MusicRig()
        try rig.player.setQueue(paths: [whole])
        rig.player.play()
        _ = try rig.render(frames: 4_800)
        rig.player.currentPlaybackTime = 0.5
        let out = try rig.render(frames: 2_000)
        let original = try AudioFile.decode(whole).samples
        for f in 0..<2_000 { #expect(abs(out.samples[f * 2] - original[24_000 + f]) < 1e-6) }
        #expect(abs(rig.player.currentPlaybackTime - (0.5 + 2_000.0 / 48_000)) < 0.001)
    }

    func tones(_ count: Int, seconds: Double) throws -> [String] {
        try (0..<count).map { try fixtures.sineWAV("tone\($0).wav", hz: 300 + 100 * Double($0), seconds: seconds) }
    }

    @Test(arguments: [true, false])
    func appendingKeepsTheCurrentItemAndTime(playing: Bool) throws {
        let rig = try MusicRig()
        let player = rig.player
        let files = try tones(3, seconds: 15)
        try player.setQueue(paths: files)
        player.indexOfNowPlayingItem = 1
        player.play()
        player.currentPlaybackTime = 12.3
        _ = try rig.render(frames: 4_800)
        if !playing { player.pause() }
        let picked = try tones(6, seconds: 1).suffix(3).map(MediaItem.init(path:))
        player.append(MediaItemCollection(items: picked))
        _ = try rig.render(frames: 4_800)
        #expect(player.indexOfNowPlayingItem == 1)
        #expect(player.currentPlaybackTime >= 12.3)
        #expect(player.playbackState == (playing ? .playing : .paused))
        #expect(player.items.count == 6)
        let out = try Signal(rig.render(frames: 9_600))
        if playing { #expect(abs(out.dominantFrequency(in: 0..<9_600) - 400) < 1) } else { #expect(out.peak() == 0) }
    }

    @Test func endOfQueueStopsWithNothingPlaying() throws {
        let rig = try MusicRig()
        let player = rig.player
        player.beginGeneratingPlaybackNotifications()
        try player.setQueue(paths: try tones(2, seconds: 0.3))
        player.play()
        _ = try rig.render(frames: 48_000)
        let seen = rig.events()
        #expect(player.playbackState == .stopped)
        #expect(player.nowPlayingItem == nil)
        #expect(seen.last == .playbackStateDidChange(.stopped))
        #expect(seen.contains(.nowPlayingItemDidChange(nil)))
    }

    @Test func corruptItemIsSkippedWithAnError() throws {
        let rig = try MusicRig()
        let player = rig.player
        player.beginGeneratingPlaybackNotifications()
        let good = try fixtures.sineWAV("good.wav", hz: 440, seconds: 0.3)
        let bad = try fixtures.write("bad.ogg", bytes: (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) })
        let next = try fixtures.sineWAV("next.wav", hz: 660, seconds: 1)
        try player.setQueue(paths: [good, bad, next])
        player.play()
        let out = try Signal(rig.render(frames: 14_400 + 24_000))
        let seen = rig.events()
        #expect(seen.contains { if case .playbackError(let item, _) = $0 { item.url == bad } else { false } })
        #expect(abs(out.dominantFrequency(in: 16_000..<38_000) - 660) < 1)
        #expect(player.nowPlayingItem?.url == next)
    }

    @Test func everyItemBadStopsWithTheError() throws {
        let rig = try MusicRig()
        let player = rig.player
        player.beginGeneratingPlaybackNotifications()
        let bad1 = try fixtures.write("bad1.mp3", bytes: [])
        let bad2 = fixtures.path("missing.ogg")
        try player.setQueue(paths: [bad1, bad2])
        player.play()
        _ = try rig.render(frames: 4_800)
        let seen = rig.events()
        #expect(player.playbackState == .stopped)
        #expect(seen.filter { if case .playbackError = $0 { true } else { false } }.count == 2)
        #expect(player.nowPlayingItem == nil)
    }

    @Test func shuffleVisitsEveryItemOncePerCycle() throws {
        let rig = try MusicRig()
        let player = rig.player
        try player.setQueue(paths: try tones(6, seconds: 0.2))
        player.shuffleMode = .songs
        player.repeatMode = .all
        #expect(Set(player.playOrder) == Set(0..<6))
        #expect(player.playOrder != Array(0..<6))
        var seen: [Int] = []
        for _ in 0..<6 {
            seen.append(try #require(player.indexOfNowPlayingItem))
            player.skipToNextItem()
        }
        #expect(Set(seen).count == 6)
        #expect(player.indexOfNowPlayingItem == seen[0])  // repeat all wraps to the start of the cycle
    }

    @Test func repeatOneReplaysAndRepeatAllWraps() throws {
        let rig = try MusicRig()
        let player = rig.player
        let files = try tones(2, seconds: 0.25)
        try player.setQueue(paths: files)
        player.repeatMode = .one
        player.play()
        let one = try Signal(rig.render(frames: 36_000))
        #expect(player.indexOfNowPlayingItem == 0)
        #expect(abs(one.dominantFrequency(in: 13_000..<23_000) - 300) < 1)  // the second play-through of item 0
        player.repeatMode = .all
        player.indexOfNowPlayingItem = 1
        _ = try rig.render(frames: 14_400)
        #expect(player.indexOfNowPlayingItem == 0)
        #expect(player.playbackState == .playing)
    }

    @Test func skipPreviousRestartsAfterThreeSeconds() throws {
        let rig = try MusicRig()
        let player = rig.player
        try player.setQueue(paths: try tones(2, seconds: 6))
        player.indexOfNowPlayingItem = 1
        player.play()
        player.currentPlaybackTime = 4
        player.skipToPreviousItem()
        #expect(player.indexOfNowPlayingItem == 1)
        #expect(player.currentPlaybackTime < 0.1)
        player.skipToPreviousItem()
        #expect(player.indexOfNowPlayingItem == 0)
    }

    @Test func notificationsArriveInOrderOnlyWhileGenerating() throws {
        let rig = try MusicRig()
        let player = rig.player
        let files = try tones(2, seconds: 1)
        try player.setQueue(paths: files)
        player.play()
        #expect(rig.events().isEmpty)
        player.beginGeneratingPlaybackNotifications()
        player.beginGeneratingPlaybackNotifications()
        player.endGeneratingPlaybackNotifications()
        player.pause()
        player.volume = 0.5
        player.skipToNextItem()
        let seen = rig.events()
        #expect(
            seen == [
                .playbackStateDidChange(.paused), .volumeDidChange(0.5),
                .nowPlayingItemDidChange(MediaItem(path: files[1]))
            ])
        player.endGeneratingPlaybackNotifications()
        player.play()
        #expect(rig.events().isEmpty)
    }

    @Test func musicPlaysOnTheMusicBus() throws {
        let rig = try MusicRig()
        try rig.player.setQueue(paths: try tones(1, seconds: 1))
        rig.player.play()
        let loud = try Signal(rig.render(frames: 9_600)).rms(1_000..<9_600)
        rig.music.gain = 0.5
        let half = try Signal(rig.render(frames: 9_600)).rms(1_000..<9_600)
        #expect(abs(decibels(half, over: loud) + 6.02) < 0.1)
        rig.music.isMuted = true
        #expect(try Signal(rig.render(frames: 9_600)).peak(1_000..<9_600) == 0)
    }

    @Test func crossfadeFollowsEqualPowerCurves() throws {
        let rig = try MusicRig()
        let player = rig.player
        let a = try fixtures.sineWAV("a.wav", hz: 300, seconds: 2)
        let b = try fixtures.sineWAV("b.wav", hz: 500, seconds: 2)
        player.crossfadeDuration = 1
        try player.setQueue(paths: [a, b])
        player.play()
        var out = try Signal(rig.render(frames: 120_000))
        #expect(player.nowPlayingItem?.url == b)  // the second item is current once the first has ended
        out.samples += try rig.render(frames: 72_000).samples
        // Before the fade only the first item; during it cos/sin gains; after it only the second.
        #expect(abs(out.amplitude(of: 300, in: 24_000..<43_200) - 0.5) < 0.01)
        #expect(out.amplitude(of: 500, in: 24_000..<43_200) < 0.01)
        for x in [0.25, 0.5, 0.75] {
            let centre = 48_000 + Int(x * 48_000)
            let window = (centre - 2_400)..<(centre + 2_400)
            #expect(abs(out.amplitude(of: 300, in: window) - 0.5 * cos(x * .pi / 2)) < 0.02, "x = \(x)")
            #expect(abs(out.amplitude(of: 500, in: window) - 0.5 * sin(x * .pi / 2)) < 0.02, "x = \(x)")
        }
        #expect(abs(out.amplitude(of: 500, in: 100_000..<140_000) - 0.5) < 0.01)
        // The second item keeps its full length after the overlap: 2 + 2 - 1 seconds in all.
        let end = try #require((0..<out.frames).last { abs(out.samples[$0 * 2]) > 1e-4 })
        #expect(abs(end - 144_000) < 20)
    }
}
