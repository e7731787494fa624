import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceLibrary

/// A fresh folder under the temporary directory, removed by `body`'s end.
private func withScratchFolder<R>(_ body: (String) throws -> R) throws -> R {
    let folder = NSTemporaryDirectory() + "ambience-platform-\(getpid())-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    return try body(folder)
}

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct FileDescriptorTests {
    @Test func aMissingFileIsENOENT() throws {
        try withScratchFolder { folder in
            #expect(throws: Errno(ENOENT)) { try FileDescriptor(opening: folder + "/missing", flags: O_RDONLY) }
            #expect(throws: Errno(ENOENT)) { try FileDescriptor.openRegularFile(folder + "/missing") }
            #expect(throws: Errno(ENOENT)) {
                try FileDescriptor(opening: Array((folder + "/missing").utf8), flags: O_RDONLY)
            }
        }
    }

    @Test func aDirectoryIsEISDIR() throws {
        try withScratchFolder { folder in
            #expect(throws: Errno(EISDIR)) { try FileDescriptor.openRegularFile(folder) }
            // Opened plainly, a directory fails at the first read.
            let directory = try FileDescriptor(opening: folder, flags: O_RDONLY)
            #expect(throws: Errno(EISDIR)) { try directory.readBytes(4) }
        }
    }

    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() throws {
        try withScratchFolder { folder in
            let path = folder + "/fifo"
            #expect(mkfifo(path, 0o600) == 0)
            #expect(throws: Errno(EINVAL)) { try FileDescriptor.openRegularFile(path) }
        }
    }

    @Test func readsAtAnOffsetAndToTheEnd() throws {
        try withScratchFolder { folder in
            let path = folder + "/bytes"
            try Data((0..<100).map { UInt8($0) }).write(to: URL(fileURLWithPath: path))
            let (file, size) = try FileDescriptor.openRegularFile(path)
            #expect(size == 100)
            var window = [UInt8](repeating: 0, count: 10)
            let got = try window.withUnsafeMutableBytes { try file.read(into: $0.baseAddress!, count: 10, at: 95) }
            #expect(got == 5)
            #expect(Array(window.prefix(5)) == [95, 96, 97, 98, 99])
            #expect(try file.readBytes(3) == [0, 1, 2])
            #expect(try file.readBytes(1000).count == 97)
            #expect(try file.readBytes(10).isEmpty)
        }
    }

    /// Proved without looking at a freed number, which parallel tests may take at any moment: the close is seen from
    /// the other end of a socket pair (end of file), and the second close is tried while this test holds the freed
    /// number again, taken back near the top of the table, where no `open` (lowest free number first) reaches.
    @Test func closesExactlyOnce() throws {
        var ends: [Int32] = [-1, -1]
        let kind = Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue)
        try #require(socketpair(AF_UNIX, kind, 0, &ends) == 0)
        let peer = FileDescriptor(adopting: ends[1])
        let top = Int32(clamping: sysconf(Int32(_SC_OPEN_MAX))) - 64
        let file = FileDescriptor(adopting: fcntl(ends[0], F_DUPFD_CLOEXEC, top))
        close(ends[0])
        let fd = file.descriptor
        try #require(fd >= top)
        try file.close()
        #expect(file.descriptor == -1)
        // End of file: the wrapped end's only descriptor is closed. A child that a parallel test is starting holds a
        // copy of every descriptor until its exec, so on a loaded machine the end can come a moment later (the
        // non-blocking read says EAGAIN until then).
        #expect(eventually { (try? peer.readBytes(1)) == [] })
        // A second close must not close whatever now has that number: here, this test's own copy of the peer.
        let other = FileDescriptor(adopting: fcntl(peer.descriptor, F_DUPFD_CLOEXEC, fd))
        try #require(other.descriptor == fd)
        try file.close()
        #expect(fcntl(other.descriptor, F_GETFD) != -1)
        #expect(throws: Errno(EBADF)) { try file.status() }
    }

    /// A duplicate is a second owner of the same open file: closing one leaves the other reading.
    @Test func aDuplicateHasAnOwnerOfItsOwn() throws {
        try withScratchFolder { folder in
            let path = folder + "/file"
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
            let (file, _) = try FileDescriptor.openRegularFile(path)
            let copy = try file.duplicate()
            #expect(copy.descriptor != file.descriptor)
            #expect(fcntl(copy.descriptor, F_GETFD) & FD_CLOEXEC != 0)
            try file.close()
            var byte: UInt8 = 0
            #expect(try copy.read(into: &byte, count: 1, at: 2) == 1 && byte == 3)
        }
    }

    @Test func aNameWithANulNamesNoFile() {
        #expect(throws: Errno(ENOENT)) { try FileDescriptor(opening: "/etc\0/passwd", flags: O_RDONLY) }
        #expect(throws: Errno(ENOENT)) { try FileDescriptor(opening: [UInt8](), flags: O_RDONLY) }
    }
}

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct AtomicFileTests {
    private func contents(_ path: String) -> [UInt8]? { FileManager.default.contents(atPath: path).map { Array($0) } }
    private func inode(_ path: String) -> ino_t? {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_ino : nil
    }
    private func leftovers(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".tmp-") }
    }

    @Test func theTargetIsReplacedWholeOnlyAtCommit() throws {
        try withScratchFolder { folder in
            let path = folder + "/save.dat"
            try AtomicFile.write(Array("old contents".utf8), to: path)
            let before = inode(path)
            let file = try AtomicFile(replacing: path)
            try Array("new ".utf8).withUnsafeBytes { try file.write($0) }
            try Array("contents, longer".utf8).withUnsafeBytes { try file.write($0) }
            try Array("NEW".utf8).withUnsafeBytes { try file.write($0, at: 0) }
            // Until the commit, the old file is there untouched.
            #expect(contents(path) == Array("old contents".utf8))
            try file.commit()
            #expect(contents(path) == Array("NEW contents, longer".utf8))
            // Replaced by a rename, not rewritten in place: a reader holding the old file keeps the old bytes.
            #expect(inode(path) != before)
            #expect(try leftovers(folder).isEmpty)
            #expect(throws: AtomicFileError.failed(Errno(EBADF))) { try file.commit() }
        }
    }

    @Test func aFailedCommitLeavesNoPartialFileAndTheTargetAsItWas() throws {
        try withScratchFolder { folder in
            let path = folder + "/target"
            let file = try AtomicFile(replacing: path)
            try Array(repeating: UInt8(7), count: 4096).withUnsafeBytes { try file.write($0) }
            // A folder appears where the file was to go: it is left there.
            try FileManager.default.createDirectory(atPath: path + "/inside", withIntermediateDirectories: true)
            #expect(throws: AtomicFileError.changed(path)) { try file.commit() }
            #expect(try leftovers(folder).isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: path) == ["inside"])
        }
    }

    @Test func aDiscardedOrReleasedFileLeavesNothing() throws {
        try withScratchFolder { folder in
            let path = folder + "/never"
            let discarded = try AtomicFile(replacing: path)
            try [UInt8](repeating: 1, count: 10).withUnsafeBytes { try discarded.write($0) }
            #expect(try leftovers(folder).count == 1)
            discarded.discard()
            #expect(throws: Errno(EBADF)) {
                try [UInt8](repeating: 1, count: 1).withUnsafeBytes { try discarded.write($0) }
            }
            do {
                let released = try AtomicFile(replacing: path)
                try [UInt8](repeating: 2, count: 10).withUnsafeBytes { try released.write($0) }
            }
            #expect(try leftovers(folder).isEmpty)
            #expect(contents(path) == nil)
        }
    }

    @Test func aFolderOrAMissingFolderIsRefusedAtOnce() throws {
        try withScratchFolder { folder in
            #expect(throws: AtomicFileError.refused(path: folder, target: folder, kind: .folder)) {
                try AtomicFile(replacing: folder)
            }
            #expect(throws: AtomicFileError.failed(Errno(EISDIR))) { try AtomicFile(replacing: folder + "/") }
            #expect(throws: AtomicFileError.failed(Errno(ENOENT))) {
                try AtomicFile(replacing: folder + "/missing/file")
            }
        }
    }
}

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

