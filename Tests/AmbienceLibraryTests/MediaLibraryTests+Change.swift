import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceAudioTestSupport
@testable import AmbienceLibrary
@testable import AmbienceTestSupport

extension MediaLibraryTests {
    // MARK: - Incremental rescans

    @Test func rescanReadsOnlyChangedFilesAndDropsDeletedOnes() throws {
        let keep = try fixtures.libraryOgg("music/keep.ogg", ["TITLE=Keep"])
        let change = try fixtures.libraryOgg("music/change.ogg", ["TITLE=Before"])
        let delete = try fixtures.libraryMP3("music/delete.mp3", ["--tt", "Delete"])
        let library = try openLibrary()
        let first = try library.scan()
        #expect((first.added, first.updated, first.removed, first.failed.count) == (3, 0, 0, 0))
        let ids = Dictionary(uniqueKeysWithValues: library.items.map { ($0.url, $0.persistentID) })

        // An unchanged size and modification time means the file is not read again: garbage of the same size with
        // the old time goes unnoticed (a real edit always changes one of them).
        let original = try fixtures.bytes(of: keep)
        var times = stat()
        #expect(stat(keep, &times) == 0)
        _ = try fixtures.write("music/keep.ogg", bytes: [UInt8](repeating: 0x55, count: original.count))
        setModificationTime(keep, times.st_mtim)

        try fixtures.libraryOgg("music/change.ogg", ["TITLE=After, with a longer title"])
        setModificationTime(change, timespec(tv_sec: times.st_mtim.tv_sec + 10, tv_nsec: 0))
        try FileManager.default.removeItem(atPath: delete)
        try fixtures.libraryOgg("music/new/added.ogg", ["TITLE=Added"])

        var progress: [ScanProgress] = []
        let second = try library.scan { progress.append($0) }
        #expect((second.files, second.added, second.updated, second.removed, second.failed.count) == (3, 1, 1, 1, 0))
        #expect(progress.map(\.filesDone) == [0, 1, 2, 3])
        #expect(progress.allSatisfy { $0.totalFiles == 3 })
        #expect(progress.first?.currentPath == change)
        #expect(progress.last?.currentPath == "")
        #expect(library.items.map(\.title) == ["Added", "After, with a longer title", "Keep"])
        #expect(library.items.first { $0.url == keep }?.persistentID == ids[keep])
        #expect(library.items.first { $0.url == change }?.persistentID == ids[change])

        let third = try library.scan()
        #expect((third.added, third.updated, third.removed) == (0, 0, 0))
        #expect(!third.changedLibrary)

        // Reopening the index (as a new process would) keeps everything and IDs.
        let reopened = try openLibrary()
        #expect(reopened.items.map(\.persistentID) == library.items.map(\.persistentID))
        #expect(try reopened.scan().changedLibrary == false)
    }

    // MARK: - Change notifications

