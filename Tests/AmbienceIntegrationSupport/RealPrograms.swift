import Foundation
import Glibc
import Synchronization
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// Which SDL_mixer a real program runs on: the harness's one switch.
enum MixerUnderTest: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// Debian's libSDL2_mixer, as the program is installed: the reference.
    case debian
    /// `ambience run` with `AMBIENCE_SDL_MIXER` naming a copy of Debian's library: the command's part (the library
    /// it is given is the one the program maps, and the program's sound still reaches the server) shown on the real
    /// SDL_mixer.
    case debianCopyUnderRun
    /// `ambience run` with the build's stand-in (the SDL2_mixer product).
    case standIn

    var testDescription: String { rawValue }

    /// The build's stand-in.
    static var standInPath: String { BuildProducts.folder + "/libSDL2_mixer.so" }
    static var standInBuilt: Bool { FileManager.default.fileExists(atPath: standInPath) }

    /// Debian's library file: the soname's link, resolved.
    static let debianLibrary: String = {
        let folders = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"]
        let link = folders.map { $0 + "/libSDL2_mixer-2.0.so.0" }.first { FileManager.default.fileExists(atPath: $0) }
        return link.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path } ?? "libSDL2_mixer-2.0.so.0"
    }()

    /// Runs `body`; for the stand-in while it is not built, as a known issue that says so (the run then fails:
    /// `ambience run` refuses with no stand-in), so that no case passes on what it did not run.
    func run(_ body: () throws -> Void) rethrows {
        guard self == .standIn, !Self.standInBuilt else { return try body() }
        withKnownIssue(
            "libSDL2_mixer.so is not in the build folder (\(Self.standInPath)): the SDL_mixer stand-in is not built"
        ) { try body() }
    }
}

/// A program nobody here wrote, as the tests run it: headless, bounded, from a fresh home.
struct RealProgram: Sendable, CustomTestStringConvertible {
    var name: String
    var arguments: [String]
    /// Under Xvfb (`xvfb-run`); else SDL's dummy video driver.
    var needsDisplay = true
    /// How long it is heard for: the harness ends it once the recording holds this much past its first sound.
    var seconds: Double

    var testDescription: String { name }

    /// chocolate-doom playing the freedoom IWAD's first demo, with music and effects.
    static let chocolateDoom = RealProgram(
        name: "chocolate-doom",
        arguments: [
            "/usr/games/chocolate-doom", "-iwad", "/usr/share/games/doom/freedoom1.wad", "-playdemo", "demo1",
            "-nograbmouse"
        ], seconds: 4)
    /// toppler's title screen, which plays its music.
    static let toppler = RealProgram(name: "toppler", arguments: ["/usr/games/toppler"], seconds: 4)

    static let games = [chocolateDoom, toppler]
}

/// What a run of a real program showed.
struct RealProgramRun {
    /// Its exit status; 128 + N for signal N.
    var status: Int32
    /// Whether it ended as planned: by `timeout` (status 124), or, `untilHeard`, by the harness once it had played
    /// `seconds` past its first sound.
    var endedAsPlanned: Bool
    var seconds: Double
    /// What the server's first recorded sink played meanwhile.
    var recording: Recording
    /// What each recorded sink played, by the sink's name.
    var recordings: [String: RecordedSamples]
    /// The files named like SDL2_mixer that the program's processes mapped (`ambience run` itself left out).
    var mixerLibraries: Set<String>
    /// Its stdout and stderr, together.
    var output: String
    /// Whether xvfb-run exited 5 for its own clean-up of its temporary folder after the run (seen under load), which
    /// hides timeout's 124: a case that ended the time itself (`endTime`) takes such a run as ended on time.
    var xvfbCleanUpFailed = false
}

/// 16-bit stereo at 44.1 kHz, as parec recorded it, and the measures that tell a sounding program from a silent one.
struct Recording {
    static let rate = 44_100
    var frames: Int
    /// RMS of the whole recording, in dBFS (-infinity for digital silence).
    var rmsDecibels: Double
    /// The share of 50 ms windows below -60 dBFS.
    var silentShare: Double

    var seconds: Double { Double(frames) / Double(Self.rate) }

    /// Where the first frame above -60 dBFS starts in parec's bytes (a whole frame), or nil for silence.
    static func firstSoundByte(in raw: Data) -> Int? {
        raw.withUnsafeBytes { bytes -> Int? in
            let samples = bytes.bindMemory(to: Int16.self)
            guard let index = samples.firstIndex(where: { abs(Int($0)) > 33 }) else { return nil }
            return index / 2 * 4
        }
    }

