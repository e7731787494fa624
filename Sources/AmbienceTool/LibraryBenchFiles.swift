import Ambience
import AmbienceDecoding
import Foundation
import Glibc

// The files `library bench` generates: tags, and tiny encoded templates whose copies get new tags.

struct BenchTags {
    var title: String
    var artist: String
    var album: String
    var genre: String
    var track: Int
}

/// One tiny encoded Ogg and MP3 (when the encoders are installed), and the code that gives copies of them new tags.
struct Templates {
    private var oggPages: [OggPage] = []
    private var oggHeaderPackets: [[UInt8]] = []
    private var oggAudioStart = 0
    private var mp3Frames: [UInt8] = []
    private(set) var formats: [String] = ["wav"]

    init(folder: String) throws {
        let source = folder + "/template.wav"
        let tone = Self.wav(BenchTags(title: "", artist: "", album: "", genre: "", track: 0), tagged: false)
        guard FileManager.default.createFile(atPath: source, contents: Data(tone)) else {
            throw ToolFailure("\(source): cannot write")
        }
        defer { try? FileManager.default.removeItem(atPath: source) }
        if Self.runTool("oggenc", ["-Q", "-q", "0", "-o", folder + "/template.ogg", source]),
            let bytes = FileManager.default.contents(atPath: folder + "/template.ogg"),
            let pages = OggPage.parseAll([UInt8](bytes))
        {
            var packets: [[UInt8]] = [], current: [UInt8] = []
            var pageIndex = 0
            while packets.count < 3 && pageIndex < pages.count {
                var at = 0
                for segment in pages[pageIndex].segments {
                    current += pages[pageIndex].body[at..<(at + Int(segment))]
                    at += Int(segment)
                    if segment < 255 { packets.append(current); current = [] }
                }
                pageIndex += 1
            }
            if packets.count == 3 && current.isEmpty {
                oggPages = pages
                oggHeaderPackets = packets
                oggAudioStart = pageIndex
                formats.append("ogg")
            }
        }
        try? FileManager.default.removeItem(atPath: folder + "/template.ogg")
        if Self.runTool("lame", ["--quiet", "-b", "32", source, folder + "/template.mp3"]),
            let bytes = FileManager.default.contents(atPath: folder + "/template.mp3"), bytes.count > 0
        {
            mp3Frames = [UInt8](bytes)
            formats.append("mp3")
        }
        try? FileManager.default.removeItem(atPath: folder + "/template.mp3")
    }

    private static func runTool(_ tool: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// A quarter second of a quiet 440 Hz tone, 8 kHz mono 16-bit, with a LIST/INFO chunk of tags.
    static func wav(_ tags: BenchTags, tagged: Bool = true) -> [UInt8] {
        var info: [UInt8] = Array("INFO".utf8)
        if tagged {
            for (id, text) in [
                ("INAM", tags.title), ("IART", tags.artist), ("IPRD", tags.album), ("IGNR", tags.genre),
                ("ITRK", String(tags.track))
            ] {
                var value = Array(text.utf8) + [0]
                let size = value.count
                if value.count % 2 == 1 { value.append(0) }
                info += Array(id.utf8) + le32(size) + value
            }
        }
        var samples: [UInt8] = []
        for index in 0..<2000 {
            let value = Int16(sin(Double(index) * 2 * .pi * 440 / 8000) * 4000)
            samples += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
        }
        var body: [UInt8] = Array("WAVE".utf8)
        body += Array("fmt ".utf8) + le32(16) + le16(1) + le16(1) + le32(8000) + le32(16000) + le16(2) + le16(16)
        if tagged { body += Array("LIST".utf8) + le32(info.count) + info }
        body += Array("data".utf8) + le32(samples.count) + samples
        return Array("RIFF".utf8) + le32(body.count) + body
    }

    /// The MP3 frames behind an ID3v2.3 tag (UTF-16 text frames).
    func mp3(_ tags: BenchTags) -> [UInt8] {
        var frames: [UInt8] = []
        for (id, text) in [
            ("TIT2", tags.title), ("TPE1", tags.artist), ("TALB", tags.album), ("TCON", tags.genre),
            ("TRCK", String(tags.track))
        ] {
            var data: [UInt8] = [1, 0xFF, 0xFE]  // UTF-16 with a little-endian byte-order mark
            for unit in text.utf16 { data += [UInt8(truncatingIfNeeded: unit), UInt8(truncatingIfNeeded: unit >> 8)] }
            data += [0, 0]
            frames += Array(id.utf8) + be32(data.count) + [0, 0] + data
        }
        let size = frames.count
        let syncsafe: [UInt8] = (0..<4).map { UInt8((size >> (21 - 7 * $0)) & 0x7F) }
        return Array("ID3".utf8) + [3, 0, 0] + syncsafe + frames + mp3Frames
    }

    /// The template Ogg with a new comment header: the header packets re-laced into new pages, the audio pages
    /// renumbered, every CRC recomputed.
    func ogg(_ tags: BenchTags) throws -> [UInt8] {
        let vendor = Array("ambience bench".utf8)
        let comments = [
            "TITLE=\(tags.title)", "ARTIST=\(tags.artist)", "ALBUM=\(tags.album)", "GENRE=\(tags.genre)",
            "TRACKNUMBER=\(tags.track)"
        ]
        var comment: [UInt8] = [3] + Array("vorbis".utf8) + le32(vendor.count) + vendor + le32(comments.count)
        for entry in comments { comment += le32(entry.utf8.count) + Array(entry.utf8) }
        comment.append(1)  // framing bit

        let serial = oggPages[0].serial
        var out: [UInt8] = []
        var sequence: UInt32 = 0
        // The identification header alone on the first page, then comment and setup headers, then the audio.
        out += OggPage.lay(packets: [oggHeaderPackets[0]], serial: serial, sequence: &sequence, firstFlags: 0x02)
        out += OggPage.lay(packets: [comment, oggHeaderPackets[2]], serial: serial, sequence: &sequence, firstFlags: 0)
        for page in oggPages[oggAudioStart...] {
            var renumbered = page
            renumbered.sequence = sequence
            sequence += 1
            out += renumbered.bytes()
        }
        return out
    }
}

/// One Ogg page, for re-tagging bench copies.
struct OggPage {
    var flags: UInt8
    var granule: UInt64
    var serial: UInt32
    var sequence: UInt32
    var segments: [UInt8]
    var body: [UInt8]

