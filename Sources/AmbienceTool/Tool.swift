import Ambience
import AmbiencePlatform
import Glibc
import Synchronization

/// The `ambience` command. Each subcommand is a `Command`; `run` maps its outcome to an exit status:
/// 0 ok, 1 failed operation (one `ambience:` line on stderr), 2 usage error.
public enum Tool {
    static let commands: [any Command.Type] = [
        InfoCommand.self, DecodeCommand.self, RenderCommand.self, PlayCommand.self, SessionCommand.self,
        StressCommand.self, BenchCommand.self,
        LibraryCommand.self, RunCommand.self
    ]

    public static func run(_ words: [String]) -> Int32 {
        // A closed pipe must end the command with an error, not kill it. The command is a program, not a library: it
        // owns its signal dispositions and ignores SIGPIPE for the whole process, since the C libraries it runs
        // (SDL, OpenAL Soft, libpulse, FFmpeg) write to pipes and sockets where no wrapper of ours can reach. The
        // engine itself never changes a disposition: it holds SIGPIPE back around its own writes only
        // (`FileDescriptor.withBrokenPipeHeld`), so a game keeps whatever it chose.
        try? ProcessSignals.ignore(SIGPIPE)
        // A closed stdout or stderr is held by a descriptor that refuses writes, so no file the command opens can
        // take its number and receive its output.
        let closed = FileDescriptor.holdClosedStandardStreams()
        Output.heldClosed(closed.contains(STDOUT_FILENO))
        Interrupt.install()
        let status = dispatch(words)
        do throws(ToolFailure) {
            try Output.check()
        } catch {
            printError(error.description)
            return status == 0 ? 1 : status
        }
        return status
    }

    private static func dispatch(_ words: [String]) -> Int32 {
        guard let name = words.first, name != "--help", name != "-h", name != "help" else {
            Output.print(overview)
            return words.isEmpty ? 2 : 0
        }
        if name == "--version" {
            Output.print("ambience \(Ambience.version)")
            return 0
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            printError("unknown command '\(name)'", then: overview)
            return 2
        }
        var arguments = Arguments(Array(words.dropFirst()))
        if arguments.wantsHelp {
            Output.print(command.usage)
            return 0
        }
        do {
            try command.run(&arguments)
            return 0
        } catch let exit as CommandExit {
            return exit.status
        } catch let error as UsageError {
            printError("\(name): \(error)", then: "usage: \(command.usage.split(separator: "\n").first ?? "")")
            return 2
        } catch {
            printError("\(error)")
            return Interrupt.requested ? 130 : 1
        }
    }

    static var overview: String {
        "usage: ambience COMMAND [OPTIONS]\n\ncommands:\n"
            + commands.map { "  " + ($0.usage.split(separator: "\n").first.map(String.init) ?? $0.name) }.joined(
                separator: "\n")
            + "\n\nRun 'ambience COMMAND --help' for details, 'ambience --version' for the version."
            + "\nThe environment variable AMBIENCE_LOG (error, warning, info, debug; default warning) sets how much the"
            + "\nengine reports on stderr, as lines starting 'ambience: LEVEL:'."
    }
}

/// One subcommand: a name, its usage text (first line is the synopsis) and what it does.
protocol Command: Sendable {
    static var name: String { get }
    static var usage: String { get }
    static func run(_ arguments: inout Arguments) throws
}

/// Prints one line on stderr, prefixed `ambience:`, and then `trailer` (the tool's own text, such as a usage line)
/// as it is. The only writer to stderr. `message` carries file names, tags and libraries' errors, so it is shown
/// through `TerminalText`: one line, whatever it holds.
func printError(_ message: String, then trailer: String? = nil) {
    let line = "ambience: \(TerminalText.shown(message))\n" + (trailer.map { $0 + "\n" } ?? "")
    StandardStream.error.writeWhole(line)
}

/// Ctrl-C and SIGTERM stop long commands cleanly: their loops check `requested` and clean up partial output. A second
/// one ends the command at once, by the signal, for a loop that cannot check (a call stuck in a library).
enum Interrupt {
    private static let flag = Atomic<Bool>(false)
    static var requested: Bool { flag.load(ordering: .relaxed) }

    static func install() {
        _ = flag.load(ordering: .relaxed)  // the global is made now, not lazily inside the handler
        // Only async-signal-safe work: an atomic exchange, sigaction() and raise().
        let handler: ProcessSignals.Handler = { signo in
            guard Interrupt.flag.exchange(true, ordering: .relaxed) else { return }
            try? ProcessSignals.restoreDefault(signo)
            try? ProcessSignals.raise(signo)
        }
        try? ProcessSignals.handle(SIGINT, with: handler)
        try? ProcessSignals.handle(SIGTERM, with: handler)
    }

    static func check() throws(ToolFailure) {
        if requested { throw ToolFailure("interrupted") }
    }
}
