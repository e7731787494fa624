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
