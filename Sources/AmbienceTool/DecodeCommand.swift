import Ambience
import AmbienceDecoding

struct DecodeCommand: Command {
    static let name = "decode"
    static let usage = """
        decode FILE --out OUT.wav [--float] the decoded audio at its own rate and channels
          --out     the WAV to write (written whole or not at all)
          --float   32-bit float samples instead of 16-bit PCM
        """

    static func run(_ arguments: inout Arguments) throws {
        let float = arguments.flag("--float")
        guard let out = try arguments.option("--out") else { throw UsageError("decode needs --out OUT.wav") }
        let files = try arguments.finish()
        guard files.count == 1 else { throw UsageError("decode takes exactly one FILE") }
        let decoder = try AudioFile.open(files[0])
        let info = decoder.info
        for warning in info.warnings { printError("warning: \(files[0]): \(warning)") }
        let writer = try WAVWriter(
            path: out, sampleRate: info.sampleRate, channels: info.channels, encoding: float ? .float32 : .pcm16)
        let chunkFrames = 8192
        var chunk = [Float](repeating: 0, count: chunkFrames * info.channels)
        do {
            while true {
                try Interrupt.check()
                let got = try chunk.withUnsafeMutableBufferPointer { (p) throws(DecodingError) -> Int in
                    try decoder.read(into: p.baseAddress!, frames: chunkFrames)
                }
                if got == 0 { break }
                try chunk.withUnsafeBufferPointer { (p) throws(AudioWriteError) in
                    try writer.write(UnsafeBufferPointer(rebasing: p[0..<(got * info.channels)]))
                }
            }
            try writer.finish()
        } catch {
            writer.cancel()
            throw error
        }
    }
}
