import CAmbience
import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceC
@testable import AmbienceIntegrationSupport
@testable import AmbienceOutput
@testable import AmbienceTestSupport

/// The engine's own libpulse output on the real server.
extension SoundServerSuites {
    @Suite(.offTheCooperativePool, .timeLimit(.minutes(3)), .serialized) struct PulseOutputTests {
        /// A sine played through the libpulse output reaches the sink the game named (by its description, as SDL
        /// names devices), and only that one: its monitor records the sine at its pitch and about its level. At
        /// 128 frames the output writes whole blocks; at 256 and 1,024, on PulseAudio, pieces of 96 and 256 frames
        /// (`PulseBuffering.Writing.pieces`), which a piece written out of place would break.
        @Test(arguments: [128, 256, 1024]) func audioReachesTheNamedSinkThroughLibpulse(blockFrames: Int) throws {
            guard PulseServer.isRunning else { return }
            try PulseServer.restore()
            let fixtures = try Fixtures()
            let sine = try fixtures.sineWAV("sine.wav", hz: 440, seconds: 4, amplitude: 0.5)
            let recording = fixtures.path("headphones.raw")
            let recorder = try ChildProcess(
                [
                    "sh", "-c",
                    "exec parec -d headphones.monitor --format=s16le --rate=48000 --channels=2 --raw --latency-msec=20 > \"$0\"",
                    recording
                ], environment: childEnvironment())
            defer { recorder.terminate() }
            #expect(eventually { RealPrograms.fileSize(recording) > 0 }, "parec did not start")

            var configuration = EngineConfiguration(
                output: .device(name: "Headphones"), appName: "ambience-pulse-output-test", desktopIntegration: false)
            configuration.outputBackend = .libpulse
            configuration.blockFrames = blockFrames
            let engine = try AudioEngine(configuration)
            defer { engine.shutdown() }
            #expect(engine.outputBackend == .libpulse)
            #expect(engine.outputDriver == "pulseaudio")
            #expect(
                eventually {
                    ((try? PulseServer.streams()) ?? []).contains {
                        $0.application == "ambience-pulse-output-test" && $0.sink == "headphones"
                    }
                }, "our stream is not on the headphones sink")
            let start = RealPrograms.fileSize(recording)
            _ = engine.play(try engine.load(sine))
            usleep(2_000_000)
            engine.update()
            recorder.terminate()

            let bytes = try Data(contentsOf: URL(fileURLWithPath: recording)).dropFirst(start)
            let left = bytes.withUnsafeBytes { raw in
                stride(from: 0, to: raw.count - 3, by: 4).map {
                    Double(Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0, as: Int16.self))) / 32768
                }
            }
            // The loudest second: the sine began somewhere in the recording, after the stream's start.
            let second = 48_000
            try #require(left.count > second, "recorded \(left.count) frames")
            let windows = stride(from: 0, to: left.count - second, by: second / 10).map { left[$0..<($0 + second)] }
            let rms = { (w: ArraySlice<Double>) in (w.reduce(0) { $0 + $1 * $1 } / Double(w.count)).squareRoot() }
            let loudest = try #require(windows.max { rms($0) < rms($1) })
            // A mono 0.5 sine at the centre: about 0.35 peak per channel, 0.25 RMS.
            #expect(rms(loudest) > 0.15 && rms(loudest) < 0.4, "RMS \(rms(loudest))")
            let crossings = zip(loudest.dropFirst(), loudest).filter { $0 >= 0 && $1 < 0 }.count
            #expect(abs(crossings - 440) <= 5, "\(crossings) Hz")
        }

        /// In test.sh's pass on the libpulse output (`AMBIENCE_OUTPUT=libpulse`), an engine left on `.automatic`
        /// really plays through libpulse while the server runs: a libpulse that failed would fall back to SDL, and
        /// the pass's suites would pass on SDL without a word.
        @Test func theLibpulsePassPlaysThroughLibpulse() throws {
            guard PulseServer.isRunning, ProcessEnvironment.value("AMBIENCE_OUTPUT") == "libpulse" else { return }
            try PulseServer.restore()
            let engine = try AudioEngine(
                EngineConfiguration(output: .device(), appName: "ambience-pulse-pass-test", desktopIntegration: false))
            defer { engine.shutdown() }
            #expect(engine.outputBackend == .libpulse)
            #expect(
                eventually {
                    ((try? PulseServer.streams()) ?? []).contains { $0.application == "ambience-pulse-pass-test" }
                }, "our libpulse stream is not on the server")
        }

        /// Asked at the start for a sink that does not exist, the libpulse output fails with the name, as SDL's does
        /// (a reopen later falls back to the default: `DeviceOutput.followDefaultDevice`).
        @Test func aMissingNamedSinkIsAnErrorThatNamesIt() throws {
            guard PulseServer.isRunning else { return }
            var configuration = EngineConfiguration(
                output: .device(name: "No Such Sink"), appName: "ambience-pulse-output-test",
                desktopIntegration: false)
            configuration.outputBackend = .libpulse
            do {
                let engine = try AudioEngine(configuration)
                engine.shutdown()
                Issue.record("an engine started on a sink that does not exist")
            } catch {
                #expect("\(error)".contains("No Such Sink"), "\(error)")
            }
        }
    }
}
