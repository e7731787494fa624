import AmbienceCore
import AmbiencePlatform
import Glibc

/// Why a WAV file could not be written. Every case names the file the caller asked for.
package enum AudioWriteError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The output (or its temporary file next to it) could not be created: a missing folder, no permission, a bad argument.
    case cannotCreate(String, errno: Int32)
    /// Writing, syncing or renaming failed, for example with a full disk.
    case writeFailed(String, errno: Int32)
    /// The audio does not fit in a WAV file, whose sizes are 32-bit (4 GiB).
    case tooLarge(String)
    /// The path leads to something that is never written (a folder, a socket, a block device), or to a FIFO that
    /// no process reads, or another process changed what it names while it was written; `reason` says which, naming
    /// the path.
    case refused(String, reason: String)

    /// The path the error is about.
    package var path: String {
        switch self {
        case .cannotCreate(let p, _), .writeFailed(let p, _), .tooLarge(let p), .refused(let p, _): p
        }
    }

    package var description: String {
        switch self {
        case .cannotCreate(let path, let code):
            "\(path): cannot create (\(Errno(code).description))"
        case .writeFailed(let path, let code):
            "\(path): cannot write (\(Errno(code).description))"
        case .tooLarge(let path):
            "\(path): too large for a WAV file (over 4 GiB)"
        case .refused(_, let reason):
            reason
        }
    }
}