    init(raw: Data) {
        let samples = raw.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        frames = samples.count / 2
        let window = Self.rate / 20 * 2
        var total = 0.0, windows = 0, silent = 0
        var start = 0
        while start < samples.count {
            let end = min(start + window, samples.count)
            var sum = 0.0
            for sample in samples[start..<end] { sum += Double(sample) * Double(sample) }
            total += sum
            if end - start == window {
                windows += 1
                if (sum / Double(window)).squareRoot() / 32_768 < 0.001 { silent += 1 }
            }
            start = end
        }
        let rms = samples.isEmpty ? 0 : (total / Double(samples.count)).squareRoot() / 32_768
        rmsDecibels = 20 * log10(rms)
        silentShare = windows == 0 ? 1 : Double(silent) / Double(windows)
    }

    var summary: String {
        String(
            format: "%.1f s recorded, RMS %.1f dBFS, %.0f %% of 50 ms windows silent", seconds, rmsDecibels,
            silentShare * 100)
    }
}

/// Runs real programs headless on a sound server of their own and records what they play.
enum RealPrograms {
    /// Runs `arguments` on `mixer`: under `ambience run` for the stand-in cases (with `category`, when given), under
    /// Xvfb when `display`; from a fresh temporary home, on the PulseAudio of `stage` (a new one with a "speakers"
    /// sink when nil; of the run's own, so that runs in parallel hear only themselves) whose sinks' monitors named in
    /// `monitors` parec records meanwhile, and with no session bus unless `extra` or the stage names one (another
    /// test's player on a shared bus would be "the user's music", and the ambient rule would quiet the program).
    /// `timeout` ends it after `seconds`; or, `untilHeard`, the harness ends it once the first recording holds
    /// `seconds` past its first sound (on a loaded machine a game loading its data is heard late), after `seconds`
    /// plus `waitBound` at most, and that recording is measured from its first sound. Every 100 ms, `tick` is given
    /// the seconds since the start and the command's process, and the program's processes' memory maps are read for
    /// the SDL_mixer they loaded.
    static func run(
        _ arguments: [String], on mixer: MixerUnderTest, seconds: Double, display: Bool,
        environment extra: [String: String] = [:], directory: String? = nil, stage given: RealProgramStage? = nil,
        category: String? = nil, recording monitors: [String] = ["speakers"], untilHeard: Bool = false,
        tick: (_ elapsed: Double, _ command: pid_t) throws -> Void = { _, _ in }
    ) throws -> RealProgramRun {
        let stage = try given ?? RealProgramStage()
        let fixtures = stage.fixtures
        let home = try fixtures.folder("home")
        var environment = stage.environment.merging(extra) { $1 }
        environment["HOME"] = home
        // Temporary files of the run's own: pygame's tests use fixed names in the temporary folder.
        environment["TMPDIR"] = try fixtures.folder("tmp")
        environment["AMBIENCE_SDL_MIXER"] = ""
        environment["SDL_AUDIODRIVER"] = extra["SDL_AUDIODRIVER"] ?? "pulseaudio"
        if environment["DBUS_SESSION_BUS_ADDRESS"] == nil {
            environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + fixtures.path("no-session-bus")
        }
        let run = [ToolRunner.executable, "run"] + (category.map { ["--category", $0] } ?? []) + ["--"]
        var command: [String] = []
        switch mixer {
        case .debian: break
        case .debianCopyUnderRun:
            environment["AMBIENCE_SDL_MIXER"] = fixtures.path("libSDL2_mixer.so")
            try FileManager.default.copyItem(
                atPath: MixerUnderTest.debianLibrary, toPath: fixtures.path("libSDL2_mixer.so"))
            command = run
        case .standIn: command = run
        }
        if display { command += ["xvfb-run", "-a", "-n", "\(nextDisplay())"] }
        command += ["timeout", "-k", "3", "\(untilHeard ? seconds + waitBound : seconds)"] + arguments

        let logPath = fixtures.path("output.log")
        func recordedBytes(_ sink: String?) -> Data {
            sink.flatMap { try? Data(contentsOf: URL(fileURLWithPath: fixtures.path("\($0).raw"))) } ?? Data()
        }
        let recorders = try monitors.map { sink in
            try ChildProcess(
                [
                    "sh", "-c",
                    "exec parec -d \"$1\" --format=s16le --rate=44100 --channels=2 --raw --latency-msec=20 > \"$0\"",
                    fixtures.path("\(sink).raw"), sink + ".monitor"
                ], environment: childEnvironment(stage.environment))
        }
        defer { for recorder in recorders { recorder.terminate() } }
        // The program starts once every recorder records (a loaded machine starts parec late): the recordings' time
        // is then the run's, give or take parec's latency.
        let recordingFiles = monitors.map { fixtures.path("\($0).raw") }
        guard eventually({ recordingFiles.allSatisfy { fileSize($0) > 0 } }) else {
            throw FixtureError.toolFailed("parec did not start recording \(monitors)")
        }
        let start = monotonicSeconds()
        let program = try ChildProcess(
            ["sh", "-c", "exec \"$@\" > \"$0\" 2>&1", logPath] + command, environment: childEnvironment(environment),
            directory: directory)
        defer {
            program.terminate()
            endStrays(of: fixtures.path(""))
        }
        var mapped: Set<String> = []
        let launcher = URL(fileURLWithPath: ToolRunner.executable).resolvingSymlinksInPath().path
        let wanted = Int(seconds * Double(Recording.rate)) * 4
        var endedAsPlanned = false
        while program.isRunning && monotonicSeconds() - start < seconds + waitBound {
            mapped.formUnion(mixerLibraries(under: program.pid, leavingOut: launcher))
            try tick(monotonicSeconds() - start, program.pid)
            let heard = untilHeard ? recordedBytes(monitors.first) : Data()
            if untilHeard, let first = Recording.firstSoundByte(in: heard), heard.count - first >= wanted {
                endedAsPlanned = true
                break
            }
            usleep(100_000)
        }
        program.terminate()
        let elapsed = monotonicSeconds() - start
        let output = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        // xvfb-run passes on timeout's 124, unless its own clean-up of its temporary folder fails after the run (seen
        // under load): it then exits 5, whatever the program did, and says so. Such a run that lasted its whole time
        // is taken as timeout's end; the program's own failures still show (a crash ends it early).
        let xvfbCleanUpFailed =
            display && program.terminationReason == .exit && program.terminationStatus == 5
            && output.contains("xvfb-run: error: problem while cleaning up temporary directory")
        let status =
            xvfbCleanUpFailed && elapsed >= seconds
            ? 124 : program.terminationReason == .exit ? program.terminationStatus : 128 + program.terminationStatus
        if !untilHeard { endedAsPlanned = status == 124 }
        for recorder in recorders {
            recorder.signalGroup(SIGINT)
            recorder.waitForExit(within: 5)
        }
        var recorded: [String: Data] = [:]
        for sink in monitors { recorded[sink] = recordedBytes(sink) }
        var first = recorded[monitors.first ?? ""] ?? Data()
        if untilHeard, let start = Recording.firstSoundByte(in: first) {
            first = first.subdata(in: start..<min(start + wanted, first.count))
        }
        return RealProgramRun(
            status: status, endedAsPlanned: endedAsPlanned, seconds: elapsed, recording: Recording(raw: first),
            recordings: recorded.mapValues(RecordedSamples.init), mixerLibraries: mapped, output: output,
            xvfbCleanUpFailed: xvfbCleanUpFailed)
    }

