import CSDLMixerABI
import Glibc

/// A sample layout SDL converts between: an SDL AUDIO_* format and a channel count.
struct AudioLayout: Equatable {
    var format: UInt16
    var channels: Int

    /// The engine's samples: 32-bit floats in the machine's order.
    static func floats(_ channels: Int) -> AudioLayout { AudioLayout(format: UInt16(AUDIO_F32SYS), channels: channels) }

    var frameBytes: Int { Int(format & 0xFF) / 8 * channels }
}

/// Converts samples between layouts with SDL's own converter (SDL_AudioStream, vectorised C), piece by piece so no
/// piece needs more than a few MiB of scratch memory. The stand-in's library is built in debug as often as not, and
/// a Swift loop over every sample of a 100 MB chunk takes seconds there; SDL's converter takes a fraction of one.
/// Rates are never changed here (the engine resamples when it decodes). Made and used by one conversion, on the
/// caller's thread, outside the stand-in's lock.
final class AudioConverter {
    private let stream: OpaquePointer
    let from: AudioLayout
    let to: AudioLayout

    /// Bytes of input converted per step.
    static let pieceBytes = 1 << 20

    /// nil when SDL refuses the layouts (it sets its error).
    init?(from: AudioLayout, to: AudioLayout, rate: Int) {
        guard let rate = Int32(exactly: rate), let fromChannels = UInt8(exactly: from.channels),
            let toChannels = UInt8(exactly: to.channels),
            let stream = SDL_NewAudioStream(
                SDL_AudioFormat(from.format), fromChannels, rate, SDL_AudioFormat(to.format), toChannels, rate)
        else { return nil }
        self.stream = stream
        self.from = from
        self.to = to
    }

    deinit { SDL_FreeAudioStream(stream) }

    /// Converts `source` (whole frames of `from`) and hands the result to `take` in pieces, in order. False when SDL
    /// failed partway.
    private func convert(_ source: UnsafeRawBufferPointer, _ take: (UnsafeRawBufferPointer) -> Void) -> Bool {
        guard let base = source.baseAddress else { return true }
        let step = max(Self.pieceBytes / from.frameBytes, 1) * from.frameBytes
        var scratch = [UInt8](repeating: 0, count: step / from.frameBytes * to.frameBytes + to.frameBytes)
        var at = 0
        while at < source.count {
            let count = min(step, source.count - at)
            guard SDL_AudioStreamPut(stream, base + at, Int32(clamping: count)) == 0 else { return false }
            at += count
            if at >= source.count { SDL_AudioStreamFlush(stream) }
            guard drain(into: &scratch, take) else { return false }
        }
        return true
    }

    private func drain(into scratch: inout [UInt8], _ take: (UnsafeRawBufferPointer) -> Void) -> Bool {
        while SDL_AudioStreamAvailable(stream) > 0 {
            let got = scratch.withUnsafeMutableBytes {
                SDL_AudioStreamGet(stream, $0.baseAddress, Int32($0.count))
            }
            guard got >= 0 else { return false }
            if got == 0 { break }
            scratch.withUnsafeBytes { take(UnsafeRawBufferPointer(rebasing: $0[0..<Int(got)])) }
        }
        return true
    }

    /// `source` as floats with `channels` channels; nil when SDL failed. A float format's NaN or infinity becomes
    /// silence, and its samples are kept within -1...1 (the engine takes finite samples only).
    static func floats(_ source: UnsafeRawBufferPointer, from: AudioLayout, channels: Int, rate: Int) -> [Float]? {
        let frames = source.count / from.frameBytes
        guard let converter = AudioConverter(from: from, to: .floats(channels), rate: rate),
            let samples: [Float] = converter.collect(
                UnsafeRawBufferPointer(rebasing: source[0..<frames * from.frameBytes]), count: frames * channels)
        else { return nil }
        return from.format & 0x0100 != 0 ? sanitized(samples) : samples
    }

    /// `samples` (floats with `channels` channels) in `to`; nil when SDL failed.
    static func bytes(_ samples: [Float], channels: Int, to: AudioLayout, rate: Int) -> [UInt8]? {
        guard let converter = AudioConverter(from: .floats(channels), to: to, rate: rate) else { return nil }
        let frames = samples.count / channels
        return samples.withUnsafeBytes { converter.collect($0, count: frames * to.frameBytes) }
    }

    /// The whole conversion of `source` as `count` elements (anything SDL did not deliver is zero); nil when SDL
    /// failed.
    private func collect<Element: BitwiseCopyable>(_ source: UnsafeRawBufferPointer, count: Int) -> [Element]? {
        var filled = 0
        var worked = true
        let out = [Element](unsafeUninitializedCapacity: count) { buffer, initialized in
            let bytes = UnsafeMutableRawBufferPointer(buffer)
            if let base = bytes.baseAddress { memset(base, 0, bytes.count) }
            worked = convert(source) { piece in
                let room = min(piece.count, bytes.count - filled)
                if room > 0 {
                    bytes.baseAddress!.advanced(by: filled).copyMemory(from: piece.baseAddress!, byteCount: room)
                }
                filled += room
            }
            initialized = count
        }
        return worked ? out : nil
    }

    private static func sanitized(_ samples: [Float]) -> [Float] {
        var samples = samples
        samples.withUnsafeMutableBufferPointer { buffer in
            for i in buffer.indices where !(buffer[i] >= -1 && buffer[i] <= 1) {
                buffer[i] = buffer[i].isFinite ? min(max(buffer[i], -1), 1) : 0
            }
        }
        return samples
    }
}