/// Writes a WAV file atomically through an `AtomicFile`: audio goes to a hidden temporary file in the same folder
/// (`.NAME.tmp-PID-N`), and `finish()` syncs it and renames it into place.
///
/// Until `finish()` succeeds nothing appears at `path` (an existing file there is left as it was). A character
/// device or a FIFO (`/dev/stdout`, a pipe) is written straight through, as a stream: its header says "length
/// unknown" (all ones in the sizes, as streaming tools write), since it cannot be patched afterwards.
/// A writer that is cancelled, fails, or is released unfinished removes its temporary file.
/// Samples are interleaved Float; 16-bit output clamps to [-1, 1] and rounds to the nearest step.
/// A writer is owned by one thread at a time.
package final class WAVWriter {
    package enum Encoding: Sendable {
        /// 16-bit signed integer PCM.
        case pcm16
        /// 32-bit IEEE float.
        case float32
    }

    package let path: String
    package let sampleRate: Int
    package let channels: Int
    package let encoding: Encoding

    /// Sample frames accepted so far (a trailing partial frame is counted once it is completed by `finish()`).
    package var framesWritten: Int64 { dataBytes / Int64(blockAlign) }

    private enum State { case open, finished, cancelled, failed(AudioWriteError) }

    private let file: AtomicFile
    private var state = State.open
    private let buffer: UnsafeMutableRawPointer
    private var buffered = 0
    private var dataBytes: Int64 = 0
    private let headerSize: Int
    /// The largest RIFF size field allowed: 32 bits, or less in tests.
    private let riffLimit: Int64

    static let bufferBytes = 64 * 1024
    static let sampleRates = 1...768_000
    static let channelCounts = 1...8

    package convenience init(path: String, sampleRate: Int, channels: Int, encoding: Encoding) throws(AudioWriteError) {
        try self.init(
            path: path, sampleRate: sampleRate, channels: channels, encoding: encoding, riffLimit: Int64(UInt32.max))
    }

    /// `riffLimit` lowers the 4 GiB limit so that tests can reach it.
    init(path: String, sampleRate: Int, channels: Int, encoding: Encoding, riffLimit: Int64) throws(AudioWriteError) {
        guard Self.sampleRates.contains(sampleRate), Self.channelCounts.contains(channels) else {
            throw .cannotCreate(path, errno: EINVAL)
        }
        do throws(AtomicFileError) { file = try AtomicFile(replacing: path) } catch {
            switch error {
            case .failed(let failure): throw .cannotCreate(path, errno: failure.code)
            case .refused, .noReader, .changed: throw .refused(path, reason: error.description)
            }
        }

        self.path = path
        self.sampleRate = sampleRate
        self.channels = channels
        self.encoding = encoding
        self.riffLimit = riffLimit
        // The header goes out first with zero sizes; finish() patches them. A stream's says "unknown" for good.
        let placeholder = Self.header(
            sampleRate: sampleRate, channels: channels, encoding: encoding, dataBytes: file.isStream ? nil : 0)
        let storage = UnsafeMutableRawPointer.allocate(byteCount: Self.bufferBytes, alignment: 16)
        placeholder.withUnsafeBytes { storage.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        buffer = storage
        headerSize = placeholder.count
        buffered = placeholder.count
    }

    deinit { buffer.deallocate() }  // an unfinished file's temporary file goes with `file`

    /// Appends interleaved samples.
    package func write(_ samples: UnsafeBufferPointer<Float>) throws(AudioWriteError) {
        try checkOpen()
        let size = bytesPerSample
        let adding = Int64(samples.count) * Int64(size)
        guard Int64(headerSize - 8) + dataBytes + adding <= riffLimit else { throw fail(.tooLarge(path)) }
        var index = 0
        while index < samples.count {
            if Self.bufferBytes - buffered < size { try flush() }
            let count = min(samples.count - index, (Self.bufferBytes - buffered) / size)
            let out = buffer + buffered
            switch encoding {
            case .pcm16:
                for i in 0..<count {
                    out.storeBytes(of: Self.pcm16(samples[index + i]).littleEndian, toByteOffset: i * 2, as: Int16.self)
                }
            case .float32:
                for i in 0..<count {
                    let x = samples[index + i]
                    out.storeBytes(of: (x.isNaN ? 0 : x).bitPattern.littleEndian, toByteOffset: i * 4, as: UInt32.self)
                }
            }
            buffered += count * size
            index += count
        }
        dataBytes += adding
    }

    /// Appends interleaved samples.
    package func write(_ samples: [Float]) throws(AudioWriteError) {
        try samples.withUnsafeBufferPointer { (pointer) throws(AudioWriteError) in try write(pointer) }
    }

    /// Completes the header, syncs the file to disk and moves it to `path`. Calling it again does nothing.
    package func finish() throws(AudioWriteError) {
        switch state {
        case .finished: return
        case .failed(let error): throw error
        case .cancelled: throw .writeFailed(path, errno: ECANCELED)
        case .open: break
        }
        let partial = Int((dataBytes / Int64(bytesPerSample)) % Int64(channels))
        if partial != 0 {
            try write([Float](repeating: 0, count: channels - partial))
        }
        try flush()
        let header = Self.header(sampleRate: sampleRate, channels: channels, encoding: encoding, dataBytes: dataBytes)
        do throws(Errno) {
            if !file.isStream {
                try header.withUnsafeBytes { raw in Result { () throws(Errno) in try file.write(raw, at: 0) } }.get()
            }
        } catch {
            throw fail(.writeFailed(path, errno: error.code))
        }
        do throws(AtomicFileError) { try file.commit() } catch {
            switch error {
            case .failed(let failure): throw fail(.writeFailed(path, errno: failure.code))
            case .refused, .noReader, .changed: throw fail(.refused(path, reason: error.description))
            }
        }
        state = .finished
    }

    /// Stops without producing a file and removes the temporary file. Does nothing after `finish()`.
    package func cancel() {
        guard case .open = state else { return }
        file.discard()
        state = .cancelled
    }

    /// Writes a whole buffer to `path`.
    package static func write(_ buffer: PCMBuffer, to path: String, encoding: Encoding) throws(AudioWriteError) {
        let writer = try WAVWriter(
            path: path, sampleRate: buffer.sampleRate, channels: buffer.channels, encoding: encoding)
        try writer.write(buffer.samples)
        try writer.finish()
    }

    // MARK: - Internals

    private var bytesPerSample: Int { encoding == .pcm16 ? 2 : 4 }
    private var blockAlign: Int { channels * bytesPerSample }

    static func pcm16(_ x: Float) -> Int16 {
        guard !x.isNaN else { return 0 }
        return Int16(min(max((x * 32768).rounded(), -32768), 32767))
    }

    private func checkOpen() throws(AudioWriteError) {
        switch state {
        case .open: return
        case .failed(let error): throw error
        case .finished: throw .writeFailed(path, errno: EBADF)
        case .cancelled: throw .writeFailed(path, errno: ECANCELED)
        }
    }

    private func flush() throws(AudioWriteError) {
        do throws(Errno) { try file.write(UnsafeRawBufferPointer(start: buffer, count: buffered)) } catch {
            throw fail(.writeFailed(path, errno: error.code))
        }
        buffered = 0
    }

    /// Removes the temporary file and remembers `error` as the answer to every later call.
    private func fail(_ error: AudioWriteError) -> AudioWriteError {
        file.discard()
        state = .failed(error)
        return error
    }

    /// The header before the samples: RIFF, fmt (WAVE_FORMAT_EXTENSIBLE above 2 channels), fact for float, data.
    /// `dataBytes` nil: a length not known, all ones in every size.
    static func header(sampleRate: Int, channels: Int, encoding: Encoding, dataBytes: Int64?) -> [UInt8] {
        let bytesPerSample = encoding == .pcm16 ? 2 : 4
        let tag: UInt16 = encoding == .pcm16 ? 1 : 3
        let extensible = channels > 2
        let blockAlign = channels * bytesPerSample
        var fmt: [UInt8] = []
        fmt.appendLE(extensible ? 0xFFFE : tag)
        fmt.appendLE(UInt16(channels))
        fmt.appendLE(UInt32(sampleRate))
        fmt.appendLE(UInt32(sampleRate * blockAlign))
        fmt.appendLE(UInt16(blockAlign))
        fmt.appendLE(UInt16(bytesPerSample * 8))
        if extensible {
            fmt.appendLE(UInt16(22))
            fmt.appendLE(UInt16(bytesPerSample * 8))
            fmt.appendLE(channelMask(channels))
            fmt.appendLE(tag)
            fmt += [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
        } else if encoding == .float32 {
            fmt.appendLE(UInt16(0))  // cbSize: non-PCM formats carry it
        }

        var out: [UInt8] = []
        let factSize = encoding == .float32 ? 12 : 0
        let total = 12 + 8 + fmt.count + factSize + 8
        out += Array("RIFF".utf8)
        out.appendLE(dataBytes.map { UInt32(truncatingIfNeeded: Int64(total - 8) + $0) } ?? UInt32.max)
        out += Array("WAVEfmt ".utf8)
        out.appendLE(UInt32(fmt.count))
        out += fmt
        if encoding == .float32 {
            out += Array("fact".utf8)
            out.appendLE(UInt32(4))
            out.appendLE(dataBytes.map { UInt32(truncatingIfNeeded: $0 / Int64(blockAlign)) } ?? UInt32.max)
        }
        out += Array("data".utf8)
        out.appendLE(dataBytes.map { UInt32(truncatingIfNeeded: $0) } ?? UInt32.max)
        return out
    }

    /// The usual speaker layouts: mono, stereo, 3.0, quad, 5.0, 5.1, 6.1, 7.1.
    static func channelMask(_ channels: Int) -> UInt32 {
        switch channels {
        case 1: 0x4
        case 2: 0x3
        case 3: 0x7
        case 4: 0x33
        case 5: 0x37
        case 6: 0x3F
        case 7: 0x70F
        case 8: 0x63F
        default: 0
        }
    }
}

private extension Array where Element == UInt8 {
    mutating func appendLE(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func appendLE(_ value: UInt32) {
        appendLE(UInt16(truncatingIfNeeded: value))
        appendLE(UInt16(truncatingIfNeeded: value >> 16))
    }
}
