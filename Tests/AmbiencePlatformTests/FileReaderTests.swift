import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceTestSupport

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct FileReaderTests {
    /// A reader on a file holding the bytes 0..<100.
    private func withHundredBytes(_ body: (FileReader) throws -> Void) throws {
        try withScratchFolder("file-reader") { folder in
            let path = folder + "/bytes"
            try Data((0..<100).map { UInt8($0) }).write(to: URL(fileURLWithPath: path))
            let (file, size) = try FileDescriptor.openRegularFile(path)
            try body(FileReader(file, size: size))
        }
    }

    private func read(_ reader: FileReader, _ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = try bytes.withUnsafeMutableBytes { raw in
            Result { () throws(Errno) in try reader.read(into: raw.baseAddress!, count: raw.count) }
        }.get()
        return Array(bytes.prefix(got))
    }

    @Test func readsMoveThePositionUpToTheEnd() throws {
        try withHundredBytes { (reader: FileReader) throws in
            #expect(reader.size == 100 && reader.position == 0 && !reader.isAtEnd)
            #expect(try read(reader, 3) == [0, 1, 2])
            #expect(reader.position == 3)
            #expect(try read(reader, 200).count == 97)
            #expect(reader.isAtEnd)
            #expect(try read(reader, 10) == [])
            #expect(try read(reader, 0) == [])
        }
    }

    @Test func seeksFromEachOriginAndRefusesWhatIsNoPlace() throws {
        try withHundredBytes { (reader: FileReader) throws in
            #expect(reader.seek(to: 90, from: SEEK_SET))
            #expect(try read(reader, 1) == [90])
            #expect(reader.seek(to: -11, from: SEEK_CUR))
            #expect(try read(reader, 1) == [80])
            #expect(reader.seek(to: -1, from: SEEK_END))
            #expect(try read(reader, 5) == [99])
            #expect(reader.seek(to: 500, from: SEEK_SET))  // past the end: reads get nothing
            #expect(reader.isAtEnd)
            #expect(try read(reader, 1) == [])
            #expect(!reader.seek(to: -1, from: SEEK_SET))
            #expect(!reader.seek(to: .max, from: SEEK_END))
            #expect(!reader.seek(to: 0, from: 42))
            #expect(reader.position == 500)
        }
    }

    @Test func twoReadersOnOneDescriptorKeepTheirOwnPlaces() throws {
        try withScratchFolder("file-reader") { folder in
            let path = folder + "/bytes"
            try Data((0..<10).map { UInt8($0) }).write(to: URL(fileURLWithPath: path))
            let (file, size) = try FileDescriptor.openRegularFile(path)
            let first = FileReader(file, size: size)
            let second = FileReader(file, size: size)
            #expect(try read(first, 4) == [0, 1, 2, 3])
            #expect(try read(second, 2) == [0, 1])
            #expect(try read(first, 1) == [4])
        }
    }

    @Test func aFailedReadThrowsItsErrno() throws {
        try withScratchFolder("file-reader") { folder in
            let file = try FileDescriptor(opening: folder, flags: O_RDONLY)
            let reader = FileReader(file, size: 4096)
            #expect(throws: Errno(EISDIR)) { try read(reader, 4) }
        }
    }
}
