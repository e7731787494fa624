import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceDesktop
@testable import AmbienceIntegrationSupport
@testable import AmbienceMixer
@testable import AmbienceTestSupport

/// The session rules (issue #33) kept by programs nobody here wrote, under `ambience run` on the SDL_mixer stand-in,
/// with a real mpv as the user's player: ambient, solo-ambient, the output pulled, the screen lock. The programs are
/// toppler (a Debian game: music on its title screen) and a small pygame program, Tests/SDLMixer/two_tones.py, whose
/// effect (1 kHz, pygame.mixer.Sound) and music (440 Hz, pygame.mixer.music) a Goertzel filter tells apart.
///
/// Each case has a PulseAudio and a session bus of its own (so the cases run in parallel). The user's mpv plays on the
/// "headphones" sink, the program on "speakers", the default, whose monitor is recorded: the recording holds the
/// program alone, while mpv's MPRIS state shows what the rules did to the user's music.
///
/// On a machine loaded past its cores python and a game start seconds late, so no case judges by the clock: each checks
/// its stage before the program starts (mpv's stream on headphones and mpv Playing over MPRIS), acts once the program
/// has been heard (or, for toppler's quiet music, its MPRIS player says Playing), takes its measures in the
/// recording's own seconds, and ends the program once the recording holds what it measures (`RealPrograms.endTime`,
/// timeout's own ending, within a bound).
@Suite(
    .offTheCooperativePool, .timeLimit(.minutes(5)),
    .enabled(if: PulseServer.isRunning, "needs the test services: run it through scripts/with-services.sh"))
struct RealProgramRulesTests {
    static let twoTones = ["/usr/bin/python3", BuildProducts.root + "/Tests/SDLMixer/two_tones.py"]
    static let pygame = ["SDL_VIDEODRIVER": "dummy", "PYGAME_HIDE_SUPPORT_PROMPT": "1"]
    static let effectHz = 1_000.0
    static let musicHz = 440.0
    /// The program's time bound: a case ends it sooner, once it has heard what it measures.
    static let bound = 10 + waitBound

