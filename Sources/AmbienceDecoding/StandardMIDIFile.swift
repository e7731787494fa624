import AmbienceCore
import AmbiencePlatform

/// A Standard MIDI File's structure, read and checked before libfluidsynth sees the bytes: its format, time
/// division, tracks and tempo map. Pure: bytes in, a summary or a reason out.
///
/// Every length and count is a claim checked against the bytes present and against stated limits, so a hostile
/// file (a chunk longer than the file, a zero tempo, SMPTE time, more tracks than libfluidsynth plays, an endless
/// variable-length number, a track without its end) is refused with a reason before anything is allocated for it.
package struct StandardMIDIFile: Sendable, Equatable {
    /// 0 (one track) or 1 (tracks played together). Format 2 (independent sequences) is refused.
    package var format: Int
    /// Ticks per quarter note, 1...32767.
    package var division: Int
    /// Tracks in the file.
    package var tracks: Int
    /// Events in all tracks, meta events included.
    package var events: Int
    /// The tick of the last event of the longest track (its end-of-track event).
    package var endTick: Int64
    /// Tempo changes in tick order: (tick, microseconds per quarter note); the first at tick 0 (120 BPM when the
    /// file sets none there).
    package var tempos: [Tempo]
    /// The first track's text: its name, copyright notice and text events (`tags` maps them).
    package var text = MetaText()

    package struct Tempo: Sendable, Equatable {
        package var tick: Int64
        package var microsecondsPerQuarter: Int
    }

    /// libfluidsynth's own limit on tracks (`MAX_NUMBER_OF_TRACKS`).
    package static let maximumTracks = 128
    /// The most events read: 2^20 (a busy MIDI file has tens of thousands).
    package static let maximumEvents = 1 << 20
    /// The longest a file may play: 4 hours.
    package static let maximumSeconds = 4.0 * 3600
    /// MIDI's default tempo, 120 BPM.
    package static let defaultTempo = 500_000

    /// Reads `bytes` as a Standard MIDI File, or says what is wrong with it.
    package init(_ bytes: [UInt8]) throws(MIDIFileError) {
        var reader = ByteReader(bytes)
        guard try reader.tag() == "MThd" else { throw .notMIDI }
        let headerLength = try reader.uint32("header length")
        guard headerLength >= 6, Int64(headerLength) <= Int64(reader.remaining) else {
            throw .damaged("header chunk claims \(headerLength) bytes; \(reader.remaining) follow")
        }
        format = Int(try reader.uint16("format"))
        let declaredTracks = Int(try reader.uint16("track count"))
        let rawDivision = Int(try reader.uint16("division"))
        try reader.skip(Int(headerLength) - 6)
        guard format <= 1 else { throw .unsupported("format \(format) (only formats 0 and 1 are played)") }
        guard rawDivision & 0x8000 == 0 else {
            throw .unsupported("SMPTE time division (0x\(String(rawDivision, radix: 16)))")
        }
        guard rawDivision > 0 else { throw .damaged("time division is 0 ticks per quarter note") }
        guard declaredTracks > 0 else { throw .damaged("it declares no tracks") }
        guard declaredTracks <= Self.maximumTracks else {
            throw .unsupported("\(declaredTracks) tracks, more than the \(Self.maximumTracks) libfluidsynth plays")
        }
        guard format == 1 || declaredTracks == 1 else { throw .damaged("format 0 with \(declaredTracks) tracks") }
        division = rawDivision
        tracks = declaredTracks
        events = 0
        endTick = 0
        var changes: [Tempo] = []
        var found = 0
        while found < declaredTracks {
            guard reader.remaining >= 8 else {
                throw .damaged("it declares \(declaredTracks) tracks; \(found) are present")
            }
            let tag = try reader.tag()
            let length = try reader.uint32("chunk length")
            guard Int64(length) <= Int64(reader.remaining) else {
                throw .damaged("chunk \(tag) claims \(length) bytes; \(reader.remaining) follow")
            }
            let body = try reader.take(Int(length))
            guard tag == "MTrk" else { continue }  // unknown chunks are skipped, as the standard says
            found += 1
            // Only the first track's text is kept: in format 1 the others are instruments' parts, named by theirs.
            var trackText = MetaText(keeps: found == 1)
            let end = try Self.readTrack(body, number: found, events: &events, tempos: &changes, text: &trackText)
            if found == 1 { text = trackText }
            endTick = max(endTick, end)
        }
        changes.sort { $0.tick < $1.tick }  // stable: a later track's change at the same tick wins, as it plays later
        if changes.first?.tick != 0 { changes.insert(Tempo(tick: 0, microsecondsPerQuarter: Self.defaultTempo), at: 0) }
        tempos = changes
        let length = seconds(atTick: endTick)
        guard length <= Self.maximumSeconds else {
            throw .unsupported(
                "it lasts \(length.saturated(Int.self)) s, more than the \(Int(Self.maximumSeconds)) s allowed")
        }
    }

    /// Seconds from the start to `tick`, through the tempo map.
    package func seconds(atTick tick: Int64) -> Double {
        var seconds = 0.0
        for (index, tempo) in tempos.enumerated() where tempo.tick < tick {
            let next = index + 1 < tempos.count ? min(tempos[index + 1].tick, tick) : tick
            seconds += Double(next - tempo.tick) * Double(tempo.microsecondsPerQuarter) / 1e6 / Double(division)
        }
        return seconds
    }

    /// The tick playing `seconds` from the start (rounded down), at most `endTick`.
    package func tick(atSeconds seconds: Double) -> Int64 {
        guard seconds > 0 else { return 0 }
        var elapsed = 0.0
        for (index, tempo) in tempos.enumerated() {
            let perTick = Double(tempo.microsecondsPerQuarter) / 1e6 / Double(division)
            let next = index + 1 < tempos.count ? tempos[index + 1].tick : endTick
            let span = Double(max(next - tempo.tick, 0)) * perTick
            if index + 1 == tempos.count || elapsed + span > seconds {
                let ticks = ((seconds - elapsed) / perTick).saturated(Int64.self, rounding: .down)
                return min(tempo.tick + max(ticks, 0), endTick)
            }
            elapsed += span
        }
        return endTick
    }

    /// Length in seconds: to the last track's end.
    package var duration: Double { seconds(atTick: endTick) }

    /// Walks one track's events: their count, tempo changes and the tick of its end-of-track event, which must be
    /// there.
    private static func readTrack(
        _ body: [UInt8], number: Int, events: inout Int, tempos: inout [Tempo], text: inout MetaText
    ) throws(MIDIFileError) -> Int64 {
        var reader = ByteReader(body)
        var tick: Int64 = 0
        var status: UInt8 = 0
        while reader.remaining > 0 {
            tick += Int64(try reader.variableLength("delta time in track \(number)"))
            events += 1
            guard events <= maximumEvents else { throw .unsupported("more than \(maximumEvents) events") }
            var byte = try reader.byte("event in track \(number)")
            if byte < 0x80 {
                // Running status: the byte is the first data byte of an event with the last status.
                guard status >= 0x80, status < 0xF0 else {
                    throw .damaged("track \(number): data byte 0x\(String(byte, radix: 16)) with no status before it")
                }
                try reader.skip(status & 0xE0 == 0xC0 ? 0 : 1)
                continue
            }
            switch byte {
            case 0xFF:
                let type = try reader.byte("meta event type in track \(number)")
                let length = try reader.variableLength("meta event length in track \(number)")
                let data = try reader.take(length)
                if type == 0x2F { return tick }
                text.take(type: type, data)
                if type == 0x51 {
                    guard data.count == 3 else { throw .damaged("track \(number): tempo event of \(data.count) bytes") }
                    let tempo = Int(data[0]) << 16 | Int(data[1]) << 8 | Int(data[2])
                    guard tempo > 0 else { throw .damaged("track \(number): tempo 0 at tick \(tick)") }
                    tempos.append(Tempo(tick: tick, microsecondsPerQuarter: tempo))
                }
                status = 0
            case 0xF0, 0xF7:
                try reader.skip(try reader.variableLength("SysEx length in track \(number)"))
                status = 0
            case 0xF1...0xFE:
                throw .damaged("track \(number): system message 0x\(String(byte, radix: 16)) in a file")
            default:
                status = byte
                byte &= 0xF0
                try reader.skip(byte == 0xC0 || byte == 0xD0 ? 1 : 2)
            }
        }
        throw .damaged("track \(number) has no end-of-track event")
    }
}

