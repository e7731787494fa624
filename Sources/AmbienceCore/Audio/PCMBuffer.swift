/// Decoded audio held in memory: interleaved 32-bit float.
public struct PCMBuffer: Sendable, Equatable {
    /// Frames per second.
    public var sampleRate: Int
    /// Samples per frame: 1 for mono, 2 for stereo (left first).
    public var channels: Int
    /// The samples, frame after frame, each frame's channels side by side; nominally within -1...1.
    public var samples: [Float]

    /// The most bytes of decoded audio one whole sound may take: what one OpenAL buffer takes, since
    /// `alBufferData` counts its bytes in an `ALsizei` (2^31 − 1).
    package static let maximumDecodedBytes = Int64(Int32.max)

    /// Wraps samples as they are; `AudioEngine.makeSound(_:name:)` is what checks them.
    public init(sampleRate: Int, channels: Int, samples: [Float]) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.samples = samples
    }

    /// Whole frames held (0 when there are no channels).
    public var frames: Int { channels > 0 ? samples.count / channels : 0 }
    /// Seconds held: `frames` at `sampleRate`.
    public var duration: Double { Double(frames) / Double(sampleRate) }

    /// Reads a decoder to its end. The stream's decoded size is checked against `limit` (at most
    /// `maximumDecodedBytes`) before anything is decoded, and again as it decodes, so a stream that
    /// decodes to more than its header said still stops at the limit. `name` is how errors show the stream.
    package init(
        decodingAllOf decoder: any AudioDecoder, limit: Int64 = PCMBuffer.maximumDecodedBytes,
        name: String = "audio"
    ) throws(DecodingError) {
        let info = decoder.info
        let limit = min(max(limit, 0), Self.maximumDecodedBytes)
        guard info.decodedBytes <= limit else { throw .tooLarge(name, bytes: info.decodedBytes, limit: limit) }
        guard info.channels > 0 else { throw .corrupt(name, reason: "\(info.channels) channels") }
        sampleRate = info.sampleRate
        channels = info.channels
        let bytesPerFrame = Int64(info.channels * MemoryLayout<Float>.size)
        // Within the limit, the stated size is a fair reservation; the loop below holds to the limit either way.
        samples = []
        samples.reserveCapacity(Int(info.decodedBytes) / MemoryLayout<Float>.size)
        let chunkFrames = 4096
        var chunk = [Float](repeating: 0, count: chunkFrames * info.channels)
        var decoded: Int64 = 0
        while true {
            let got = try chunk.withUnsafeMutableBufferPointer { (p) throws(DecodingError) -> Int in
                try decoder.read(into: p.baseAddress!, frames: chunkFrames)
            }
            if got <= 0 { break }
            decoded += Int64(min(got, chunkFrames))
            let (bytes, overflow) = decoded.multipliedReportingOverflow(by: bytesPerFrame)
            guard !overflow, bytes <= limit else { throw .tooLarge(name, bytes: overflow ? .max : bytes, limit: limit) }
            samples.append(contentsOf: chunk[0..<(min(got, chunkFrames) * info.channels)])
        }
    }
}
