import AmbiencePlatform
import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// The SDL_mixer stand-in's music, from C (Tests/SDLMixer/standin_music_test.c, built against Debian's own
/// SDL_mixer.h): every music function with bad input; what the device is given (SDL's disk driver) for loops, fades,
/// seeks and Mix_HookMusic in the music's place; and the session rule and MPRIS with a real mpv on a private session
/// bus.
/// Each test runs its own program, recording and session bus: they run side by side.
@Suite(
    .offTheCooperativePool, .timeLimit(.minutes(5)),
    .enabled(if: MixerStandIn.built, Comment(rawValue: MixerStandIn.missing)))
struct SDLMixerMusicTests {
    static let program = "standin_music_test"

    /// Runs a heard mode with the disk driver; returns what the device was given (float stereo at 44.1 kHz).
    func heard(_ mode: String, environment: [String: String] = [:]) throws -> (Signal, CAPI.Run) {
        let folder = try MixerStandIn.prepare(Self.program)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let recording = folder + "/device.raw"
        let result = try MixerStandIn.run(
            folder, [mode],
            environment: ["SDL_AUDIODRIVER": "disk", "SDL_DISKAUDIOFILE": recording].merging(environment) { $1 },
            program: Self.program)
        #expect(result.status == 0, "\(mode): \(result.stdout)\n\(result.stderr)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: recording))
        let samples = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        return (Signal(samples, channels: 2, sampleRate: 44_100), result)
    }

    /// The stretches (frame ranges) where 10 ms windows are louder than `threshold` RMS, gaps under 30 ms closed.
    func bursts(_ signal: Signal, threshold: Double = 0.02) -> [Range<Int>] {
        let window = 441
        var found: [Range<Int>] = []
        for start in stride(from: 0, to: signal.frames - window, by: window)
        where signal.rms(start..<(start + window)) > threshold {
            if let last = found.last, start - last.upperBound <= 3 * window {
                found[found.count - 1] = last.lowerBound..<(start + window)
            } else {
                found.append(start..<(start + window))
            }
        }
        return found
    }

    /// Tests/SDLMixer/standin_music_test.c: loading from paths and SDL_RWops (one that fails mid-read, freesrc
    /// honoured), types and tags from Assets/Music, four tracker modules and a MIDI file, SoundFonts (a missing one
    /// named), play/pause/resume/rewind/seek (NaN, negative, huge), volumes, fades, the finished hook (on the update
    /// thread for ends, before Mix_HaltMusic returns for halts, re-entrant), loop counts (3, 10^9, -1000), freed
    /// music refused, and Mix_CloseAudio halting the music.
    @Test func everyMusicFunctionFromC() throws {
        let folder = try MixerStandIn.prepare(Self.program)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try MixerStandIn.run(
            folder, [BuildProducts.folder], environment: ["SDL_AUDIODRIVER": "dummy", "SDL_SOUNDFONTS": ""],
            program: Self.program)
        #expect(!result.killedBySignal, "standin_music_test crashed: \(result.stderr)")
        #expect(result.status == 0, "standin_music_test: \(result.stdout)\n\(result.stderr)")
        let tally = CAPI.tally(result.stdout)
        #expect(tally != nil && tally!.failed == 0 && tally!.passed >= 90, "\(result.stdout)")
    }

    /// Loops 3: three 0.2 s bursts of 880 Hz, 0.2 s apart, and no fourth; at music volume 64 each is a
    /// half-scale tone at half volume (0.25).
    @Test func musicLoopsThreeTimesAtItsVolume() throws {
        let (signal, _) = try heard("--loops")
        let found = bursts(signal)
        try #require(found.count == 3, "bursts at \(found.map { ($0.lowerBound, $0.count) })")
        for burst in found {
            #expect(abs(Double(burst.count) / 44_100 - 0.2) < 0.03, "a pass of \(burst.count) frames")
            let middle = (burst.lowerBound + 2_205)..<(burst.upperBound - 2_205)
            #expect(abs(signal.dominantFrequency(in: middle) - 880) < 3)
            let level = signal.amplitude(of: 880, in: middle)
            #expect(level > 0.2 && level < 0.3, "880 Hz at \(level)")
        }
        for (earlier, later) in zip(found, found.dropFirst()) {
            #expect(abs(Double(later.lowerBound - earlier.lowerBound) / 44_100 - 0.4) < 0.02, "a pass is 0.4 s")
        }
    }

