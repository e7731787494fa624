import AmbiencePlatform
import Foundation
import Synchronization
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDesktop
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

private let busRunning = ProcessInfo.processInfo.environment["AMBIENCE_TEST_SERVICES"] == "1"
private let needsBus: Comment = "needs the private session bus: bash scripts/with-services.sh swift test --filter MPRIS"

/// The MPRIS suite is one of the sound-server suites: the games some of its tests start open real-time devices, whose
/// route monitors meet the shared sound server, where FaultTests and RouteChangeTests plug and unplug sinks (a flapping
/// sink paused the C game loop's soundtrack before it could start, #32).
typealias MPRISTests = SoundServerSuites.MPRISTests

extension SoundServerSuites {
    /// Against the private session bus of `scripts/with-services.sh`, with a real mpv (and its MPRIS plugin) and
    /// `playerctl`. Serialized: mpv takes the name `org.mpris.MediaPlayer2.mpv` only when no other mpv holds it.
    @Suite(.offTheCooperativePool, .timeLimit(.minutes(5)), .serialized, .enabled(if: busRunning, needsBus))
    struct MPRISTests {
        let fixtures: Fixtures
        let song: String

        init() throws {
            fixtures = try Fixtures()
            song = try fixtures.sineOgg("song.ogg", seconds: 3, tags: ["TITLE=Title", "ARTIST=Artist", "ALBUM=Album"])
        }

        /// A generous timeout where responsiveness is not under test: the machine may be busy building.
        func client() throws -> MPRISClient { try MPRISClient(timeout: .seconds(2)) }

        /// Waits until mpv (found by its process ID) is on the bus, playing, with its tags. (mpv first announces itself
        /// playing with track ID `/noplaylist` and no title, then with the file name as title, then with the tags.)
        private func waitForPlaying(_ mpv: MPV, in client: MPRISClient) -> MPRISPlayerInfo? {
            var found: MPRISPlayerInfo?
            _ = eventually {
                found = client.players.first { $0.processID == mpv.pid }
                return found?.status == .playing && found?.artist != nil
            }
            return found
        }

        @Test func mpvIsListedPlayingWithItsTags() throws {
            let client = try client()
            let mpv = try MPV(playing: song)
            defer { mpv.kill() }
            let info = try #require(waitForPlaying(mpv, in: client), "mpv did not appear on the bus, playing")
            #expect(info.name == "org.mpris.MediaPlayer2.mpv")
            #expect(info.shortName == "mpv")
            #expect(info.status == .playing)
            #expect(info.title == "Title")
            #expect(info.artist == "Artist")
            #expect(info.album == "Album")
            #expect(info.identity == "mpv")
            #expect(abs((info.length ?? 0) - 3) < 0.05)
            #expect(info.trackID != nil)
            #expect(info.canControl && info.canPause && info.isResponding)
            #expect(info.uniqueName.hasPrefix(":"))
            // It arrived through NameOwnerChanged; a fresh listing (ListNames) agrees.
            #expect(
                client.drainEvents().contains {
                    if case .playerAppeared(let p) = $0 { p.name == info.name } else { false }
                }
            )
            let listed = client.refresh().first { $0.name == info.name }
            #expect(listed?.status == .playing && listed?.title == "Title" && listed?.processID == mpv.pid)
        }

        @Test func commandsDriveMpvAndItsSignalsComeBack() throws {
            let client = try client()
            let mpv = try MPV(playing: song)
            defer { mpv.kill() }
            let info = try #require(waitForPlaying(mpv, in: client))
            var events = client.drainEvents()

            client.send(.pause, to: info.name)
            #expect(eventually { playerctl(["-p", info.shortName, "status"]) == "Paused" })
            // mpv's PropertiesChanged reaches the client as an event, and the snapshot follows.
            #expect(
                eventually {
                    events += client.drainEvents()
                    return events.contains {
                        if case .playerChanged(let p) = $0 { p.name == info.name && p.status == .paused } else { false }
                    }
                })
            #expect(client.player(named: "mpv")?.status == .paused)

