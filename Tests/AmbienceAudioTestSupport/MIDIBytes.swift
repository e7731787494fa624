import Foundation

/// Standard MIDI Files made byte by byte.
enum MIDIBytes {
    static func vlq(_ value: Int) -> [UInt8] {
        var bytes = [UInt8(value & 0x7F)]
        var rest = value >> 7
        while rest > 0 {
            bytes.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
            rest >>= 7
        }
        return bytes
    }

    static func chunk(_ tag: String, _ body: [UInt8]) -> [UInt8] {
        let n = UInt32(body.count)
        return Array(tag.utf8) + [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + body
    }

    static func header(format: Int, tracks: Int, division: Int) -> [UInt8] {
        chunk(
            "MThd",
            [0, UInt8(format), UInt8(tracks >> 8), UInt8(tracks & 0xFF), UInt8(division >> 8), UInt8(division & 0xFF)])
    }

    static let endOfTrack: [UInt8] = [0xFF, 0x2F, 0x00]

    static func tempo(_ microseconds: Int) -> [UInt8] {
        [0xFF, 0x51, 0x03, UInt8(microseconds >> 16), UInt8(microseconds >> 8 & 0xFF), UInt8(microseconds & 0xFF)]
    }

    /// Three piano notes, 120 BPM for two quarters and 240 BPM for two more (480 ticks a quarter).
    static func tempoChange(format: Int) -> [UInt8] {
        let tempos = vlq(0) + tempo(500_000) + vlq(960) + tempo(250_000)
        let notes =
            vlq(0) + [0xC0, 0x00] + vlq(0) + [0x90, 60, 100] + vlq(480) + [0x80, 60, 0] + vlq(480)
            + [0x90, 64, 100] + vlq(480) + [0x80, 64, 0] + vlq(0) + [0x90, 67, 100] + vlq(460) + [0x80, 67, 0]
        if format == 0 {
            // One track: the same events merged in time order.
            let merged =
                vlq(0) + tempo(500_000) + vlq(0) + [0xC0, 0x00] + vlq(0) + [0x90, 60, 100] + vlq(480)
                + [0x80, 60, 0] + vlq(480) + tempo(250_000) + vlq(0) + [0x90, 64, 100] + vlq(480) + [0x80, 64, 0]
                + vlq(0) + [0x90, 67, 100] + vlq(460) + [0x80, 67, 0] + vlq(20) + endOfTrack
            return header(format: 0, tracks: 1, division: 480) + chunk("MTrk", merged)
        }
        return header(format: 1, tracks: 2, division: 480) + chunk("MTrk", tempos + vlq(960) + endOfTrack)
            + chunk("MTrk", notes + vlq(20) + endOfTrack)
    }
}
