import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceBench
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

// Facts about the stress scene and the benchmark that no timing can fake. Speed is the bench command's business:
// nothing here has a timing threshold.
//
// The big runs go through the command, in a process of their own: OpenAL Soft holds about 100 KB per source, so a
// 256-source device in this process would swell the resident memory that other suites measure, and SDL audio (which
// SDL_mixer needs to itself) is process-wide while other suites open SDL devices.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5)), .serialized) struct StressBenchTests {
    @Test func sceneIsReproducibleAndAsDescribed() {
        let a = StressScene(voices: 500), b = StressScene(voices: 500)
        #expect(a.voices == b.voices)
        #expect(a.sounds == b.sounds)
        // A smaller crowd is the first part of a larger one, so every scene size plays the same voices.
        #expect(Array(StressScene(voices: 2000).voices.prefix(500)) == a.voices)
        #expect(
            a.voices.allSatisfy {
                (0.9...1.1).contains($0.pitch) && abs($0.x) <= 50 && abs($0.y) <= 50 && abs($0.z) <= 50
            })
        #expect(a.voices.allSatisfy { a.sounds.indices.contains($0.sound) })
        // The unit-pitch variant is the same crowd with every voice at pitch 1.
        let unit = StressScene(voices: 500, unitPitch: true)
        #expect(unit.sounds == a.sounds)
        #expect(unit.voices.allSatisfy { $0.pitch == 1 })
        #expect(unit.voices.map { [$0.x, $0.y, $0.z] } == a.voices.map { [$0.x, $0.y, $0.z] })
        #expect(unit.voices.map { "\($0.sound) \($0.loop)" } == a.voices.map { "\($0.sound) \($0.loop)" })
        let looping = Double(a.voices.filter(\.loop).count) / Double(a.voices.count)
        #expect(looping > 0.6 && looping < 0.8)
        for sound in a.sounds {
            #expect(sound.channels == 1 && sound.sampleRate == 48_000)
            #expect(sound.duration >= 0.2 && sound.duration <= 2)
            #expect(sound.samples.contains { abs($0) > 0.05 })
        }
    }

    /// The library API the demo uses, kept small: 300 voices on 16 real sources.
    @Test func smallCrowdRunsInProcess() throws {
        let report = try StressScene(voices: 300).run(StressOptions(seconds: 0.5, realVoices: 16, music: nil))
        #expect(report.voices == 300)
        #expect(report.realVoices == 16)
        // One-shots that finish are started again at once: the crowd keeps its size.
        #expect(report.virtualVoices > 0 && report.realVoices + report.virtualVoices == 300)
        #expect(report.seconds == 0.5 && report.rtf > 0 && report.playCallNs > 0)
        #expect(report.playCalls >= 300 && report.stolen == 0)
        #expect(try #require(report.outputRMS) > 0.001)
    }

    @Test func stressCommandKeepsTwoHundredFiftySixRealOfTwoThousand() throws {
        let result = try ToolRunner.run(["stress", "--voices", "2000", "--seconds", "1", "--real", "256", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        // The contract's keys come first, in this order.
        let keys = [
            "voices", "realVoices", "virtualVoices", "seconds", "cpuSeconds", "rtf", "playCallNs", "peakRSSBytes",
            "underruns"
        ]
        let positions = keys.map { result.stdout.range(of: "\"\($0)\":")?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil })
        #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted())
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(json["voices"] as? Int == 2000)
        #expect(json["realVoices"] as? Int == 256)
        #expect((json["virtualVoices"] as? Int ?? 0) > 0)
        #expect((json["realVoices"] as? Int ?? 0) + (json["virtualVoices"] as? Int ?? 0) == 2000, "the crowd shrank")
        #expect(json["seconds"] as? Double == 1)
        #expect((json["cpuSeconds"] as? Double ?? 0) > 0)
        #expect((json["rtf"] as? Double ?? 0) > 0)
        #expect((json["playCallNs"] as? Double ?? 0) > 0)
        #expect((json["peakRSSBytes"] as? Int ?? 0) > 0)
        #expect(json["underruns"] as? Int == 0)
        // One-shots of 0.2–2 s finish within the second and are started again; the mix is not silent.
        #expect((json["retriggers"] as? Int ?? 0) > 0)
        #expect(json["stolen"] as? Int == 0)
        #expect((json["outputRMS"] as? Double ?? 0) > 0.001)
        #expect((json["music"] as? String ?? "").hasSuffix("Assets/Music/gravity-wave-theme.ogg"))
    }

    /// The hitches bench on short files: the loop ran its frames, skipped, and the streaming side kept up (every
    /// skip announced a new item, nothing failed). Its times are the bench's business, not the suite's.
    @Test func hitchesBenchSkipsThroughItsFiles() throws {
        let fixtures = try Fixtures()
        let files = [try fixtures.sineOgg("one.ogg", seconds: 20), try fixtures.sineMP3("two.mp3", seconds: 20)]
        let result = try ToolRunner.run(
            ["bench", "--hitches", "--seconds", "2", "--files", files.joined(separator: ","), "--json"],
            environment: ["SDL_AUDIODRIVER": "dummy"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(json["frames"] as? Int == 120)
        #expect(json["skips"] as? Int == 3)
        #expect(json["playbackErrors"] as? Int == 0)
        #expect((json["itemsStarted"] as? Int ?? 0) >= 3)
        let calls = try #require(json["calls"] as? [[String: Any]])
        #expect(
            calls.map { $0["name"] as? String } == [
                "update()", "skipToNextItem()", "currentPlaybackTime", "play() (a sound effect)", "musicPlayer.play()"
            ])
        #expect(calls.map { $0["count"] as? Int } == [120, 3, 120, 120, 0])
        for call in calls where call["count"] as? Int ?? 0 > 0 {
            let p50 = call["p50Microseconds"] as? Double ?? -1, p99 = call["p99Microseconds"] as? Double ?? -1
            #expect(p50 > 0 && p50 <= p99 && p99 <= call["maxMicroseconds"] as? Double ?? -1)
        }
    }

    @Test func benchSmokeEverySystemMixesFrames() throws {
        let result = try ToolRunner.run([
            "bench", "--voices", "256", "--unit-pitch", "256", "--seconds", "0.2", "--runs", "1",
            "--systems", "ambience,openal,sdlMixer", "--json"
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let scenes = try #require(json["scenes"] as? [[String: Any]])
        // The scene as asked, then the same crowd at pitch 1.
        #expect(scenes.map { $0["voices"] as? Int } == [256, 256])
        #expect(scenes.map { $0["unitPitch"] as? Bool } == [false, true])
        for scene in scenes {
            let systems = try #require(scene["systems"] as? [String: [String: Any]])
            #expect(Set(systems.keys) == ["ambience", "openal", "sdlMixer"])
            for (name, m) in systems {
                #expect(m["error"] == nil, "\(name): \(m["error"] ?? "")")
                #expect((m["frames"] as? Int ?? 0) >= 9_600, "\(name) mixed \(m["frames"] ?? 0) frames")
                #expect((m["rtf"] as? Double ?? 0) > 0)
                #expect(m["voicesMixed"] as? Int == 256)
            }
            // Ambience and raw OpenAL hand back their mix: it is not silent.
            #expect((systems["ambience"]?["outputRMS"] as? Double ?? 0) > 0.001)
            #expect((systems["openal"]?["outputRMS"] as? Double ?? 0) > 0.001)
            let ratios = try #require(scene["ratios"] as? [String: Double])
            #expect((ratios["ambienceOverOpenAL"] ?? 0) > 0 && (ratios["ambienceOverSDLMixer"] ?? 0) > 0)
        }
        #expect((json["playCallNs"] as? Double ?? 0) > 0)
        #expect(json.keys.contains("musicStreamCpuPercent"))
    }

    /// The real set: as many voices as the engine has sources, each one it mixes for real, and every voice when
    /// the sources outnumber the crowd. A subset keeps its voices' sounds, positions, pitches and loops.
    @Test func realSetIsWhatTheEngineMixesForReal() throws {
        let scene = StressScene(voices: 300)
        let real = try scene.realSet(realVoices: 16)
        #expect(real.count == 16 && Set(real).count == 16)
        #expect(real.allSatisfy { scene.voices.indices.contains($0) })
        #expect(try StressScene(voices: 40).realSet(realVoices: 64) == Array(0..<40))
        let subset = scene.subset(real + [-1, 300])
        #expect(subset.voices == real.map { scene.voices[$0] })
        #expect(subset.sounds == scene.sounds && subset.sampleRate == scene.sampleRate)
    }

    /// A crowd with virtual voices: Ambience, and its real set through Ambience alone and through raw OpenAL
    /// Soft, with both like-for-like ratios in the JSON.
    @Test func benchRunsTheRealSetBesideTheCrowd() throws {
        let (scene, systems) = try benchScene(
            "--voices", "5000", "--seconds", "0.2", "--runs", "1", "--systems",
            "ambience,ambienceRealSet,openalRealSet")
        #expect(scene["realSetVoices"] as? Int == 256)
        #expect(Set(systems.keys) == ["ambience", "ambienceRealSet", "openalRealSet"])
        #expect(systems["ambience"]?["voicesMixed"] as? Int == 256)
        for name in ["ambienceRealSet", "openalRealSet"] {
            let m = try #require(systems[name])
            #expect(m["error"] == nil, "\(name): \(m["error"] ?? "")")
            #expect(m["voicesMixed"] as? Int == 256)
            #expect((m["frames"] as? Int ?? 0) >= 9_600 && (m["outputRMS"] as? Double ?? 0) > 0.001)
        }
        let ratios = try #require(scene["ratios"] as? [String: Any])
        #expect((ratios["ambienceOverOpenALRealSet"] as? Double ?? 0) > 0)
        #expect((ratios["ambienceOverAmbienceRealSet"] as? Double ?? 0) > 0)
        // The table names them too.
        let table = try benchTable(
            "--voices", "5000", "--seconds", "0.1", "--runs", "1", "--systems", "ambience,openalRealSet")
        #expect(table.contains("the 256 voices Ambience keeps real"))
        #expect(table.contains("Ambience's whole crowd over raw OpenAL Soft on its real set"))
    }

    /// `ambience bench ARGUMENTS --unit-pitch none --json`'s first scene, and its systems by name.
    func benchScene(_ arguments: String...) throws -> (scene: [String: Any], systems: [String: [String: Any]]) {
        let result = try ToolRunner.run(["bench"] + arguments + ["--unit-pitch", "none", "--json"])
        try #require(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let scene = try #require((json["scenes"] as? [[String: Any]])?.first)
        return (scene, try #require(scene["systems"] as? [String: [String: Any]]))
    }

    /// `ambience bench ARGUMENTS --unit-pitch none`'s table.
    func benchTable(_ arguments: String...) throws -> String {
        let result = try ToolRunner.run(["bench"] + arguments + ["--unit-pitch", "none"])
        try #require(result.status == 0, "\(result.stderr)")
        return result.stdout
    }

    @Test func ratiosAndMediansComeFromTheRightRuns() {
        var fast = SystemMeasurement(), slow = SystemMeasurement(), failed = SystemMeasurement()
        fast.rtf = 0.02
        slow.rtf = 0.08
        failed.error = "no device"
        let scene = BenchScene(
            voices: 256, ambienceRealVoices: 256,
            systems: [(.ambience, fast), (.openal, slow), (.sdlMixer, failed)])
        #expect(scene.ratio(ambienceOver: .openal) == 0.25)
        #expect(scene.ratio(ambienceOver: .sdlMixer) == nil)
        // Runs made side by side pair up: a slow spell that slowed both runs of the second pair does not count.
        var ambience = SystemMeasurement(), openal = SystemMeasurement()
        ambience.runs = [0.1, 0.3, 0.12]
        ambience.rtf = 0.12
        openal.runs = [0.1, 0.3, 0.1]
        openal.rtf = 0.1
        let paired = BenchScene(
            voices: 1024, ambienceRealVoices: 1024, systems: [(.ambience, ambience), (.openal, openal)])
        #expect(paired.ratio(ambienceOver: .openal) == 1)
        #expect(Benchmark.median([3, 1, 2]) == 2)
        #expect(Benchmark.median([4, 1, 3, 2]) == 2.5)
        #expect(Benchmark.median([]) == 0)
    }

    @Test func sdlMixerPlacementFollowsThePosition() {
        func place(_ x: Float, _ z: Float) -> (angle: Int16, distance: UInt8) {
            SDLMixer.position(.init(sound: 0, x: x, y: 0, z: z, pitch: 1, loop: false))
        }
        #expect(place(0, -10).angle == 0)
        #expect(place(10, 0).angle == 90)
        #expect(place(0, 10).angle == 180)
        #expect(place(-10, 0).angle == 270)
        #expect(place(0, -0.5).distance == 0)
        #expect(place(0, -2).distance == 128)
        #expect(place(0, -50).distance > 245)
    }
}
