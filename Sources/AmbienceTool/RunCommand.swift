import Ambience
import AmbiencePlatform
import Glibc

/// `ambience run`: an unmodified SDL_mixer program (a Debian game, a pygame program) on the engine, through the
/// SDL_mixer stand-in, under the session rules.
///
/// The program does the mixing through the stand-in's own engine; the command's part is what must outlive the
/// program. In solo-ambient (and playback) its own session pauses the other players before the program starts and
/// resumes them when it has ended, however it ended: by itself, by a signal, or by a crash.
struct RunCommand: Command {
    static let name = "run"
    static let usage = """
        run [--category ambient|solo-ambient|playback] [--name NAME] -- PROGRAM [ARGS...]
                                            runs an SDL_mixer program (a game, pygame) on Ambience, unmodified
          --category  the session category (default ambient): ambient leaves the user's music playing and keeps the
                      program's own music quiet while it plays; solo-ambient and playback pause the other players
                      while the program runs and resume them when it ends, even by a signal or a crash
          --name      the program's name on the sound server and in MPRIS (default: PROGRAM's base name)
        The stand-in for libSDL2_mixer-2.0.so.0 is the file AMBIENCE_SDL_MIXER names when it is set, else
        libSDL2_mixer.so beside this command (a build), else PREFIX/lib/ambience/sdl2-mixer/ (an install); none
        found is an error (status 1). The program gets its folder first on LD_LIBRARY_PATH, AMBIENCE_SESSION_CATEGORY
        and AMBIENCE_APP_NAME. SIGINT, SIGTERM and SIGHUP are passed on to it. Route changes and session events are
        reported on stderr. The status is the program's (128 + N when signal N ended it; 127 when it cannot start).
        """

    static let categories: [String: SessionCategory] = [
        "ambient": .ambient, "solo-ambient": .soloAmbient, "playback": .playback
    ]

    static func run(_ arguments: inout Arguments) throws {
        let categoryName = try arguments.option("--category") ?? "ambient"
        guard let category = categories[categoryName] else {
            throw UsageError("--category must be ambient, solo-ambient or playback")
        }
        let name = try arguments.option("--name")
        let program = (arguments.takeAfterSeparator() ?? []) + (try arguments.finish())
        guard let executable = program.first, !executable.isEmpty else {
            throw UsageError("run needs a PROGRAM after --")
        }
        if let name, name.isEmpty { throw UsageError("--name needs a name") }
        let appName = name ?? String(executable.split(separator: "/").last ?? Substring(executable))

        var environment = ChildProgram.currentEnvironment
        let standIn = try StandInLibrary.find(executable: ownExecutable(), environment: environment)
        defer { standIn.remove() }
        let libraryPath = environment["LD_LIBRARY_PATH"].map { $0.isEmpty ? "" : ":" + $0 } ?? ""
        environment["LD_LIBRARY_PATH"] = standIn.folder + libraryPath
        environment["AMBIENCE_SESSION_CATEGORY"] = categoryName
        environment["AMBIENCE_APP_NAME"] = appName

        // From here the command outlives the program: the signals that would end it go to the program instead.
        // (Tool.run's Ctrl-C handler is taken down first: TerminationSignals leaves a handler it did not install.)
        for signo in TerminationSignals.handled { try? ProcessSignals.restoreDefault(signo) }
        let forwarded = try TerminationSignals.install()

        let session = LauncherSession(category: category)
        let pid: pid_t
        do {
            pid = try ChildProgram.startAttached(program, environment: environment)
        } catch {
            session.end()
            printError("run: \(error)")
            throw CommandExit(status: 127)
        }
        let holdsTerminal = ForegroundTerminal.hand(to: pid)
        var status: Int32 = 0
        while true {
            if let signo = TerminationSignals.wait(milliseconds: 10), forwarded.contains(signo) {
                report("passing signal \(signo) on to \(executable)")
                try? ProcessSignals.send(signo, to: pid)
            }
            session.update()
            if let ended = ChildProgram.endStatus(of: pid) {
                status = ended
                break
            }
        }
        if holdsTerminal { ForegroundTerminal.takeBack() }
        if status > 128 { report("\(executable) was ended by signal \(status - 128)") }
        session.end()
        if status != 0 { throw CommandExit(status: status) }
    }

    /// The real path of the running `ambience`: where a build's or an install's stand-in is looked for.
    static func ownExecutable() -> String { ProcessIdentity.executablePath ?? "ambience" }
}

/// One `ambience: run: …` line on stderr.
private func report(_ text: String) { printError("run: " + text) }

/// The command's own audio session while the program runs: the category's rules for the other players, applied before
/// the program starts and undone after it ends; and what the session sees meanwhile (route changes, the user's music,
/// the screen lock), reported on stderr.
private final class LauncherSession {
    private let engine: AudioEngine?

    init(category: SessionCategory) {
        var configuration = EngineConfiguration(output: .device(), appName: "ambience-run")
        // The command forwards the signals to the program and outlives it: the engine must not end the process.
        configuration.handlesTerminationSignals = false
        do {
            engine = try AudioEngine(configuration)
        } catch {
            report("no session of its own (\(error)): other players are left as they are")
            engine = nil
            return
        }
        guard let engine else { return }
        engine.session.setCategory(category)
        engine.session.setActive(true)
        // The other players are paused before the program starts: its own session then finds none playing, so the
        // players are the command's to give back, whatever becomes of the program.
        engine.flushDesktopCommands()
        let paused = engine.session.state.pausedPlayers
        if !engine.systemMusicPlayer.isAvailable {
            report("no session bus: other players are not seen")
        } else if !paused.isEmpty {
            report("paused the other players: \(paused.joined(separator: ", "))")
        }
        update()
    }

    /// Reports what the session saw since the last call.
    func update() {
        guard let engine else { return }
        for event in engine.update() {
            switch event {
            case .session, .eventsDropped: report(EventReporter.sentence(event))
            default: break
            }
        }
    }

    /// Deactivates the session, giving back the players it paused, and closes the engine.
    func end() {
        guard let engine else { return }
        let paused = engine.session.state.pausedPlayers
        engine.session.setActive(false, options: .notifyOthersOnDeactivation)
        engine.flushDesktopCommands()
        if !paused.isEmpty { report("resumed the other players: \(paused.joined(separator: ", "))") }
        update()
        engine.shutdown()
    }
}