@Suite(.offTheCooperativePool) struct ByteCursorTests {
    @Test func readsInOrderAndRefusesToRunPastTheEnd() {
        var cursor = ByteCursor([0, 0, 0, 3, 0xAA, 0xBB, 0xCC, 0, 0, 1])
        let length = cursor.u32BE(), field = cursor.bytes(3)
        #expect(length == 3 && field == [0xAA, 0xBB, 0xCC])
        let pastTheEnd = cursor.u32BE()  // three bytes left
        #expect(pastTheEnd == nil && cursor.offset == 7)  // a refused read does not move
        let longSkip = cursor.skip(4), negative = cursor.bytes(-1)
        #expect(!longSkip && negative == nil && cursor.offset == 7)
        let skipped = cursor.skip(2), last = cursor.bytes(1)
        #expect(skipped && last == [1])
        #expect(cursor.remaining == 0)
    }
}

@Suite(.offTheCooperativePool) struct EventQueueTests {
    @Test func aFullDropNewestQueueRefusesTheNewAndKeepsTheFirst() {
        var queue = EventQueue<Int>(capacity: 4, overflow: .dropNewest)
        let kept = (1...10).map { queue.push($0) }
        #expect(kept == [true, true, true, true, false, false, false, false, false, false])
        #expect(queue.dropped == 6 && queue.count == 4)
        #expect(queue.drain() == [1, 2, 3, 4])
        #expect(queue.isEmpty && queue.dropped == 6, "draining empties the queue but keeps the count of what it lost")
        #expect(queue.push(11) && queue.drain() == [11] && queue.dropped == 6)
    }