    /// Ends a run now as its `timeout` would when its time is up: SIGALRM, the signal of timeout's own timer, to
    /// the `timeout` processes under `root`. timeout then does what it does on time (the program gets SIGTERM, the
    /// status is 124), so a case whose program is given a bound of time can end it once what it waits for has been
    /// heard. Returns whether there was one to signal. Once only: a second SIGALRM is timeout's `-k` timer, SIGKILL.
    static func endTime(under root: pid_t) -> Bool {
        var found = false
        for (pid, executable) in processes(under: root) where executable.hasSuffix("/timeout") {
            found = kill(pid, SIGALRM) == 0 || found
        }
        return found
    }

    /// A file's size in bytes, 0 when it is not there.
    static func fileSize(_ path: String) -> Int {
        var status = stat()
        return stat(path, &status) == 0 ? Int(status.st_size) : 0
    }

    /// The library `mixer` must put in the program's memory, given the run's copy of Debian's.
    static func expectedLibraries(_ run: RealProgramRun, on mixer: MixerUnderTest) -> (Set<String>) -> Bool {
        switch mixer {
        case .debian: return { $0 == [MixerUnderTest.debianLibrary] }
        case .debianCopyUnderRun:
            return {
                $0.count == 1 && $0.first?.hasSuffix("/libSDL2_mixer.so") == true
                    && !$0.contains(MixerUnderTest.debianLibrary)
            }
        case .standIn:
            let standIn = URL(fileURLWithPath: MixerUnderTest.standInPath).resolvingSymlinksInPath().path
            return { $0 == [standIn] }
        }
    }

