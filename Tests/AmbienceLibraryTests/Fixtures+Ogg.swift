import Foundation

@testable import AmbienceDecoding
@testable import AmbienceTestSupport

extension Fixtures {
    /// Overwrites bytes inside one Ogg page (same length, so the lacing holds) and recomputes that page's CRC: how a
    /// test writes what no tool will, such as invalid UTF-8 in a Vorbis comment.
    func patchOgg(_ file: String, replacing old: [UInt8], with new: [UInt8]) throws {
        precondition(old.count == new.count && !old.isEmpty)
        var bytes = try self.bytes(of: file)
        guard
            let at = (0...(bytes.count - old.count)).first(where: { bytes[$0..<($0 + old.count)].elementsEqual(old) }),
            let page = stride(from: at, through: 0, by: -1).first(where: {
                bytes[$0..<min($0 + 4, bytes.count)].elementsEqual("OggS".utf8)
            })
        else { throw FixtureError.toolFailed("patchOgg: bytes not found in \(file)") }
        let segments = Int(bytes[page + 26])
        let length = 27 + segments + bytes[(page + 27)..<(page + 27 + segments)].reduce(0) { $0 + Int($1) }
        guard at + old.count <= page + length else { throw FixtureError.toolFailed("patchOgg: bytes span two pages") }
        bytes.replaceSubrange(at..<(at + old.count), with: new)
        OggPageChecksum.stamp(&bytes, page: page..<(page + length))
        try Data(bytes).write(to: URL(fileURLWithPath: file))
    }
}
