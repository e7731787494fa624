import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceTestSupport

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct InotifyTests {
    @Test func aFileWrittenInAWatchedFolderIsReportedByName() throws {
        try withScratchFolder("inotify") { folder in
            let inotify = try Inotify()
            let watch = try inotify.addWatch(rawPath: Array(folder.utf8), mask: UInt32(IN_CLOSE_WRITE | IN_CREATE))
            #expect(inotify.readEvents().isEmpty)  // non-blocking: nothing yet, no wait
            try Data([1]).write(to: URL(fileURLWithPath: folder + "/new.ogg"))
            let waker = try Waker()
            #expect(waker.wait(alongside: inotify.descriptor, timeout: .seconds(waitBound)).ready)
            var events: [Inotify.Event] = []
            #expect(
                eventually {
                    events += inotify.readEvents()
                    return events.contains { $0.mask & UInt32(IN_CLOSE_WRITE) != 0 }
                })
            #expect(events.allSatisfy { $0.watch == watch && $0.name == Array("new.ogg".utf8) })
        }
    }

    @Test func theSameFolderGetsTheSameWatch() throws {
        try withScratchFolder("inotify") { folder in
            let inotify = try Inotify()
            let first = try inotify.addWatch(rawPath: Array(folder.utf8), mask: UInt32(IN_CREATE))
            #expect(try inotify.addWatch(rawPath: Array((folder + "/.").utf8), mask: UInt32(IN_CREATE)) == first)
        }
    }

    @Test func whatCannotBeWatchedFailsWithItsErrno() throws {
        try withScratchFolder("inotify") { folder in
            let inotify = try Inotify()
            #expect(throws: Errno(ENOENT)) {
                try inotify.addWatch(rawPath: Array((folder + "/missing").utf8), mask: UInt32(IN_CREATE))
            }
            #expect(throws: Errno(ENOENT)) { try inotify.addWatch(rawPath: [], mask: UInt32(IN_CREATE)) }
            #expect(throws: Errno(EINVAL)) { try inotify.addWatch(rawPath: Array(folder.utf8), mask: 0) }
        }
    }

    @Test func theDescriptorIsClosedOnExec() throws {
        let inotify = try Inotify()
        #expect(fcntl(inotify.descriptor, F_GETFD) & FD_CLOEXEC != 0)
    }
}
