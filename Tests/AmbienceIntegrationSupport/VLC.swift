import Foundation
import Glibc

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceTestSupport

/// A session bus of its own that any user may join, with a real VLC on it (`cvlc --control dbus`, no audio output).
///
/// VLC refuses to run as root ("VLC is not supposed to be run as root"), and the tests run as root here and in CI.
/// The supported way is to run it as another user: here `nobody`, through util-linux's `setpriv`. A session bus
/// admits only its own user unless its configuration allows others, so VLC gets a bus of its own (a plain
/// dbus-daemon with `<allow user="*"/>`), in a folder everyone can enter, with its music readable by everyone.
/// The engine, the client and playerctl under test join that bus by its address.
final class VLCBus {
    let folder: String
    let address: String
    private let daemon: ChildProcess
    private var players: [ChildProcess] = []

    static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/cvlc")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    }

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("ambience-vlc-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(
            atPath: folder + "/home", withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
        chmod(folder, 0o755)
        chown(folder + "/home", 65534, 65534)
        let socket = folder + "/bus.sock"
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        try configuration.write(toFile: folder + "/bus.conf", atomically: true, encoding: .utf8)
        daemon = try ChildProcess(["dbus-daemon", "--config-file=\(folder)/bus.conf", "--nofork", "--nopidfile"])
        address = "unix:path=\(socket)"
        guard eventually(within: waitBound, { FileManager.default.fileExists(atPath: socket) }) else {
            daemon.kill()
            throw FixtureError.toolFailed("dbus-daemon for VLC did not start")
        }
        chmod(socket, 0o666)
    }

    deinit {
        for player in players { player.kill() }
        daemon.kill()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A copy of `file` that VLC (as nobody) can read, in the bus's folder.
    func share(_ file: String, as name: String) throws -> String {
        let path = folder + "/" + name
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: file, toPath: path)
        chmod(path, 0o644)
        return path
    }

    /// Starts VLC playing `file` in a loop, as nobody, headless, with no audio output; returns its process.
    @discardableResult
    func startVLC(playing file: String) throws -> ChildProcess {
        let vlc = try ChildProcess(
            [
                "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "cvlc", "--no-video",
                "--aout=adummy", "--control=dbus", "--no-random", "--loop", file
            ],
            // Its XDG folders in its own home, as a user's VLC has them: the test run's are root's, and VLC that
            // cannot write its art cache names an embedded cover `attachment://0`, which no other program can read.
            environment: childEnvironment([
                "DBUS_SESSION_BUS_ADDRESS": address, "HOME": folder + "/home",
                "XDG_CACHE_HOME": folder + "/home/.cache",
                "XDG_CONFIG_HOME": folder + "/home/.config", "XDG_DATA_HOME": folder + "/home/.local/share"
            ]))
        players.append(vlc)
        return vlc
    }

    /// Starts mpv (with mpv-mpris, no audio output) on this bus, playing `file` once; returns its process.
    @discardableResult
    func startMPV(playing file: String) throws -> ChildProcess {
        let mpv = try ChildProcess(
            [
                "/usr/bin/mpv", "--no-config", "--script=/usr/lib/mpv-mpris/mpris.so", "--no-terminal",
                "--no-video", "--ao=null", "--idle=yes", file
            ],
            environment: childEnvironment(["DBUS_SESSION_BUS_ADDRESS": address]))
        players.append(mpv)
        return mpv
    }

    /// `playerctl ARGS` on this bus.
    func playerctl(_ arguments: String...) -> String? { runPlayerctl(arguments, bus: address) }
}

/// `playerctl(_:bus:)` under a name `VLCBus.playerctl` does not hide.
private func runPlayerctl(_ arguments: [String], bus: String) -> String? { playerctl(arguments, bus: bus) }
