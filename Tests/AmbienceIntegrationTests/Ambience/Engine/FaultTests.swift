import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

// Fault runs: each fault must not crash anything, must show up as a clear event or error, and must leave
// everything else playing. Faults in files and disks run here; faults of the sound server and the session bus
// (which open devices or change servers) run one at a time in `SoundServerSuites`, below.

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct FaultTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    /// Whether this process may mount a tmpfs (root, outside a container that forbids it): tried once.
    static let canMountTmpfs: Bool = {
        guard getuid() == 0, let fixtures = try? Fixtures() else { return false }
        let folder = fixtures.path("probe")
        guard (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)) != nil,
            (try? fixtures.run("mount", ["-t", "tmpfs", "-o", "size=16k", "tmpfs", folder])) != nil
        else { return false }
        return (try? fixtures.run("umount", [folder])) != nil
    }()

    /// A music file cut short while it streams: the player reports a playback error for it and moves on to the next
    /// item, which plays.
    @Test(arguments: ["ogg", "mp3", "wav"])
    func musicFileTruncatedWhileItStreams(format: String) throws {
        let long: String
        switch format {
        case "ogg": long = try fixtures.sineOgg("long.ogg", hz: 440, seconds: 20)
        case "mp3": long = try fixtures.sineMP3("long.mp3", hz: 440, seconds: 20, rate: 48_000)
        default: long = try fixtures.sineWAV("long.wav", hz: 440, seconds: 20)
        }
        let next = try fixtures.sineWAV("next.wav", hz: 660, seconds: 10)
        let engine = try AudioEngine(.offline(sampleRate: 48_000))
        let player = engine.musicPlayer
        player.beginGeneratingPlaybackNotifications()
        try player.setQueue(paths: [long, next])
        player.play()
        _ = try engine.render(frames: 48_000)
        // Cut the file to its first fifth (4 s) while its decoder is open, 1 s in.
        let size = try #require(RawPath.fileStatus(Array(long.utf8))?.size)
        #expect(truncate(long, off_t(size / 5)) == 0)
        var events: [MusicEvent] = []
        var tail: [Float] = []
        for second in 0..<8 {
            let block = try engine.render(frames: 48_000)
            events += engine.update().compactMap { if case .music(let e) = $0 { e } else { nil } }
            if second >= 5 { tail += block.samples }
        }
        let error = events.first { if case .playbackError(let item, _) = $0 { item.url == long } else { false } }
        #expect(error != nil, "no playbackError for the truncated \(format); events: \(events)")
        if case .playbackError(_, let reason) = error { #expect(reason.description.contains(long)) }
        #expect(
            events.contains { if case .nowPlayingItemDidChange(let item) = $0 { item?.url == next } else { false } })
        // The next item plays: 660 Hz, 2 to 4 s after the cut.
        let out = Signal(tail, channels: 2, sampleRate: 48_000)
        #expect(out.rms() > 0.05)
        #expect(abs(out.dominantFrequency() - 660) < 2)
    }

    /// Rendering onto a full disk (a 200 KB tmpfs): status 1, one `ambience:` line naming the file and the reason,
    /// and nothing left behind, neither the output nor a temporary file. A render that fits still works there.
    @Test(.enabled(if: FaultTests.canMountTmpfs, "mounting a tmpfs needs root (and a machine that allows it)"))
    func renderOntoAFullDiskLeavesNothing() throws {
        let disk = fixtures.path("small-disk")
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        try fixtures.run("mount", ["-t", "tmpfs", "-o", "size=200k", "tmpfs", disk])
        defer { _ = try? fixtures.run("umount", [disk]) }
        let out = disk + "/mix.wav"
        let full = try ToolRunner.run(["render", "--out", out, "--seconds", "10"])
        #expect(full.status == 1)
        #expect(!full.killedBySignal)
        #expect(full.stderrLines.count == 1)
        #expect(full.stderr.hasPrefix("ambience: "))
        #expect(full.stderr.contains("mix.wav"))
        #expect(full.stderr.lowercased().contains("no space left"), "stderr: \(full.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk).isEmpty)
        let fits = try ToolRunner.run(["render", "--out", out, "--seconds", "0.2"])
        #expect(fits.status == 0, "stderr: \(fits.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk) == ["mix.wav"])
    }
}