/// A track's text meta events, kept within bounds: the first non-empty name (0x03) and copyright notice (0x02),
/// and the text events (0x01), at most `maximumEvents` of them and `maximumBytes` bytes each and in all.
package struct MetaText: Sendable, Equatable {
    package var name: String?
    package var copyright: String?
    package var texts: [String] = []
    private var keeps = false
    private var textBytes = 0

    /// The most bytes of one text kept, and of all text events together.
    package static let maximumBytes = 1024
    /// The most text events kept.
    package static let maximumEvents = 16

    package init(keeps: Bool = false) { self.keeps = keeps }

    mutating func take(type: UInt8, _ data: [UInt8]) {
        guard keeps, (0x01...0x03).contains(type), textBytes < Self.maximumBytes else { return }
        guard let value = Self.decoded(Self.cut(data[...], to: Self.maximumBytes)) else { return }
        switch type {
        case 0x03: name = name ?? value
        case 0x02: copyright = copyright ?? value
        default:
            guard texts.count < Self.maximumEvents else { return }
            texts.append(value)
            textBytes += min(data.count, Self.maximumBytes)
        }
    }

    /// `bytes` cut to at most `limit` bytes, and further back to a UTF-8 character's start when the cut falls inside
    /// one (continuation bytes are 10xxxxxx): a long UTF-8 text would otherwise fail validation and read as Latin-1.
    static func cut(_ bytes: ArraySlice<UInt8>, to limit: Int) -> ArraySlice<UInt8> {
        guard bytes.count > limit else { return bytes }
        var end = bytes.startIndex + limit
        var back = 0
        while back < 3, end > bytes.startIndex, bytes[end] & 0xC0 == 0x80 {
            end -= 1
            back += 1
        }
        return bytes[bytes.startIndex..<end]
    }

    private static let blank: Set<Unicode.Scalar> = [" ", "\0", "\t", "\r", "\n"]

    /// The text as UTF-8 when it is valid UTF-8, else as Latin-1 (each byte the code point of its value: what older
    /// sequencers wrote, as WAV's LIST/INFO), trimmed of spaces, line ends and NULs; nil when nothing is left.
    static func decoded(_ bytes: ArraySlice<UInt8>) -> String? {
        let text =
            String(validating: bytes, as: UTF8.self)
            ?? String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        let kept = text.unicodeScalars.drop(while: blank.contains).reversed().drop(while: blank.contains)
        return kept.isEmpty ? nil : String(String.UnicodeScalarView(kept.reversed()))
    }

    /// The tags a MIDI file shows. Its title: the name (format 1's sequence name, format 0's track name), else its
    /// first text event. Its artist: the copyright notice, since a MIDI file has no field for its author, without a
    /// leading "Copyright", "(C)" or "©" (so "Copyright (C) Jim Redfarn" is "Jim Redfarn"). Its comment: the text
    /// events, one a line.
    package var tags: AudioTags {
        var tags = AudioTags()
        tags.title = name ?? texts.first
        tags.artist = copyright.flatMap(Self.withoutCopyrightMark)
        tags.comment = texts.isEmpty ? nil : texts.joined(separator: "\n")
        return tags
    }

    /// A copyright notice without the words that only say it is one; nil when nothing else is left.
    static func withoutCopyrightMark(_ notice: String) -> String? {
        var rest = Substring(notice)
        while true {
            let trimmed = rest.drop { $0 == " " || $0 == ":" || $0 == "," }
            let lower = trimmed.lowercased()
            guard let mark = ["copyright", "(c)", "©"].first(where: { lower.hasPrefix($0) }) else {
                rest = trimmed
                break
            }
            rest = trimmed.dropFirst(mark.count)
        }
        return rest.isEmpty ? nil : String(rest)
    }
}

