import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceTestSupport

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct DirectoryTests {
    @Test func entriesAreSortedByBytesWithTheirKindsAndWithoutDots() throws {
        try withScratchFolder("directory") { folder in
            try Data().write(to: URL(fileURLWithPath: folder + "/b"))
            #expect(mkdir(folder + "/a", 0o755) == 0)
            #expect(symlink("b", folder + "/c") == 0)
            let latin1 = Array((folder + "/d").utf8) + [0xE9]
            try FileDescriptor(opening: latin1, flags: O_WRONLY | O_CREAT).close()
            let entries = try Directory.entries(rawPath: Array(folder.utf8))
            #expect(entries.map(\.name) == [[0x61], [0x62], [0x63], [0x64, 0xE9]])
            // Most file systems say what each entry is; one that does not leaves it nil (DT_UNKNOWN).
            let kinds = entries.map(\.kind)
            #expect(kinds == [.directory, .regular, .symbolicLink, .regular] || kinds.contains(nil))
        }
    }

    @Test func anEmptyFolderHasNoEntries() throws {
        try withScratchFolder("directory") { folder in
            let entries = try Directory.entries(rawPath: Array(folder.utf8))
            #expect(entries.isEmpty)
        }
    }

    @Test func whatIsNoFolderFailsWithItsErrno() throws {
        try withScratchFolder("directory") { folder in
            #expect(throws: Errno(ENOENT)) { try Directory.entries(rawPath: Array((folder + "/missing").utf8)) }
            try Data().write(to: URL(fileURLWithPath: folder + "/file"))
            #expect(throws: Errno(ENOTDIR)) { try Directory.entries(rawPath: Array((folder + "/file").utf8)) }
            #expect(throws: Errno(ENOENT)) { try Directory.entries(rawPath: []) }
            #expect(throws: Errno(ENOENT)) { try Directory.entries(rawPath: Array(folder.utf8) + [0, 0x61]) }
        }
    }
}