    /// Xvfb display numbers for runs in parallel: xvfb-run -a looks upward from its -n for a free one, and two runs
    /// starting from the same number at once could both pick it.
    private static let displays = Atomic<Int>(0)
    private static func nextDisplay() -> Int {
        200 + Int(getpid() % 40) * 25 + displays.add(1, ordering: .relaxed).newValue % 25
    }

    /// The mapped files named like SDL2_mixer of `root` and its descendants, but for processes running `leftOut`.
    static func mixerLibraries(under root: pid_t, leavingOut leftOut: String) -> Set<String> {
        var found: Set<String> = []
        for (pid, exe) in processes(under: root) where exe != leftOut {
            guard let maps = procText("/proc/\(pid)/maps") else { continue }
            for line in maps.split(separator: "\n") where line.contains("SDL2_mixer") {
                if let slash = line.firstIndex(of: "/") { found.insert(String(line[slash...])) }
            }
        }
        return found
    }

    /// `root` and its descendants, with the file each runs.
    static func processes(under root: pid_t) -> [(pid: pid_t, executable: String)] {
        var children: [pid_t: [pid_t]] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry),
                let stat = procText("/proc/\(entry)/stat"),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = pid_t(fields[1]) { children[parent, default: []].append(pid) }
        }
        var found: [(pid: pid_t, executable: String)] = []
        var pending = [root]
        while let pid = pending.popLast() {
            pending += children[pid] ?? []
            found.append((pid, (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? ""))
        }
        return found
    }

    /// Ends the X server a run left behind: xvfb-run starts Xvfb in the background and a SIGTERM ends xvfb-run
    /// without ending it, and `ambience run` gives the program a process group of its own, so ending the run's group
    /// leaves it. Found by its command line, which names the run's own folder (its -auth file is in the run's TMPDIR).
    static func endStrays(of folder: String) {
        guard folder.count > 8 else { return }
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), pid != getpid(),
                let arguments = procText("/proc/\(entry)/cmdline"),
                arguments.split(separator: "\0").first?.split(separator: "/").last == "Xvfb",
                arguments.contains(folder)
            else { continue }
            kill(pid, SIGKILL)
        }
    }

    /// A file of /proc, read to its end: its size says 0, so it is read in chunks until read(2) says there is no more.
    static func procText(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// pygame 2.1.2's own mixer tests (scripts/fetch-pygame-tests.sh fetched them into .build/pygame-tests) laid
    /// beside Debian's pygame in a scratch folder, run by Debian's python3 on `mixer` with SDL's dummy drivers.
    /// Returns the run and unittest's count of tests run.
    static func pygameMixerTests(on mixer: MixerUnderTest) throws -> (run: RealProgramRun, ran: Int?, ok: Bool) {
        let fetched = BuildProducts.root + "/.build/pygame-tests/pygame"
        guard FileManager.default.fileExists(atPath: fetched + "/tests/mixer_test.py") else {
            throw FixtureError.toolFailed("pygame's tests are not fetched: run scripts/fetch-pygame-tests.sh")
        }
        let fixtures = try Fixtures()
        let package = try fixtures.folder("python/pygame")
        let debian = "/usr/lib/python3/dist-packages/pygame"
        for entry in try FileManager.default.contentsOfDirectory(atPath: debian) where entry != "__pycache__" {
            try FileManager.default.createSymbolicLink(
                atPath: package + "/" + entry, withDestinationPath: debian + "/" + entry)
        }
        // Copies: the tests write beside their sounds (a copy under a non-ASCII name).
        try FileManager.default.copyItem(atPath: fetched + "/tests", toPath: package + "/tests")
        try FileManager.default.createDirectory(atPath: package + "/examples", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: fetched + "/examples/data", toPath: package + "/examples/data")
        let python = fixtures.path("python")
        let run = try run(
            ["/usr/bin/python3", "-m", "unittest", "pygame.tests.mixer_test", "pygame.tests.mixer_music_test"],
            on: mixer, seconds: 240, display: false,
            environment: [
                "PYTHONPATH": python, "PYTHONDONTWRITEBYTECODE": "1", "SDL_AUDIODRIVER": "dummy",
                "SDL_VIDEODRIVER": "dummy"
            ], directory: python)
        let ran = run.output.split(separator: "\n").first { $0.hasPrefix("Ran ") }.flatMap {
            Int($0.split(separator: " ")[1])
        }
        let ok = run.output.split(separator: "\n").contains { $0 == "OK" || $0.hasPrefix("OK (") }
        return (run, ran, ok)
    }
}
