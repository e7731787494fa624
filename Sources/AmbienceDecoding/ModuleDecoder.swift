import AmbienceCore
import AmbiencePlatform
import COpenMPT
import Glibc

package typealias LibOpenMPT = ambience_openmpt_functions

/// An open tracker module (MOD, XM, S3M, IT and every other format libopenmpt reads), rendered by libopenmpt. Owns
/// the `openmpt_module`; nothing else in the project touches libopenmpt, which it opens at run time.
///
/// Output is stereo at `DecoderOptions.sampleRate`, with the options' interpolation filter and stereo separation
/// (libopenmpt's own defaults: 8-tap windowed sinc, 100 %), so it matches `openmpt123 --render` with the same
/// settings. The length is exact: libopenmpt states the song's duration in seconds and renders a little past it
/// (the last row's ticks), so the decoder seeks to the song's last seconds once when it opens and counts what is
/// rendered from there; a whole render gives the same count (checked against `openmpt123` by the tests).
package final class ModuleDecoder: AudioDecoder {
    package let info: AudioInfo
    private let path: String
    private let module: OpaquePointer
    private let openmpt: LibOpenMPT
    private let rate: Int32
    private let loopsForever: Bool
    /// Frames in one pass of the song (also when it loops forever).
    private let songFrames: Int64
    package private(set) var position: Int64 = 0
    private var scratch = [Float](repeating: 0, count: ModuleDecoder.chunkFrames * 2)
    /// Where libopenmpt's log goes: the module keeps the pointer for its life, so this lives as long as it does.
    private let messages: LoadMessages

    /// libopenmpt, opened the first time a module is. Without it, modules are `DecodingError.unavailable`.
    package static let library = OptionalLibrary<LibOpenMPT>(
        name: "libopenmpt.so.0", feature: "tracker modules (MOD, XM, S3M, IT)",
        names: String(cString: ambience_openmpt_function_names()))

    /// The largest module file read: 64 MiB (a large IT with its samples is a few MB).
    static let maximumFileSize: Int64 = 64 << 20
    /// The longest song a module may play once through: 4 hours. libopenmpt stops at the first repeated row, so a
    /// longer one is damage (absurd order or pattern counts), refused rather than decoded for hours.
    static let maximumSeconds = 4.0 * 3600
    /// Frames rendered per call into libopenmpt.
    static let chunkFrames = 1024
    /// How far before the end the length is counted from (`exactLength`).
    private static let tailSeconds = 3.0

    init(path: String, options: DecoderOptions = DecoderOptions()) throws(DecodingError) {
        let openmpt = try Self.functions(for: path)
        let bytes = try Self.readFile(path)
        let messages = LoadMessages()
        var error: Int32 = 0
        var errorMessage: UnsafePointer<CChar>?
        // Seeks sync the samples that play across the new position (their playback positions are worked out), so
        // the audio after a seek converges to that of a render from the start (`seek(toFrame:)`).
        let controls = [
            openmpt_module_initial_ctl(ctl: Self.cText("seek.sync_samples"), value: Self.cText("1")),
            openmpt_module_initial_ctl(ctl: nil, value: nil)
        ]
        let opened = bytes.withUnsafeBytes { raw in
            openmpt.openmpt_module_create_from_memory2(
                raw.baseAddress, raw.count, LoadMessages.log, Unmanaged.passUnretained(messages).toOpaque(),
                LoadMessages.storeOnly, nil, &error, &errorMessage, controls)
        }
        let reason = errorMessage.map { String(cString: $0) }
        if let errorMessage { openmpt.openmpt_free_string(errorMessage) }
        guard let module = opened else {
            throw .corrupt(path, reason: "libopenmpt cannot load it: \(reason ?? "error \(error)")")
        }
        let rate: Int32
        let length: (song: Int64, stated: Int64)
        var tags = AudioTags()
        do throws(DecodingError) {
            do {
                rate = try options.sampleRate.checked(Int32.self, in: 8_000...192_000, "module sample rate")
            } catch {
                throw .corrupt(path, reason: error.description)
            }
            guard
                openmpt.openmpt_module_set_render_param(
                    module, OPENMPT_MODULE_RENDER_INTERPOLATIONFILTER_LENGTH,
                    Int32(clamping: options.moduleInterpolation.rawValue)) != 0,
                openmpt.openmpt_module_set_render_param(
                    module, OPENMPT_MODULE_RENDER_STEREOSEPARATION_PERCENT,
                    Int32(clamping: min(max(options.moduleStereoSeparation, 0), 200))) != 0,
                openmpt.openmpt_module_set_repeat_count(module, 0) != 0
            else { throw .corrupt(path, reason: "libopenmpt refuses its render settings") }
            let song = try Self.exactLength(module, openmpt, rate: rate, path: path)
            length = (song, options.loopsForever ? AudioInfo.maximumFrames : song)
            if options.loopsForever {
                guard openmpt.openmpt_module_set_repeat_count(module, -1) != 0 else {
                    throw .corrupt(path, reason: "libopenmpt refuses to loop it")
                }
            }
            tags.title = Self.metadata(module, openmpt, "title")
            tags.artist = Self.metadata(module, openmpt, "artist")
            tags.comment = Self.metadata(module, openmpt, "message")
        } catch {
            openmpt.openmpt_module_destroy(module)
            throw error
        }
        var warnings = messages.lines
        if let stated = Self.metadata(module, openmpt, "warnings") {
            warnings += stated.split(separator: "\n").prefix(LoadMessages.maximumLines).map(String.init)
        }
        self.path = path
        self.module = module
        self.messages = messages
        self.openmpt = openmpt
        self.rate = rate
        self.loopsForever = options.loopsForever
        self.songFrames = length.song
        self.info = AudioInfo(
            format: .module, sampleRate: Int(rate), channels: 2, frames: length.stated, tags: tags,
            warnings: Array(warnings.prefix(LoadMessages.maximumLines)))
    }

    deinit { openmpt.openmpt_module_destroy(module) }

    package func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(DecodingError) -> Int {
        let wanted = Int(min(Int64(max(frames, 0)), max(info.frames - position, 0)))
        var written = 0
        while written < wanted {
            let got = openmpt.openmpt_module_read_interleaved_float_stereo(
                module, rate, min(wanted - written, Self.chunkFrames), buffer + written * 2)
            if got == 0 { break }
            written += min(got, wanted - written)
        }
        // libopenmpt ended before the length counted when it opened (it never has on the tests' modules): the
        // stated length holds, as silence.
        if written < wanted, !loopsForever {
            (buffer + written * 2).update(repeating: 0, count: (wanted - written) * 2)
            written = wanted
        }
        position += Int64(written)
        // Past a loop the playhead counts from the song's start again, so it (and a resume from it) stays inside
        // the song. libopenmpt's own position keeps counting up through a loop, and 0.6 gives no time for an
        // order and row; a loop that jumps back to a later order than the first is placed as if it went to the
        // start (the music itself loops where libopenmpt says).
        if loopsForever && songFrames > 0 { position %= songFrames }
        return written
    }

    /// libopenmpt's repeat count, set to 0 mid-song, ends the song the next time it reaches its end (where its order
    /// list would jump back).
    package func endLoopAfterThisPass() {
        guard loopsForever else { return }
        _ = openmpt.openmpt_module_set_repeat_count(module, 0)
    }

    /// libopenmpt seeks to the start of a row, the one at or after the time asked for. So the seek asks for a time
    /// at least a quarter of a second earlier (earlier still until it lands at or before `frame`), and the frames
    /// from there to `frame` are rendered and dropped: the position is exact, and the samples converge to those of
    /// a render from the start within the first second (measured in `MusicFormatsTests.moduleSeekIsExact`).
    package func seek(toFrame frame: Int64) throws(DecodingError) {
        let target = min(max(frame, 0), songFrames)
        let seconds = Double(target) / Double(rate)
        var back = min(0.25, seconds)
        var at = Int64.max
        while at > target {
            let landed = openmpt.openmpt_module_set_position_seconds(module, max(seconds - back, 0))
            at = max((landed * Double(rate)).saturated(Int64.self), 0)
            if back >= seconds { at = min(at, target) }  // from the start: nothing earlier to ask for
            back = min(back * 2, seconds)
        }
        while at < target {
            let want = Int(min(target - at, Int64(Self.chunkFrames)))
            let got = scratch.withUnsafeMutableBufferPointer {
                openmpt.openmpt_module_read_interleaved_float_stereo(module, rate, want, $0.baseAddress!)
            }
            if got == 0 { break }
            at += Int64(got)
        }
        position = target
    }

    // MARK: - Opening

    /// The library's functions, or `unavailable` naming the library and the Debian package.
    private static func functions(for path: String) throws(DecodingError) -> LibOpenMPT {
        do throws(SharedLibraryError) { return try library.functions() } catch {
            throw .unavailable(path, reason: "\(error.description); install Debian's libopenmpt0 to play modules")
        }
    }

    /// Whether libopenmpt recognises `header` (a file's first bytes; `fileSize` the whole file's) as a module it
    /// opens. Nil when libopenmpt is missing.
    static func probe(_ header: [UInt8], fileSize: Int64) -> Bool? {
        guard let openmpt = try? library.functions() else { return nil }
        var error: Int32 = 0
        let result = header.withUnsafeBytes { raw in
            openmpt.openmpt_probe_file_header(
                UInt64(OPENMPT_PROBE_FILE_HEADER_FLAGS_DEFAULT), raw.baseAddress, raw.count,
                UInt64(clamping: fileSize), LoadMessages.log, nil, LoadMessages.storeOnly, nil, &error, nil)
        }
        return result == OPENMPT_PROBE_FILE_HEADER_RESULT_SUCCESS
    }

    /// The file extensions libopenmpt opens ("mod", "xm", "s3m", "it", "mptm" and some forty more), lower case;
    /// none when the library is missing. The library's scan and watcher index files by them.
    package static let fileExtensions: Set<String> = {
        guard let openmpt = try? library.functions(), let list = openmpt.openmpt_get_supported_extensions() else {
            return []
        }
        defer { openmpt.openmpt_free_string(list) }
        return Set(String(cString: list).lowercased().split(separator: ";").map(String.init))
    }()

    /// The header bytes `probe` wants (libopenmpt's recommendation, 2048 in 0.6).
    static var probeSize: Int {
        guard let openmpt = try? library.functions() else { return 2048 }
        return min(max(openmpt.openmpt_probe_file_header_get_recommended_size(), 1084), 1 << 16)
    }

    /// Whether `header` carries the signature of one of the four common formats: how a module is named as such when
    /// libopenmpt is missing (MOD's is at byte 1080).
    static func hasCommonSignature(_ header: [UInt8]) -> Bool {
        func at(_ offset: Int, _ text: String) -> Bool {
            let magic = Array(text.utf8)
            return header.count >= offset + magic.count && Array(header[offset..<(offset + magic.count)]) == magic
        }
        return at(0, "Extended Module: ") || at(0, "IMPM") || at(44, "SCRM")
            || ["M.K.", "M!K!", "FLT4", "FLT8", "4CHN", "6CHN", "8CHN"].contains { at(1080, $0) }
    }

    private static func readFile(_ path: String) throws(DecodingError) -> [UInt8] {
        let (file, size) = try AudioFile.openRegularFile(path)
        guard size > 0 else { throw .empty(path) }
        guard size <= maximumFileSize else {
            throw .corrupt(path, reason: "\(size) bytes is more than the \(maximumFileSize) a module may take")
        }
        do throws(Errno) { return try file.readBytes(Int(size)) } catch {
            throw .unreadable(path, errno: error.code)
        }
    }

    /// The song's length in frames, exactly: libopenmpt's duration is where the last row starts plus its ticks,
    /// while it renders whole ticks past it. From a seek to a few seconds before the end (which lands on a row, at a
    /// time that is a whole number of frames), the frames rendered to the end are counted.
    private static func exactLength(
        _ module: OpaquePointer, _ openmpt: LibOpenMPT, rate: Int32, path: String
    ) throws(DecodingError) -> Int64 {
        let duration = openmpt.openmpt_module_get_duration_seconds(module)
        guard duration.isFinite, duration >= 0 else { throw .corrupt(path, reason: "libopenmpt finds no song in it") }
        guard duration <= maximumSeconds else {
            throw .corrupt(
                path,
                reason:
                    "its song lasts \(duration.saturated(Int.self)) s, more than the \(Int(maximumSeconds)) s allowed")
        }
        let landed = openmpt.openmpt_module_set_position_seconds(module, max(duration - tailSeconds, 0))
        let from = min(max((landed * Double(rate)).saturated(Int64.self), 0), AudioInfo.maximumFrames)
        // Never more than the stated rest plus a minute: libopenmpt always ends with its repeat count at 0.
        let bound = Int64(((duration - landed + 60) * Double(rate)).saturated(Int64.self))
        var tail: Int64 = 0
        var scratch = [Float](repeating: 0, count: chunkFrames * 2)
        while tail < bound {
            let got = scratch.withUnsafeMutableBufferPointer {
                openmpt.openmpt_module_read_interleaved_float_stereo(module, rate, chunkFrames, $0.baseAddress!)
            }
            if got == 0 { break }
            tail += Int64(got)
        }
        _ = openmpt.openmpt_module_set_position_seconds(module, 0)
        return try AudioInfo.checkedLength(from + tail, path: path)
    }

    /// A C string that lives as long as the process: a literal's own bytes.
    private static func cText(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// A metadata value, nil when empty; libopenmpt's string freed.
    private static func metadata(_ module: OpaquePointer, _ openmpt: LibOpenMPT, _ key: String) -> String? {
        guard let value = openmpt.openmpt_module_get_metadata(module, key) else { return nil }
        defer { openmpt.openmpt_free_string(value) }
        let text = String(cString: value).trimmingCharacters(in: " \n\r\t\0")
        return text.isEmpty ? nil : text
    }
}

/// What libopenmpt says while it loads, kept (bounded) instead of printed: it becomes `AudioInfo.warnings`.
private final class LoadMessages {
    static let maximumLines = 16
    var lines: [String] = []

    /// libopenmpt's log callback; `user` is a `LoadMessages`, or nil to drop the message.
    static let log: openmpt_log_func = { message, user in
        guard let message, let user else { return }
        let box = Unmanaged<LoadMessages>.fromOpaque(user).takeUnretainedValue()
        if box.lines.count < maximumLines { box.lines.append(String(cString: message)) }
    }
    /// libopenmpt's error callback: store the error for the call's result, never print it.
    static let storeOnly: openmpt_error_func = { _, _ in OPENMPT_ERROR_FUNC_RESULT_STORE }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let drop = Set(set)
        return String(self.drop(while: { drop.contains($0) }).reversed().drop(while: { drop.contains($0) }).reversed())
    }
}
