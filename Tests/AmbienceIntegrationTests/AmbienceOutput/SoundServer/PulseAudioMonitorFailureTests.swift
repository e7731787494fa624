import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceIntegrationSupport
@testable import AmbienceOutput
@testable import AmbienceTestSupport

/// No server needed: a dead address, a server that never answers, and the snapshot's bookkeeping.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct PulseAudioMonitorFailureTests {
    @Test func deadSocketFailsFast() {
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let monitor = try PulseAudioMonitor(
                appName: "ambience-test", server: "unix:/nonexistent-ambience-\(getpid())/native")
            Issue.record("connected to a dead socket: \(monitor.sinks)")
        } catch {
            guard case .serverUnavailable(let detail) = error else {
                Issue.record("expected serverUnavailable, got \(error)"); return
            }
            #expect(detail.contains("/nonexistent-ambience-"))
        }
        let elapsed = clock.now - start
        print("PulseAudioMonitor: dead socket refused in \(elapsed)")
        #expect(elapsed < .milliseconds(500))
    }

    @Test func silentServerTimesOut() throws {
        // A socket that accepts connections into its backlog and never says a word.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ambience-silent-\(getpid()).sock")
            .path
        unlink(path)
        let listener = try listeningSocket(at: path)
        defer { close(listener); unlink(path) }
        let clock = ContinuousClock()
        let start = clock.now
        do {
            _ = try PulseAudioMonitor(appName: "ambience-test", server: "unix:\(path)", timeout: .milliseconds(300))
            Issue.record("a silent server cannot be connected")
        } catch {
            guard case .timeout(let what) = error else { Issue.record("expected timeout, got \(error)"); return }
            #expect(what.contains(path))
        }
        let elapsed = clock.now - start
        print("PulseAudioMonitor: silent server gave up after \(elapsed) (timeout 300 ms)")
        // It waited for the timeout, and then gave up: a functional bound, not a measurement (the figure is printed).
        #expect(elapsed >= .milliseconds(290), "\(elapsed)")
        #expect(elapsed < .seconds(2), "\(elapsed)")
    }

    @Test func snapshotTracksSinksByIndex() {
        var model = PulseSnapshot()
        let speakers = SinkInfo(index: 0, name: "speakers", description: "Speakers", state: .idle, isMuted: false)
        #expect(model.update(speakers) == .sinkAdded(speakers))
        #expect(model.update(speakers) == nil)
        var running = speakers
        running.state = .running
        #expect(model.update(running) == .sinkChanged(from: speakers, to: running))
        #expect(model.removeSink(index: 7) == nil)
        #expect(model.removeSink(index: 0) == .sinkRemoved(running, streams: []))
        #expect(model.setDefaultSinkName("speakers") == .defaultSinkChanged(from: nil, to: "speakers"))
        #expect(model.setDefaultSinkName("speakers") == nil)
        // PipeWire's name for "no default" is no default; the next real one comes from none.
        #expect(model.setDefaultSinkName("@DEFAULT_SINK@") == .defaultSinkChanged(from: "speakers", to: nil))
        #expect(model.defaultSinkName == nil)
        #expect(model.setDefaultSinkName("@DEFAULT_SINK@") == nil)
        #expect(model.setDefaultSinkName("speakers") == .defaultSinkChanged(from: nil, to: "speakers"))
        // A removed sink names the streams that were on it: the server reports their move only afterwards.
        let headphones = SinkInfo(
            index: 1, name: "headphones", description: "Headphones", state: .running, isMuted: false)
        _ = model.update(speakers)
        _ = model.update(headphones)
        let game = SinkInput(
            index: 5, sinkIndex: 0, isCorked: false, isMuted: false, applicationName: "game", processID: 42)
        let other = SinkInput(
            index: 6, sinkIndex: 1, isCorked: false, isMuted: false, applicationName: "music", processID: 43)
        _ = model.update(game)
        _ = model.update(other)
        #expect(model.removeSink(index: 0) == .sinkRemoved(speakers, streams: [game]))
        #expect(model.removeSink(index: 1) == .sinkRemoved(headphones, streams: [other]))
    }

    /// Two engines in one process each keep a cork listener's silent stream (corked, on the default sink): neither
    /// is where the game plays, whichever monitor looks. Shaped as libpulse reports them (pacmd list-sink-inputs).
    @Test func noCorkListenerIsTheGamesStreamWhicheverEngineItIs() {
        var model = PulseSnapshot()
        let speakers = SinkInfo(index: 0, name: "speakers", description: "Speakers", state: .running, isMuted: false)
        let headphones = SinkInfo(index: 1, name: "headphones", description: "Headphones", state: .idle, isMuted: false)
        for sink in [speakers, headphones] { _ = model.update(sink) }
        func listener(_ index: UInt32) -> SinkInput {
            SinkInput(
                index: index, sinkIndex: 0, isCorked: true, isMuted: false, applicationName: "game-monitor",
                processID: 42, mediaRole: "game", mediaName: PulseSnapshot.corkStreamName)
        }
        let game = SinkInput(
            index: 7, sinkIndex: 1, isCorked: true, isMuted: false, applicationName: "game", processID: 42)
        model.corkListenerIndex = 5
        for input in [listener(5), game, listener(9)] { _ = model.update(input) }
        #expect(model.isCorkListener(listener(5)) && model.isCorkListener(listener(9)) && !model.isCorkListener(game))
        // The game's stream is corked too (paused): still it, not the second engine's newer listener.
        #expect(model.sinkOfStream(pid: 42) == headphones)
    }

    /// The server reports a sink's removal before it names the new default: the monitor must not take the stale
    /// default (gone) for "no sink left".
    @Test func aRemovedDefaultSinkIsFollowedByASinkThatIsLeft() {
        var model = PulseSnapshot()
        let speakers = SinkInfo(index: 0, name: "speakers", description: "Speakers", state: .running, isMuted: false)
        let headphones = SinkInfo(index: 1, name: "headphones", description: "Headphones", state: .idle, isMuted: false)
        let usb = SinkInfo(index: 2, name: "usb", description: "USB", state: .idle, isMuted: false)
        for sink in [speakers, headphones, usb] { _ = model.update(sink) }
        _ = model.setDefaultSinkName("speakers")
        _ = model.update(
            SinkInput(index: 5, sinkIndex: 0, isCorked: false, isMuted: false, applicationName: "game", processID: 42))
        _ = model.removeSink(index: 0)
        #expect(model.defaultSink == nil)  // still named "speakers"
        #expect(model.sinkAfterRemoval(pid: 42) == headphones)  // any sink left
        // Once the server has moved our stream, that is where we are.
        _ = model.update(
            SinkInput(index: 5, sinkIndex: 2, isCorked: false, isMuted: false, applicationName: "game", processID: 42))
        #expect(model.sinkAfterRemoval(pid: 42) == usb)
        // And once it names the new default, that wins.
        _ = model.setDefaultSinkName("headphones")
        #expect(model.sinkAfterRemoval(pid: 42) == headphones)
        _ = model.removeSink(index: 1)
        _ = model.removeSink(index: 2)
        #expect(model.sinkAfterRemoval(pid: 42) == nil)  // nothing left: no route
    }

    /// What the engine ends before it closes its device: its own streams on no sink (PipeWire keeps one whose sink
    /// went, with none left, on index PA_INVALID_INDEX; a removal the stream's report has not caught up with names a
    /// sink that is gone), never another app's and never one on a sink.
    @Test func streamsOnNoSinkAreOursOnNoSinkOrAGoneOne() {
        var model = PulseSnapshot()
        _ = model.update(
            SinkInfo(index: 38, name: "speakers", description: "Speakers", state: .running, isMuted: false))
        _ = model.update(
            SinkInfo(index: 45, name: "headphones", description: "Headphones", state: .idle, isMuted: false))
        func input(_ index: UInt32, sink: UInt32, pid: pid_t) -> SinkInput {
            SinkInput(
                index: index, sinkIndex: sink, isCorked: sink == UInt32.max, isMuted: false, applicationName: "game",
                processID: pid)
        }
        _ = model.update(input(55, sink: 38, pid: 42))  // ours, on the speakers
        _ = model.update(input(56, sink: UInt32.max, pid: 42))  // ours, on no sink
        _ = model.update(input(57, sink: UInt32.max, pid: 7))  // another app's, on no sink
        let ours = { (stream: SinkInput) in stream.processID == 42 }
        #expect(model.streamsOnNoSink(ours).map(\.index) == [56])
        _ = model.removeSink(index: 38)  // its report still names the sink that went
        #expect(model.streamsOnNoSink(ours).map(\.index) == [55, 56])
        _ = model.update(input(55, sink: 45, pid: 42))  // moved by the server
        #expect(model.streamsOnNoSink(ours).map(\.index) == [56])
        #expect(model.streamsOnNoSink { _ in true }.map(\.index) == [56, 57])
    }

    @Test func otherAppsPlayingLeavesOutOurProcessAndCorkedStreams() {
        var model = PulseSnapshot()
        _ = model.update(SinkInfo(index: 1, name: "speakers", description: "Speakers", state: .running, isMuted: false))
        _ = model.update(
            SinkInfo(index: 2, name: "headphones", description: "Headphones", state: .idle, isMuted: false))
        func input(_ index: UInt32, sink: UInt32, pid: pid_t?, corked: Bool) -> SinkInput {
            SinkInput(
                index: index, sinkIndex: sink, isCorked: corked, isMuted: false, applicationName: nil, processID: pid,
                mediaRole: nil, mediaName: nil)
        }
        _ = model.update(input(10, sink: 1, pid: 100, corked: false))  // ours: SDL
        _ = model.update(input(11, sink: 2, pid: 100, corked: true))  // ours: a probe stream
        _ = model.update(input(12, sink: 1, pid: 200, corked: false))  // mpv playing
        _ = model.update(input(13, sink: 1, pid: 300, corked: true))  // a paused player
        _ = model.update(input(14, sink: 1, pid: nil, corked: false))  // no process named
        #expect(model.otherAppsPlaying(excludingPID: 100).map(\.index) == [12, 14])
        #expect(model.sinkOfStream(pid: 100)?.name == "speakers")
        #expect(model.sinkOfStream(pid: 999) == nil)
        var moved = input(12, sink: 2, pid: 200, corked: false)
        #expect(model.update(moved) == .sinkInputChanged(from: input(12, sink: 1, pid: 200, corked: false), to: moved))
        moved.isCorked = true
        _ = model.update(moved)
        #expect(model.otherAppsPlaying(excludingPID: 100).map(\.index) == [14])
        #expect(model.removeSinkInput(index: 12) == .sinkInputRemoved(moved))
    }
}

private func listeningSocket(at path: String) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw FixtureError.toolFailed("socket: errno \(errno)") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
        for (i, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[i] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard bound == 0, listen(fd, 8) == 0 else {
        close(fd); throw FixtureError.toolFailed("bind/listen \(path): errno \(errno)")
    }
    return fd
}
