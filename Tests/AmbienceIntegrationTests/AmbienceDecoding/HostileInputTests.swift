import AmbiencePlatform
import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

/// Header fields are claims, not facts: files that lie about their rate, channels, length or size, pictures that
/// claim billions of pixels, and parsers fed inputs far longer than any real one. Each gets a typed error (or a
/// warning), the command one `ambience:` line and exit 1, and the engine plays on.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct HostileInputTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures() }

    /// A 16-bit mono PCM WAV with the given header fields over `frames` frames of silence actually present.
    func wav(_ name: String, rate: UInt32 = 48_000, channels: UInt16 = 1, dataClaim: UInt32? = nil, frames: Int = 480)
        throws -> String
    {
        var bytes: [UInt8] = []
        func le32(_ v: UInt32) { bytes += withUnsafeBytes(of: v.littleEndian, Array.init) }
        func le16(_ v: UInt16) { bytes += withUnsafeBytes(of: v.littleEndian, Array.init) }
        let data = frames * 2 * Int(max(channels, 1))
        bytes += Array("RIFF".utf8); le32(UInt32(36 + data)); bytes += Array("WAVE".utf8)
        bytes += Array("fmt ".utf8); le32(16); le16(1); le16(channels); le32(rate)
        le32(rate &* UInt32(channels) &* 2); le16(channels &* 2); le16(16)
        bytes += Array("data".utf8); le32(dataClaim ?? UInt32(data)); bytes += [UInt8](repeating: 0, count: data)
        let path = fixtures.path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(arguments: [UInt32(0), 768_001, UInt32.max])
    func absurdSampleRatesAreRefused(rate: UInt32) throws {
        let path = try wav("rate.wav", rate: rate)
        let error = #expect(throws: DecodingError.self) { try AudioFile.open(path) }
        #expect(error?.description.contains("sample rate") == true, "\(String(describing: error))")
        let result = try ToolRunner.run(["info", path])
        #expect(!result.killedBySignal && result.status == 1)
        #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("ambience: \(path): "), "\(result.stderr)")
    }

    @Test func moreChannelsThanTheLimitAreATypedRefusal() throws {
        let path = try wav("wide.wav", channels: 200, frames: 4)
        let error = #expect(throws: DecodingError.self) { try AudioFile.open(path) }
        #expect(error == .tooManyChannels(path, channels: 200))
        #expect(error?.description.contains("200 channels") == true)
    }

    /// A data chunk that claims 4 GB in a file of a kilobyte: the length is cut to the bytes present, with a
    /// warning, and nothing allocates for the claim.
    @Test func aLengthClaimIsCheckedAgainstTheBytesPresent() throws {
        let path = try wav("claims.wav", dataClaim: 0xFFFF_FFF0, frames: 480)
        let info = try AudioFile.info(path)
        #expect(info.frames == 480)
        #expect(info.warnings.contains { $0.contains("only") }, "\(info.warnings)")
        #expect(try AudioFile.decode(path).frames == 480)
    }

    /// Over the sound budget (or OpenAL's 2 GiB buffer), a sound is refused before it is decoded, naming the file
    /// and the size; the engine's other sounds play on.
    @Test func aSoundOverTheBudgetIsRefusedBeforeDecoding() throws {
        let big = try fixtures.sineWAV("big.wav", seconds: 2)  // 96,000 frames: 384,000 bytes decoded
        let engine = try AudioEngine(EngineConfiguration(output: .offline, soundMemoryBudget: 100_000))
        let error = #expect(throws: EngineError.self) { try engine.load(big) }
        guard case .decoding(.tooLarge(let path, let bytes, let limit)) = error else {
            Issue.record("expected tooLarge, got \(String(describing: error))"); return
        }
        #expect(path == big && bytes == 384_000 && limit == 100_000)
        #expect(error?.description.contains("big.wav") == true)
        let small = try fixtures.sineWAV("small.wav", seconds: 0.2)
        let voice = engine.play(try engine.load(small))
        #expect(voice != .none)
        #expect(Signal(try engine.render(frames: 4_800)).rms(1_000..<4_800) > 0.05)
        #expect(throws: DecodingError.self) { try AudioFile.decode(big, limit: 1_000) }
        #expect(try AudioFile.decode(big).frames == 96_000)
    }

    /// A seek anywhere, however absurd, lands within the item.
    @Test(arguments: [1e300, 9.3e18, -5])
    func seeksAreBoundedByTheItem(seconds: Double) throws {
        let info = try AudioFile.info(try fixtures.sineWAV("one.wav", seconds: 1))
        let frame = try info.frame(atTime: seconds)
        #expect((0...info.frames).contains(frame))
        #expect(throws: InvalidNumber.self) { try info.frame(atTime: .nan) }
    }

    /// A PNG whose header claims 100,000 × 100,000 pixels is refused by its header, never decoded.
    @Test func aCoverOverThePixelLimitIsSkippedByItsHeader() throws {
        var png = Array(try Data(contentsOf: URL(fileURLWithPath: BuildProducts.root + "/Assets/Music/cover.png")))
        let side = withUnsafeBytes(of: UInt32(100_000).bigEndian, Array.init)
        png.replaceSubrange(16..<20, with: side)
        png.replaceSubrange(20..<24, with: side)
        let error = #expect(throws: ArtworkError.self) {
            try MediaItemArtwork(data: png, source: .embedded(mimeType: "image/png"), name: "huge.png")
        }
        #expect(error?.description.contains("100000×100000") == true, "\(String(describing: error))")
    }

    /// Parsers are linear in their input: 4 MiB of the shapes that make a careless parser quadratic (one line,
    /// unclosed brackets, spaces to trim, digits) each go through in one pass. Quadratic work on this much (some
    /// 10^13 steps) would run for hours and fail by the time limit (and CI's step budget), not by a timing.
    @Test(.timeLimit(.minutes(5)))
    func parsersTakeInputsFarLongerThanAnyRealOneInOnePass() {
        let size = 1 << 22
        let line =
            [UInt8](repeating: UInt8(ascii: " "), count: size / 2)
            + [UInt8](repeating: UInt8(ascii: "a"), count: size / 2)
        var parsed = PlaylistFile.Parsed(name: "p")
        PlaylistFile.parse(
            line + Array(".ogg\n".utf8), folder: Array("/music".utf8), isUTF8Playlist: true,
            roots: [Array("/music".utf8)], into: &parsed)
        #expect(parsed.entries.count == 1)
        let spaces = String(repeating: " ", count: size / 2)
        #expect(leadingNumber(spaces + String(repeating: "7", count: size / 2)) == nil)  // too many digits for an Int
        #expect(leadingNumber(spaces + "12/" + spaces) == 12)
        #expect(
            MP3Decoder.genreName(id3v2: String(repeating: "(1", count: size / 2))
                == String(repeating: "(1", count: size / 2))
        #expect(MP3Decoder.genreName(id3v2: String(repeating: "(17)", count: size / 4)) == "Rock")
        var warnings: [String] = []
        let cleaned = LibraryFileReader.clean(
            spaces + String(repeating: "\u{1}x", count: size / 4) + spaces, "title", &warnings)
        #expect(cleaned.map { $0.utf8.count <= MediaLibrary.maximumTagLength } == true)
    }

    /// WAVs that libsndfile refuses when opening them: no channels, a rate of 0, a `fmt ` chunk cut short, no WAV.
    func refusedWAVs() throws -> [String] {
        let short = try wav("short.wav")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: short))
        try bytes.prefix(20).write(to: URL(fileURLWithPath: short))
        let noWAV = fixtures.path("riff.wav")
        try Data(Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVEjunk, and no format chunk at all".utf8))
            .write(to: URL(fileURLWithPath: noWAV))
        return [try wav("mute.wav", channels: 0), try wav("still.wav", rate: 0), short, noWAV]
    }

    /// libsndfile closes the descriptor of a WAV it refuses, even when told to leave it open. The decoder lends it
    /// a copy: the owner's descriptor is still open, on the same file, after the refusal, and its own close later is
    /// the only one. (Closed there and again by its owner, the number could by then be another thread's file.)
    @Test func aRefusedWAVClosesNoDescriptorButItsOwn() throws {
        for path in try refusedWAVs() {
            let (file, size) = try FileDescriptor.openRegularFile(path)
            let before = try file.status()
            #expect(throws: DecodingError.self) { try WAVDecoder(file: file, size: size, path: path) }
            let after = try #require(try? file.status(), "\(path): the owner's descriptor was closed")
            #expect(after.st_dev == before.st_dev && after.st_ino == before.st_ino, "\(path)")
        }
    }
}
