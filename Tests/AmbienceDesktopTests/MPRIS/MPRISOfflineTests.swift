import AmbiencePlatform
import Foundation
import Synchronization
import Testing

@testable import AmbienceCore
@testable import AmbienceDesktop
@testable import AmbienceTestSupport

/// The D-Bus layer's parts that need no bus: marshalling, name rules, and failing fast when there is no bus.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct MPRISOfflineTests {
    /// What a player's volume was before ducking survives a second duck, and is given back once.
    @Test func savedVolumesKeepTheFirstVolume() {
        let saved = SavedVolumes()
        #expect(saved.save(0.8, for: "org.mpris.MediaPlayer2.mpv") == 0.8)
        #expect(saved.save(0.24, for: "org.mpris.MediaPlayer2.mpv") == 0.8)  // already ducked: keep the original
        #expect(saved.take("org.mpris.MediaPlayer2.mpv") == 0.8)
        #expect(saved.take("org.mpris.MediaPlayer2.mpv") == nil)
    }

    @Test func theSessionBusIsTheVariableElseTheUsersRuntimeSocket() {
        let runtime = "/run/user/1000"
        let socketThere = { (path: String) in path == runtime + "/bus" }
        #expect(
            DesktopBus.sessionAddress(
                environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/tmp/b"], isSocket: socketThere)
                == "unix:path=/tmp/b")
        #expect(
            DesktopBus.sessionAddress(environment: ["XDG_RUNTIME_DIR": runtime], isSocket: socketThere)
                == "unix:path=/run/user/1000/bus")
        // Set but empty: the session bus is off, even with a runtime socket there.
        #expect(
            DesktopBus.sessionAddress(
                environment: ["DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": runtime],
                isSocket: socketThere) == nil)
        #expect(
            DesktopBus.sessionAddress(environment: ["XDG_RUNTIME_DIR": "/run/user/0"], isSocket: socketThere) == nil)
        #expect(DesktopBus.sessionAddress(environment: ["XDG_RUNTIME_DIR": "relative"], isSocket: { _ in true }) == nil)
        #expect(DesktopBus.sessionAddress(environment: [:], isSocket: { _ in true }) == nil)
        // A runtime folder with characters that mean something in an address is escaped.
        #expect(
            DesktopBus.sessionAddress(environment: ["XDG_RUNTIME_DIR": "/run/a b,c=d;é"], isSocket: { _ in true })
                == "unix:path=/run/a%20b%2cc%3dd%3b%c3%a9/bus")
    }

    @Test func everyValueKindSurvivesARoundTrip() throws {
        let values: [DBusValue] = [
            .string("héllo"), .objectPath("/org/ambience/track/42"), .bool(true), .bool(false), .byte(200),
            .int32(-7), .uint32(4_000_000_000), .int64(-9_000_000_000), .uint64(18_000_000_000_000_000_000),
            .double(0.25),
            .strings(["a", "b"]), .array("i", []), .array("ai", [.array("i", [.int32(1), .int32(2)])]),
            .dict([
                "xesam:title": .string("T"), "xesam:artist": .strings(["A", "B"]), "mpris:length": .int64(3_000_000),
                "nested": .dict(["x": .double(1)]), "boxed": .variant(.uint32(3))
            ]),
            .dict([:]),
            .variant(.variant(.int32(5))),
            .structure([.string("k"), .int64(1), .strings([])]),
            .array("{ss}", [.structure([.string("k1"), .string("v1")]), .structure([.string("k2"), .string("v2")])])
        ]
        #expect(try DBusConnection.roundTrip(values) == values)
    }

    @Test func whatLibdbusWouldAbortOnIsRefusedInstead() {
        // libdbus aborts the process on these; the Swift layer must check them first.
        for bad: DBusValue in [
            .objectPath("not a path"), .objectPath("/trailing/"), .array("s", [.int32(1)]),
            .array("{ss}", [.structure([.string("k"), .int32(1)])]), .array("", []), .array("ss", []),
            .structure([])
        ] {
            #expect(throws: DesktopError.self, "\(bad)") { try DBusConnection.roundTrip([bad]) }
        }
    }

    @Test func appNamesBecomeValidBusNames() {
        #expect(MPRISServer.busName(forApp: "GravityWave") == "org.mpris.MediaPlayer2.ambience.GravityWave")
        #expect(MPRISServer.busName(forApp: "gravity-wave 2.0!") == "org.mpris.MediaPlayer2.ambience.gravity_wave_2_0_")
        #expect(MPRISServer.busName(forApp: "3D Racer") == "org.mpris.MediaPlayer2.ambience._3D_Racer")
        #expect(MPRISServer.busName(forApp: "") == "org.mpris.MediaPlayer2.ambience.app")
        #expect(MPRISServer.busName(forApp: "Ünïcode") == "org.mpris.MediaPlayer2.ambience._n_code")
    }

    /// No address, a socket nobody listens on, and a socket that accepts but never answers: each is
    /// `busUnavailable`, within the client's timeout (250 ms), not libdbus's 25 s. Checked with 1 s of slack: on a
    /// loaded machine the thread that gave up can wait that long for a processor (0.39 s at load 20).
    @Test func withoutABusTheClientIsUnavailableWithinItsTimeout() throws {
        let folder = try Fixtures()
        let hung = try HungSocket(path: folder.path("hung.sock"))
        for address in [nil, "unix:path=\(folder.path("nobody.sock"))", "unix:path=\(hung.path)"] as [String?] {
            let clock = ContinuousClock()
            let start = clock.now
            do {
                _ = try MPRISClient(busAddress: address)
                Issue.record("\(address ?? "nil"): a client without a bus")
            } catch {
                guard case .busUnavailable = error else { Issue.record("\(address ?? "nil"): \(error)"); continue }
            }
            let elapsed = clock.now - start
            #expect(elapsed < DesktopBus.defaultTimeout + .seconds(1), "\(address ?? "nil"): \(elapsed)")
        }
    }
}

/// A Unix socket that accepts connections and never says a word: a hung bus.
private final class HungSocket {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (i, byte) in path.utf8.prefix(bytes.count - 1).enumerated() { bytes[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard fd >= 0, bound == 0, listen(fd, 8) == 0 else { throw FixtureError.toolFailed("cannot listen on \(path)") }
    }

    deinit { close(fd) }
}