    /// A stage with the user's mpv playing on "headphones": its stream there (not on speakers, the program's), and
    /// Playing over MPRIS.
    static func stageWithTheUsersMusic() throws -> (RealProgramStage, MPV) {
        let stage = try RealProgramStage(sinks: ["speakers", "headphones"], sessionBus: true)
        let song = try stage.fixtures.sineOgg("song.ogg", hz: 300, seconds: 5)
        let mpv = try stage.mpv(playing: song, on: "headphones")
        try #require(
            eventually { stage.sinks(playedBy: [pid_t(mpv.pid)]) == ["headphones"] },
            "mpv's stream is on \(stage.sinks(playedBy: [pid_t(mpv.pid)])), not on headphones alone")
        try #require(eventually { stage.mpvStatus() == "Playing" }, "mpv did not start playing")
        return (stage, mpv)
    }

    /// The processes of the program that `ambience run` (`command`) started: its descendants.
    static func programProcesses(under command: pid_t) -> Set<pid_t> {
        Set(RealPrograms.processes(under: command).map(\.pid)).subtracting([command])
    }

    static func report(_ name: String, _ run: RealProgramRun, _ details: String) {
        print(
            "RealProgramRulesTests: \(name): status \(run.status), " + String(format: "%.1f s, ", run.seconds)
                + details)
    }

    /// The tones of two_tones.py in a piece of a recording, for the report.
    static func tones(_ samples: RecordedSamples?, _ times: ClosedRange<Double>) -> String {
        guard let samples else { return "no recording" }
        return String(
            format: "%.1f-%.1f s: effect %.1f dB, music %.1f dB, RMS %.1f dB", times.lowerBound, times.upperBound,
            samples.toneDecibels(hz: effectHz, times), samples.toneDecibels(hz: musicHz, times),
            samples.measures(times).rmsDecibels)
    }

    /// ambient, the default, with a Debian game: while the user's music plays, toppler's title music stays quiet (its
    /// title screen makes no other sound: the recording is near-silent) and mpv plays on; once the user pauses mpv,
    /// toppler's music is heard. The quiet is judged over 3 s from when toppler's music plays (its MPRIS player says
    /// so), on speakers (its streams are there); the user pauses mpv then; the music is judged from when the stand-in
    /// says it is heard again (within 10 s), and the run ends 2.5 s after that.
    @Test func ambientKeepsTopplersMusicQuietWhileTheUsersPlays() throws {
        try MixerUnderTest.standIn.run {
            let (stage, mpv) = try Self.stageWithTheUsersMusic()
            defer { mpv.kill() }
            var states: Set<String> = []
            var lastLook = -1.0
            // In the recording's seconds: when the program's music was first seen playing, when the user paused.
            var musicFrom: Double?, userPausedAt: Double?, heardAgainAt: Double?
            var programSinks: [String] = []
            var timeUp = false
            let run = try RealPrograms.run(
                RealProgram.toppler.arguments, on: .standIn, seconds: Self.bound, display: true, stage: stage
            ) { elapsed, command in
                let recorded = Self.recordedSeconds(on: "speakers", of: stage)
                if userPausedAt == nil, elapsed - lastLook >= 0.5 {
                    lastLook = elapsed
                    states.insert(stage.mpvStatus() ?? "unreadable")
                }
                if musicFrom == nil, stage.programMusicPlays() {
                    musicFrom = Self.recordedSeconds(on: "speakers", of: stage)
                }
                if let from = musicFrom, userPausedAt == nil, recorded >= from + 3 {
                    programSinks = stage.sinks(playedBy: Self.programProcesses(under: command))
                    states.insert(stage.mpvStatus() ?? "unreadable")
                    stage.mpvCommand("pause")
                    userPausedAt = Self.recordedSeconds(on: "speakers", of: stage)
                }
                if userPausedAt != nil, heardAgainAt == nil,
                    Self.said("sdl-mixer: the program's music is heard again", in: stage)
                {
                    heardAgainAt = recorded
                }
                if let again = heardAgainAt, !timeUp, recorded >= again + 2.5 {
                    timeUp = RealPrograms.endTime(under: command)
                }
            }
            let speakers = try #require(run.recordings["speakers"])
            let from = try #require(musicFrom, "toppler's music was never seen playing:\n\(run.output.suffix(3000))")
            let paused = try #require(userPausedAt)
            let again = try #require(
                heardAgainAt, "the stand-in never let the music be heard:\n\(run.output.suffix(3000))")
            let quiet = speakers.measures(from...(paused - 0.3))
            let heard = speakers.measures((again + 0.3)...(speakers.seconds - 0.3))
            Self.report(
                "toppler, ambient", run,
                String(format: "music from %.1f s; while mpv played: ", from) + "\(quiet.summary); after the user "
                    + String(format: "paused it at %.1f s, heard again at %.1f s: ", paused, again)
                    + "\(heard.summary); mpv \(states.sorted()); toppler on \(programSinks)")
            // Ended by the case (`endTime`): xvfb-run's failed clean-up after it (exit 5) hides timeout's 124.
            try #require(
                run.status == 124 || (timeUp && run.xvfbCleanUpFailed),
                "toppler did not run until its time was up:\n\(run.output.suffix(3000))")
            #expect(
                !programSinks.isEmpty && Set(programSinks) == ["speakers"],
                "toppler's streams were on \(programSinks), not on speakers")
            #expect(RealPrograms.expectedLibraries(run, on: .standIn)(run.mixerLibraries), "\(run.mixerLibraries)")
            #expect(quiet.silentShare > 0.9, "toppler's music was heard while mpv played: \(quiet.summary)")
            // How soon the stand-in hears of the pause is the bus's and the machine's to say: bounded, not measured.
            #expect(again - paused < 10, "heard again \(again - paused) s after the user paused mpv")
            #expect(heard.rmsDecibels > -45 && heard.silentShare < 0.5, "not heard once mpv paused: \(heard.summary)")
            #expect(states == ["Playing"], "mpv was \(states.sorted()) before the user paused it")
            #expect(run.output.contains("other music started"), "\(run.output.suffix(3000))")
        }
    }

    /// ambient with pygame: the program's music (440 Hz) is absent while its effect (1 kHz) plays; mpv plays on.
    /// Measured over two seconds from half a second after the program is first heard; the run ends after three.
    @Test func ambientKeepsPygamesMusicQuietWhileItsEffectPlays() throws {
        try MixerUnderTest.standIn.run {
            let (stage, mpv) = try Self.stageWithTheUsersMusic()
            defer { mpv.kill() }
            var states: Set<String> = []
            var lastLook = -1.0
            var timeUp = false
            let run = try RealPrograms.run(
                Self.twoTones, on: .standIn, seconds: Self.bound, display: false, environment: Self.pygame,
                stage: stage
            ) { elapsed, command in
                if elapsed - lastLook >= 0.5 {
                    lastLook = elapsed
                    states.insert(stage.mpvStatus() ?? "unreadable")
                }
                if !timeUp, Self.heardFor(seconds: 3, on: "speakers", of: stage) {
                    timeUp = RealPrograms.endTime(under: command)
                }
            }
            let after = stage.mpvStatus()
            let speakers = run.recordings["speakers"]
            let start = try #require(speakers?.firstSound, "the program was never heard") + 0.5
            let heard = start...(start + 2)
            Self.report(
                "pygame, ambient", run, Self.tones(speakers, heard) + ", mpv \(states.sorted()) then \(after ?? "?")")
            try #require(run.status == 124, "\(run.output.suffix(3000))")
            let effect = speakers?.toneDecibels(hz: Self.effectHz, heard) ?? -.infinity
            #expect(effect > -25, "the effect was not heard")
            // Quiet: 40 dB under the effect (heard, the music is at the effect's level: the solo-ambient control),
            // judged in the 100 ms blocks where the effect plays whole. On a loaded machine the sound server can run
            // dry (an underflow), and the cut in the effect spreads over every frequency, the music's too (-50 dB at
            // -15.7 dB of effect); a block with music let out holds the effect whole, and counts. At least 5 such
            // blocks (half a second) make the comparison: s41-6 (load 6) had 8 of 20, with the music at -53.7 dB.
            let (effectPowers, musicPowers) = (
                speakers?.tonePowers(hz: Self.effectHz, heard) ?? [],
                speakers?.tonePowers(hz: Self.musicHz, heard) ?? []
            )
            let whole = effectPowers.indices.filter { effectPowers[$0] > (effectPowers.max() ?? 0) * 0.8 }
            let level = { (powers: [Double]) in 10 * log10(whole.map { powers[$0] }.reduce(0, +) / Double(whole.count))
            }
            try #require(whole.count >= 5, "the effect played whole in \(whole.count) of 20 blocks: \(effectPowers)")
            #expect(level(musicPowers) < level(effectPowers) - 40, "the program's music was heard: \(musicPowers)")
            #expect(states == ["Playing"] && after == "Playing", "mpv was \(states.sorted()), then \(after ?? "?")")
        }
    }

    /// How a solo-ambient program ends.
    enum Ending: String, CaseIterable, CustomTestStringConvertible {
        case timeUp = "its time up (SIGTERM)"
        case sigkill = "SIGKILL"
        var testDescription: String { rawValue }
    }

    /// solo-ambient: mpv, playing at launch, is paused while the program runs (whose music is heard, the control for
    /// the ambient case), and plays again after it has ended, also when SIGKILL ended it. The program ends once it
    /// has been heard for 1.5 s (SIGKILL) or 2 s (its time up).
    @Test(arguments: Ending.allCases)
    func soloAmbientPausesTheUsersMusicUntilTheProgramEnds(_ ending: Ending) throws {
        try MixerUnderTest.standIn.run {
            let (stage, mpv) = try Self.stageWithTheUsersMusic()
            defer { mpv.kill() }
            var states: Set<String> = []
            var lastLook = -1.0
            var killed = false, timeUp = false
            let run = try RealPrograms.run(
                Self.twoTones, on: .standIn, seconds: Self.bound, display: false, environment: Self.pygame,
                stage: stage, category: "solo-ambient"
            ) { elapsed, command in
                guard RealProgramStage.pythonRuns(under: command) || killed else { return }
                // Looked at once the program is heard: the command paused mpv before it started python, and mpv
                // says so a moment after it is told.
                guard killed || Self.heardFor(seconds: 0.3, on: "speakers", of: stage) else { return }
                // Looked at until the program is ended (`ambience run` then gives mpv back), and at least once before.
                guard !killed && !timeUp else { return }
                if elapsed - lastLook >= 0.5 {
                    lastLook = elapsed
                    states.insert(stage.mpvStatus() ?? "unreadable")
                }
                guard !states.isEmpty else { return }
                if ending == .sigkill && Self.heardFor(seconds: 1.5, on: "speakers", of: stage) {
                    for (pid, executable) in RealPrograms.processes(under: command) where executable.contains("python")
                    {
                        kill(pid, SIGKILL)
                        killed = true
                    }
                }
                if ending == .timeUp && Self.heardFor(seconds: 2, on: "speakers", of: stage) {
                    timeUp = RealPrograms.endTime(under: command)
                }
            }
            let resumed = eventually { stage.mpvStatus() == "Playing" }
            let speakers = run.recordings["speakers"]
            // From its first sound: the SIGKILL case has 1.5 s of it.
            let start = speakers?.firstSound ?? 0
            let heard = start...(start + 1.4)
            Self.report(
                "pygame, solo-ambient, \(ending)", run,
                Self.tones(speakers, heard) + ", mpv \(states.sorted()) then \(stage.mpvStatus() ?? "?")")
            #expect(run.status == (ending == .sigkill ? 128 + SIGKILL : 124), "\(run.output.suffix(3000))")
            #expect(ending != .sigkill || killed, "no python process was found to kill")
            #expect(states == ["Paused"], "mpv was \(states.sorted()) while the program ran")
            #expect(resumed, "mpv is \(stage.mpvStatus() ?? "?") after the program ended")
            #expect((speakers?.toneDecibels(hz: Self.musicHz, heard) ?? -.infinity) > -25, "the music was not heard")
            #expect(run.output.contains("paused the other players") && run.output.contains("resumed the other players"))
        }
    }

    /// The output pulled: the program's sink ("speakers", the default) is removed mid-run, "headphones" remaining.
    /// The program's sound pauses (the stream the server moved to headphones is silent) and `ambience run` and the
    /// stand-in say so on stderr; when speakers are back, the stand-in resumes it (the program cannot answer the
    /// session's Resume-or-Stop itself: docs/SDL_MIXER_STANDIN.md) and says so. The sink goes once the program has
    /// been heard on it for 1.5 s; the silence is judged from 0.3 s (what the server still held) after the stand-in
    /// says it paused (a loaded machine takes its time to see the route change) for 2 s of headphones' recording, and
    /// the sink then comes back; speakers' recorder ends with its sink, so the return is checked in the stand-in's
    /// words, which end the run.
    @Test func theProgramsSoundPausesWhenItsOutputGoesAndResumesWhenItReturns() throws {
        try MixerUnderTest.standIn.run {
            let stage = try RealProgramStage(sinks: ["speakers", "headphones"], sessionBus: true)
            // Times in each recording's own seconds (a recorder starts late, by an amount a loaded machine varies).
            var removedAt: (speakers: Double, headphones: Double)?, pausedAt: Double?, returnedAt: Double?
            var timeUp = false
            let run = try RealPrograms.run(
                Self.twoTones, on: .standIn, seconds: Self.bound, display: false, environment: Self.pygame,
                stage: stage, recording: ["speakers", "headphones"]
            ) { _, command in
                if removedAt == nil, Self.heardFor(seconds: 1.5, on: "speakers", of: stage) {
                    removedAt = (
                        Self.recordedSeconds(on: "speakers", of: stage),
                        Self.recordedSeconds(on: "headphones", of: stage)
                    )
                    try stage.removeSink("speakers")
                } else if removedAt != nil, pausedAt == nil,
                    Self.said("sdl-mixer: Speakers (speakers) went away", in: stage)
                {
                    pausedAt = Self.recordedSeconds(on: "headphones", of: stage)
                } else if let paused = pausedAt, returnedAt == nil,
                    Self.recordedSeconds(on: "headphones", of: stage) >= paused + 2.3
                {
                    returnedAt = Self.recordedSeconds(on: "headphones", of: stage)
                    try stage.addSink("speakers")
                } else if returnedAt != nil, !timeUp, Self.said("sdl-mixer: Speakers (speakers) is back", in: stage) {
                    timeUp = RealPrograms.endTime(under: command)
                }
            }
            let (speakers, headphones) = (run.recordings["speakers"], run.recordings["headphones"])
            let removedMarks = try #require(removedAt), returned = try #require(returnedAt)
            let removed = removedMarks.headphones, pauseSaid = try #require(pausedAt)
            let before = (removedMarks.speakers - 1.2)...(removedMarks.speakers - 0.2)
            let paused = (pauseSaid + 0.3)...(returned - 0.1)
            Self.report(
                "pygame, output removed at \(String(format: "%.1f", removed)) s, pause said at "
                    + String(format: "%.1f", pauseSaid) + " s, back at " + String(format: "%.1f", returned) + " s",
                run,
                "speakers " + Self.tones(speakers, before) + "; headphones " + Self.tones(headphones, paused))
            try #require(run.status == 124, "\(run.output.suffix(3000))")
            #expect((speakers?.toneDecibels(hz: Self.effectHz, before) ?? -.infinity) > -25, "not heard at first")
            #expect((headphones?.measures(paused).rmsDecibels ?? 0) < -70, "the sound went on after the output went")
            #expect(run.output.contains("route change: oldDeviceUnavailable"), "\(run.output.suffix(3000))")
            #expect(run.output.contains("sdl-mixer: Speakers (speakers) went away"), "\(run.output.suffix(3000))")
            #expect(run.output.contains("sdl-mixer: Speakers (speakers) is back"), "\(run.output.suffix(3000))")
        }
    }

    /// The screen lock: the screensaver's own `ActiveChanged(true)` (from the owner of org.freedesktop.ScreenSaver on
    /// the program's session bus) silences an ambient program: heard for 1.5 s before, silent for 2 s from a second
    /// after.
    @Test func theScreenLockSilencesAnAmbientProgram() throws {
        try MixerUnderTest.standIn.run {
            let stage = try RealProgramStage(sessionBus: true)
            let name = "org.freedesktop.ScreenSaver"
            let screenSaver = try DBusConnection(address: try #require(stage.bus).address)
            defer { screenSaver.close() }
            try #require(try screenSaver.requestName(name))
            var lockedAt: Double?  // in the recording's own seconds
            var timeUp = false
            let run = try RealPrograms.run(
                Self.twoTones, on: .standIn, seconds: Self.bound, display: false, environment: Self.pygame,
                stage: stage
            ) { _, command in
                guard lockedAt != nil || Self.heardFor(seconds: 1.5, on: "speakers", of: stage) else { return }
                // Again every tick: the program's engine may subscribe late, and a lock is said once.
                try screenSaver.emitSignal(
                    path: "/org/freedesktop/ScreenSaver", interface: name, member: "ActiveChanged",
                    arguments: [.bool(true)])
                let locked = lockedAt ?? Self.recordedSeconds(on: "speakers", of: stage)
                lockedAt = locked
                if !timeUp, Self.recordedSeconds(on: "speakers", of: stage) >= locked + 3.3 {
                    timeUp = RealPrograms.endTime(under: command)
                }
            }
            let speakers = run.recordings["speakers"]
            let locked = try #require(lockedAt)
            let before = (locked - 1.2)...(locked - 0.2), after = (locked + 1)...((speakers?.seconds ?? 0) - 0.3)
            Self.report(
                "pygame, screen locked at " + String(format: "%.1f", locked) + " s", run,
                Self.tones(speakers, before) + "; " + Self.tones(speakers, after))
            try #require(run.status == 124, "\(run.output.suffix(3000))")
            #expect((speakers?.toneDecibels(hz: Self.effectHz, before) ?? -.infinity) > -25, "not heard before")
            #expect((speakers?.measures(after).rmsDecibels ?? 0) < -70, "heard behind the locked screen")
        }
    }

    /// Whether the program's output (stdout and stderr) so far holds `text`.
    static func said(_ text: String, in stage: RealProgramStage) -> Bool {
        (try? String(contentsOfFile: stage.fixtures.path("output.log"), encoding: .utf8))?.contains(text) == true
    }

    /// How many seconds `sink`'s recording holds so far.
    static func recordedSeconds(on sink: String, of stage: RealProgramStage) -> Double {
        Double(RealPrograms.fileSize(stage.fixtures.path("\(sink).raw"))) / Double(Recording.rate * 4)
    }

    /// Whether `sink`'s recording so far holds `seconds` past its first sound.
    static func heardFor(seconds: Double, on sink: String, of stage: RealProgramStage) -> Bool {
        guard let bytes = try? Data(contentsOf: URL(fileURLWithPath: stage.fixtures.path("\(sink).raw"))),
            let first = Recording.firstSoundByte(in: bytes)
        else { return false }
        return Double(bytes.count - first) >= seconds * Double(Recording.rate * 4)
    }
}
