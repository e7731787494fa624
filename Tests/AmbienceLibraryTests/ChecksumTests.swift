import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

@Suite(.offTheCooperativePool) struct ChecksumTests {
    @Test func zlibCRC32MatchesTheStandardCheckValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
        // A slice is summed from its own start, not the array's.
        #expect(CRC32.checksum(Array("xx123456789".utf8)[2...]) == 0xCBF4_3926)
    }

    @Test func aPNGChunkIsCheckedAgainstItsCRC() {
        let ihdr: [UInt8] =
            [0, 0, 0, 13] + Array("IHDR".utf8) + [0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0] + [0x1F, 0x15, 0xC4, 0x89]
        let iend: [UInt8] = [0, 0, 0, 0] + Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82]
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + ihdr + iend
        #expect(MediaItemArtwork.pngProblem(png) == nil)
        var damaged = png
        damaged[20] ^= 0x01  // the height
        #expect(MediaItemArtwork.pngProblem(damaged) == "PNG chunk IHDR at byte 8 fails its CRC check")
    }

    @Test func anOggPageGetsOggsChecksumInItsHeader() {
        // Version 0, BOS|EOS, granule 0, serial 0x12345678, sequence 0, CRC to fill, one 9-byte segment.
        var page =
            Array("OggS".utf8) + [0, 0x06] + [UInt8](repeating: 0, count: 8) + [0x78, 0x56, 0x34, 0x12]
            + [0, 0, 0, 0] + [0xAA, 0xAA, 0xAA, 0xAA] + [1, 9] + Array("123456789".utf8)
        #expect(OggPageChecksum.stamp(&page, page: 0..<page.count))
        // Ogg's CRC-32 (polynomial 0x04C11DB7, not reflected, zero start) over the page with its CRC field zero.
        #expect(page.u32LE(22) == 0xD9F2_A792)
        // A range that is not one whole page is left alone.
        var short = Array(page.dropLast())
        #expect(!OggPageChecksum.stamp(&short, page: 0..<short.count))
        #expect(short.u32LE(22) == 0xD9F2_A792)
    }
}
