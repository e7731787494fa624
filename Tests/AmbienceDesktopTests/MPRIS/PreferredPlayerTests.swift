import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceDesktop
@testable import AmbienceTestSupport

/// Which player is started when the game wants the desktop's player and none runs: decided from the desktop's
/// answers, given here as xdg-mime, gio and desktop files really write them; and the spawning under it.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct PreferredPlayerTests {
    // Debian 12's own files, cut to the lines that matter (and a Desktop Action group whose Exec must not be taken).
    static let mpvDesktop = """
        [Desktop Entry]
        Type=Application
        Name=mpv Media Player
        Icon=mpv
        TryExec=mpv
        Exec=mpv --player-operation-mode=pseudo-gui -- %U
        Terminal=false
        Categories=AudioVideo;Audio;Video;Player;TV;
        MimeType=application/ogg;audio/mpeg;
        """
    static let vlcDesktop = """
        [Desktop Entry]
        Version=1.0
        Name=VLC media player
        Exec=/usr/bin/vlc --started-from-file %U
        TryExec=/usr/bin/vlc
        Icon=vlc
        """
    static let rhythmboxDesktop = """
        [Desktop Entry]
        Name=Rhythmbox
        Exec=rhythmbox %U
        DBusActivatable=false

        [Desktop Action Play]
        Name=Play
        Exec=rhythmbox-client --play-pause
        """

    @Test func theDesktopDefaultIsReadFromXdgMimeAndGioAsTheyWriteIt() {
        #expect(PreferredPlayer.desktopID(xdgMimeOutput: "vlc.desktop\n") == "vlc.desktop")
        #expect(
            PreferredPlayer.desktopID(xdgMimeOutput: "org.gnome.Rhythmbox3.desktop") == "org.gnome.Rhythmbox3.desktop")
        #expect(PreferredPlayer.desktopID(xdgMimeOutput: "") == nil)
        #expect(PreferredPlayer.desktopID(xdgMimeOutput: "\n") == nil)
        #expect(PreferredPlayer.desktopID(xdgMimeOutput: "xdg-mime: no method available\n") == nil)
        #expect(PreferredPlayer.desktopID(xdgMimeOutput: "../../evil.desktop") == nil)

        // gio in C.UTF-8 (curly quotes), in C (quotes become '?'), and with no default.
        let utf8 = """
            Default application for “audio/mpeg”: mpv.desktop
            Registered applications:
            \tmpv.desktop
            \tvlc.desktop
            Recommended applications:
            \tmpv.desktop

            """
        #expect(PreferredPlayer.desktopID(gioMimeOutput: utf8) == "mpv.desktop")
        #expect(
            PreferredPlayer.desktopID(
                gioMimeOutput: "Default application for ?audio/mpeg?: vlc.desktop\nNo registered applications\n")
                == "vlc.desktop")
        #expect(PreferredPlayer.desktopID(gioMimeOutput: "No default applications for “audio/mpeg”\n") == nil)
        #expect(PreferredPlayer.desktopID(gioMimeOutput: "Registered applications:\n\tmpv.desktop\n") == nil)
    }

    @Test func aDesktopFilesExecIsSplitUnquotedAndLosesItsFieldCodes() {
        #expect(
            PreferredPlayer.execArguments(desktopEntry: Self.mpvDesktop)
                == ["mpv", "--player-operation-mode=pseudo-gui", "--"])
        #expect(PreferredPlayer.execArguments(desktopEntry: Self.vlcDesktop) == ["/usr/bin/vlc", "--started-from-file"])
        #expect(PreferredPlayer.execArguments(desktopEntry: Self.rhythmboxDesktop) == ["rhythmbox"])
        #expect(
            PreferredPlayer.execArguments(
                desktopEntry: #"[Desktop Entry]\#nExec="/opt/My Player/player" --title "say \"hi\"" 100%% %F"#)
                == ["/opt/My Player/player", "--title", #"say "hi""#, "100%"])
        #expect(
            PreferredPlayer.execArguments(desktopEntry: #"[Desktop Entry]\#nExec=player\s--x"#) == ["player", "--x"])
        #expect(PreferredPlayer.execArguments(desktopEntry: "[Desktop Entry]\nExec=\"open quote %U") == nil)
        #expect(PreferredPlayer.execArguments(desktopEntry: "[Desktop Entry]\nHidden=true\nExec=mpv %U") == nil)
        #expect(PreferredPlayer.execArguments(desktopEntry: "[Desktop Action X]\nExec=mpv %U") == nil)
        #expect(PreferredPlayer.execArguments(desktopEntry: "") == nil)
    }

    @Test func desktopFilesAreLookedForWhereTheXDGSpecificationSays() {
        #expect(
            PreferredPlayer.desktopFilePaths(for: "vlc.desktop", environment: ["HOME": "/home/u"]) == [
                "/home/u/.local/share/applications/vlc.desktop", "/usr/local/share/applications/vlc.desktop",
                "/usr/share/applications/vlc.desktop"
            ])
        #expect(
            PreferredPlayer.desktopFilePaths(
                for: "kde-amarok.desktop",
                environment: ["XDG_DATA_HOME": "/d", "XDG_DATA_DIRS": "/x:relative:", "HOME": "/home/u"]) == [
                    "/d/applications/kde-amarok.desktop", "/d/applications/kde/amarok.desktop",
                    "/x/applications/kde-amarok.desktop", "/x/applications/kde/amarok.desktop"
                ])
    }

    @Test func theDefaultPlayerComesFirstWhenItCanBeDrivenThenTheDocumentedList() {
        let installed = ["mpv": "/usr/bin/mpv", "vlc": "/usr/bin/vlc", "/usr/bin/vlc": "/usr/bin/vlc"]
        let locate = { (name: String) in installed[name] }
        let mpvArguments = [
            "--idle=yes", "--pause", "--keep-open=yes", "--force-window=no", "--no-video", "--no-terminal"
        ]

        // VLC is the default: it comes first, with its own Exec's arguments; mpv after it.
        let vlcFirst = PreferredPlayer.plans(
            desktopID: "vlc.desktop", desktopEntry: Self.vlcDesktop, mpvPlugin: .loadedByMPV, locate: locate)
        #expect(
            vlcFirst == [
                PlayerLaunchPlan(
                    path: "/usr/bin/vlc", arguments: ["--started-from-file"], busName: "vlc", desktopID: "vlc.desktop"),
                PlayerLaunchPlan(path: "/usr/bin/mpv", arguments: mpvArguments, busName: "mpv", desktopID: nil)
            ])

        // mpv is the default: started idle (not as its desktop file's pseudo-GUI), its plugin named when mpv would
        // not load it itself, and not at all without the plugin.
        let mpvFirst = PreferredPlayer.plans(
            desktopID: "mpv.desktop", desktopEntry: Self.mpvDesktop, mpvPlugin: .file("/usr/lib/mpv-mpris/mpris.so"),
            locate: locate)
        #expect(mpvFirst.map(\.busName) == ["mpv", "vlc"] && mpvFirst[0].desktopID == "mpv.desktop")
        #expect(mpvFirst[0].arguments == mpvArguments + ["--script=/usr/lib/mpv-mpris/mpris.so"])
        let noPlugin = PreferredPlayer.plans(
            desktopID: "mpv.desktop", desktopEntry: Self.mpvDesktop, mpvPlugin: .none, locate: locate)
        #expect(noPlugin.map(\.busName) == ["vlc"] && noPlugin[0].desktopID == nil && noPlugin[0].arguments.isEmpty)

        // A default the engine cannot drive, or one not installed, is passed over for the list.
        let totem = "[Desktop Entry]\nExec=totem %U\n"
        #expect(
            PreferredPlayer.plans(
                desktopID: "org.gnome.Totem.desktop", desktopEntry: totem, mpvPlugin: .loadedByMPV,
                locate: { $0 == "totem" ? "/usr/bin/totem" : locate($0) }
            ).map(\.busName) == ["mpv", "vlc"])
        #expect(
            PreferredPlayer.plans(
                desktopID: "rhythmbox.desktop", desktopEntry: Self.rhythmboxDesktop, mpvPlugin: .loadedByMPV,
                locate: locate
            ).map(\.busName) == ["mpv", "vlc"])
        #expect(PreferredPlayer.plans(desktopID: nil, desktopEntry: nil, mpvPlugin: .none, locate: { _ in nil }) == [])
    }

    @Test func mpvsPluginIsNamedOnlyWhenMPVWouldNotLoadItItself() {
        let debian = Set(["/etc/mpv/scripts/mpris.so", "/usr/lib/mpv-mpris/mpris.so"])
        #expect(MPVMPRISPlugin.find(environment: ["HOME": "/h"], exists: debian.contains) == .loadedByMPV)
        #expect(
            MPVMPRISPlugin.find(environment: ["HOME": "/h"], exists: { $0 == "/usr/lib/mpv-mpris/mpris.so" })
                == .file("/usr/lib/mpv-mpris/mpris.so"))
        #expect(
            MPVMPRISPlugin.find(environment: ["XDG_CONFIG_HOME": "/c"], exists: { $0 == "/c/mpv/scripts/mpris.so" })
                == .loadedByMPV)
        #expect(MPVMPRISPlugin.find(environment: [:], exists: { _ in false }) == .none)
    }

    @Test func theStartedPlayerIsKnownByItsProcessOrItsBusName() {
        let plan = PlayerLaunchPlan(path: "/usr/bin/mpv", arguments: [], busName: "mpv", desktopID: nil)
        var player = MPRISPlayerInfo(name: "org.mpris.MediaPlayer2.mpv.instance4242", uniqueName: ":1.9")
        #expect(plan.matches(player, processID: 1))
        player = MPRISPlayerInfo(name: "org.mpris.MediaPlayer2.spotify", uniqueName: ":1.9")
        #expect(!plan.matches(player, processID: 77))
        player.processID = 77
        #expect(plan.matches(player, processID: 77))
        #expect(!plan.matches(MPRISPlayerInfo(name: "org.mpris.MediaPlayer2.mpvx", uniqueName: ":1.2"), processID: 1))
    }

    // MARK: The spawning

    @Test func aChildProgramsOutputIsReadAndEveryWaitIsBounded() throws {
        let environment = ChildProgram.currentEnvironment
        #expect(try ChildProgram.output(of: ["printf", "a b\\n"], environment: environment, timeout: 5) == "a b\n")
        #expect(throws: ChildProgramError.failed("false", status: 1)) {
            try ChildProgram.output(of: ["false"], environment: environment, timeout: 5)
        }
        #expect(throws: ChildProgramError.notStarted("no-such-program-here", Errno(ENOENT))) {
            try ChildProgram.output(of: ["no-such-program-here"], environment: environment, timeout: 5)
        }
        // A program that never ends (and keeps its output open through a child of its own) is killed at the
        // deadline, with its child.
        let start = monotonicNanoseconds()
        #expect(throws: ChildProgramError.timedOut("sh", seconds: 0.3)) {
            try ChildProgram.output(of: ["sh", "-c", "sleep 30 & sleep 30"], environment: environment, timeout: 0.3)
        }
        // A bound, not a measurement: the 30 s sleeps were not waited for.
        #expect(Double(monotonicNanoseconds() - start) / 1e9 < 10)

        // A wait called off ends with the program, long before its timeout.
        let callOff = monotonicNanoseconds() + 200_000_000
        #expect(throws: ChildProgramError.cancelled("sh")) {
            try ChildProgram.output(
                of: ["sh", "-c", "sleep 30 & sleep 30"], environment: environment, timeout: 60,
                isCancelled: { monotonicNanoseconds() > callOff })
        }
        #expect(Double(monotonicNanoseconds() - start) / 1e9 < 30)

        // start() returns at once; end() ends and reaps.
        let pid = try ChildProgram.start(["sleep", "30"], environment: environment)
        #expect(ChildProgram.endStatus(of: pid) == nil)
        ChildProgram.end(pid, grace: 1)
        #expect(kill(pid, 0) != 0)
    }
}
