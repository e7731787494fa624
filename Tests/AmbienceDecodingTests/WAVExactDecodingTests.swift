import Foundation
import Glibc
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceTestSupport

struct ExactCase: Sendable, CustomTestStringConvertible {
    var name: String
    var tag: UInt16
    var bits: UInt16
    var extensible: Bool
    var data: [UInt8]
    var expected: [Float]
    var testDescription: String { name }

    static func floats(_ values: [Float]) -> [UInt8] { values.flatMap { WAVBytes.le32($0.bitPattern) } }
    static func doubles(_ values: [Double]) -> [UInt8] { values.flatMap { WAVBytes.le64($0.bitPattern) } }

    static let all: [ExactCase] = [
        ExactCase(
            name: "u8", tag: 1, bits: 8, extensible: false, data: [0x00, 0x80, 0xFF, 0x40],
            expected: [-1, 0, 127.0 / 128, -0.5]),
        ExactCase(
            name: "s16", tag: 1, bits: 16, extensible: false, data: [0x00, 0x80, 0x00, 0x00, 0xFF, 0x7F, 0x00, 0x40],
            expected: [-1, 0, 32767.0 / 32768, 0.5]),
        ExactCase(
            name: "s24", tag: 1, bits: 24, extensible: false,
            data: [0x00, 0x00, 0x80, 0xFF, 0xFF, 0xFF, 0x01, 0x00, 0x00, 0x00, 0x00, 0x40],
            expected: [-1, -1.0 / 8_388_608, 1.0 / 8_388_608, 0.5]),
        ExactCase(
            name: "s32", tag: 1, bits: 32, extensible: false,
            data: [0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0xC0],
            expected: [-1, 0, 0.5, -0.5]),
        ExactCase(
            name: "f32 (clamped, NaN to 0)", tag: 3, bits: 32, extensible: false, data: floats([0.25, -0.75, 2, .nan]),
            expected: [0.25, -0.75, 1, 0]),
        ExactCase(
            name: "f64", tag: 3, bits: 64, extensible: false, data: doubles([0.125, -3, .infinity, -0.5]),
            expected: [0.125, -1, 1, -0.5]),
        ExactCase(
            name: "extensible s24", tag: 1, bits: 24, extensible: true,
            data: [0x00, 0x00, 0x80, 0xFF, 0xFF, 0xFF, 0x01, 0x00, 0x00, 0x00, 0x00, 0x40],
            expected: [-1, -1.0 / 8_388_608, 1.0 / 8_388_608, 0.5]),
        ExactCase(
            name: "extensible f32", tag: 3, bits: 32, extensible: true, data: floats([0.25, -0.75, 0.5, -1]),
            expected: [0.25, -0.75, 0.5, -1])
    ]
}

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct WAVExactDecodingTests {
    @Test(arguments: ExactCase.all)
    func convertsEveryEncodingExactly(_ c: ExactCase) throws {
        let fixtures = try Fixtures()
        var wav = WAVBytes(formatTag: c.tag, channels: 2, bitsPerSample: c.bits, data: c.data)
        if c.extensible { wav.subformat = c.tag }
        let (info, signal) = try decodeAll(fixtures.write("exact.wav", bytes: wav.bytes))
        #expect(info.channels == 2)
        #expect(info.frames == 2)
        #expect(signal.samples == c.expected)
    }

    @Test func extensibleWithFewerValidBitsUsesTheContainer() throws {
        let fixtures = try Fixtures()
        // 20 valid bits, left-justified in 24-bit containers.
        let wav = WAVBytes(bitsPerSample: 24, subformat: 1, validBits: 20, data: [0x00, 0x00, 0x40, 0x00, 0x00, 0xC0])
        let (info, signal) = try decodeAll(fixtures.write("x.wav", bytes: wav.bytes))
        #expect(info.frames == 2)
        #expect(signal.samples == [0.5, -0.5])
    }

    @Test func skipsUnknownChunksAndTheirPadBytes() throws {
        let fixtures = try Fixtures()
        var wav = WAVBytes(data: [0x00, 0x40, 0x00, 0xC0])
        wav.beforeFmt = WAVBytes.chunk("junk", [1, 2, 3])  // odd: followed by a pad byte
        wav.beforeData = WAVBytes.chunk("fact", [9, 9, 9, 9]) + WAVBytes.chunk("odd!", [7])
        wav.afterData = WAVBytes.chunk("id3 ", [0x49, 0x44, 0x33])
        let (info, signal) = try decodeAll(fixtures.write("chunks.wav", bytes: wav.bytes))
        #expect(info.frames == 2)
        #expect(signal.samples == [0.5, -0.5])
    }

    @Test func readsListInfoTags() throws {
        let fixtures = try Fixtures()
        let info: [UInt8] =
            Array("INFO".utf8)
            + WAVBytes.chunk("INAM", Array("Rain Loop\0".utf8))
            + WAVBytes.chunk("IART", Array("Café Sound\0".utf8))  // odd length: padded
            + WAVBytes.chunk("IPRD", Array("Weather".utf8))
            + WAVBytes.chunk("ICMT", Array("ignored\0".utf8))
            + WAVBytes.chunk("IGNR", [0x41, 0x6D, 0x62, 0x69, 0xE9, 0x6E, 0x74, 0])  // "Ambiént" in Latin-1
            + WAVBytes.chunk("ITRK", Array("7/12\0".utf8))
        var wav = WAVBytes(data: [0, 0])
        wav.afterData = WAVBytes.chunk("LIST", info)
        let tags = try WAVDecoder(path: fixtures.write("tags.wav", bytes: wav.bytes)).info.tags
        #expect(tags.title == "Rain Loop")
        #expect(tags.artist == "Café Sound")
        #expect(tags.album == "Weather")
        #expect(tags.genre == "Ambiént")
        #expect(tags.trackNumber == 7)
        #expect(tags.hasArtwork == false)
    }

    @Test func readsRF64WithItsDS64Size() throws {
        let fixtures = try Fixtures()
        let samples: [UInt8] = [0x00, 0x40, 0x00, 0xC0, 0x00, 0x20]
        let ds64 = WAVBytes.le64(0) + WAVBytes.le64(UInt64(samples.count)) + WAVBytes.le64(3) + WAVBytes.le32(0)
        var wav = WAVBytes(magic: "RF64", dataClaim: 0xFFFF_FFFF, data: samples)
        wav.beforeFmt = WAVBytes.chunk("ds64", ds64)
        let (info, signal) = try decodeAll(fixtures.write("rf64.wav", bytes: wav.bytes))
        #expect(info.frames == 3)
        #expect(info.warnings.isEmpty)
        #expect(signal.samples == [0.5, -0.5, 0.25])
    }
}