            // SetPosition with mpv's track ID; mpv lands on the Ogg page before the target (1.34 s for 1.5 s) and says so.
            client.send(.setPosition(1.5), to: "mpv")
            #expect(
                eventually {
                    events += client.drainEvents()
                    return events.contains {
                        if case .seeked(info.name, let at) = $0 { abs(at - 1.5) < 0.5 } else { false }
                    }
                })
            client.send(.setVolume(0.5), to: info.name)
            #expect(eventually { Double(playerctl(["-p", info.shortName, "volume"]) ?? "") == 0.5 })
            #expect(eventually { client.player(named: info.name)?.volume == 0.5 })

            client.send(.play, to: info.name)
            #expect(eventually { playerctl(["-p", info.shortName, "status"]) == "Playing" })
            #expect(eventually { client.player(named: info.name)?.status == .playing })
            #expect(!client.drainEvents().contains { if case .commandFailed = $0 { true } else { false } })
        }

        @Test func aKilledPlayerVanishesAndNothingBreaks() throws {
            let client = try client()
            let mpv = try MPV(playing: song)
            defer { mpv.kill() }
            let info = try #require(waitForPlaying(mpv, in: client))
            _ = client.drainEvents()

            mpv.kill()
            var events: [MPRISEvent] = []
            #expect(
                eventually {
                    events += client.drainEvents()
                    return events.contains(.playerVanished(info.name))
                })
            #expect(client.player(named: info.name) == nil)
            #expect(!client.refresh().contains { $0.name == info.name })
            #expect(client.isConnected)
            // A command to the vanished player fails as an event, not a crash or a hang.
            client.send(.play, to: info.name)
            #expect(
                eventually {
                    events += client.drainEvents()
                    return events.contains { if case .commandFailed(info.name, .play, _) = $0 { true } else { false } }
                })
        }

        /// A connection that owns an MPRIS name and never reads its socket: the listing pays one timeout for it,
        /// still returns mpv, and does not ask the silent one again on the next listing.
        @Test func aPlayerThatNeverAnswersCostsOneTimeout() throws {
            let mpv = try MPV(playing: song)
            defer { mpv.kill() }
            let watcher = try client()
            _ = try #require(waitForPlaying(mpv, in: watcher))
            watcher.close()
            let silent = try DBusConnection(address: DesktopBus.sessionAddress, timeout: .seconds(2))
            #expect(try silent.requestName("org.mpris.MediaPlayer2.silent"))

            let clock = ContinuousClock()
            let start = clock.now
            // A timeout long enough that "one timeout, not two" and "no timeout at all" need no tight bound on a busy machine.
            let timeout: Duration = .seconds(3)
            let client = try MPRISClient(timeout: timeout)
            let players = client.refresh()
            let first = clock.now - start
            print("MPRIS: a listing with one silent player took \(first) (timeout \(timeout))")
            #expect(first >= timeout - .milliseconds(10), "the silent player was not asked: \(first)")
            #expect(first < timeout * 2, "more than one timeout: \(first)")
            let listedMpv = players.first { $0.processID == mpv.pid }
            #expect(listedMpv?.status == .playing && listedMpv?.isResponding == true)
            let listedSilent = players.first { $0.name == "org.mpris.MediaPlayer2.silent" }
            #expect(listedSilent?.isResponding == false)
            #expect(listedSilent?.processID == Int(getpid()))

            // Known to be silent: not asked again, and commands to it do not wait.
            let again = clock.now
            client.send(.pause, to: "silent")
            _ = client.refresh()
            // Less than one more timeout (3 s): a functional bound; the figure is printed.
            let second = clock.now - again
            print("MPRIS: the next listing, the silent player known, took \(second)")
            #expect(second < .seconds(2), "\(second)")
            #expect(!client.drainEvents().contains { if case .commandFailed = $0 { true } else { false } })
        }

        /// A bus of the test's own, killed under a client and a server: the client reports `busLost` and empties its
        /// list, and neither crashes, hangs or spins.
        @Test func losingTheBusEndsClientAndServerCleanly() throws {
            let bus = try ThrowawayService.dbus(in: fixtures)
            defer { bus.kill() }
            let address = bus.address
            // Timeouts longer than the bound below: a call that waited on the dead bus would fail the test.
            let client = try MPRISClient(busAddress: address, timeout: .seconds(5))
            let server = try MPRISServer(
                controls: FakeControls(items: []), appName: "lost-bus", busAddress: address, timeout: .seconds(5))
            #expect(eventually { client.player(named: server.busName) != nil })

            bus.kill()
            var events: [MPRISEvent] = []
            #expect(
                eventually {
                    events += client.drainEvents()
                    return events.contains(.busLost)
                })
            #expect(!client.isConnected)
            #expect(client.players.isEmpty)
            let clock = ContinuousClock()
            let start = clock.now
            #expect(client.refresh().isEmpty)
            client.send(.play, to: server.busName)
            server.notifyChanged()
            server.close()
            client.close()
            let elapsed = clock.now - start
            print("MPRIS: refresh, send, notifyChanged and close on a lost bus took \(elapsed)")
            #expect(elapsed < .seconds(2), "\(elapsed)")
        }

        /// On a bus of the test's own: on the shared one, another suite's engine pausing "other players" would take
        /// the fake player out of the state this test drives it to.
        @Test func theServerIsReadAndDrivenByPlayerctl() throws {
            let bus = try ThrowawayService.dbus(in: fixtures)
            defer { bus.kill() }
            func playerctl(_ arguments: [String]) -> String? {
                AmbienceIntegrationSupport.playerctl(arguments, bus: bus.address)
            }
            let controls = FakeControls(items: [
                MediaItem(
                    persistentID: 1, url: "/music/one.ogg", title: "First Song", artist: "Band", albumTitle: "Record",
                    playbackDuration: 200),
                MediaItem(
                    persistentID: 2, url: "/music/two.ogg", title: "Second Song", artist: "Band", albumTitle: "Record",
                    playbackDuration: 100)
            ])
            let watcher = try MPRISClient(busAddress: bus.address, timeout: .seconds(2))
            let server = try MPRISServer(
                controls: controls, appName: "mpris-test", identity: "MPRIS Test", busAddress: bus.address)
            defer { server.close() }
            #expect(server.busName == "org.mpris.MediaPlayer2.ambience.mpris_test")
            let player = "ambience.mpris_test"

            #expect(playerctl(["-p", player, "status"]) == "Stopped")
            #expect(playerctl(["-p", player, "metadata", "title"]) == "First Song")
            #expect(playerctl(["-p", player, "metadata", "artist"]) == "Band")
            #expect(playerctl(["-p", player, "metadata", "album"]) == "Record")
            // playerctl quotes paths
            #expect(playerctl(["-p", player, "metadata", "mpris:trackid"]) == "'/org/ambience/track/1'")
            #expect(playerctl(["-p", player, "metadata", "mpris:length"]) == "200000000")
            #expect(playerctl(["-p", player, "metadata", "xesam:url"]) == "file:///music/one.ogg")

            #expect(playerctl(["-p", player, "play"]) != nil)
            #expect(controls.playbackState == .playing)
            #expect(playerctl(["-p", player, "status"]) == "Playing")
            #expect(playerctl(["-p", player, "pause"]) != nil)
            #expect(controls.playbackState == .paused)
            #expect(playerctl(["-p", player, "play-pause"]) != nil)
            #expect(controls.playbackState == .playing)
            #expect(playerctl(["-p", player, "next"]) != nil)
            #expect(controls.nowPlayingItem?.persistentID == 2)
            #expect(eventually { playerctl(["-p", player, "metadata", "title"]) == "Second Song" })
            #expect(playerctl(["-p", player, "volume", "0.25"]) != nil)
            #expect(controls.volume == 0.25)
            #expect(playerctl(["-p", player, "position", "42"]) != nil)  // SetPosition with the current track ID
            #expect(abs(controls.currentPlaybackTime - 42) < 0.001)
            #expect(playerctl(["-p", player, "position", "10-"]) != nil)  // Seek(-10 s)
            #expect(abs(controls.currentPlaybackTime - 32) < 0.001)
            #expect(playerctl(["-p", player, "stop"]) != nil)
            #expect(controls.playbackState == .stopped)

            // Seen from the client: the server's PropertiesChanged and Seeked, for a change made inside the game.
            #expect(eventually { watcher.player(named: player)?.title == "Second Song" })
            _ = watcher.drainEvents()
            controls.play()
            controls.currentPlaybackTime = 80
            server.notifyChanged()
            var events: [MPRISEvent] = []
            #expect(
                eventually {
                    events += watcher.drainEvents()
                    let changed = events.contains {
                        if case .playerChanged(let p) = $0 {
                            p.name == server.busName && p.status == .playing
                        } else {
                            false
                        }
                    }
                    let seeked = events.contains {
                        if case .seeked(server.busName, let at) = $0 { abs(at - 80) < 0.5 } else { false }
                    }
                    return changed && seeked
                },
                "the client saw \(events), and knows \(String(describing: watcher.player(named: server.busName)))")
            let seen = try #require(watcher.player(named: server.busName))
            #expect(
                seen.identity == "MPRIS Test" && seen.processID == Int(getpid()) && seen.volume == 0.25
                    && seen.length == 100)

            // The introspection data parses (gdbus reads it with GLib's XML parser) and names both MPRIS interfaces.
            let introspection = try Fixtures.run(
                "gdbus", ["introspect", "--session", "--dest", server.busName, "--object-path", MPRISClient.objectPath],
                environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
            #expect(introspection.contains("interface org.mpris.MediaPlayer2.Player"))
            #expect(introspection.contains("readwrite d Volume"))

            // A second copy of the app takes an instance name, as a second mpv does.
            let second = try MPRISServer(controls: controls, appName: "mpris-test", busAddress: bus.address)
            #expect(second.busName == "org.mpris.MediaPlayer2.ambience.mpris_test.instance\(getpid())")
            second.close()
            server.close()
            #expect(eventually { watcher.player(named: player) == nil })
        }

        /// An offline engine whose music player holds two 2 s tones, `one.wav` and `two.wav`, and their paths.
        func engineWithTwoSongs() throws -> (AudioEngine, one: String, two: String) {
            let one = try fixtures.sineWAV("one.wav", hz: 440, seconds: 2)
            let two = try fixtures.sineWAV("two.wav", hz: 660, seconds: 2)
            let engine = try AudioEngine(.offline(sampleRate: 48_000))
            do { try engine.musicPlayer.setQueue(paths: [one, two]) } catch {
                engine.shutdown()
                throw error
            }
            return (engine, one, two)
        }

        @Test func theServerExposesTheEnginesMusicPlayer() throws {
            let (engine, _, two) = try engineWithTwoSongs()
            defer { engine.shutdown() }
            let music = engine.musicPlayer
            let server = try MPRISServer(controls: music, appName: "engine-test")
            defer { server.close() }
            let player = "ambience.engine_test"

            #expect(playerctl(["-p", player, "metadata", "title"]) == "one.wav")
            #expect(playerctl(["-p", player, "play"]) != nil)
            #expect(music.playbackState == .playing)
            _ = try engine.render(seconds: 0.5)
            let position = Double(playerctl(["-p", player, "position"]) ?? "") ?? -1
            #expect(abs(position - 0.5) < 0.1)
            #expect(playerctl(["-p", player, "next"]) != nil)
            #expect(music.nowPlayingItem?.url == two)
            #expect(eventually { playerctl(["-p", player, "metadata", "title"]) == "two.wav" })
            #expect(playerctl(["-p", player, "volume", "0.5"]) != nil)
            #expect(music.volume == 0.5)
            #expect(playerctl(["-p", player, "pause"]) != nil)
            #expect(music.playbackState == .paused)
            #expect(playerctl(["-p", player, "status"]) == "Paused")
        }

        /// The engine's player signals its changes: with the server's fallback look an hour away, what the game does
        /// to the player (play, skip, volume, seek, pause) reaches the desktop as it happens. On a bus of the test's
        /// own, so that no other suite's engine pauses the player.
        @Test func theEnginesPlayerIsSeenAsItChangesWithNoPoll() throws {
            let bus = try ThrowawayService.dbus(in: fixtures)
            defer { bus.kill() }
            let (engine, _, _) = try engineWithTwoSongs()
            defer { engine.shutdown() }
            let music = engine.musicPlayer
            let watcher = try MPRISClient(busAddress: bus.address, timeout: .seconds(2))
            defer { watcher.close() }
            let server = try MPRISServer(
                controls: music, appName: "signal-test", busAddress: bus.address, fallbackInterval: .seconds(3600))
            defer { server.close() }
            func seen() -> MPRISPlayerInfo? { watcher.player(named: server.busName) }
            #expect(eventually { seen()?.title == "one.wav" && seen()?.status == .stopped })
            _ = watcher.drainEvents()

            music.play()
            #expect(eventually { seen()?.status == .playing }, "\(String(describing: seen()))")
            music.skipToNextItem()
            #expect(eventually { seen()?.title == "two.wav" }, "\(String(describing: seen()))")
            music.volume = 0.5
            #expect(eventually { seen()?.volume == 0.5 }, "\(String(describing: seen()))")
            try music.seek(to: 1.5)
            var events: [MPRISEvent] = []
            #expect(
                eventually {
                    events += watcher.drainEvents()
                    return events.contains {
                        if case .seeked(server.busName, let at) = $0 { abs(at - 1.5) < 0.1 } else { false }
                    }
                }, "the client saw \(events)")
            music.pause()
            #expect(eventually { seen()?.status == .paused }, "\(String(describing: seen()))")
        }
    }
}