    @Test func aFileCopiedInWhileWatchingGivesOneNotification() throws {
        let source = try fixtures.libraryOgg("source.ogg", ["TITLE=Copied", "ARTIST=Watcher"])
        try fixtures.libraryOgg("music/first.ogg", ["TITLE=First"])
        let library = try openLibrary()
        try library.scan()

        library.beginGeneratingLibraryChangeNotifications()
        library.beginGeneratingLibraryChangeNotifications()
        library.endGeneratingLibraryChangeNotifications()
        #expect(library.isGeneratingLibraryChangeNotifications)
        #expect(library.watcherError == nil)

        try FileManager.default.createDirectory(atPath: music + "/sub", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: source, toPath: music + "/sub/copied.ogg")
        let events = waitForEvents(library)
        #expect(events == [.libraryDidChange])
        #expect(settledEvents(library).isEmpty)
        #expect(library.items.map(\.title) == ["Copied", "First"])

        // A copy into an existing folder, then a deletion.
        try FileManager.default.copyItem(atPath: source, toPath: music + "/second.ogg")
        #expect(waitForEvents(library) == [.libraryDidChange])
        #expect(settledEvents(library).isEmpty)
        #expect(library.items.count == 3)
        try FileManager.default.removeItem(atPath: music + "/second.ogg")
        #expect(waitForEvents(library) == [.libraryDidChange])
        #expect(library.items.count == 2)

        // A folder moved within the library: its items move with it, and its watch follows.
        try FileManager.default.moveItem(atPath: music + "/sub", toPath: music + "/moved")
        #expect(waitForEvents(library) == [.libraryDidChange])
        #expect(library.items.map(\.url).sorted() == [music + "/first.ogg", music + "/moved/copied.ogg"])
        try FileManager.default.copyItem(atPath: source, toPath: music + "/moved/again.ogg")
        #expect(waitForEvents(library) == [.libraryDidChange])
        #expect(library.items.contains { $0.url == music + "/moved/again.ogg" })

        // A file that is not music changes nothing.
        _ = try fixtures.write("music/notes.txt", bytes: Array("hello".utf8))
        #expect(settledEvents(library).isEmpty)

        library.endGeneratingLibraryChangeNotifications()  // stops the watcher and waits for its thread
        #expect(!library.isGeneratingLibraryChangeNotifications)
        try FileManager.default.copyItem(atPath: source, toPath: music + "/third.ogg")
        #expect(library.drainEvents().isEmpty)
        // Not watching: the explicit scan (the later event) finds it, not indexed by anyone before, and delivers nothing either.
        #expect(try library.scan().added == 1)
        #expect(library.drainEvents().isEmpty)
    }

    @Test func nothingIsDeliveredWhenNotGenerating() throws {
        try fixtures.libraryOgg("music/a.ogg", ["TITLE=A"])
        let library = try openLibrary()
        try library.scan()
        try fixtures.libraryOgg("music/b.ogg", ["TITLE=B"])
        #expect(try library.scan().added == 1)
        #expect(library.drainEvents().isEmpty)
        // While generating, an explicit scan that changes the library posts one event.
        library.beginGeneratingLibraryChangeNotifications()
        defer { library.endGeneratingLibraryChangeNotifications() }
        try FileManager.default.removeItem(atPath: music + "/b.ogg")
        #expect(try library.scan().removed == 1)
        let events = library.drainEvents() + settledEvents(library)
        #expect(events == [.libraryDidChange])
    }

    /// Polls until something is queued (up to `waitBound`).
    func waitForEvents(_ library: MediaLibrary) -> [MediaLibraryEvent] {
        var events: [MediaLibraryEvent] = []
        _ = eventually {
            events = library.drainEvents()
            return !events.isEmpty
        }
        return events
    }

    /// What is queued once the running watcher has caught up with every change made so far: found with a positive
    /// marker, not a sleep. A marker is a file the watcher must look at that changes nothing the game sees (not audio,
    /// under an audio name: indexed as a failure, no event). inotify reports in order and the watcher handles one
    /// batch at a time, re-indexing and then posting: once the index holds a second marker, written after the first
    /// was indexed, the batch with every earlier change has been indexed and its event (if any) queued.
    func settledEvents(_ library: MediaLibrary) -> [MediaLibraryEvent] {
        for _ in 0..<2 {
            let name = "marker-\(UUID().uuidString).ogg"
            let path = RawPath.join(library.roots[0], Array(name.utf8))
            do {
                _ = try fixtures.write("music/" + name, bytes: Array("not audio".utf8))
            } catch {
                Issue.record("cannot write the marker \(name): \(error)")
                break
            }
            let indexed = eventually {
                let count = try? library.read { (db) throws(SQLiteError) -> Int64? in
                    try db.integer("SELECT COUNT(*) FROM failures WHERE path = ?", [.blob(path)])
                }
                return count == 1
            }
            #expect(indexed, "the watcher never indexed the marker \(name)")
        }
        return library.drainEvents()
    }
}

private func setModificationTime(_ path: String, _ time: timespec) {
    let times = [time, time]  // access, modification
    _ = utimensat(AT_FDCWD, path, times, 0)
}
