import Foundation
import Testing

@testable import AmbienceCore

// What the decoder suites share: reading frames, telling errors apart, comparing samples.

extension AudioDecoder {
    /// Up to `frames` frames from the current position, interleaved.
    func readFrames(_ frames: Int) throws -> [Float] {
        var buffer = [Float](repeating: 0, count: frames * info.channels)
        let got = try buffer.withUnsafeMutableBufferPointer { (p) throws(DecodingError) -> Int in
            try read(into: p.baseAddress!, frames: frames)
        }
        return Array(buffer.prefix(got * info.channels))
    }
}

extension DecodingError {
    func isCorrupt(mentioning text: String) -> Bool {
        if case .corrupt(_, let reason) = self { return reason.contains(text) }
        return false
    }
}

/// The `DecodingError` a call throws, or nil when it succeeds; any other error fails the test.
func decodingError<T>(_ body: () throws -> T) -> DecodingError? {
    do {
        _ = try body()
        return nil
    } catch let error as DecodingError {
        return error
    } catch {
        Issue.record("not a DecodingError: \(error)")
        return nil
    }
}

/// Everything a decoder gives, with what it says of it.
func decodeAll(_ decoder: any AudioDecoder) throws -> (info: AudioInfo, signal: Signal) {
    let buffer = try PCMBuffer(decodingAllOf: decoder)
    return (decoder.info, Signal(buffer))
}

func maxDifference(_ a: [Float], _ b: [Float]) -> Float {
    guard a.count == b.count else { return .infinity }
    return zip(a, b).reduce(0) { max($0, abs($1.0 - $1.1)) }
}

/// Interleaved float samples of everything `decoder` gives (`AudioFile.open(path)` for a whole file).
func decodedSamples(_ decoder: any AudioDecoder) throws(DecodingError) -> (info: AudioInfo, samples: [Float]) {
    (decoder.info, try PCMBuffer(decodingAllOf: decoder).samples)
}

/// Raw little-endian 32-bit floats written by a reference decoder.
func rawFloats(_ path: String) throws -> [Float] {
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    return stride(from: 0, to: bytes.count - 3, by: 4).map { at in
        Float(
            bitPattern: UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(
                bytes[at + 3]) << 24)
    }
}

/// Signal-to-noise ratio of `decoded` against `reference`, over their common length, in dB.
func snr(_ decoded: ArraySlice<Float>, _ reference: ArraySlice<Float>) -> Double {
    var signal = 0.0, noise = 0.0
    for (a, b) in zip(decoded, reference) {
        signal += Double(b) * Double(b)
        noise += Double(a - b) * Double(a - b)
    }
    return noise == 0 ? .infinity : 10 * log10(signal / noise)
}

/// The ID3v2 tag at the start of an MP3 that lame wrote, as bytes (its size is the tag header's syncsafe integer).
func id3v2Tag(ofMP3 path: String) throws -> [UInt8] {
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    try #require(bytes.starts(with: Array("ID3".utf8)) && bytes.count > 10)
    let size = bytes[6..<10].reduce(0) { $0 << 7 | Int($1 & 0x7F) }
    return Array(bytes.prefix(10 + size))
}

/// A WAV with `chunk` appended as a chunk named `id` (RIFF size fixed up): how an `id3 ` chunk is added to a file
/// that sox wrote.
func appendingChunk(_ id: String, _ chunk: [UInt8], toWAV wav: [UInt8]) -> [UInt8] {
    func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    let body = Array(wav[12...]) + Array(id.utf8) + le32(chunk.count) + chunk + (chunk.count % 2 == 1 ? [0] : [])
    return Array("RIFF".utf8) + le32(4 + body.count) + Array("WAVE".utf8) + body
}