    /// A fade-in over 1 s rises to the tone's full level; the fade-out over 0.5 s at 1.5 s falls to silence, and the
    /// music (3 s long) is not heard again.
    @Test func musicFadesInAndOut() throws {
        let (signal, _) = try heard("--fade")
        let found = bursts(signal, threshold: 0.005)
        try #require(found.count == 1, "bursts at \(found.map { ($0.lowerBound, $0.count) })")
        let start = found[0].lowerBound
        func level(at seconds: Double) -> Double {
            let at = start + Int(seconds * 44_100)
            return signal.rms(at..<(at + 2_205)) * 2.0.squareRoot()
        }
        #expect(level(at: 0.1) < 0.25, "the fade-in starts quiet: \(level(at: 0.1))")
        #expect(level(at: 0.4) < level(at: 0.8))
        #expect(abs(level(at: 1.2) - 0.5) < 0.05, "full level after the fade-in: \(level(at: 1.2))")
        let heardFor = Double(found[0].count) / 44_100
        #expect(heardFor > 1.6 && heardFor < 2.2, "heard for \(heardFor) s: the fade-out ends it")
    }

    /// Played from 1.0 s, the music starts with its second half (880 Hz) and lasts one second.
    @Test func musicPlaysFromAPosition() throws {
        let (signal, _) = try heard("--seek")
        let found = bursts(signal)
        try #require(found.count == 1, "bursts at \(found.map { ($0.lowerBound, $0.count) })")
        let first = found[0].lowerBound..<(found[0].lowerBound + 8_820)
        #expect(abs(signal.dominantFrequency(in: first) - 880) < 3)
        #expect(abs(Double(found[0].count) / 44_100 - 1.0) < 0.05, "\(found[0].count) frames")
    }

    /// Mix_HookMusic in the place of Mix_PlayMusic's music, as Debian's SDL_mixer 2.6.2 does it: 1.5 s of 440 Hz as
    /// music, hooked from 0.5 s by an 880 Hz function for 1 s. The device gets the music, then the hook alone (no
    /// 440 Hz under it: the music is not mixed), then the rest of the music from where it waited, 1.5 s of it in all,
    /// each tone at the half scale it was written with. (The C side checks that the music waited: Mix_PlayingMusic
    /// said 1, its position did not move, and the finished hook came only once it had ended after the hook.)
    @Test func theHookPlaysInThePlaceOfTheMusicWhichWaits() throws {
        let (signal, output) = try heard("--hook")
        #expect(output.stdout.contains("heard run --hook: ok"), "\(output.stdout)")
        // Each 50 ms window by its tone: 440 (the music alone), 880 (the hook alone), or 0 (silence, both, a seam).
        let window = 2_205
        var mixed = 0
        let tones = stride(from: 0, to: signal.frames - window, by: window).map { start -> Int in
            let range = start..<(start + window)
            let music = signal.amplitude(of: 440, in: range), hook = signal.amplitude(of: 880, in: range)
            if music > 0.05 && hook > 0.05 { mixed += 1 }
            if (0.4...0.6).contains(music) && hook < 0.01 { return 440 }
            if (0.4...0.6).contains(hook) && music < 0.01 { return 880 }
            return 0
        }
        // Stretches of one tone, from its first window to its last: a stream thread starved on a loaded machine
        // leaves a gap in a stretch, which delays what follows without losing it.
        var stretches: [(hz: Int, windows: Range<Int>)] = []
        for (index, hz) in tones.enumerated() where hz != 0 {
            if let last = stretches.last, last.hz == hz {
                stretches[stretches.count - 1].windows = last.windows.lowerBound..<(index + 1)
            } else {
                stretches.append((hz, index..<(index + 1)))
            }
        }
        let heard = stretches.map { "\($0.hz) Hz for \(Double($0.windows.count) * 0.05) s" }
        try #require(stretches.map(\.hz) == [440, 880, 440], "heard \(heard): not the music, the hook, the music")
        // Both at once only where one gives way to the other: the two seams.
        #expect(mixed <= 2, "\(mixed) windows held the music and the hook together")
        let music = Double(stretches[0].windows.count + stretches[2].windows.count) * 0.05
        // Its 1.5 s, less up to four seams' windows, plus any gaps of a starved stream thread.
        #expect(music > 1.25 && music < 1.8, "the music was heard for \(music) s of its 1.5 s: \(heard)")
        #expect(Double(stretches[1].windows.count) * 0.05 > 0.5, "the hook was heard for too short: \(heard)")
    }