    @Test func aFullDropOldestQueueKeepsTheLatest() {
        var queue = EventQueue<Int>(capacity: 4, overflow: .dropOldest)
        let kept = (1...10).map { queue.push($0) }
        #expect(kept.allSatisfy { $0 }, "the pushed event itself is always kept")
        #expect(queue.dropped == 6 && queue.count == 4)
        #expect(queue.drain() == [7, 8, 9, 10])
        #expect(queue.isEmpty && queue.dropped == 6)
    }

    @Test func popTakesTheOldestAcrossTheRingsEnd() {
        var queue = EventQueue<String>(capacity: 3, overflow: .dropOldest)
        for word in ["a", "b", "c"] { queue.push(word) }
        #expect(queue.pop() == "a")
        queue.push("d")  // lands in the slot "a" left, at the ring's start
        queue.push("e")  // full: "b" gives way
        #expect(queue.dropped == 1)
        #expect(queue.pop() == "c" && queue.pop() == "d" && queue.pop() == "e")
        #expect(queue.pop() == nil && queue.isEmpty)
    }

    @Test func itGrowsWhileItsOldestIsMidRingAndKeepsTheOrder() {
        var queue = EventQueue<Int>(capacity: 1_000, overflow: .dropNewest)
        for n in 0..<10 { queue.push(n) }
        for n in 0..<5 { #expect(queue.pop() == n) }
        for n in 10..<1_005 { queue.push(n) }  // grows from 16 several times with its head at 5
        #expect(queue.dropped == 0 && queue.count == 1_000)
        #expect(queue.drain() == Array(5..<1_005))
    }

    @Test func aCapacityBelowOneIsOne() {
        var queue = EventQueue<Int>(capacity: -5, overflow: .dropNewest)
        #expect(queue.capacity == 1)
        #expect(queue.push(1) && !queue.push(2))
        #expect(queue.drain() == [1] && queue.dropped == 1)
    }

    /// Thousands of rounds of pushes, pops and drains, against the plainest model of the documented rule: order is
    /// kept, the documented end gives way, and `dropped` counts exactly what the model lost.
    @Test(arguments: [EventQueue<Int>.Overflow.dropNewest, .dropOldest])
    func manyCyclesMatchTheModel(overflow: EventQueue<Int>.Overflow) {
        let capacity = 7
        var queue = EventQueue<Int>(capacity: capacity, overflow: overflow)
        var model: [Int] = [], modelDropped = 0, next = 0
        var random = SplitMix64(seed: 15)
        for _ in 0..<5_000 {
            switch random.next() % 4 {
            case 0, 1:
                for _ in 0..<Int(random.next() % 12) {
                    let kept = queue.push(next)
                    if model.count < capacity {
                        model.append(next)
                        #expect(kept)
                    } else if overflow == .dropNewest {
                        modelDropped += 1
                        #expect(!kept)
                    } else {
                        model.removeFirst()
                        model.append(next)
                        modelDropped += 1
                        #expect(kept)
                    }
                    next += 1
                }
            case 2:
                for _ in 0..<Int(random.next() % 5) {
                    #expect(queue.pop() == (model.isEmpty ? nil : model.removeFirst()))
                }
            default:
                #expect(queue.drain() == model)
                model.removeAll()
            }
            #expect(queue.count == model.count && queue.dropped == modelDropped)
        }
        #expect(modelDropped > 1_000, "the rounds overflowed the queue often")
    }

    @Test func totalsSaturate() {
        #expect(Int.max.addingSaturated(1) == Int.max)
        #expect(3.addingSaturated(4) == 7)
    }
}