/// Why bytes are not a MIDI file libfluidsynth is given.
package enum MIDIFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No `MThd` header.
    case notMIDI
    /// A claim the bytes do not bear out.
    case damaged(String)
    /// Well formed, but outside what is played.
    case unsupported(String)

    package var description: String {
        switch self {
        case .notMIDI: "not a Standard MIDI File"
        case .damaged(let reason): "damaged MIDI file: \(reason)"
        case .unsupported(let reason): "unsupported MIDI file: \(reason)"
        }
    }
}

/// Big-endian reads over a byte array, each checked against what is left.
private struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }

    mutating func byte(_ what: String) throws(MIDIFileError) -> UInt8 {
        guard offset < bytes.count else { throw .damaged("the file ends inside the \(what)") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func take(_ count: Int) throws(MIDIFileError) -> [UInt8] {
        guard count >= 0, count <= remaining else {
            throw .damaged("\(count) bytes claimed where \(remaining) are left")
        }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func skip(_ count: Int) throws(MIDIFileError) {
        guard count >= 0, count <= remaining else {
            throw .damaged("\(count) bytes claimed where \(remaining) are left")
        }
        offset += count
    }

    mutating func tag() throws(MIDIFileError) -> String {
        String(decoding: try take(4), as: UTF8.self)
    }

    mutating func uint16(_ what: String) throws(MIDIFileError) -> UInt16 {
        UInt16(try byte(what)) << 8 | UInt16(try byte(what))
    }

    mutating func uint32(_ what: String) throws(MIDIFileError) -> UInt32 {
        UInt32(try uint16(what)) << 16 | UInt32(try uint16(what))
    }

    /// A variable-length quantity: at most 4 bytes (28 bits), as the standard allows.
    mutating func variableLength(_ what: String) throws(MIDIFileError) -> Int {
        var value = 0
        for _ in 0..<4 {
            let next = try byte(what)
            value = value << 7 | Int(next & 0x7F)
            if next & 0x80 == 0 { return value }
        }
        throw .damaged("the \(what) runs past 4 bytes")
    }
}
