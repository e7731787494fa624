import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceOutput
@testable import AmbienceTestSupport

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct WAVWriterTests {
    static func testSignal(frames: Int, channels: Int) -> [Float] {
        (0..<(frames * channels)).map { i in
            let frame = i / channels, channel = i % channels
            return 0.5 * Float(sin(2 * Double.pi * Double(440 + 110 * channel) * Double(frame) / 48_000))
        }
    }

    @Test(arguments: [1, 2, 6])
    func float32RoundTripIsBitExact(channels: Int) throws {
        let fixtures = try Fixtures()
        let path = fixtures.path("out.wav")
        // Long enough to cross the 64 KiB buffer many times; ends with edge values.
        var samples = Self.testSignal(frames: 40_000, channels: channels)
        samples += [-1, 1, 0, -0.0, Float.leastNonzeroMagnitude, -0.999_999_9].prefix(channels * (6 / channels))
        let frames = samples.count / channels
        let writer = try WAVWriter(path: path, sampleRate: 48_000, channels: channels, encoding: .float32)
        try writer.write(Array(samples[0..<1000]))
        try writer.write(Array(samples[1000...]))
        #expect(writer.framesWritten == Int64(frames))
        try writer.finish()

        let (info, signal) = try decodeAll(WAVDecoder(path: path))
        #expect(info.channels == channels)
        #expect(info.frames == Int64(frames))
        #expect(signal.samples.map(\.bitPattern) == samples.map(\.bitPattern))
        // sox agrees on what was written.
        #expect(try fixtures.run("soxi", ["-s", path]).trimmingCharacters(in: .whitespacesAndNewlines) == "\(frames)")
        #expect(try fixtures.run("soxi", ["-c", path]).trimmingCharacters(in: .whitespacesAndNewlines) == "\(channels)")
        #expect(try fixtures.run("soxi", ["-e", path]).contains("Floating Point"))
    }

    @Test(arguments: [1, 2, 6])
    func pcm16RoundTripIsWithinOneStep(channels: Int) throws {
        let fixtures = try Fixtures()
        let path = fixtures.path("out.wav")
        let samples = Self.testSignal(frames: 48_000, channels: channels)
        let writer = try WAVWriter(path: path, sampleRate: 48_000, channels: channels, encoding: .pcm16)
        try writer.write(samples)
        try writer.finish()

        let (info, signal) = try decodeAll(WAVDecoder(path: path))
        #expect(info.frames == 48_000)
        #expect(signal.samples.count == samples.count)
        var worst: Float = 0
        for (a, b) in zip(signal.samples, samples) { worst = max(worst, abs(a - b)) }
        #expect(worst <= 1 / 32768)
        #expect(abs(signal.dominantFrequency(channel: 0) - 440) <= 1)
        #expect(try fixtures.run("soxi", ["-s", path]).trimmingCharacters(in: .whitespacesAndNewlines) == "48000")
        #expect(try fixtures.run("soxi", ["-b", path]).trimmingCharacters(in: .whitespacesAndNewlines) == "16")
    }

    @Test func pcm16ClampsAndRounds() throws {
        let fixtures = try Fixtures()
        let path = fixtures.path("clamp.wav")
        let writer = try WAVWriter(path: path, sampleRate: 8000, channels: 1, encoding: .pcm16)
        try writer.write([1.5, -2, .nan, 0.5, 1.4 / 32768, 1.6 / 32768, -1.6 / 32768, 1, -1])
        try writer.finish()
        let samples = try decodeAll(WAVDecoder(path: path)).signal.samples
        let step: Float = 1 / 32768
        let expected: [Float] = [32767 * step, -1, 0, 0.5, step, 2 * step, -2 * step, 32767 * step, -1]
        #expect(samples == expected)
    }

    @Test func staticWriteOfABuffer() throws {
        let fixtures = try Fixtures()
        let path = fixtures.path("buffer.wav")
        let buffer = PCMBuffer(sampleRate: 44_100, channels: 2, samples: Self.testSignal(frames: 4410, channels: 2))
        try WAVWriter.write(buffer, to: path, encoding: .float32)
        #expect(try AudioFile.decode(path) == buffer)
        #expect(try fixtures.files() == ["buffer.wav"])
    }

    @Test func aPartialLastFrameIsCompletedWithSilence() throws {
        let fixtures = try Fixtures()
        let path = fixtures.path("partial.wav")
        let writer = try WAVWriter(path: path, sampleRate: 48_000, channels: 2, encoding: .float32)
        try writer.write([0.25, 0.5, 0.75])
        try writer.finish()
        let (info, signal) = try decodeAll(WAVDecoder(path: path))
        #expect(info.frames == 2)
        #expect(signal.samples == [0.25, 0.5, 0.75, 0])
    }

    @Test func finishLeavesOnlyTheFile() throws {
        let fixtures = try Fixtures()
        let path = fixtures.path("out.wav")
        let writer = try WAVWriter(path: path, sampleRate: 48_000, channels: 1, encoding: .pcm16)
        try writer.write([0.1, 0.2])
        let during = try fixtures.files()
        #expect(during.count == 1)
        #expect(during.first?.hasPrefix(".out.wav.tmp-\(getpid())-") == true)
        try writer.finish()
        try writer.finish()  // a second finish does nothing
        #expect(try fixtures.files() == ["out.wav"])
        #expect(throws: AudioWriteError.writeFailed(path, errno: EBADF)) { try writer.write([0]) }
    }

    @Test func cancelAndDeinitLeaveNothing() throws {
        let fixtures = try Fixtures()
        let path = fixtures.path("out.wav")
        let cancelled = try WAVWriter(path: path, sampleRate: 48_000, channels: 2, encoding: .float32)
        try cancelled.write(Self.testSignal(frames: 48_000, channels: 2))
        cancelled.cancel()
        #expect(try fixtures.files() == [])
        #expect(throws: AudioWriteError.writeFailed(path, errno: ECANCELED)) { try cancelled.finish() }

        do {
            let abandoned = try WAVWriter(path: path, sampleRate: 48_000, channels: 2, encoding: .pcm16)
            try abandoned.write(Self.testSignal(frames: 48_000, channels: 2))
            let during = try fixtures.files()
            withExtendedLifetime(abandoned) {}
            #expect(during.count == 1)
        }
        #expect(try fixtures.files() == [])
    }

    @Test func anExistingFileIsReplacedOnlyByFinish() throws {
        let fixtures = try Fixtures()
        let path = try fixtures.write("out.wav", bytes: Array("old contents".utf8))
        let writer = try WAVWriter(path: path, sampleRate: 48_000, channels: 1, encoding: .pcm16)
        try writer.write(Self.testSignal(frames: 48_000, channels: 1))
        #expect(try fixtures.bytes(of: path) == Array("old contents".utf8))
        writer.cancel()
        #expect(try fixtures.bytes(of: path) == Array("old contents".utf8))

        let second = try WAVWriter(path: path, sampleRate: 48_000, channels: 1, encoding: .pcm16)
        try second.write(Self.testSignal(frames: 100, channels: 1))
        try second.finish()
        #expect(try WAVDecoder(path: path).info.frames == 100)
        #expect(try fixtures.files() == ["out.wav"])
    }

    @Test func cannotCreate() throws {
        let fixtures = try Fixtures()
        let missingFolder = fixtures.path("no/such/folder/out.wav")
        #expect(throws: AudioWriteError.cannotCreate(missingFolder, errno: ENOENT)) {
            try WAVWriter(path: missingFolder, sampleRate: 48_000, channels: 2, encoding: .pcm16)
        }
        let folder = fixtures.directory.path
        #expect(
            throws: AudioWriteError.refused(
                folder, reason: AtomicFileError.refused(path: folder, target: folder, kind: .folder).description)
        ) {
            try WAVWriter(path: folder, sampleRate: 48_000, channels: 2, encoding: .pcm16)
        }
        let out = fixtures.path("out.wav")
        #expect(throws: AudioWriteError.cannotCreate(out, errno: EINVAL)) {
            try WAVWriter(path: out, sampleRate: 0, channels: 2, encoding: .pcm16)
        }
        #expect(throws: AudioWriteError.cannotCreate(out, errno: EINVAL)) {
            try WAVWriter(path: out, sampleRate: 48_000, channels: 0, encoding: .pcm16)
        }
        #expect(try fixtures.files() == [])
    }

    @Test func tooLargeRemovesTheTemporaryFile() throws {
        let fixtures = try Fixtures()
        let path = fixtures.path("big.wav")
        // The same check as the 4 GiB limit, lowered to 100 kB so the test does not write gigabytes.
        let writer = try WAVWriter(path: path, sampleRate: 48_000, channels: 1, encoding: .pcm16, riffLimit: 100_000)
        try writer.write([Float](repeating: 0.1, count: 40_000))
        #expect(throws: AudioWriteError.tooLarge(path)) { try writer.write([Float](repeating: 0.1, count: 20_000)) }
        #expect(throws: AudioWriteError.tooLarge(path)) { try writer.finish() }
        #expect(try fixtures.files() == [])
    }

    @Test func realWriteErrorsRemoveTheTemporaryFile() throws {
        let fixtures = try Fixtures()
        let path = fixtures.path("out.wav")
        let writer = try WAVWriter(path: path, sampleRate: 48_000, channels: 1, encoding: .float32)
        // Make the folder vanish under the writer: the rename in finish() fails for real, and nothing is left.
        let temporary = try #require(try fixtures.files().first)
        #expect(rename(fixtures.path(temporary), fixtures.path("moved-away")) == 0)
        #expect(unlink(fixtures.path("moved-away")) == 0)
        try writer.write([0.5])
        #expect(throws: AudioWriteError.writeFailed(path, errno: ENOENT)) { try writer.finish() }
        #expect(try fixtures.files() == [])
    }

    @Test func errorsReadAsOneLine() {
        #expect(
            AudioWriteError.writeFailed("out.wav", errno: ENOSPC).description
                == "out.wav: cannot write (No space left on device)")
        #expect(
            AudioWriteError.cannotCreate("a/b.wav", errno: ENOENT).description
                == "a/b.wav: cannot create (No such file or directory)")
        #expect(AudioWriteError.tooLarge("huge.wav").description == "huge.wav: too large for a WAV file (over 4 GiB)")
        #expect(AudioWriteError.tooLarge("huge.wav").path == "huge.wav")
    }
}
