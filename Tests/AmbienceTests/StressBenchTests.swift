import Foundation
import Testing
@testable import Ambience
@testable import AmbienceBench

// Facts about the stress scene and the benchmark that no timing can fake. Speed is the bench command's business:
// nothing here has a timing threshold.
@Suite(.serialized) struct StressBenchTests {
    @Test func sceneIsReproducibleAndAsDescribed() {
        let a = StressScene(voices: 500), b = StressScene(voices: 500)
        #expect(a.voices == b.voices)
        #expect(a.sounds == b.sounds)
        // A smaller crowd is the first part of a larger one, so every scene size plays the same voices.
        #expect(Array(StressScene(voices: 2000).voices.prefix(500)) == a.voices)
        #expect(a.voices.allSatisfy { (0.9...1.1).contains($0.pitch) && abs($0.x) <= 50 && abs($0.y) <= 50 && abs($0.z) <= 50 })
        #expect(a.voices.allSatisfy { a.sounds.indices.contains($0.sound) })
        let looping = Double(a.voices.filter(\.loop).count) / Double(a.voices.count)
        #expect(looping > 0.6 && looping < 0.8)
        for sound in a.sounds {
            #expect(sound.channels == 1 && sound.sampleRate == 48_000)
            #expect(sound.duration >= 0.2 && sound.duration <= 2)
            #expect(sound.samples.contains { abs($0) > 0.05 })
        }
    }

    @Test func crowdOfTwoThousandKeepsTwoHundredFiftySixReal() throws {
        let report = try StressScene(voices: 2000).run(StressOptions(seconds: 1, realVoices: 256, music: nil))
        #expect(report.voices == 2000)
        #expect(report.realVoices == 256)
        #expect(report.virtualVoices > 0)
        #expect(report.realVoices + report.virtualVoices <= 2000)
        #expect(report.seconds == 1)
        #expect(report.cpuSeconds > 0 && report.rtf > 0)
        #expect(report.playCallNs > 0)
        #expect(report.playCalls >= 2000)
        // One-shots of 0.2–2 s finish within the second and are started again.
        #expect(report.retriggers > 0)
        #expect(report.stolen == 0)
        #expect(report.peakRSSBytes > 0)
        #expect(report.underruns == 0)
        #expect(try #require(report.outputRMS) > 0.001)
    }

    @Test func musicStreamsBesideTheCrowdWhenThere() throws {
        let path = try #require(StressScene.defaultMusicPath)
        let report = try StressScene(voices: 10).run(StressOptions(seconds: 0.5, realVoices: 256, music: path))
        #expect(report.music == path)
        #expect(try #require(report.outputRMS) > 0.001)
    }

    @Test func benchSmokeAmbienceAndRawOpenALMixFrames() throws {
        let report = Benchmark.run(BenchOptions(seconds: 0.2, runs: 1, voiceCounts: [256], systems: [.ambience, .openal], music: nil))
        #expect(report.scenes.count == 1)
        let scene = try #require(report.scenes.first)
        #expect(scene.voices == 256 && scene.ambienceRealVoices == 256)
        for system in [BenchSystem.ambience, .openal] {
            let m = try #require(scene.measurement(system))
            #expect(m.error == nil, "\(system): \(m.error ?? "")")
            #expect(m.frames >= 9_600, "\(system) mixed \(m.frames) frames")
            #expect(m.rtf > 0)
            #expect(m.voicesMixed == 256)
            #expect((m.outputRMS ?? 0) > 0.001, "\(system) is silent")
        }
        #expect(scene.ratio(ambienceOver: .openal) != nil)
        #expect(report.playCallNs > 0)
    }

    /// SDL audio is process-wide and other suites open SDL devices, so SDL_mixer runs in its own process: the command's.
    @Test func benchSmokeSDLMixerMixesFrames() throws {
        let result = try ToolRunner.run(["bench", "--voices", "256", "--systems", "sdlMixer", "--seconds", "0.2", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let scenes = try #require(json["scenes"] as? [[String: Any]])
        #expect(scenes.count == 1)
        let scene = try #require(scenes.first)
        #expect(scene["voices"] as? Int == 256)
        let systems = try #require(scene["systems"] as? [String: Any])
        let sdl = try #require(systems["sdlMixer"] as? [String: Any])
        #expect(sdl["error"] == nil, "\(sdl["error"] ?? "")")
        #expect((sdl["frames"] as? Int ?? 0) >= 9_600)
        #expect((sdl["rtf"] as? Double ?? 0) > 0)
        #expect(sdl["voicesMixed"] as? Int == 256)
        #expect(json["playCallNs"] != nil && json["musicStreamCpuPercent"] != nil)
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
