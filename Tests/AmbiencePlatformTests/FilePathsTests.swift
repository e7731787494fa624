import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceTestSupport

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct FilePathsTests {
    @Test func existsFollowsLinks() throws {
        try withScratchFolder("file-paths") { folder in
            #expect(FilePaths.exists(folder))
            #expect(!FilePaths.exists(folder + "/missing"))
            #expect(symlink(folder + "/missing", folder + "/dangling") == 0)
            #expect(!FilePaths.exists(folder + "/dangling"))
            #expect(!FilePaths.exists(folder + "\0"))
        }
    }

    @Test func readabilityGivesItsReason() throws {
        try withScratchFolder("file-paths") { folder in
            let path = folder + "/file"
            try Data([1]).write(to: URL(fileURLWithPath: path))
            #expect(FilePaths.isReadable(path))
            try FilePaths.checkReadable(path)
            #expect(throws: Errno(ENOENT)) { try FilePaths.checkReadable(folder + "/missing") }
            #expect(throws: Errno(ENOTDIR)) { try FilePaths.checkReadable(path + "/below") }
            #expect(!FilePaths.isReadable(folder + "/missing"))
        }
    }

    @Test func resolvedRemovesLinksAndDots() throws {
        try withScratchFolder("file-paths") { folder in
            let real = try #require(FilePaths.resolved(folder))
            #expect(mkdir(folder + "/inner", 0o755) == 0)
            #expect(symlink(folder + "/inner", folder + "/link") == 0)
            #expect(FilePaths.resolved(folder + "/link/../link/.") == real + "/inner")
            #expect(FilePaths.resolved(folder + "/missing") == nil)
            #expect(FilePaths.resolved("") == nil)
        }
    }

    @Test func makeFolderAcceptsOneAlreadyThere() throws {
        try withScratchFolder("file-paths") { folder in
            try FilePaths.makeFolder(folder + "/new", mode: 0o700)
            #expect(try FileStatus(path: folder + "/new").isDirectory)
            try FilePaths.makeFolder(folder + "/new")
            try FilePaths.makeFolder(rawPath: Array((folder + "/raw").utf8) + [0xE9])
            #expect(try FileStatus(rawPath: Array((folder + "/raw").utf8) + [0xE9]).isDirectory)
            #expect(throws: Errno(ENOENT)) { try FilePaths.makeFolder(folder + "/missing/new") }
            #expect(throws: Errno(ENOENT)) { try FilePaths.makeFolder(rawPath: []) }
        }
    }

    @Test func linkNeverReplacesAndRemoveUnlinks() throws {
        try withScratchFolder("file-paths") { folder in
            let path = folder + "/file"
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
            try FilePaths.link(path, to: folder + "/second")
            #expect(try FileStatus(path: folder + "/second").identity == (try FileStatus(path: path)).identity)
            #expect(throws: Errno(EEXIST)) { try FilePaths.link(path, to: folder + "/second") }
            try FilePaths.remove(path)
            #expect(!FilePaths.exists(path))
            #expect(try FileStatus(path: folder + "/second").size == 3)
            #expect(throws: Errno(ENOENT)) { try FilePaths.remove(path) }
            #expect(throws: Errno(EISDIR)) { try FilePaths.remove(folder) }
        }
    }

    @Test func temporaryFoldersLinksAndTheirRemoval() throws {
        try withScratchFolder("file-paths") { folder in
            #expect(FilePaths.mayChangeNames(in: folder))
            #expect(!FilePaths.mayChangeNames(in: folder + "/missing"))
            let made = try FilePaths.makeTemporaryFolder(in: folder, prefix: "run.")
            #expect(made.hasPrefix(folder + "/run."))
            #expect(made.count == folder.count + "/run.".count + 6)
            #expect(try FileStatus(path: made).isDirectory)
            let other = try FilePaths.makeTemporaryFolder(in: folder, prefix: "run.")
            #expect(other != made)
            #expect(throws: Errno(ENOENT)) { try FilePaths.makeTemporaryFolder(in: folder + "/missing", prefix: "x") }

            try FilePaths.makeSymbolicLink(at: made + "/link", pointingTo: "../target")
            #expect(FilePaths.linkTarget(made + "/link") == "../target")
            #expect(try FileStatus(path: made + "/link", followingLinks: false).kind == .symbolicLink)
            #expect(throws: Errno(EEXIST)) { try FilePaths.makeSymbolicLink(at: made + "/link", pointingTo: "x") }
            #expect(FilePaths.linkTarget(made) == nil)
            #expect(FilePaths.linkTarget(made + "\0") == nil)

            #expect(throws: Errno(ENOTEMPTY)) { try FilePaths.removeFolder(made) }
            try FilePaths.remove(made + "/link")
            try FilePaths.removeFolder(made)
            #expect(!FilePaths.exists(made))
            #expect(throws: Errno(ENOENT)) { try FilePaths.removeFolder(made) }
        }
    }

    @Test func theWorkingFolderAndTheExecutable() throws {
        let working = try #require(FilePaths.workingFolder)
        #expect(working == FileManager.default.currentDirectoryPath)
        let executable = try #require(ProcessIdentity.executablePath)
        #expect(executable.hasPrefix("/"))
        #expect(try FileStatus(path: executable).isRegularFile)
        let mapped = ProcessIdentity.mappedFiles
        #expect(mapped.contains(executable))
        #expect(mapped.contains { $0.split(separator: "/").last?.hasPrefix("libc.so") == true })
        #expect(Set(mapped).count == mapped.count)
    }
}
