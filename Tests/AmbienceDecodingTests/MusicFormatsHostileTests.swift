import Foundation
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceTestSupport

/// Hostile modules and MIDI files: each is refused with a typed error that says why, or (a module libopenmpt
/// repairs) decodes to a bounded, finite stream; none crashes, hangs or allocates what its header claims.
@Suite(.onTheComputeThread, .timeLimit(.minutes(10))) struct MusicFormatsHostileTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    typealias M = MIDIBytes
    static let note = M.vlq(0) + [0x90, 60, 100] + M.vlq(100) + [0x80, 60, 0]

    /// Bytes, and the words the refusal must contain.
    static let hostileMIDI: [(String, [UInt8], String)] = [
        (
            "SMPTE division",
            M.header(format: 0, tracks: 1, division: 0xE728) + M.chunk("MTrk", note + M.vlq(0) + M.endOfTrack), "SMPTE"
        ),
        (
            "zero division",
            M.header(format: 0, tracks: 1, division: 0) + M.chunk("MTrk", note + M.vlq(0) + M.endOfTrack),
            "division is 0"
        ),
        (
            "zero tempo",
            M.header(format: 0, tracks: 1, division: 96)
                + M.chunk("MTrk", M.vlq(0) + M.tempo(0) + note + M.vlq(0) + M.endOfTrack), "tempo 0"
        ),
        ("unterminated track", M.header(format: 0, tracks: 1, division: 96) + M.chunk("MTrk", note), "no end-of-track"),
        (
            "65,535 tracks",
            M.header(format: 1, tracks: 65_535, division: 96) + M.chunk("MTrk", note + M.vlq(0) + M.endOfTrack),
            "65535 tracks"
        ),
        (
            "tracks missing",
            M.header(format: 1, tracks: 3, division: 96) + M.chunk("MTrk", note + M.vlq(0) + M.endOfTrack),
            "1 are present"
        ),
        (
            "a chunk of 2^31 bytes",
            M.header(format: 0, tracks: 1, division: 96) + Array("MTrk".utf8) + [0x80, 0, 0, 0] + note,
            "claims 2147483648 bytes"
        ),
        ("a header of 2^31 bytes", Array("MThd".utf8) + [0x80, 0, 0, 0, 0, 0, 0, 1, 0, 96], "header chunk claims"),
        (
            "an endless delta time",
            M.header(format: 0, tracks: 1, division: 96)
                + M.chunk("MTrk", [0xFF, 0xFF, 0xFF, 0xFF, 0x7F] + M.endOfTrack), "past 4 bytes"
        ),
        (
            "a meta event past its track",
            M.header(format: 0, tracks: 1, division: 96) + M.chunk("MTrk", M.vlq(0) + [0xFF, 0x01, 0x7F, 0x41]),
            "claimed"
        ),
        (
            "running status with no status",
            M.header(format: 0, tracks: 1, division: 96)
                + M.chunk("MTrk", M.vlq(0) + [0x40, 0x40] + M.vlq(0) + M.endOfTrack), "no status"
        ),
        (
            "format 2", M.header(format: 2, tracks: 1, division: 96) + M.chunk("MTrk", note + M.vlq(0) + M.endOfTrack),
            "format 2"
        ),
        (
            "days long",
            M.header(format: 0, tracks: 1, division: 1)
                + M.chunk("MTrk", M.vlq(0) + M.tempo(0xFF_FFFF) + M.vlq(0x0FFF_FFFF) + M.endOfTrack),
            "more than the 14400 s"
        ),
        ("truncated header", Array("MThd".utf8) + [0, 0, 0, 6, 0, 0], "header chunk claims")
    ]

    @Test(arguments: hostileMIDI.indices)
    func hostileMIDIIsRefusedWithAReason(index: Int) throws {
        let (name, bytes, words) = Self.hostileMIDI[index]
        do {
            _ = try StandardMIDIFile(bytes)
            Issue.record("\(name): accepted")
        } catch {
            #expect(error.description.contains(words), "\(name): \(error)")
        }
        // Through the decoder, the same reason as a typed error naming the file.
        let path = try fixtures.write("hostile.mid", bytes: bytes)
        var options = DecoderOptions()
        options.soundFont = MusicFormatFiles.timGM
        let error = decodingError { try AudioFile.open(path, options: options) }
        #expect(error?.isCorrupt(mentioning: words) == true, "\(name): \(String(describing: error))")
    }

    /// Modules cut short or with absurd counts: libopenmpt refuses some and repairs others (a cut sample is silence);
    /// either way the answer comes at once, and what decodes is finite and no longer than libopenmpt's song.
    @Test(arguments: MusicFormatFiles.modules)
    func damagedModulesAreRefusedOrBounded(module: String) throws {
        let original = try fixtures.bytes(of: module)
        var damaged: [(String, [UInt8])] = [
            ("cut at 1/2", Array(original.prefix(original.count / 2))),
            ("cut at 1/20", Array(original.prefix(original.count / 20))),
            ("cut to its header", Array(original.prefix(600)))
        ]
        // Pattern, order, instrument and sample counts at their largest.
        let counts: [Int] =
            switch (module as NSString).pathExtension {
            case "it": [0x20, 0x22, 0x24, 0x26]  // OrdNum, InsNum, SmpNum, PatNum
            case "xm": [64, 70, 72]  // song length, patterns, instruments
            case "s3m": [0x20, 0x22, 0x24]  // OrdNum, InsNum, PatNum
            default: [950]  // MOD: the song length byte (orders)
            }
        for offset in counts {
            var bytes = original
            bytes[offset] = 0xFF
            if offset != 950 { bytes[offset + 1] = 0xFF }
            damaged.append(("count at \(offset) maxed", bytes))
        }
        for (name, bytes) in damaged {
            let path = try fixtures.write("damaged." + (module as NSString).pathExtension, bytes: bytes)
            let started = monotonicSeconds()
            let outcome = Result { () throws(DecodingError) -> (frames: Int64, pcm: PCMBuffer) in
                let decoder = try AudioFile.open(path)
                return (decoder.info.frames, try PCMBuffer(decodingAllOf: decoder, limit: 256 << 20))
            }
            switch outcome {
            case .success(let decoded):
                #expect(decoded.frames <= Int64(ModuleDecoder.maximumSeconds * 48_000) + 48_000)
                let finite = decoded.pcm.samples.allSatisfy { $0.isFinite }
                #expect(finite, "\(module) \(name)")
                #expect(Int64(decoded.pcm.frames) == decoded.frames)
            case .failure(.corrupt), .failure(.unsupportedFormat), .failure(.tooLarge):
                break
            case .failure(let error):
                Issue.record("\(module) \(name): \(error)")
            }
            // A hang's bound, not a speed: the work is bounded in frames above. Under AddressSanitizer on a loaded
            // machine the longest damaged module decoded to its bound in 23 s.
            #expect(monotonicSeconds() - started < 60, "\(module) \(name) took \(monotonicSeconds() - started) s")
        }
    }

    @Test func randomBytesAreNoModule() throws {
        var random = SystemRandomNumberGenerator()
        let path = try fixtures.write(
            "noise.bin", bytes: (0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) })
        #expect(decodingError { try AudioFile.open(path) } == .unsupportedFormat(path))
    }
}
