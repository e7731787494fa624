import Foundation
import Glibc
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// `ambience run`: where it finds the stand-in, what the program gets, signals passed on, the program's status as its
/// own, and solo-ambient's rule kept by the command after the program ends, however it ends (a real mpv on a bus of
/// the test's own). `AMBIENCE_SDL_MIXER` names any library file here: what is tested is the command, not the library.
@Suite(
    .offTheCooperativePool, .timeLimit(.minutes(5)),
    .enabled(if: PulseServer.isRunning, "needs the test services: run it through scripts/with-services.sh"))
struct RunCommandTests {
    /// A stand-in for the stand-in: any file will do, since these programs never load it.
    static func library(in fixtures: Fixtures) throws -> String {
        try fixtures.write("libSDL2_mixer.so", bytes: Array("not a library".utf8))
    }

    @Test func theProgramGetsTheLibraryFirstOnItsPathAndItsStatusIsTheCommands() throws {
        let fixtures = try Fixtures()
        let library = try Self.library(in: fixtures)
        let script = """
            first=${LD_LIBRARY_PATH%%:*}
            echo "$first|${LD_LIBRARY_PATH#*:}|$AMBIENCE_SESSION_CATEGORY|$AMBIENCE_APP_NAME"
            readlink "$first/libSDL2_mixer-2.0.so.0"
            exit 7
            """
        let result = try ToolRunner.run(
            ["run", "--category", "solo-ambient", "--", "sh", "-c", script],
            environment: ["AMBIENCE_SDL_MIXER": library, "LD_LIBRARY_PATH": "/elsewhere"])
        #expect(result.status == 7, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 2, "\(result.stdout)\(result.stderr)")
        let fields = lines[0].split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        #expect(fields.dropFirst() == ["/elsewhere", "solo-ambient", "sh"])
        #expect(lines[1] == library)
        #expect(!FileManager.default.fileExists(atPath: fields[0]), "the private folder \(fields[0]) was left behind")

        let named = try ToolRunner.run(
            ["run", "--name", "Doom Two", "--", "sh", "-c", "echo \"$AMBIENCE_SESSION_CATEGORY|$AMBIENCE_APP_NAME\""],
            environment: ["AMBIENCE_SDL_MIXER": library])
        #expect(named.status == 0 && named.stdout == "ambient|Doom Two\n", "\(named.stdout)\(named.stderr)")
    }

    @Test func withoutTheLibraryOrTheProgramItSaysWhyAndFails() throws {
        let missing = try ToolRunner.run(
            ["run", "--", "true"], environment: ["AMBIENCE_SDL_MIXER": "/nonexistent/libSDL2_mixer.so"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("AMBIENCE_SDL_MIXER names /nonexistent/libSDL2_mixer.so"), "\(missing.stderr)")
        let fixtures = try Fixtures()
        let library = try Self.library(in: fixtures)
        let noProgram = try ToolRunner.run(
            ["run", "--", "no-such-program-here"], environment: ["AMBIENCE_SDL_MIXER": library])
        #expect(noProgram.status == 127 && noProgram.stderr.contains("no-such-program-here"), "\(noProgram.stderr)")
        let usage = try ToolRunner.run(["run", "--category", "loud", "--", "true"])
        #expect(usage.status == 2)
        // A program's own options are its own: `--help` after `--` goes to it.
        let help = try ToolRunner.run(
            ["run", "--", "sh", "-c", "echo \"$1\"", "sh", "--help"], environment: ["AMBIENCE_SDL_MIXER": library])
        #expect(help.status == 0 && help.stdout == "--help\n", "\(help.stdout)\(help.stderr)")
    }

    /// SIGTERM to the command reaches the program; the program's end by it is the command's status (128 + 15), and
    /// the command says so on stderr.
    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalIsPassedOnToTheProgram(_ signal: Int32) throws {
        let fixtures = try Fixtures()
        let library = try Self.library(in: fixtures)
        let started = fixtures.path("started")
        let command = try ChildProcess(
            [ToolRunner.executable, "run", "--", "sh", "-c", "touch \"$0\"; exec sleep 60", started],
            environment: childEnvironment(["AMBIENCE_SDL_MIXER": library]), stderr: .pipe)
        defer { command.kill() }
        #expect(eventually { FileManager.default.fileExists(atPath: started) })
        kill(command.pid, signal)
        #expect(command.waitForExit(within: waitBound))
        #expect(command.terminationReason == .exit && command.terminationStatus == 128 + signal)
    }

    /// solo-ambient: the user's mpv is paused before the program starts (the program sees it paused) and plays again
    /// once the program is gone, here by a crash (SIGSEGV); ambient leaves it playing throughout.
    @Test func soloAmbientPausesTheOtherPlayersAndResumesThemAfterAProgramThatCrashed() throws {
        let fixtures = try Fixtures()
        let library = try Self.library(in: fixtures)
        let bus = try ThrowawayService.dbus(in: fixtures)
        let song = try fixtures.sineOgg("song.ogg", seconds: 5)
        let mpv = try MPV(playing: song, busAddress: bus.address)
        defer { mpv.kill() }
        #expect(eventually { playerctl(["-p", "mpv", "status"], bus: bus.address) == "Playing" })

        let seen = fixtures.path("seen")
        let crash = try ToolRunner.run(
            [
                "run", "--category", "solo-ambient", "--", "sh", "-c",
                "playerctl -p mpv status > \"$0\"; kill -SEGV $$", seen
            ], environment: ["AMBIENCE_SDL_MIXER": library, "DBUS_SESSION_BUS_ADDRESS": bus.address])
        #expect(crash.status == 128 + SIGSEGV, "\(crash.stderr)")
        #expect((try? String(contentsOfFile: seen, encoding: .utf8)) == "Paused\n", "the program saw mpv playing")
        #expect(crash.stderr.contains("paused the other players"), "\(crash.stderr)")
        #expect(crash.stderr.contains("resumed the other players"), "\(crash.stderr)")
        #expect(eventually { playerctl(["-p", "mpv", "status"], bus: bus.address) == "Playing" })

        let ambient = try ToolRunner.run(
            ["run", "--", "sh", "-c", "playerctl -p mpv status > \"$0\"", seen],
            environment: ["AMBIENCE_SDL_MIXER": library, "DBUS_SESSION_BUS_ADDRESS": bus.address])
        #expect(ambient.status == 0, "\(ambient.stderr)")
        #expect((try? String(contentsOfFile: seen, encoding: .utf8)) == "Playing\n", "ambient paused mpv")
    }
}
