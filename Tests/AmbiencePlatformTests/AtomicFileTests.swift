import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceTestSupport

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
        try withScratchFolder("platform") { folder in
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
        try withScratchFolder("platform") { folder in
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
        try withScratchFolder("platform") { folder in
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
        try withScratchFolder("platform") { folder in
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