    static func parseAll(_ bytes: [UInt8]) -> [OggPage]? {
        var pages: [OggPage] = []
        var at = 0
        while at < bytes.count {
            guard at + 27 <= bytes.count, bytes[at..<(at + 4)].elementsEqual("OggS".utf8) else { return nil }
            let count = Int(bytes[at + 26])
            guard at + 27 + count <= bytes.count else { return nil }
            let segments = Array(bytes[(at + 27)..<(at + 27 + count)])
            let length = segments.reduce(0) { $0 + Int($1) }
            let start = at + 27 + count
            guard start + length <= bytes.count else { return nil }
            // The header's 27 bytes are there (checked above), so its fields are.
            guard let granule = bytes.u64LE(at + 6), let serial = bytes.u32LE(at + 14),
                let sequence = bytes.u32LE(at + 18)
            else {
                return nil
            }
            pages.append(
                OggPage(
                    flags: bytes[at + 5], granule: granule, serial: serial, sequence: sequence,
                    segments: segments, body: Array(bytes[start..<(start + length)])))
            at = start + length
        }
        return pages
    }

    func bytes() -> [UInt8] {
        var page: [UInt8] = Array("OggS".utf8) + [0, flags]
        page += (0..<8).map { UInt8(truncatingIfNeeded: granule >> (8 * UInt64($0))) }
        page += le32(Int(serial)) + le32(Int(sequence)) + [0, 0, 0, 0] + [UInt8(segments.count)] + segments + body
        OggPageChecksum.stamp(&page, page: 0..<page.count)
        return page
    }

    /// Lays packets into as many pages as their lacing needs (255 segments a page). A page on which no packet ends
    /// has granule position -1; header pages otherwise have 0.
    static func lay(packets: [[UInt8]], serial: UInt32, sequence: inout UInt32, firstFlags: UInt8) -> [UInt8] {
        var lacing: [(segment: UInt8, endsPacket: Bool, bytes: ArraySlice<UInt8>)] = []
        for packet in packets {
            var at = 0
            while packet.count - at >= 255 {
                lacing.append((255, false, packet[at..<(at + 255)]))
                at += 255
            }
            lacing.append((UInt8(packet.count - at), true, packet[at...]))
        }
        var out: [UInt8] = []
        var index = 0
        var continued = false
        while index < lacing.count {
            let slice = lacing[index..<min(index + 255, lacing.count)]
            let endsPacket = slice.contains { $0.endsPacket }
            let page = OggPage(
                flags: (out.isEmpty ? firstFlags : 0) | (continued ? 0x01 : 0),
                granule: endsPacket ? 0 : UInt64.max, serial: serial, sequence: sequence,
                segments: slice.map(\.segment), body: slice.flatMap(\.bytes))
            out += page.bytes()
            sequence += 1
            continued = !(slice.last?.endsPacket ?? true)
            index += slice.count
        }
        return out
    }
}

private func le16(_ value: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)] }
private func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
private func be32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