    /// The desktop's Play (MPRIS, as the media keys press it) while Mix_HookMusic holds the music: the music stays held
    /// (its position does not move: it is the engine player's hold, not a pause that Play undoes), and goes on once
    /// the hook is removed. Only the hook's 880 Hz is heard meanwhile.
    @Test func theDesktopsPlayLeavesHookedMusicHeld() throws {
        let fixtures = try Fixtures()
        let bus = try ThrowawayService.dbus(in: fixtures)
        defer { bus.kill() }
        let (signal, output) = try heard(
            "--hook-play",
            environment: [
                "DBUS_SESSION_BUS_ADDRESS": bus.address, "AMBIENCE_APP_NAME": "Hold Test", "PLAYER": "Hold_Test"
            ])
        #expect(output.stdout.contains("heard run --hook-play: ok"), "\(output.stdout)")
        // The hook alone, from when it was set until it was removed (at least 1 s; where that falls in the recording
        // depends on how fast a loaded machine ran the device): the 50 ms windows where it sounds, less the two
        // seams, hold no music.
        let window = 2_205
        let hooked = stride(from: 0, to: signal.frames - window, by: window).map { $0..<($0 + window) }.filter {
            signal.amplitude(of: 880, in: $0) > 0.3
        }
        #expect(hooked.count >= 18, "the hook was heard in \(hooked.count) windows of 50 ms")
        let music = hooked.dropFirst().dropLast().filter { signal.amplitude(of: 440, in: $0) >= 0.01 }
        #expect(music.isEmpty, "the music was heard under the hook at \(music.map(\.lowerBound))")
    }

    /// With the user's music playing (mpv on a private session bus), the ambient program's music stays quiet while
    /// Mix_PlayingMusic says 1, and its effect (880 Hz) is heard; the program is on MPRIS under its name with its
    /// music's tags. In solo-ambient the music is heard.
    @Test func theUsersMusicSilencesTheProgramsMusicNotItsEffects() throws {
        let fixtures = try Fixtures()
        let bus = try ThrowawayService.dbus(in: fixtures)
        let mpv = try MPV(playing: BuildProducts.root + "/Assets/Music/orbit-lullaby.mp3", busAddress: bus.address)
        defer { mpv.kill() }
        try #require(eventually(within: 10) { playerctl(["-p", "mpv", "status"], bus: bus.address) == "Playing" })
        let session = ["DBUS_SESSION_BUS_ADDRESS": bus.address, "AMBIENCE_APP_NAME": "Music Test"]

        let seen = SeenTitles()
        let address = bus.address
        // The program keeps its music on until the title is seen (at most 10 s more), so that a loaded machine's
        // slow playerctl cannot miss its 2 s on MPRIS.
        let seenFile = try fixtures.folder("seen") + "/title"
        let watcher = Thread {
            let deadline = monotonicSeconds() + 20
            while monotonicSeconds() < deadline {
                if let title = playerctl(["-p", "ambience.Music_Test", "metadata", "title"], bus: address),
                    !title.isEmpty
                {
                    seen.titles.withLock { $0.append(title) }
                    _ = FileManager.default.createFile(atPath: seenFile, contents: nil)
                    return
                }
                usleep(50_000)
            }
        }
        watcher.start()
        let (ambient, output) = try heard(
            "--session", environment: session.merging(["STANDIN_SEEN_FILE": seenFile]) { $1 })
        #expect(output.stdout.contains("playing music: 1"), "\(output.stdout)")
        let found = bursts(ambient)
        try #require(found.count == 1, "heard at \(found.map { ($0.lowerBound, $0.count) }): the music was not quiet")
        #expect(abs(Double(found[0].count) / 44_100 - 0.3) < 0.05)
        #expect(abs(ambient.dominantFrequency(in: found[0]) - 880) < 3)
        #expect(eventually(within: 20) { !seen.titles.withLock { $0 }.isEmpty })
        let titles = seen.titles.withLock { $0 }
        #expect(titles == ["Gravity Wave Theme"], "MPRIS showed \(titles)")

        let soloSession = session.merging(["AMBIENCE_SESSION_CATEGORY": "solo-ambient"]) { $1 }
        let (solo, _) = try heard("--session", environment: soloSession)
        let heardMusic = bursts(solo).reduce(0) { $0 + $1.count }
        #expect(Double(heardMusic) / 44_100 > 1.5, "solo-ambient: music heard for \(heardMusic) frames")
    }
}

/// The titles the MPRIS watcher saw, from its thread.
private final class SeenTitles: Sendable {
    let titles = Lock<[String]>([])
}