// MARK: Helpers

/// A player whose state is plain values: the server under test reads and drives it.
private final class FakeControls: MPRISPlayerControls {
    private struct State {
        var items: [MediaItem]
        var index = 0
        var playback = PlaybackState.stopped
        var time: Double = 0
        var volume: Float = 1
    }
    private let state: Lock<State>

    init(items: [MediaItem]) { state = Lock(State(items: items)) }

    var playbackState: PlaybackState { state.withLock { $0.playback } }
    var nowPlayingItem: MediaItem? { state.withLock { $0.items.indices.contains($0.index) ? $0.items[$0.index] : nil } }
    var currentPlaybackTime: Double {
        get { state.withLock { $0.time } }
        set { state.withLock { $0.time = newValue } }
    }
    var volume: Float {
        get { state.withLock { $0.volume } }
        set { state.withLock { $0.volume = newValue } }
    }
    func play() { state.withLock { $0.playback = .playing } }
    func pause() { state.withLock { $0.playback = .paused } }
    func stop() {
        state.withLock {
            $0.playback = .stopped; $0.time = 0
        }
    }
    func skipToNextItem() {
        state.withLock {
            $0.index = min($0.index + 1, $0.items.count - 1); $0.time = 0
        }
    }
    func skipToPreviousItem() {
        state.withLock {
            $0.index = max($0.index - 1, 0); $0.time = 0
        }
    }
}
