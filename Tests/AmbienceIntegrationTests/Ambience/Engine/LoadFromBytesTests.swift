import AmbiencePlatform
import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceTestSupport

/// Audio held in memory: `AudioEngine.load(bytes:name:)` and `decode(bytes:name:sampleRate:)` through an anonymous
/// in-memory file (`MemoryFile`), and `AudioEngine.systemLibraries` without an engine.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5)))
struct LoadFromBytesTests {
    @Test func aMemoryFileOpensByPathAsARegularFileOfItsBytes() throws {
        let bytes: [UInt8] = Array("RIFF, or not: any bytes at all".utf8)
        let file = try MemoryFile(bytes, name: "test")
        let (opened, size) = try FileDescriptor.openRegularFile(file.path)
        #expect(size == Int64(bytes.count))
        #expect(try opened.readBytes(bytes.count + 10) == bytes)
        // Opened a second time, it starts again at the beginning.
        #expect(try FileDescriptor.openRegularFile(file.path).file.readBytes(4) == Array("RIFF".utf8))
    }

    @Test func bytesOfAWAVAndAnOggPlayAsTheirFilesDo() throws {
        let fixtures = try Fixtures()
        let engine = try AudioEngine(.offline(sampleRate: 48_000))
        for path in [try fixtures.sineWAV("a.wav", hz: 440, seconds: 0.5), try fixtures.sineOgg("a.ogg", hz: 440)] {
            let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
            let sound = try engine.load(bytes: bytes, name: "a sine")
            #expect(sound.name == "a sine")
            let fromFile = try engine.load(path)
            #expect(sound.frames == fromFile.frames && sound.sampleRate == fromFile.sampleRate)
            engine.play(sound)
            let out = Signal(try engine.render(seconds: 0.4))
            #expect(abs(out.dominantFrequency(in: 4_800..<14_400) - 440) < 1)
            engine.unload(sound)
        }
    }

    @Test func decodingResamplesToTheRateAsked() throws {
        let fixtures = try Fixtures()
        let engine = try AudioEngine(.offline(sampleRate: 48_000))
        let path = try fixtures.sineWAV("b.wav", hz: 1_000, seconds: 1, rate: 22_050)
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        let native = try engine.decode(bytes: bytes, name: "b")
        #expect(native.sampleRate == 22_050 && native.frames == 22_050)
        let resampled = try engine.decode(bytes: bytes, name: "b", sampleRate: 44_100)
        #expect(resampled.sampleRate == 44_100 && abs(resampled.frames - 44_100) <= 2)
        #expect(abs(Signal(resampled).dominantFrequency(in: 1_000..<40_000) - 1_000) < 1)
    }

    @Test func badBytesAndBadRatesAreRefusedByName() throws {
        let engine = try AudioEngine(.offline(sampleRate: 48_000))
        #expect(throws: EngineError.decoding(.empty("nothing"))) { try engine.load(bytes: [], name: "nothing") }
        #expect(throws: EngineError.decoding(.unsupportedFormat("junk"))) {
            try engine.load(bytes: Array(repeating: 7, count: 4_096), name: "junk")
        }
        #expect {
            try engine.decode(bytes: [1, 2, 3], name: "x", sampleRate: 1)
        } throws: { error in
            guard case EngineError.invalidNumber = error else { return false }
            return true
        }
    }

    @Test func systemLibrariesAreReportedWithoutAnEngine() {
        let libraries = AudioEngine.systemLibraries
        #expect(libraries.map(\.name).contains { $0.hasPrefix("libopenmpt") })
        #expect(libraries.map(\.name).contains { $0.hasPrefix("libfluidsynth") })
        #expect(libraries.allSatisfy { $0.isAvailable == ($0.unavailableReason == nil) })
    }
}
