import Foundation
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

/// Every input the fuzzers ever found (and the known crash classes of the reliability work), replayed through the
/// very code the fuzz targets run: each must pass, in the suite and not only in Tests/Fuzz/run.sh.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5)))
struct FuzzRegressionTests {
    static let folder = URL(fileURLWithPath: BuildProducts.root + "/Tests/Fuzz/regressions")

    @Test(arguments: FuzzTarget.allCases)
    func everyKeptInputPassesAgain(target: FuzzTarget) throws {
        let directory = Self.folder.appendingPathComponent(target.rawValue)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(!names.isEmpty, "Tests/Fuzz/regressions/\(target.rawValue) holds no input")
        for name in names {
            let bytes = try [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))
            let problems = target.run(bytes)
            #expect(problems.isEmpty, "\(target.rawValue)/\(name): \(problems.joined(separator: "; "))")
        }
    }
}

extension FuzzRegressionTests {
    /// The kept C API call sequences still reach what they were kept for: sounds made from memory, voices played
    /// (and, in the same runs, NaN and garbage handles thrown at them).
    @Test func theKeptCallSequencesStillMakeSoundsAndPlayThem() throws {
        let directory = Self.folder.appendingPathComponent("capi")
        var made = 0, started = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            var program = CAPIProgram(try [UInt8](Data(contentsOf: directory.appendingPathComponent(name))))
            #expect(program.run().isEmpty, "\(name)")
            made += program.soundsMade
            started += program.voicesStarted
        }
        #expect(made > 0 && started > 0, "\(made) sounds made, \(started) voices started")
    }

    /// The picture fuzzer's first find: a GIF whose frame crashed SDL2_image 2.6's GIF reader. Covers are decoded
    /// only as PNG or JPEG; this one is refused by name and format, and a PNG still decodes.
    @Test func aGIFCoverIsRefusedNotDecoded() throws {
        let gif = try [UInt8](
            Data(contentsOf: Self.folder.appendingPathComponent("picture/gif-frame-crashed-sdl-image.gif")))
        #expect(throws: ArtworkError.undecodable("crash.gif", reason: "GIF covers are not decoded, only PNG and JPEG"))
        {
            try MediaItemArtwork(data: gif, source: .embedded(mimeType: "image/gif"), name: "crash.gif")
        }
        let png = try [UInt8](Data(contentsOf: URL(fileURLWithPath: BuildProducts.root + "/Assets/Music/cover.png")))
        #expect(
            try MediaItemArtwork(data: png, source: .embedded(mimeType: "image/png"), name: "cover.png").bounds.width
                > 0)
    }
}
